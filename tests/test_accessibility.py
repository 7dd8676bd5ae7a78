"""Every main page has a title and every visible form field a label (WCAG 2.4.2, 1.3.1, 4.1.2).

Walks the pages with Django's test client and parses the HTML: a non-empty <title>, and each
visible input/select/textarea must be named by a <label for=its id>, by aria-label or
aria-labelledby, or by a <label> wrapped around it (the implicit label a screen reader reads).
"""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from django.urls import reverse

from placement.evidence.models import SimulationRun
from placement.stacks.services import stacks as rules_services
from tests.conftest import make_user

pytestmark = pytest.mark.django_db

FIELD_TAGS = {"input", "select", "textarea"}
UNLABELLED_TYPES = {"hidden", "submit", "button", "reset", "image"}  # buttons are named by their text


class PageAudit(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.title_parts: list[str] = []
        self.in_title = False
        self.label_for: set[str] = set()
        self.ids: set[str] = set()
        self.label_depth = 0
        self.fields: list[dict] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "title":
            self.in_title = True
        elif tag == "label":
            self.label_depth += 1
            if a.get("for"):
                self.label_for.add(a["for"])
        elif tag in FIELD_TAGS:
            if tag == "input" and (a.get("type") or "text").lower() in UNLABELLED_TYPES:
                return
            if "hidden" in a or a.get("aria-hidden") == "true":
                return
            self.fields.append({**a, "_tag": tag, "_wrapped": self.label_depth > 0})

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        if tag == "title":
            self.in_title = False
        elif tag == "label" and self.label_depth:
            self.label_depth -= 1

    def handle_data(self, data):
        if self.in_title:
            self.title_parts.append(data)

    @property
    def title(self) -> str:
        return " ".join("".join(self.title_parts).split())

    def unlabelled(self) -> list[str]:
        missing = []
        for f in self.fields:
            named = (
                (f.get("id") and f["id"] in self.label_for)
                or (f.get("aria-label") or "").strip()
                or (f.get("aria-labelledby") and all(i in self.ids for i in f["aria-labelledby"].split()))
                or f["_wrapped"]
            )
            if not named:
                missing.append(f"<{f['_tag']} name={f.get('name')!r} id={f.get('id')!r} type={f.get('type')!r}>")
        return missing


def audit(html: str) -> PageAudit:
    parser = PageAudit()
    parser.feed(html)
    return parser


@pytest.fixture
def pages(client):
    """The main pages, with what they need: a saved stack, a run, a pending proposal."""
    architect = make_user("a11y-arch", "architect")
    stack = rules_services.stack_save(
        user=architect,
        request_data={"profile": "online_inference", "pool": {"gpu_model": "A100-80GB", "gpu_count": 16}, "constraints": {}},
        rank=1,
    )
    run = SimulationRun.objects.create(
        stack=stack, scenario_name="a11y", scenario={}, seed=1, fingerprint="a11y", status=SimulationRun.QUEUED
    )
    return {
        "home": reverse("home"),
        "interactive map": reverse("layer-map"),
        "map with a stack": f"{reverse('layer-map')}?view=planes&unit=mig_instance&stack={stack.pk}",
        "map list": f"{reverse('layer-map-list')}?view=architecture&stack={stack.pk}",
        "embedded map": reverse("embed-map"),
        "embedded stack": reverse("embed-stack", args=[stack.pk]),
        "project list": reverse("project-list"),
        "project detail": reverse("project-detail", args=["kueue"]),
        "create form": reverse("project-create"),
        "edit form": reverse("project-edit", args=["kueue"]),
        "compose": reverse("compose") + "?profile=online_inference&goal=latency_sensitive",
        "compare": reverse("compare") + "?slugs=hami&slugs=mig",
        "stack list": reverse("stack-list"),
        "stack page": reverse("stack-detail", args=[stack.pk]),
        "stack compare": reverse("stack-compare") + f"?stacks={stack.pk}",
        "review queue": reverse("review-queue"),
        "run page": reverse("run-detail", args=[run.pk]),
        "login": reverse("login"),
    }, architect


PAGE_NAMES = [
    "home", "interactive map", "map with a stack", "map list", "embedded map", "embedded stack", "project list",
    "project detail", "create form", "edit form", "compose", "compare", "stack list", "stack page", "stack compare",
    "review queue", "run page", "login",
]


@pytest.mark.parametrize("name", PAGE_NAMES)
def test_page_has_a_title_and_every_field_a_label(client, pages, name):
    urls, architect = pages
    if name != "login":
        client.force_login(architect)  # logged in, so the write forms (create, save, run) are on the pages
    response = client.get(urls[name])
    assert response.status_code == 200, f"{name}: {urls[name]} answered {response.status_code}"
    page = audit(response.content.decode())
    assert page.title and not page.title.startswith("·"), f"{name}: empty <title>"
    assert not page.unlabelled(), f"{name} ({urls[name]}): fields without a label: {page.unlabelled()}"


def test_a_field_without_label_is_caught():
    page = audit('<title>x</title><input name="q"><label for="a">A</label><input id="a"><label><input name="w"> W</label>')
    assert page.unlabelled() == ["<input name='q' id=None type=None>"]


def test_every_map_view_names_its_figure_for_screen_readers(client):
    for view in ("control-plane", "planes", "architecture"):
        html = client.get(f"{reverse('layer-map')}?view={view}").content.decode()
        assert 'role="img" aria-label="' in html
        assert f'href="{reverse("layer-map-list")}?view={view}"' in html  # the list is one click away

