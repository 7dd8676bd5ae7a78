"""Reads of decision records: staleness against the current catalog, re-run comparisons, the
organisation's radar (and its export in Zalando's tech-radar JSON), and the feed's items."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import QuerySet

from placement.catalog.models import Project
from placement.catalog.selectors.catalog import project_document_data
from placement.decisions.document import RING_ORDER
from placement.decisions.models import DecisionEvent, DecisionRecord, ProjectRing
from placement.evidence.models import SimulationRun
from placement.evidence.selectors.runs import flatten_metrics, scenario_label
from placement.review.diff import Change, diff_documents
from placement.review.models import Revision
from scheduler_core.labels import LABELS, headline

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
    number: int = 0  # the blip's number, the same on the drawing and in the quadrant lists
    previous_ring: str = ""  # the ring the decision before this one gave it ("" when new)
    x: float = 0.0
    y: float = 0.0

    @property
    def ring_name(self) -> str:
        return RING_NAMES[self.ring]

    @property
    def moved(self) -> int:
        """Zalando's convention: 0 unchanged, 1 moved in (towards adopt), -1 moved out, 2 new."""
        if not self.previous_ring:
            return 2
        before, now = RING_ORDER.index(self.previous_ring), RING_ORDER.index(self.ring)
        return 0 if before == now else (1 if now < before else -1)

    @property
    def moved_text(self) -> str:
        return {2: "new", 1: f"moved in from {RING_NAMES.get(self.previous_ring, '')}",
                -1: f"moved out from {RING_NAMES.get(self.previous_ring, '')}", 0: ""}[self.moved]


def _previous_rings(rows) -> dict[int, str]:
    """Per ProjectRing row, the ring the accepted decision before the one that set it gave the project."""
    history = list(
        DecisionRecord.objects.filter(status__in=[DecisionRecord.ACCEPTED, DecisionRecord.SUPERSEDED], decided_at__isnull=False)
        .order_by("decided_at", "id")
        .values_list("id", "decided_at", "rings")
    )
    found: dict[int, str] = {}
    for row in rows:
        before = ""
        for decision_id, _at, rings in history:
            if decision_id == row.decision_id:
                break
            for ring in rings or []:
                if ring.get("project") == row.project.slug and ring.get("ring") in RING_ORDER:
                    before = ring["ring"]
        found[row.pk] = before
    return found


def radar_entries(ring: str | None = None) -> list[RadarEntry]:
    rows = list(ProjectRing.objects.select_related("project", "decision").filter(project__accepted=True))
    previous = _previous_rings(rows)
    entries = [
        RadarEntry(
            slug=r.project.slug,
            name=r.project.name,
            ring=r.ring,
            quadrant=quadrant_of(r.project.placement),
            reason=r.reason,
            decision_id=r.decision_id,
            decision_title=r.decision.title,
            previous_ring=previous[r.pk],
        )
        for r in rows
    ]
    entries.sort(key=lambda e: (e.quadrant, RING_ORDER.index(e.ring), e.name.lower()))
    for number, entry in enumerate(entries, start=1):
        entry.number = number  # numbered over the whole radar, so a filter keeps each blip's number
    if ring:
        entries = [e for e in entries if e.ring == ring]
    _place(entries)
    return entries


RADAR_RADIUS = 250.0  # the SVG's radius in user units (viewBox 0 0 500 500)
# Outer edge of each ring as a share of the radius: the inner ring is widest, as on Zalando's radar,
# because it has the least arc length per unit of width.
RING_EDGES = (0.34, 0.56, 0.78, 1.0)
BLIP_SPACING = 22.0  # centre to centre: a numbered blip is 9 units in radius
AXIS_CLEARANCE = 22.0  # from a blip's centre to an axis: room for the ring labels drawn along it


