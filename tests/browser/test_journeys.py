"""The three user journeys in headless Chromium, through the pages a person uses.

1. An architect proposes a project with a mistake, fixes it inline and submits; a reviewer
   accepts it from the review queue and finds it on the map.
2. An architect composes a latency-sensitive inference stack, saves it, runs its simulation on a
   real Celery worker (Redis broker) and watches the progress bar move until the charts appear.
3. A review board member opens the map filtered by resource unit from a URL and opens a project
   from the accessible list and by clicking its plotly point.
"""

from __future__ import annotations

import copy
import re

import pytest
from playwright.sync_api import expect

from placement.catalog.forms import ProjectForm
from placement.catalog.models import Project
from placement.catalog.schemas import ProjectDocument
from placement.evidence.models import SimulationRun
from placement.review.models import Revision
from tests.browser.conftest import click_map_point, login, logout, wait_for_map, watch_run_until_charts
from tests.conftest import make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def fill_project_form(page, values: dict) -> None:
    """Fill the create form field by field the way a person would: text, selects, checkboxes, and
    repeatable rows added one at a time with their "Add ..." button."""
    for name, value in values.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            field = page.locator(f"#field-{name}")
            for row in value:
                before = field.locator(".form-row").count()
                field.locator("button.add-row").click()
                expect(field.locator(".form-row")).to_have_count(before + 1)
                fill_row(field.locator(".form-row").last, row)
            continue
        if isinstance(value, list):
            for item in value:
                page.locator(f'[name="{name}"][value="{item}"]').check()
            continue
        if value is None:
            continue
        field = page.locator(f"#id_{name}")
        if isinstance(value, bool):
            field.set_checked(value)
            continue
        if field.evaluate("el => el.tagName") == "SELECT":
            field.select_option(value)
        else:
            field.fill(value)


def fill_row(row, values: dict) -> None:
    for column, value in values.items():
        inputs = row.locator(f'[name$="-{column}"]')
        if isinstance(value, list):
            for item in value:
                row.locator(f'[name$="-{column}"][value="{item}"]').check()
        elif inputs.first.evaluate("el => el.tagName") == "SELECT":
            inputs.first.select_option(value)
        else:
            inputs.first.fill(value)


