"""A review board's journey in headless Chromium: from two composed stacks compared on a
scenario to an accepted decision record with its evidence, the ring on the map, a catalog fact
it relied on changed, the record flagging itself stale, and its evidence re-run and compared."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from placement.catalog.models import Project
from placement.catalog.schemas import ProjectDocument
from placement.catalog.selectors.catalog import project_document_data
from placement.decisions.models import DecisionRecord
from placement.evidence.services import runs as evidence
from placement.review import services as review
from placement.stacks.services import stacks as rules_services
from tests.browser.conftest import login, logout
from tests.conftest import make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

INFERENCE = {"profile": "online_inference", "slo": {"isolation": "soft", "goal": "latency_sensitive", "multi_tenant": True},
             "pool": {"gpu_model": "A100-80GB", "gpu_count": 32}}
SCENARIO = "starved-tenant-default"


def test_board_decides_between_evaluated_stacks_sees_the_ring_and_the_record_go_stale_then_reruns(page):
    architect = make_user("arch", "architect")
    reviewer = make_user("rev", "reviewer")
    # Two composed stacks, each simulated on the same scenario (eager: no broker in this test).
    first = rules_services.stack_save(user=architect, request_data=INFERENCE, rank=1, name="Option A")
    second = rules_services.stack_save(user=architect, request_data=INFERENCE, rank=2, name="Option B")
    for stack in (first, second):
        evidence.simulation_start(user=architect, stack=stack, scenario_name=SCENARIO)
    chosen_slug = next(s for s in first.project_slugs if Project.objects.filter(slug=s, accepted=True).exists())

    login(page, "arch")
    page.goto(f"/stacks/compare/?stacks={first.pk}&stacks={second.pk}&scenario_name={SCENARIO}")
    page.get_by_role("link", name="Record a decision between these stacks").click()
    page.get_by_label("Title").fill("Inference pool runs Option A")
    page.get_by_label("Chosen option").select_option(str(first.pk))
    page.locator("#id_ring_project_0").select_option(chosen_slug)
    page.locator("#id_ring_0").select_option("adopt")
    page.locator("#id_ring_reason_0").fill("won on P99 in the starved-tenant story")
    page.get_by_label("Reason").fill("Board meeting")
    page.get_by_role("button", name="Propose").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Inference pool runs Option A")
    record = DecisionRecord.objects.get()
    assert record.evidence_runs.count() == 2, "the compared runs came along as evidence"
    logout(page)

    login(page, "rev")
    page.goto(f"/decisions/{record.pk}/")
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Accept").click()
    expect(page.locator(".badge.accepted").first).to_be_visible()
    page.goto("/?ring=adopt")
    expect(page.locator(".layer-map .badge.ring-adopt").first).to_be_visible()
    page.goto("/radar/")
    expect(page.get_by_role("link", name=f"ADR-{record.pk}: Inference pool runs Option A")).to_be_visible()

    # A fact the decision relied on is corrected through review.
    project = Project.objects.get(slug=chosen_slug)
    data = project_document_data(project)
    data["placement"]["non_promise"] = [*data["placement"]["non_promise"], "Corrected: does not cover runtime X."]
    revision = review.revision_propose(project, ProjectDocument.model_validate(data), user=architect, reason="corrected fact")
    review.revision_accept(revision, user=reviewer)

    page.goto("/decisions/")
    expect(page.get_by_text("facts changed since the decision", exact=True)).to_be_visible()
    page.goto(f"/decisions/{record.pk}/")
    expect(page.get_by_role("heading", name="Facts changed since the decision")).to_be_visible()
    expect(page.get_by_text("Corrected: does not cover runtime X.")).to_be_visible()
    page.get_by_role("button", name="Re-run the evidence with the current simulator").first.click()
    expect(page.get_by_role("heading", name="Re-run against the original")).to_be_visible()
    expect(page.get_by_text("the stored result stands").first).to_be_visible()
