"""The journeys of issue 36 as a newcomer architect and a review board walk them, in headless
Chromium at 1440 px and at 375 px: compose with five ranked stacks, rank them by evidence, save one
and record a decision, the reviewer accepts it, the radar and the board pack; a catalog proposal
accepted with its confirmation; the landscape, the API docs and the import page.

Every page of every journey is photographed full-page at both widths into test-artifacts/journeys/
(git-ignored) for a person to read, and each must: show no traceback, not scroll sideways at 375 px
(the document is no wider than the window). The compose results for five stacks stay under
3,000 px at 1440 px. Page heights land in test-artifacts/journeys/heights.json.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ARTIFACTS, login, logout
from tests.conftest import make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

OUT = ARTIFACTS / "journeys"
WIDTHS = (1440, 375)
SAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "clusters" / "sample"
TRACEBACK = re.compile(r"Traceback \(most recent call last\)|Server Error \(500\)|File \"/[^\"]+\.py\", line \d+")
TEAMS = "vision, nlp, speech, platform"
CLASSES = [
    {"name": "train", "kind": "training", "replicas": "2", "gpus_per_replica": "4", "gpu_memory_gib": "60", "gang": True},
    {"name": "chat", "kind": "online_inference", "replicas": "8", "gpu_memory_gib": "18", "p99_ms": "200"},
]
COMPOSE_MAX_HEIGHT = 3000


class Album:
    """Photographs each page at both widths and collects what a person would call broken."""

    def __init__(self, page):
        self.page = page
        self.problems: list[str] = []
        self.heights: dict[str, dict[int, int]] = {}
        OUT.mkdir(parents=True, exist_ok=True)

    def shoot(self, name: str) -> dict[int, int]:
        """Both widths of the page as it is now (no reload: a POST's answer stays on screen)."""
        page = self.page
        heights = {}
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": 900})
            page.wait_for_load_state("networkidle")
            page.wait_for_timeout(300)  # plotly and the layout settle after the resize
            page.screenshot(path=str(OUT / f"{name}-{width}.png"), full_page=True)
            sizes = page.evaluate("() => ({scroll: document.documentElement.scrollWidth, view: window.innerWidth,"
                                  " height: document.documentElement.scrollHeight})")
            heights[width] = sizes["height"]
            text = page.evaluate("() => document.body.innerText")
            if TRACEBACK.search(text):
                self.problems.append(f"{name} at {width}px shows a traceback: {TRACEBACK.search(text).group(0)}")
            if width == 375 and sizes["scroll"] > sizes["view"]:
                wide = page.evaluate(
                    """() => [...document.querySelectorAll('body *')]
                        .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
                        .filter(e => !e.closest('.table-scroll, .map-scroll, pre'))
                        .slice(0, 4).map(e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '')
                            + (typeof e.className === 'string' && e.className ? '.' + e.className.split(' ')[0] : ''))""")
                self.problems.append(f"{name} at 375px scrolls sideways: {sizes['scroll']}px wide ({wide})")
        page.set_viewport_size({"width": WIDTHS[0], "height": 900})
        self.heights[name] = heights
        return heights

    def close(self) -> None:
        path = OUT / "heights.json"
        saved = json.loads(path.read_text()) if path.exists() else {}
        path.write_text(json.dumps({**saved, **self.heights}, indent=1, sort_keys=True))
        assert not self.problems, "\n".join(self.problems)


@pytest.fixture
def album(page):
    album = Album(page)
    yield album
    album.close()


def fill_compose(page) -> None:
    page.goto("/compose/")
    page.get_by_label("Teams sharing every class").fill(TEAMS)
    page.get_by_label("GPU count").fill("16")
    for i, row in enumerate(CLASSES, start=1):
        for column, value in row.items():
            field = page.locator(f'[name="w{i}-{column}"]')
            if value is True:
                field.check()
            elif field.evaluate("el => el.tagName") == "SELECT":
                field.select_option(value)
            else:
                field.fill(value)
    page.get_by_role("button", name="Compose").click()
    expect(page.locator(".compose-comparison tbody tr")).to_have_count(5)


def test_an_architect_composes_five_stacks_ranks_them_by_evidence_and_the_board_decides(page, album):
    make_user("arch", "architect")
    make_user("rev", "reviewer")
    login(page, "arch")

    fill_compose(page)
    expect(page.locator(".teams-summary")).to_contain_text("Teams vision, nlp, speech, platform submit every class")
    heights = album.shoot("01-compose-five-stacks")
    assert heights[1440] < COMPOSE_MAX_HEIGHT, f"compose results are {heights[1440]} px tall at 1440 px"
    page.locator("#stack-1 summary").first.click()  # a stack's detail, folded below the table
    album.shoot("02-compose-stack-1-open")

    page.get_by_role("button", name="Rank by evidence").click()
    page.wait_for_url(re.compile(r"/evaluations/\d+/$"))
    expect(page.locator(".winner-box")).to_contain_text("Evidence winner:")
    album.shoot("03-evidence-ranking")
    page.goto("/stacks/")
    expect(page.get_by_text("No stack saved yet.")).to_be_visible()  # ranking saved nothing behind our back
    page.go_back()

    page.locator("table.evidence tbody tr").first.get_by_role("button", name="Save as stack").click()
    page.wait_for_url(re.compile(r"/stacks/\d+/$"))
    expect(page.locator(".messages")).to_contain_text("Saved stack")
    album.shoot("04-saved-candidate")
    page.go_back()
    page.reload()
    page.get_by_role("button", name="Record a decision with these options and runs").click()
    page.wait_for_url(re.compile(r"/decisions/new/\?options="))
    album.shoot("05-decision-form")
    page.get_by_label("Title").fill("Shared inference and training pool")
    page.get_by_label("Chosen option").select_option(index=1)
    chosen_slug = page.locator("#id_ring_project_0 option").nth(1).get_attribute("value")
    page.locator("#id_ring_project_0").select_option(chosen_slug)
    page.locator("#id_ring_0").select_option("adopt")
    page.locator("#id_ring_reason_0").fill("won on the evidence ranking")
    page.get_by_label("Reason").fill("Board meeting")
    page.get_by_role("button", name="Propose").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Shared inference and training pool")
    album.shoot("06-decision-proposed")
    logout(page)

    login(page, "rev")
    page.goto(page.url if "/decisions/" in page.url else "/decisions/")
    page.goto("/decisions/")
    page.get_by_role("link", name=re.compile("Shared inference and training pool")).first.click()
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Accept").click()
    expect(page.locator(".badge.accepted").first).to_be_visible()
    album.shoot("07-decision-accepted")
    record_url = page.url

    page.goto("/radar/")
    expect(page.get_by_role("link", name=re.compile("Shared inference and training pool"))).to_be_visible()
    album.shoot("08-radar")
    page.goto(record_url.rstrip("/") + "/pack/")
    expect(page.get_by_role("heading", level=1)).to_contain_text("Shared inference and training pool")
    album.shoot("09-board-pack")


def test_a_reviewer_accepts_a_proposal_and_sees_it_confirmed(page, album):
    from placement.catalog.models import Project
    from placement.catalog.schemas import ProjectDocument
    from placement.catalog.selectors.catalog import project_document
    from placement.review import services as review

    architect = make_user("arch", "architect")
    make_user("rev", "reviewer")
    kueue = Project.objects.get(slug="kueue")
    changed = project_document(kueue).model_dump(mode="json")
    changed["summary"] += " Admission decides when a job may start; the scheduler decides where."
    review.revision_propose(kueue, ProjectDocument.model_validate(copy.deepcopy(changed)), user=architect, reason="clearer summary")

    login(page, "rev")
    page.goto("/review/")
    album.shoot("10-review-queue")
    page.get_by_role("link", name="Kueue").first.click()
    album.shoot("11-review-proposal")
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Accept").click()
    expect(page.locator(".messages")).to_be_visible()
    album.shoot("12-review-accepted")


def test_a_newcomer_reads_the_landscape_the_api_docs_and_imports_a_cluster(page, album):
    make_user("arch", "architect")
    login(page, "arch")
    page.goto("/landscape/")
    album.shoot("13-landscape")
    page.goto("/api/docs/")
    expect(page.get_by_role("heading", level=1)).to_be_visible()
    album.shoot("14-api-docs")
    page.goto("/import/")
    album.shoot("15-import")
    page.set_input_files("#nodes_file", str(SAMPLE / "nodes.json"))
    page.set_input_files("#pods_file", str(SAMPLE / "pods.json"))
    page.get_by_role("button", name="Read the snapshot").click()
    expect(page.get_by_role("heading", name="What the snapshot holds")).to_be_visible()
    album.shoot("16-import-read")
    page.goto("/import/")
    page.set_input_files("#nodes_file", str(SAMPLE / "pods.json"))  # swapped files
    page.set_input_files("#pods_file", str(SAMPLE / "nodes.json"))
    page.get_by_role("button", name="Read the snapshot").click()
    expect(page.get_by_role("heading", name="Nothing was imported")).to_be_visible()
    album.shoot("17-import-swapped")