def test_architect_proposes_with_a_mistake_fixes_it_and_a_reviewer_accepts_it_onto_the_map(page, new_project_data):
    make_user("arch", "architect")
    make_user("rev", "reviewer")
    data = copy.deepcopy(new_project_data)
    data.update(slug="browser-queue", name="Browser Queue")
    values = ProjectForm.initial_from(ProjectDocument.model_validate(data))
    values = {k: v for k, v in values.items() if not k.endswith("_order")}
    good_url = values["sources"][0]["url"]
    values["sources"][0]["url"] = "not-a-url"  # the mistake
    values["reason"] = "Adding the queue our inference platform uses"

    login(page, "arch")
    page.goto("/projects/new/")
    expect(page).to_have_title(re.compile("New project"))
    # Where it sits comes first, and the preview shows where it lands as the layers are picked.
    headings = page.locator(".form-section h2").all_inner_texts()
    assert headings[0] == "Where it sits", headings
    fill_project_form(page, values)
    preview = page.locator("#placement-preview")
    expect(preview.locator("td.lands.primary")).to_contain_text("Browser Queue")
    expect(preview.locator("td.lands.primary")).to_contain_text("next to")  # the projects already on that layer

    # A row added by mistake is removed in place.
    misuses = page.locator("#field-misuses")
    count = misuses.locator(".form-row").count()
    misuses.locator("button.add-row").click()
    expect(misuses.locator(".form-row")).to_have_count(count + 1)
    misuses.locator(".form-row").last.get_by_role("button", name="Remove this misuse").click()
    expect(misuses.locator(".form-row")).to_have_count(count)

    # The dependency pickers are searchable: typing narrows 36 projects to the matching ones.
    requires = page.locator("#field-requires")
    requires.locator(".picker-filter").fill("sched")
    visible = requires.locator(".picker-options label:visible").all_inner_texts()
    assert visible and all("sched" in v.lower() for v in visible), visible
    requires.locator(".picker-options label", has_text="kube-scheduler").locator("input").check()
    expect(requires.locator(".picker-chosen")).to_contain_text("kube-scheduler")
    page.get_by_role("button", name="Submit for review").click()

    # The error is shown inline, in the words of the form, next to the row that holds it; nothing
    # was saved and nothing typed was lost.
    sources = page.locator("#field-sources")
    expect(sources.get_by_role("alert")).to_contain_text("Source 1, address")
    expect(sources.get_by_role("alert")).not_to_contain_text("String should match")
    expect(sources.locator("input[type=url]").first).to_have_value("not-a-url")
    expect(page.locator("#field-contract_points .form-row")).to_have_count(len(values["contract_points"]))
    expect(page.locator("#field-requires input[value=kube-scheduler]")).to_be_checked()
    expect(page.locator(".errors[role=alert]").first).to_contain_text("nothing you typed was lost")
    assert not Project.objects.filter(slug="browser-queue").exists()

    sources.locator("input[type=url]").first.fill(good_url)
    page.get_by_role("button", name="Submit for review").click()
    page.wait_for_url("**/projects/browser-queue/")
    expect(page.locator(".messages")).to_contain_text("was proposed")
    logout(page)

    # The reviewer sees it waiting (also on the map's pending-review list), opens it and accepts.
    login(page, "rev")
    page.goto("/map/list/?view=control-plane&pending=1")
    expect(page.locator("#map-list li", has_text="Browser Queue")).to_contain_text("new, pending review")
    page.goto("/review/")
    page.get_by_role("link", name="Browser Queue").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Proposal for Browser Queue")
    # A new project is reviewed as the page it will become, with its cell on the layer map.
    expect(page.get_by_role("heading", name="The proposed project, as its page will read")).to_be_visible()
    expect(page.locator(".layer-map.preview td.proposed")).to_contain_text("Browser Queue (primary, proposed)")
    page.get_by_label("Comment (optional)").fill("Placement checked against the sources.")
    # Accepting asks first: dismissing the question changes nothing, confirming accepts.
    asked: list[str] = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
    page.get_by_role("button", name="Accept").click()
    page.wait_for_load_state("networkidle")
    expect(page.get_by_label("Comment (optional)")).to_have_value("Placement checked against the sources.")  # not reloaded
    assert asked and asked[0].startswith("Accept this proposal?")
    assert Revision.objects.get(project__slug="browser-queue").status == Revision.PROPOSED
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Accept").click()
    expect(page.locator(".badge.accepted")).to_be_visible()
    assert Revision.objects.get(project__slug="browser-queue").status == Revision.ACCEPTED

    # On the map: accepted projects only, so it is there now, and it opens from its point.
    page.goto("/map/?view=control-plane")
    wait_for_map(page)
    expect(page.locator("#layer-map-figure text", has_text="Browser Queue")).to_have_count(1)
    click_map_point(page, "browser-queue")
    page.wait_for_url("**/projects/browser-queue/")
    expect(page.get_by_role("heading", level=1)).to_contain_text("Browser Queue")


@pytest.fixture
def builtin_scenario():
    """The journey runs the first built-in scenario offered on the stack page."""
    from placement.catalog.selectors.scenarios import builtin_scenarios

    scenarios = builtin_scenarios()
    assert scenarios, "fixtures/scenarios/ must ship built-in scenarios"
    return scenarios[0].name