def _slots(quadrant: int, ring_index: int, radius: float, spacing: float = BLIP_SPACING) -> list[tuple[float, float]]:
    """Positions for blips in one (quadrant, ring) cell, none closer than `spacing` to another, nor
    than AXIS_CLEARANCE to the axes or half a spacing to the ring lines: arcs inside the band, filled
    from its middle outwards and inwards."""
    low = RING_EDGES[ring_index - 1] * radius if ring_index else 0.0
    high = RING_EDGES[ring_index] * radius
    inner, outer = max(low + spacing / 2, AXIS_CLEARANCE * 1.2), high - spacing / 2
    arcs, r = [], inner
    while r <= outer + 0.01:
        arcs.append(r)
        r += spacing
    middle = (inner + outer) / 2
    arcs.sort(key=lambda a: abs(a - middle))
    start = quadrant * math.pi / 2
    slots = []
    for r in arcs:
        pad = math.asin(min(1.0, AXIS_CLEARANCE / r))
        span = math.pi / 2 - 2 * pad
        if span <= 0:
            continue
        count = int(span * r // spacing) + 1  # both ends of the arc are usable
        for i in range(count):
            angle = start + pad + (span * i / (count - 1) if count > 1 else span / 2)
            slots.append((round(radius + r * math.cos(angle), 1), round(radius - r * math.sin(angle), 1)))
    return slots


def _place(entries: list[RadarEntry], radius: float = RADAR_RADIUS) -> None:
    """Give each blip its own slot in its (quadrant, ring) cell. A cell with more blips than slots
    (dozens of projects in one ring of one quadrant) reuses slots from the start with a small offset."""
    cells: dict[tuple[int, str], list[RadarEntry]] = {}
    for e in entries:
        cells.setdefault((e.quadrant, e.ring), []).append(e)
    for (quadrant, ring), members in cells.items():
        spacing = BLIP_SPACING
        slots = _slots(quadrant, RING_ORDER.index(ring), radius, spacing)
        while len(slots) < len(members) and spacing > 19:  # blips may touch before they overlap
            spacing -= 0.5
            slots = _slots(quadrant, RING_ORDER.index(ring), radius, spacing)
        for i, e in enumerate(members):
            x, y = slots[i % len(slots)]
            shift = (i // len(slots)) * 4.0
            e.x, e.y = x + shift, y + shift


RING_MEANINGS = {
    "adopt": "the default choice for the platform",
    "trial": "in use on real workloads, ready for wider use",
    "assess": "worth exploring with a spike or a pilot",
    "hold": "do not start new use",
}
QUADRANT_POSITIONS = ("Top right", "Top left", "Bottom left", "Bottom right")  # counter-clockwise from 0 rad


def radar_layout(entries: list[RadarEntry]) -> dict:
    """What the radar page draws beside the blips: ring bands with labels and legends, and the
    numbered list of each quadrant."""
    fills = ("#eef5e6", "#e6f4f6", "#f7f5e0", "#fbefee")
    edges = (0.0, *RING_EDGES)
    bands = [
        {
            "name": RING_NAMES[r], "color": RING_COLORS[r], "meaning": RING_MEANINGS[r],
            "outer": round(RADAR_RADIUS * edges[i + 1], 1), "fill": fills[i],
            "label_x": round(RADAR_RADIUS * (1 + (edges[i] + edges[i + 1]) / 2), 1),
        }
        for i, r in enumerate(RING_ORDER)
    ]
    bands.reverse()  # outer circles first, so inner ones paint over them
    quadrants = [
        {"name": name, "position": QUADRANT_POSITIONS[i], "entries": [e for e in entries if e.quadrant == i]}
        for i, name in enumerate(QUADRANTS)
    ]
    return {"ring_bands": bands, "quadrant_lists": quadrants}


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
                "moved": e.moved,
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


# --- the board pack ----------------------------------------------------------------------------

# The evidence chart's bars: shares in [0, 1] where more is better, so one axis serves them all.
PACK_CHART_METRICS = ("utilisation.allocated", "utilisation.effective", "fairness.jain_index")
PACK_CHART_LABELS = {"fairness.jain_index": "Fairness between tenants (Jain)"}  # fits the chart's label column


@dataclass
class PackRun:
    pk: int
    stack_name: str
    scenario: str
    seed: int
    status: str
    chosen: bool
    headline: list[tuple[str, str, bool]]
    bars: list[tuple[str, float]]  # (label, share 0..1) for PACK_CHART_METRICS the run has


@dataclass
class PackFact:
    slug: str
    name: str
    version: int
    layer: str
    unit: str
    promise: str
    non_promise: list[str]


@dataclass
class BoardPack:
    record: DecisionRecord
    options: list[dict]
    runs: list[PackRun]
    facts: list[PackFact]
    rings: list[dict]
    stale: list[StaleFact]
    chart: dict = field(default_factory=dict)


def board_pack(record: DecisionRecord) -> BoardPack:
    """One record as the board reads it on one page: the options (the chosen one marked), the
    evidence runs with their headline metrics and a chart, the catalog facts as they were when the
    record was proposed, the rings and whether any fact changed since."""
    names = dict(Project.objects.values_list("slug", "name"))  # projects by name, never by slug
    options = [
        {"name": s.name, "pk": s.pk, "chosen": s.pk == record.chosen_id, "projects": [names.get(p, p) for p in s.project_slugs]}
        for s in record.options.all().order_by("pk")
    ]
    runs = []
    for run in record.evidence_runs.select_related("stack").defer("scenario", "timeseries").order_by("pk"):
        flat = flatten_metrics(run.metrics)
        runs.append(
            PackRun(
                pk=run.pk, stack_name=run.stack.name if run.stack else "—", scenario=scenario_label(run.scenario_name), seed=run.seed,
                status=run.status, chosen=run.stack_id == record.chosen_id,
                headline=headline(run.metrics) if isinstance(run.metrics, dict) else [],
                bars=[(PACK_CHART_LABELS.get(m) or LABELS.get(m, m), max(0.0, min(1.0, float(flat[m]))))
                      for m in PACK_CHART_METRICS if m in flat],
            )
        )
    facts = []
    for slug, then in sorted((record.relied_on or {}).items()):
        placement = then["document"].get("placement", {})
        facts.append(
            PackFact(
                slug=slug, name=then["document"].get("name", slug), version=then["version"],
                layer=placement.get("maps", {}).get("control-plane", {}).get("primary", ""),
                unit=placement.get("primary_unit") or next(iter(placement.get("resource_units", [])), ""),
                promise=placement.get("promise", ""), non_promise=list(placement.get("non_promise", []))[:3],
            )
        )
    rings = [{**r, "ring_name": RING_NAMES.get(r.get("ring"), r.get("ring", "")), "project_name": names.get(r.get("project"), r.get("project"))}
             for r in record.rings or []]
    return BoardPack(record, options, runs, facts, rings, decision_staleness(record), _pack_chart(runs))


def _pack_chart(runs: list[PackRun]) -> dict:
    """A static SVG bar chart (no JavaScript, so it prints): one group of bars per run."""
    rows, y = [], 24
    for run in runs:
        if not run.bars:
            continue
        bars = []
        for i, (label, share) in enumerate(run.bars):
            bars.append({"label": label, "share": share, "percent": round(share * 100, 1), "y": y + 16 + i * 18,
                         "width": round(share * 340, 1), "color": ("#2563eb", "#16a34a", "#9333ea")[i % 3]})
        rows.append({"title": f"run {run.pk}: {run.stack_name}" + (" (chosen)" if run.chosen else ""), "y": y + 8, "bars": bars})
        y += 24 + 18 * len(run.bars)
    return {"rows": rows, "height": y + 8} if rows else {}
