"""Reads of decision records: staleness against the current catalog, re-run comparisons, the
organisation's radar (and its export in Zalando's tech-radar JSON), and the feed's items."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import QuerySet

from placement.decision_document import RING_ORDER
from placement.document_diff import Change, diff_documents
from placement.models import DecisionEvent, DecisionRecord, Project, ProjectRing, Revision, SimulationRun
from placement.selectors.catalog import project_document_data
from placement.selectors.evidence import flatten_metrics

# A re-run "disagrees" when a metric moved by more than this share of its original value.
DISAGREE_RELATIVE = 0.05


def decision_list() -> QuerySet[DecisionRecord]:
    return DecisionRecord.objects.select_related("author", "reviewer", "chosen").order_by("-created_at", "-id")


@dataclass
class StaleFact:
    slug: str
    name: str
    old_version: int
    new_version: int | None  # None: the project left the catalog
    changes: list[Change]


def decision_staleness(record: DecisionRecord) -> list[StaleFact]:
    """The catalog entries the record relied on that changed since (with the field diff)."""
    relied = record.relied_on or {}
    current = {p.slug: p for p in Project.objects.filter(slug__in=list(relied))}
    stale = []
    for slug, then in sorted(relied.items()):
        project = current.get(slug)
        if project is None or not project.accepted:
            stale.append(StaleFact(slug, slug, then["version"], None, []))
        elif project.version != then["version"]:
            changes = diff_documents(then["document"], project_document_data(project))
            stale.append(StaleFact(slug, project.name, then["version"], project.version, changes))
    return stale


@dataclass
class MetricDelta:
    name: str
    original: float
    rerun: float

    @property
    def disagrees(self) -> bool:
        scale = max(abs(self.original), 1e-9)
        return abs(self.rerun - self.original) / scale > DISAGREE_RELATIVE


@dataclass
class RerunPair:
    original: SimulationRun
    rerun: SimulationRun
    deltas: list[MetricDelta] = field(default_factory=list)

    @property
    def finished(self) -> bool:
        return self.original.is_finished and self.rerun.is_finished

    @property
    def same_run(self) -> bool:
        """The simulator did not change, so the stored result was returned."""
        return self.original.pk == self.rerun.pk

    @property
    def disagreements(self) -> list[MetricDelta]:
        return [d for d in self.deltas if d.disagrees]


def decision_reruns(record: DecisionRecord) -> list[RerunPair]:
    """The latest re-run of the record's evidence, each run beside its original."""
    event = DecisionEvent.objects.filter(record=record, action="rerun").order_by("-at", "-id").first()
    if event is None:
        return []
    pairs = [(int(a), int(b)) for a, b in event.data.get("pairs", [])]
    runs = {r.pk: r for r in SimulationRun.objects.filter(pk__in={pk for pair in pairs for pk in pair}).defer("scenario", "timeseries")}
    out = []
    for a, b in pairs:
        if a not in runs or b not in runs:
            continue
        pair = RerunPair(runs[a], runs[b])
        if pair.finished:
            old, new = flatten_metrics(runs[a].metrics), flatten_metrics(runs[b].metrics)
            pair.deltas = [MetricDelta(k, old[k], new[k]) for k in sorted(old) if k in new and old[k] != new[k]]
        out.append(pair)
    return out


# --- the organisation's radar ------------------------------------------------------------------

QUADRANTS = (
    "Data plane: sharing and device hand-off",
    "Scheduling and pod orchestration (L2-L3)",
    "Workloads, admission and quota (L0-L1)",
    "Platform and operations",
)
RING_NAMES = {"adopt": "Adopt", "trial": "Trial", "assess": "Assess", "hold": "Hold"}
RING_COLORS = {"adopt": "#5ba300", "trial": "#009eb0", "assess": "#c7ba00", "hold": "#e09b96"}


def quadrant_of(placement: dict) -> int:
    maps = placement.get("maps", {})
    plane = maps.get("planes", {}).get("primary")
    layer = maps.get("control-plane", {}).get("primary")
    if plane == "data" or layer == "L4":
        return 0
    if layer in ("L2", "L3"):
        return 1
    if layer in ("L0", "L1"):
        return 2
    return 3


