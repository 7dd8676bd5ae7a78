"""Every link of the menu and every page of the README's page table, opened with no query string at
1440 px and at 375 px (a phone): each shows content rather than an empty state, and at 375 px
nothing is wider than the screen. Screenshots of every page land in test-artifacts/pages/.

The pages with an id (a project, a stack, a run, a sweep, a proposal) get one from data the test
makes first, so none of them can pass by being empty.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.db import transaction

from tests.browser.conftest import ARTIFACTS, login
from tests.conftest import make_user

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
EMPTY_STATES = re.compile(
    r"No project matches these filters|No stack saved yet|No simulation yet|Nothing here\.|(?<![0-9])0 projects\b|Save at least two stacks", re.I
)
WIDTHS = (1440, 375)


def readme_pages() -> list[str]:
    """The first column of the README's "Main pages" table: every path it names."""
    text = (ROOT / "README.md").read_text()
    table = text.split("## Main pages", 1)[1].split("\n## ", 1)[0]
    paths: list[str] = []
    for line in table.splitlines():
        if not line.startswith("| `"):
            continue
        for path in re.findall(r"`(/[^`]*)`", line.split("|")[1]):
            path = path.split("?", 1)[0]  # "with no query string"
            if path not in paths:
                paths.append(path)
    return paths


@pytest.fixture
def atlas_data(django_capture_on_commit_callbacks, monkeypatch):
    """A saved stack with a finished run and a sweep, and a proposal waiting for review."""
    import copy

    from placement.catalog.models import Project
    from placement.catalog.schemas import ProjectDocument
    from placement.catalog.selectors.catalog import project_document
    from placement.evidence.selectors import runs as evidence_selectors
    from placement.evidence.services import runs as evidence
    from placement.review import services as review
    from placement.stacks.services import stacks as rules_services
    from tests.evidence.scenarios import batch_scenario

    admin = make_user("boss", is_staff=True, is_superuser=True)
    architect = make_user("arch", "architect")
    stack = rules_services.stack_save(
        user=architect, request_data={"profile": "training", "pool": {"gpu_model": "A100-80GB", "gpu_count": 32}}, rank=1,
        name="Training stack",
    )
    rules_services.stack_save(
        user=architect, request_data={"profile": "online_inference", "pool": {"gpu_model": "A100-80GB", "gpu_count": 32}},
        rank=1, name="Inference stack",
    )
    monkeypatch.setattr(evidence_selectors, "builtin_scenario_document", lambda name: batch_scenario(60, name="pages") if name == "pages" else None)
    monkeypatch.setattr("placement.stacks.services.scenario.builtin_scenario_document", evidence_selectors.builtin_scenario_document)
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        run, _ = evidence.simulation_start(user=architect, stack=stack, scenario_document=batch_scenario(60, name="pages-run"))
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        sweep = evidence.sweep_start(user=architect, stacks=[stack], scenario_name="pages", seeds=2)
    from placement.evidence.services.evaluation import evaluation_start

    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        evaluation = evaluation_start(user=architect, request_data=stack.request, top=1, scenario_name="pages")
    kueue = Project.objects.get(slug="kueue")
    changed = project_document(kueue).model_dump(mode="json")
    changed["summary"] += " Reviewed on a phone."
    proposal = review.revision_propose(kueue, ProjectDocument.model_validate(copy.deepcopy(changed)), user=architect, reason="wording")
    from placement.decisions.document import DecisionDocument
    from placement.decisions.services import decisions

    record = decisions.decision_propose(
        DecisionDocument.model_validate({"title": "Training on whole GPUs", "options": [stack.pk], "chosen": stack.pk,
                                         "evidence_runs": [run.pk], "rings": [], "reason": "board"}),
        user=architect,
    )
    from placement.deploy.models import PlaneTrial

    trial = PlaneTrial.objects.create(  # a finished trial as the worker stores it (the real one needs the plane)
        stack=stack, status="succeeded", active=False, log=[{"s": 0.0, "message": "starting etcd"}],
        result={"stack": stack.pk, "name": stack.name, "source": "the stack's plan", "scenario": "plan", "nodes": 2,
                "settled": True, "rejected": [], "agreement": {"agree": 1, "judged": 1},
                "workloads": [{"kind": "Job", "namespace": "team-a", "name": "pretrain-team-a-with-a-long-name", "queue": "team-a",
                               "admitted": True, "admission_message": "The workload is admitted", "pods": 2,
                               "bound": {"dgx-0": 2}, "pending_messages": [], "schedulers": ["default-scheduler"],
                               "sim_state": "running", "sim_nodes": ["dgx-0"], "sim_reason": "", "agree": True,
                               "note": "", "pools": ["dgx"]}]})
    ids = {"slug": "kueue", "id": {"stacks": stack.pk, "runs": run.pk, "sweeps": sweep.pk, "evaluations": evaluation.pk,
                                   "decisions": record.pk, "trials": trial.pk}, "revision": proposal.pk}
    return admin, ids