def test_architect_composes_saves_and_simulates_a_latency_sensitive_inference_stack(page, worker_factory, builtin_scenario):
    make_user("arch", "architect")
    login(page, "arch")
    page.goto("/compose/")
    page.get_by_label("Workload profile").select_option("online_inference")
    page.get_by_label("Goal").select_option(label="latency-sensitive")
    page.get_by_role("button", name="Compose").click()
    page.wait_for_url(re.compile(r"profile=online_inference.*goal=latency_sensitive"))  # htmx pushed the URL
    expect(page.locator(".compose-comparison tbody tr").first).to_contain_text("hold")  # the comparison table first
    first = page.locator("#compose-result .stack-card").first
    first.locator("summary").first.click()  # each stack's detail is folded below the table
    first.get_by_text("Contract checks").click()
    expect(first.locator(".ok").first).to_be_visible()  # contract checks hold
    first.get_by_role("button", name="Save stack #1").click()
    page.wait_for_url(re.compile(r"/stacks/\d+/$"))
    expect(page.locator(".messages")).to_contain_text("Saved stack")

    # The stack's own plan comes first; then the first built-in scenario. No worker runs yet, so the
    # run waits in the broker's queue.
    scenario = page.get_by_label("Built-in scenario")
    expect(scenario.locator("option").first).to_contain_text("This stack's plan")
    expect(scenario.locator("option").nth(1)).to_have_attribute("value", builtin_scenario)
    scenario.select_option(value=builtin_scenario)
    page.get_by_role("button", name="Run simulation").click()
    page.wait_for_url(re.compile(r"/runs/\d+/$"))
    progress = page.locator("#run-progress [role=progressbar]")
    status = page.locator("#run-progress [data-status]")
    expect(progress).to_be_visible()
    expect(status).to_have_attribute("data-status", "queued")
    run = SimulationRun.objects.get()
    assert run.task_id, "the run went to the broker (not executed eagerly in the request)"

    # A worker starts and picks it up; the page polls every second: watch the bar until the
    # run finishes, the page reloads itself and the charts are drawn.
    worker_factory("browser")
    seen: list[tuple[str, int]] = [("queued", 0)]
    watch_run_until_charts(page, status, progress, seen, 60)
    charts = page.locator(".chart.js-plotly-plot")
    expect(charts.first).to_be_visible()
    expect(status).to_have_attribute("data-status", "succeeded")
    expect(progress).to_have_attribute("aria-valuenow", "100")
    if seen[-1] != ("succeeded", 100):
        seen.append(("succeeded", 100))  # the last poll swapped in the finished run and its charts
    print(f"progress bar observed: {seen}")
    assert len(seen) >= 2, f"the progress bar never changed from queued: {seen}"
    assert [v for _, v in seen] == sorted(v for _, v in seen), f"progress went backwards: {seen}"
    assert SimulationRun.objects.get().status == SimulationRun.SUCCEEDED


def test_review_board_member_opens_the_map_filtered_by_unit_and_opens_a_project(page):
    make_user("board", "reader")
    login(page, "board")
    page.goto("/map/?view=control-plane&unit=mig_instance")
    wait_for_map(page)
    expect(page.get_by_role("combobox", name="Resource unit")).to_have_value("mig_instance")
    expect(page.locator("#map-description")).to_contain_text("resource unit MIG instance")
    names = page.locator("#layer-map-figure .scatterlayer text")
    expect(names.filter(has_text="Kueue")).to_have_count(1)  # Kueue can queue MIG instances
    expect(names.filter(has_text="NVIDIA vGPU")).to_have_count(0)

    # Keyboard / screen-reader route: the list with the same filters is one click away.
    page.get_by_role("link", name="Show as an accessible list").click()
    page.wait_for_url("**/map/list/?view=control-plane&unit=mig_instance")
    page.get_by_role("link", name="NVIDIA Multi-Instance GPU (MIG)", exact=True).first.click()
    page.wait_for_url("**/projects/mig/")
    expect(page).to_have_title(re.compile("Multi-Instance"))

    # Pointer route: back to the map, click the plotly point.
    page.go_back()
    page.get_by_role("link", name="Show as interactive map").click()
    wait_for_map(page)
    click_map_point(page, "mig")
    page.wait_for_url("**/projects/mig/")