@dataclass
class RadarEntry:
    slug: str
    name: str
    ring: str
    quadrant: int
    reason: str
    decision_id: int
    decision_title: str
    x: float = 0.0
    y: float = 0.0

    @property
    def ring_name(self) -> str:
        return RING_NAMES[self.ring]


def radar_entries(ring: str | None = None) -> list[RadarEntry]:
    rows = ProjectRing.objects.select_related("project", "decision").filter(project__accepted=True)
    if ring:
        rows = rows.filter(ring=ring)
    entries = [
        RadarEntry(
            slug=r.project.slug,
            name=r.project.name,
            ring=r.ring,
            quadrant=quadrant_of(r.project.placement),
            reason=r.reason,
            decision_id=r.decision_id,
            decision_title=r.decision.title,
        )
        for r in rows
    ]
    entries.sort(key=lambda e: (e.quadrant, RING_ORDER.index(e.ring), e.name.lower()))
    _place(entries)
    return entries


def _place(entries: list[RadarEntry], radius: float = 200.0) -> None:
    """Spread the entries of each (quadrant, ring) cell evenly over its arc, for the SVG view."""
    cells: dict[tuple[int, str], list[RadarEntry]] = {}
    for e in entries:
        cells.setdefault((e.quadrant, e.ring), []).append(e)
    band = radius / len(RING_ORDER)
    for (quadrant, ring), members in cells.items():
        r = band * (RING_ORDER.index(ring) + 0.5)
        start = quadrant * math.pi / 2
        for i, e in enumerate(members):
            angle = start + (i + 1) * (math.pi / 2) / (len(members) + 1)
            e.x, e.y = round(radius + r * math.cos(angle), 1), round(radius - r * math.sin(angle), 1)


def _plain_text(text: str) -> str:
    """A reason as text: the JSON is read by renderers that may use it as HTML, so it carries none."""
    import html

    from django.utils.html import strip_tags

    return html.unescape(strip_tags(text or ""))


def radar_export(base_url: str, date: datetime) -> dict:
    """The radar in the JSON Zalando's tech-radar (radar_visualization) takes: quadrants, rings and
    entries with quadrant/ring indexes, label, link, active and moved."""
    return {
        "title": "GPU platform radar",
        "date": date.date().isoformat(),
        "quadrants": [{"name": q} for q in QUADRANTS],
        "rings": [{"name": RING_NAMES[r].upper(), "color": RING_COLORS[r]} for r in RING_ORDER],
        "entries": [
            {
                "label": e.name,
                "quadrant": e.quadrant,
                "ring": RING_ORDER.index(e.ring),
                "moved": 0,
                "active": True,
                "link": f"{base_url}/projects/{e.slug}/",
                "description": _plain_text(e.reason),
                "decision": f"{base_url}/decisions/{e.decision_id}/",
            }
            for e in radar_entries()
        ],
    }


def project_ring(project: Project) -> ProjectRing | None:
    return ProjectRing.objects.select_related("decision").filter(project=project).first()


def ring_by_project_id() -> dict[int, str]:
    return dict(ProjectRing.objects.values_list("project_id", "ring"))


# --- the feed ----------------------------------------------------------------------------------


@dataclass
class FeedItem:
    kind: str  # decision | catalog
    title: str
    description: str
    path: str
    at: datetime
    guid: str


def feed_items(limit: int = 50) -> list[FeedItem]:
    """Accepted decisions and accepted catalog changes, newest first."""
    items = [
        FeedItem(
            "decision",
            f"Decision accepted: ADR-{d.pk} {d.title}",
            d.consequences or d.context_text or d.reason,
            f"/decisions/{d.pk}/",
            d.decided_at or d.created_at,
            f"decision-{d.pk}",
        )
        for d in DecisionRecord.objects.filter(status__in=[DecisionRecord.ACCEPTED, DecisionRecord.SUPERSEDED])
        .exclude(decided_at=None)
        .order_by("-decided_at")[:limit]
    ]
    items += [
        FeedItem(
            "catalog",
            f"Catalog change: {r.project.name} version {r.number}",
            r.reason,
            f"/projects/{r.project.slug}/history/",
            r.reviewed_at or r.created_at,
            f"revision-{r.pk}",
        )
        for r in Revision.objects.filter(status=Revision.ACCEPTED).select_related("project").order_by("-created_at")[:limit]
    ]
    items.sort(key=lambda i: i.at, reverse=True)
    return items[:limit]