def concrete(path: str, ids: dict) -> str:
    path = path.replace("<slug>", ids["slug"])

    def fill(match: re.Match) -> str:
        kind = match.group(1)
        return f"/{kind}/{ids['id'][kind]}/"

    return re.sub(r"/(stacks|runs|sweeps|evaluations|decisions|trials)/<id>/", fill, path)


def test_every_menu_link_and_readme_page_shows_content_at_desktop_and_phone_width(page, atlas_data):
    admin, ids = atlas_data
    login(page, admin.username)
    page.goto("/")
    menu = page.locator("header nav[aria-label=Main] a")
    menu_paths = [re.sub(r"^https?://[^/]+", "", href) for href in menu.evaluate_all("links => links.map(a => a.href)")]
    assert len(menu_paths) >= 8
    paths = list(dict.fromkeys(menu_paths + [concrete(p, ids) for p in readme_pages()] + [f"/revisions/{ids['revision']}/"]))
    assert not [p for p in paths if "<" in p], f"README names a page this test cannot fill in: {paths}"

    out = ARTIFACTS / "pages"
    out.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        for path in paths:
            if re.search(r"\.[a-z]+$", path):  # a file (CSV, JSON...): the browser downloads it
                status = page.request.get(path).status
                if status != 200:
                    problems.append(f"{path}: HTTP {status}")
                continue
            response = page.goto(path)
            page.wait_for_load_state("networkidle")
            name = re.sub(r"[^a-z0-9]+", "-", path.strip("/").lower()) or "home"
            page.screenshot(path=str(out / f"{name}-{width}.png"), full_page=True)
            if response is None or response.status != 200:
                problems.append(f"{path} at {width}px: HTTP {response.status if response else 'no response'}")
                continue
            if "html" not in (response.headers.get("content-type") or ""):
                continue  # a feed or a file: nothing to lay out
            body = page.evaluate("(document.querySelector('main') || document.body).innerText")
            if len(body.strip()) < 80:
                problems.append(f"{path} at {width}px: almost nothing on the page ({body.strip()[:60]!r})")
            empty = EMPTY_STATES.search(body)
            if empty:
                problems.append(f"{path} at {width}px: shows an empty state ({empty.group(0)!r})")
            # at a phone's width and at a desktop's alike, the page is no wider than the window
            overflow = page.evaluate(
                """() => {
                    const doc = document.documentElement;
                    if (doc.scrollWidth <= doc.clientWidth) { return null; }
                    const wide = [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > doc.clientWidth + 1)
                        .filter(e => !e.closest('table, .map-scroll, pre'))
                        .slice(0, 3).map(e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.className && typeof e.className === 'string' ? '.' + e.className.split(' ')[0] : ''));
                    return {scrollWidth: doc.scrollWidth, wide};
                }"""
            )
            if overflow:
                problems.append(f"{path} at {width}px: page is {overflow['scrollWidth']}px wide ({overflow['wide']})")
    assert not problems, "\n".join(problems)
