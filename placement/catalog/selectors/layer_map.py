"""Reads for the interactive layer map: which projects sit where on the chosen view, filtered by the
same facets as the project list, optionally with a saved stack laid over it; and the pure
functions that turn that data into the accessible list (the figure: placement.catalog.map_figure).

Every view has the three planes as its columns (data, control, platform), like the table on the
home page. The rows are the layers of the chosen map:

* ``control-plane``: the five layers L0-L4; a project sits in its primary plane's column, on the
  row of its primary layer (filled marker) and of every secondary layer (open marker).
* ``architecture``: the four architecture layers, the same way.
* ``planes``: the planes are the placement itself; rows are the project's primary control-plane
  layer, and a project appears in the column of its primary plane (filled) and of each secondary
  plane (open).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from urllib.parse import urlencode

from django.urls import reverse

from placement.catalog.models import Project
from placement.catalog.schemas import (
    ENFORCEMENT_POINT_LABELS,
    RESOURCE_UNIT_LABELS,
    EnforcementPoint,
    ResourceUnit,
    units_served,
)
from placement.catalog.selectors.catalog import catalog_vocabulary
from placement.review.models import Revision
from placement.stacks.models import Stack

DEFAULT_VIEW = "control-plane"
COLUMN_MAP = "planes"
ROW_MAP_FOR_PLANES = "control-plane"


@dataclass(frozen=True)
class ViewSpec:
    slug: str
    label: str
    # "rows": the view's layers are the rows (columns: primary plane);
    # "columns": the view's layers are the columns (rows: primary control-plane layer).
    placed_on: str


VIEWS: dict[str, ViewSpec] = {
    "control-plane": ViewSpec("control-plane", "Five-layer control-plane map", "rows"),
    "planes": ViewSpec("planes", "Three planes", "columns"),
    "architecture": ViewSpec("architecture", "Four-layer architecture view", "rows"),
}

UNIT_LABELS = {u.value: RESOURCE_UNIT_LABELS[u] for u in ResourceUnit}
ENFORCEMENT_LABELS = {e.value: ENFORCEMENT_POINT_LABELS[e] for e in EnforcementPoint}
CONTRACT_LABELS = {"advertise": "Advertise", "bind": "Bind", "allocate": "Allocate"}


# --- inputs -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MapFilters:
    view: str = DEFAULT_VIEW
    unit: str = ""
    enforcement: str = ""
    capability: str = ""
    pending: bool = False
    stack: int | None = None
    cncf: str = ""  # CNCF status (sandbox, incubating, graduated, none)
    archived: bool = False  # archived projects are hidden unless asked for

    def params(self) -> list[tuple[str, str]]:
        """The filter state as URL parameters, in a fixed order, defaults left out (view kept)."""
        items = [("view", self.view)]
        items += [(k, getattr(self, k)) for k in ("unit", "enforcement", "capability", "cncf") if getattr(self, k)]
        if self.archived:
            items.append(("archived", "1"))
        if self.pending:
            items.append(("pending", "1"))
        if self.stack:
            items.append(("stack", str(self.stack)))
        return items

    def query(self) -> str:
        return urlencode(self.params())

    @property
    def active(self) -> bool:
        return bool(self.unit or self.enforcement or self.capability or self.pending or self.cncf or self.archived)


@dataclass(frozen=True)
class Band:
    code: str
    name: str
    description: str = ""

    @property
    def label(self) -> str:
        return f"{self.code} {self.name}" if self.code.startswith("L") and self.code[1:].isdigit() else self.name


@dataclass(frozen=True)
class MapProject:
    slug: str
    name: str
    kind: str
    promise: str
    non_promise: tuple[str, ...]
    maps: dict[str, tuple[str, tuple[str, ...]]]  # map slug -> (primary code, secondary codes)
    units: tuple[str, ...]
    enforcement: tuple[str, ...]
    capabilities: tuple[str, ...]
    accepted: bool = True
    cncf_status: str = ""
    archived: bool = False
    pending: bool = False  # has a proposal waiting for review (or is a new, not yet accepted project)
    matches: bool = True  # False for stack members shown only because the overlay needs them

    @property
    def url(self) -> str:
        return reverse("project-detail", args=[self.slug])


@dataclass(frozen=True)
class ContractEdge:
    """One contract joining two projects of a stack, drawn source -> target on the map."""

    source: str
    target: str
    point: str
    pools: tuple[str, ...]
    units: tuple[str, ...]
    holds: bool
    reason: str

    @property
    def label(self) -> str:
        return CONTRACT_LABELS.get(self.point, self.point.title())


@dataclass(frozen=True)
class StackOverlay:
    id: int
    name: str
    members: tuple[str, ...]
    edges: tuple[ContractEdge, ...]
    contracts: tuple[dict, ...]  # the stack's contract checks as stored, for the text listing
    missing: tuple[str, ...] = ()  # members no longer in the accepted catalog


@dataclass
class LayerMapData:
    view: ViewSpec
    rows: list[Band]
    columns: list[Band]
    projects: list[MapProject]
    filters: MapFilters
    overlay: StackOverlay | None = None
    layer_names: dict[tuple[str, str], str] = field(default_factory=dict)


# --- reads --------------------------------------------------------------------------------------


def _map_project(project: Project, placement: dict, *, pending: bool) -> MapProject | None:
    try:
        maps = {
            slug: (placed["primary"], tuple(placed.get("secondary") or ()))
            for slug, placed in (placement.get("maps") or {}).items()
        }
        return MapProject(
            slug=project.slug,
            name=project.name,
            kind=project.kind,
            promise=placement.get("promise", ""),
            non_promise=tuple(placement.get("non_promise") or ()),
            maps=maps,
            units=tuple(units_served(placement)),
            enforcement=tuple(placement.get("enforcement_points") or ()),
            capabilities=tuple(placement.get("capabilities") or ()),
            cncf_status=(placement.get("landscape") or {}).get("cncf_status", ""),
            archived=bool((placement.get("landscape") or {}).get("archived")),
            accepted=project.accepted,
            pending=pending,
        )
    except (KeyError, TypeError, AttributeError):
        return None  # a malformed stored placement stays off the map rather than breaking it


def _matches(p: MapProject, filters: MapFilters) -> bool:
    if filters.unit and filters.unit not in p.units:
        return False
    if filters.enforcement and filters.enforcement not in p.enforcement:
        return False
    if filters.capability and filters.capability not in p.capabilities:
        return False
    if filters.cncf and filters.cncf != p.cncf_status:
        return False
    if p.archived and not filters.archived:
        return False
    if filters.pending and not p.pending:
        return False
    if not filters.pending and not p.accepted:
        return False
    return True


def stack_choices() -> list[tuple[int, str]]:
    return list(Stack.objects.order_by("-created_at", "-id").values_list("pk", "name")[:200])


def layer_map_data(filters: MapFilters) -> LayerMapData:
    """Everything the figure and the list need, in a fixed number of queries."""
    view = VIEWS.get(filters.view, VIEWS[DEFAULT_VIEW])
    vocabulary = catalog_vocabulary()
    layers = {m.slug: [Band(l.code, l.name, l.description) for l in m.layers] for m in vocabulary.maps}
    layer_names = {(m, b.code): b.label for m, bands in layers.items() for b in bands}
    if view.placed_on == "rows":
        rows, columns = layers.get(view.slug, []), layers.get(COLUMN_MAP, [])
    else:
        rows, columns = layers.get(ROW_MAP_FOR_PLANES, []), layers.get(view.slug, [])

    # Proposals waiting for review: accepted projects with a proposed change, and new projects
    # (never accepted) whose first proposal is in the queue; the latter are placed as proposed.
    proposed: dict[int, dict] = {}
    for project_id, document in Revision.objects.filter(status=Revision.PROPOSED).order_by("created_at", "id").values_list(
        "project_id", "document"
    ):
        proposed[project_id] = document
    candidates = Project.objects.filter(accepted=True) | Project.objects.filter(pk__in=list(proposed))
    stack = Stack.objects.filter(pk=filters.stack).first() if filters.stack else None
    members = list(dict.fromkeys((stack.composition or {}).get("components", []))) if stack else []

    projects: list[MapProject] = []
    present: set[str] = set()
    for project in candidates.only("slug", "name", "kind", "placement", "accepted").order_by("name", "slug"):
        placement = project.placement
        if not project.accepted and project.pk in proposed:
            placement = (proposed[project.pk] or {}).get("placement") or placement
        item = _map_project(project, placement or {}, pending=project.pk in proposed)
        if item is None:
            continue
        if _matches(item, filters):
            projects.append(item)
        elif project.accepted and project.slug in members:
            projects.append(replace(item, matches=False))
        else:
            continue
        present.add(item.slug)

    overlay = None
    if stack is not None:
        composition = stack.composition or {}
        overlay = StackOverlay(
            id=stack.pk,
            name=stack.name,
            members=tuple(members),
            edges=tuple(contract_edges(composition)),
            contracts=tuple(composition.get("contracts") or ()),
            missing=tuple(m for m in members if m not in present),
        )
    return LayerMapData(
        view=view, rows=rows, columns=columns, projects=projects, filters=filters, overlay=overlay, layer_names=layer_names
    )


# --- stack overlay: contract edges -----------------------------------------------------------------


def contract_edges(composition: dict) -> list[ContractEdge]:
    """The stack's contract checks as edges between its slot projects, per pool:

    * Advertise: the pool's device handoff (and whoever else advertises) -> the data-plane unit
      mechanism that creates the unit (MIG, HAMi-core, MPS...). Whole GPUs have no such project.
    * Bind: the device handoff that advertises the unit -> each project that binds or admits it
      (the scheduler, and e.g. Kueue counting it in quota).
    * Allocate: the allocating projects -> the data-plane unit; for whole GPUs (no unit project)
      the scheduler that bound the pod -> the device handoff that hands the GPU over.

    When one project plays both data-plane roles (HAMi is handoff and unit) or there is no unit
    project, Advertise goes to the scheduler that reads what is advertised and Allocate comes from
    the scheduler that bound the pod, so each contract point of the stack is drawn. Self-edges are
    dropped; the same edge in several pools is drawn once, naming every pool.
    """
    handoff: dict[str, str] = {}
    unit_project: dict[str, str] = {}
    scheduler = ""
    for slot in composition.get("slots") or ():
        project = (slot.get("project") or {}).get("slug")
        if project and slot.get("slot") == "scheduling_policy":
            scheduler = project
        if not project or not slot.get("pool"):
            continue
        if slot.get("slot") == "device_handoff":
            handoff[slot["pool"]] = project
        elif slot.get("slot") == "data_plane_unit":
            unit_project[slot["pool"]] = project

    binders: dict[str, list[str]] = defaultdict(list)
    for contract in composition.get("contracts") or ():
        if contract.get("point") == "bind":
            binders[contract.get("pool", "")] += list(contract.get("by") or ())

    merged: dict[tuple[str, str, str], dict] = {}

    def add(source: str | None, target: str | None, contract: dict) -> None:
        if not source or not target or source == target:
            return
        key = (source, target, contract["point"])
        entry = merged.setdefault(key, {"pools": [], "units": [], "holds": True, "reasons": []})
        if contract.get("pool") and contract["pool"] not in entry["pools"]:
            entry["pools"].append(contract["pool"])
        if contract.get("unit") and contract["unit"] not in entry["units"]:
            entry["units"].append(contract["unit"])
        entry["holds"] = entry["holds"] and bool(contract.get("holds"))
        if contract.get("reason") and contract["reason"] not in entry["reasons"]:
            entry["reasons"].append(contract["reason"])

    def binder_besides(pool: str, project: str | None) -> str | None:
        """The scheduler that bound the pod (else another binder), other than `project`."""
        candidates = [scheduler] + binders.get(pool, [])
        return next((c for c in candidates if c and c != project), None)

    for contract in composition.get("contracts") or ():
        if contract.get("point") == "quota":  # the map draws the admission side of Bind (quota gates binding)
            contract = {**contract, "point": "bind"}
        point, pool = contract.get("point"), contract.get("pool", "")
        by = list(contract.get("by") or ())
        unit = unit_project.get(pool)
        if point == "advertise":
            for source in by or [handoff.get(pool)]:
                add(source, unit if unit and unit != source else binder_besides(pool, source), contract)
        elif point == "bind":
            for target in by:
                add(handoff.get(pool), target, contract)
        elif point == "allocate":
            for target in by or [handoff.get(pool)]:
                if unit and unit != target:
                    add(target, unit, contract)
                else:
                    add(binder_besides(pool, target), target, contract)

    return [
        ContractEdge(
            source=source,
            target=target,
            point=point,
            pools=tuple(entry["pools"]),
            units=tuple(entry["units"]),
            holds=entry["holds"],
            reason=" ".join(entry["reasons"]),
        )
        for (source, target, point), entry in merged.items()
    ]


@dataclass(frozen=True)
class Placed:
    project: MapProject
    row: str
    column: str
    role: str  # primary | secondary
    band: str  # the layer code on the view's own map (the placement this marker stands for)


def placements(data: LayerMapData) -> list[Placed]:
    """One marker per (project, placement on the view's map)."""
    out: list[Placed] = []
    for p in data.projects:
        own = p.maps.get(data.view.slug)
        if own is None:
            continue
        primary, secondary = own
        if data.view.placed_on == "rows":
            plane = p.maps.get(COLUMN_MAP)
            if plane is None:
                continue
            out.append(Placed(p, primary, plane[0], "primary", primary))
            out += [Placed(p, code, plane[0], "secondary", code) for code in secondary]
        else:
            layer = p.maps.get(ROW_MAP_FOR_PLANES)
            if layer is None:
                continue
            out.append(Placed(p, layer[0], primary, "primary", primary))
            out += [Placed(p, layer[0], code, "secondary", code) for code in secondary]
    return out



# --- pure: data -> accessible list -----------------------------------------------------------------


@dataclass
class ListEntry:
    project: MapProject
    role: str
    in_stack: bool


@dataclass
class ListGroup:
    band: Band
    entries: list[ListEntry]


def layer_map_groups(data: LayerMapData) -> list[ListGroup]:
    """The same placement as a list grouped by the view's own layers: primary placements first."""
    own = data.rows if data.view.placed_on == "rows" else data.columns
    members = set(data.overlay.members) if data.overlay else set()
    by_band: dict[str, list[ListEntry]] = defaultdict(list)
    for placed in placements(data):
        by_band[placed.band].append(ListEntry(placed.project, placed.role, placed.project.slug in members))
    groups = []
    for band in own:
        entries = sorted(by_band.get(band.code, []), key=lambda e: (e.role != "primary", e.project.name.lower()))
        groups.append(ListGroup(band=band, entries=entries))
    return groups


def contract_rows(data: LayerMapData) -> list[dict]:
    """The overlay's contract checks with project names, for the list and the captions."""
    if not data.overlay:
        return []
    names = {p.slug: p.name for p in data.projects}
    rows = []
    for c in data.overlay.contracts:
        rows.append(
            {
                "point": CONTRACT_LABELS.get(c.get("point", ""), c.get("point", "")),
                "pool": c.get("pool", ""),
                "unit": UNIT_LABELS.get(c.get("unit", ""), c.get("unit", "")),
                "holds": bool(c.get("holds")),
                "by": [(s, names.get(s, s)) for s in c.get("by") or ()],
                "reason": c.get("reason", ""),
            }
        )
    return rows


def describe(data: LayerMapData) -> str:
    """One sentence saying what is on the map (the figure's text alternative and captions)."""
    count = len({p.slug for p in data.projects if p.matches})
    parts = [f"{data.view.label}: {count} project{'s' if count != 1 else ''}"]
    f = data.filters
    if f.unit:
        parts.append(f"resource unit {UNIT_LABELS.get(f.unit, f.unit)}")
    if f.enforcement:
        parts.append(f"enforcement point {ENFORCEMENT_LABELS.get(f.enforcement, f.enforcement)}")
    if f.capability:
        parts.append(f"capability {f.capability}")
    if f.pending:
        parts.append("pending review")
    text = ", ".join(parts)
    if data.overlay:
        text += f"; stack {data.overlay.name} laid over with {len(data.overlay.edges)} contract edges"
        outside = [p.name for p in data.projects if not p.matches]
        if outside:
            text += f" (its members outside the filters are shown faded: {', '.join(outside)})"
    return text + "."
