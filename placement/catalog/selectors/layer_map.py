"""Reads for the interactive layer map: which projects sit where on the chosen view, filtered by the
same facets as the project list, optionally with a saved stack laid over it; and the pure
functions that turn that data into a plotly figure (a plain dict) and into the accessible list.

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

import math
import textwrap
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


# --- pure: data -> plotly figure -------------------------------------------------------------------

SUBCOLUMNS = 2
LINE_PX = 24
LABEL_CHARS = 22  # characters per label line in half a plane column of the wide figure
NARROW_LABEL_CHARS = 40  # and in the one-column phone figure
PLANE_FILL = {"data": "#e8f3ec", "control": "#e9effa", "platform": "#f6efe4"}
PRIMARY_COLOR = "#2456a6"
PENDING_COLOR = "#c77700"
SECONDARY_COLOR = "#5b6475"
MEMBER_COLOR = "#d98e04"
POINT_COLORS = {"advertise": "#1b6e3a", "bind": "#7b3fa0", "allocate": "#0e7c86"}
BROKEN_COLOR = "#b3261e"


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


def _wrap(text: str, width: int = 72) -> str:
    return "<br>".join(textwrap.wrap(_escape(text), width)) or ""


def _escape(text: str) -> str:
    # plotly renders a small HTML subset in text; keep catalog text literal.
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _hover(data: LayerMapData, placed: Placed) -> str:
    p = placed.project
    where = data.layer_names.get((data.view.slug, placed.band), placed.band)
    lines = [f"<b>{_escape(p.name)}</b> · {placed.role} placement: {_escape(where)}"]
    if p.cncf_status:
        lines.append(f"CNCF: {_escape(p.cncf_status)}" + (" · <i>archived</i>" if p.archived else ""))
    if p.pending:
        lines.append("<i>" + ("new project, pending review" if not p.accepted else "change pending review") + "</i>")
    lines.append("<b>Promise:</b> " + _wrap(p.promise))
    if p.non_promise:
        lines.append("<b>Does not promise:</b>")
        lines += ["· " + _wrap(item, 70) for item in p.non_promise[:4]]
        if len(p.non_promise) > 4:
            lines.append(f"· … and {len(p.non_promise) - 4} more")
    lines.append("<i>click to open</i>")
    return "<br>".join(lines)


def _label_lines(name: str, width: int) -> list[str]:
    """A project name on at most four lines of `width` characters (never cut mid-word unless a
    single word is longer than a line)."""
    lines = textwrap.wrap(name, width, break_on_hyphens=False) or [name]
    if len(lines) > 4:
        lines = lines[:4]
        lines[3] = lines[3][: width - 1].rstrip() + "…"
    return lines


def _label_height(lines: int) -> float:
    return 1.0 + 0.5 * (lines - 1)  # in rows of LINE_PX: 24 px for one line, 12 px per extra line


@dataclass
class _Slot:
    placed: Placed
    lines: list[str]
    x: float = 0.0
    y: float = 0.0


def _stack(slots: list[_Slot], top: float, x: float) -> float:
    """Place slots one under another from `top`; returns the height used."""
    offset = 0.0
    for slot in slots:
        h = _label_height(len(slot.lines))
        slot.x, slot.y = round(x, 4), top + offset + h / 2
        offset += h
    return offset


def _split(slots: list[_Slot], parts: int) -> list[list[_Slot]]:
    """Column-major split into `parts` sub-columns of about equal height."""
    total = sum(_label_height(len(s.lines)) for s in slots)
    target = math.ceil(total / parts * 2) / 2
    columns: list[list[_Slot]] = [[]]
    height = 0.0
    for slot in slots:
        h = _label_height(len(slot.lines))
        if columns[-1] and height + h > target and len(columns) < parts:
            columns.append([])
            height = 0.0
        columns[-1].append(slot)
        height += h
    return columns


def layer_map_figure(data: LayerMapData, narrow: bool = False) -> dict:
    """The plotly figure (data + layout) for the map: a pure function of the data.

    Wide: the planes side by side, layers as rows (the figure is at least 1,180 px wide). Narrow
    (a phone): one column, each layer a heading with its planes one under another."""
    row_index = {b.code: i for i, b in enumerate(data.rows)}
    col_index = {b.code: i for i, b in enumerate(data.columns)}
    width = NARROW_LABEL_CHARS if narrow else LABEL_CHARS
    cells: dict[tuple[int, int], list[_Slot]] = defaultdict(list)
    for placed in placements(data):
        if placed.row in row_index and placed.column in col_index:
            cells[(row_index[placed.row], col_index[placed.column])].append(_Slot(placed, _label_lines(placed.project.name, width)))
    for items in cells.values():
        items.sort(key=lambda x: (x.placed.role != "primary", x.placed.project.name.lower()))
    layout_parts = _narrow_layout(data, cells) if narrow else _wide_layout(data, cells)
    total = layout_parts.pop("total")

    members = set(data.overlay.members) if data.overlay else set()
    traces = {
        role: {"x": [], "y": [], "text": [], "hovertext": [], "customdata": [], "opacity": [], "color": [], "textcolor": []}
        for role in ("primary", "secondary")
    }
    position: dict[str, tuple[float, float]] = {}
    for items in cells.values():
        for slot in items:
            placed, p = slot.placed, slot.placed.project
            faded = bool(members) and p.slug not in members or not p.matches
            t = traces[placed.role]
            label = "<br>".join(_escape(line) for line in slot.lines)
            t["x"].append(slot.x)
            t["y"].append(slot.y)
            t["text"].append(label if placed.role == "primary" else f"<i>{label}</i>")
            t["hovertext"].append(_hover(data, placed))
            t["customdata"].append([p.url, p.slug])
            t["opacity"].append(0.35 if faded else 1.0)
            t["color"].append(PENDING_COLOR if p.pending else (PRIMARY_COLOR if placed.role == "primary" else SECONDARY_COLOR))
            t["textcolor"].append("#9aa1ad" if faded else ("#1d2330" if placed.role == "primary" else SECONDARY_COLOR))
            if placed.role == "primary":
                position[p.slug] = (slot.x, slot.y)

    figure_data: list[dict] = []
    for role, symbol in (("primary", "circle"), ("secondary", "circle-open")):
        t = traces[role]
        figure_data.append(
            {
                "type": "scatter",
                "mode": "markers+text",
                "name": "Primary placement" if role == "primary" else "Secondary placement",
                "x": t["x"],
                "y": t["y"],
                "text": t["text"],
                "textposition": "middle right",
                "textfont": {"size": 12, "color": t["textcolor"]},
                "hovertext": t["hovertext"],
                "hoverinfo": "text",
                "customdata": t["customdata"],
                "marker": {
                    "symbol": symbol,
                    "size": 11 if role == "primary" else 10,
                    "color": t["color"],
                    "opacity": t["opacity"],
                    "line": {"width": 1.5 if role == "primary" else 2, "color": "#ffffff" if role == "primary" else t["color"]},
                },
                "cliponaxis": False,
            }
        )

    annotations: list[dict] = []
    if data.overlay:
        on_map = [s for s in data.overlay.members if s in position]
        figure_data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": f"Stack: {_escape(data.overlay.name)}",
                "x": [position[s][0] for s in on_map],
                "y": [position[s][1] for s in on_map],
                "customdata": [[reverse("project-detail", args=[s]), s] for s in on_map],
                "hoverinfo": "skip",
                "marker": {"symbol": "circle-open", "size": 19, "color": MEMBER_COLOR, "line": {"width": 2.5, "color": MEMBER_COLOR}},
            }
        )
        annotations += _edge_annotations(data.overlay.edges, position, figure_data)

    annotations += layout_parts.pop("annotations")
    height = int(total * LINE_PX + (60 if narrow else 110))
    layout = {
        "height": max(height, 320),
        **layout_parts,
        "annotations": annotations,
        "showlegend": True,
        "legend": {"orientation": "h", "x": 0, "y": -0.01, "yanchor": "top", "font": {"size": 12}},
        "hovermode": "closest",
        "hoverlabel": {"align": "left", "bgcolor": "#ffffff", "bordercolor": "#5b6475", "font": {"size": 12, "color": "#1d2330"}},
        "dragmode": False,
        "plot_bgcolor": "#ffffff",
        "paper_bgcolor": "#ffffff",
        "font": {"family": "system-ui, -apple-system, 'Segoe UI', sans-serif", "size": 12, "color": "#1d2330"},
    }
    return {"data": figure_data, "layout": layout}


def _wide_layout(data: LayerMapData, cells: dict[tuple[int, int], list[_Slot]]) -> dict:
    """Rows are the layers, columns the planes; each cell holds two sub-columns of names."""
    rows, columns = range(len(data.rows)), range(len(data.columns))
    split = {key: _split(items, SUBCOLUMNS) for key, items in cells.items()}
    height = {key: max(sum(_label_height(len(s.lines)) for s in part) for part in parts) for key, parts in split.items()}
    row_height = [max([height.get((r, c), 0.0) for c in columns] + [1.0]) for r in rows]
    row_top, y = [], 0.0
    for h in row_height:
        row_top.append(y)
        y += h + 1
    for (r, c), parts in split.items():
        for sub, part in enumerate(parts):
            _stack(part, row_top[r] + 0.5, c + 0.05 + sub * (1.0 / SUBCOLUMNS))
    corner = "Layer ↓ · primary plane →" if data.view.placed_on == "rows" else "Primary layer ↓ · plane →"
    return {
        "total": y or 1.0,
        "annotations": [{
            "xref": "paper", "yref": "paper", "x": 0, "y": 1, "xanchor": "right", "yanchor": "bottom",
            "xshift": -8, "text": corner, "showarrow": False, "font": {"size": 11, "color": SECONDARY_COLOR},
        }],
        "shapes": [
            {
                "type": "rect", "layer": "below", "xref": "x", "yref": "y",
                "x0": c, "x1": c + 1, "y0": row_top[r], "y1": row_top[r] + row_height[r] + 1,
                "fillcolor": PLANE_FILL.get(col.code, "#f3f5f9"), "line": {"color": "#ffffff", "width": 3},
            }
            for r in rows
            for c, col in enumerate(data.columns)
        ],
        "margin": {"l": 200, "r": 16, "t": 40, "b": 70},
        "xaxis": {
            "range": [0, max(len(data.columns), 1)],
            "tickvals": [c + 0.5 for c in columns],
            "ticktext": [f"<b>{_escape(b.name)}</b>" for b in data.columns],
            "side": "top", "showgrid": False, "zeroline": False, "fixedrange": True, "ticks": "",
        },
        "yaxis": {
            "range": [y or 1.0, 0],
            "tickvals": [row_top[r] + (row_height[r] + 1) / 2 for r in rows],
            "ticktext": [_row_label(b) for b in data.rows],
            "showgrid": False, "zeroline": False, "fixedrange": True, "ticks": "",
        },
    }


def _narrow_layout(data: LayerMapData, cells: dict[tuple[int, int], list[_Slot]]) -> dict:
    """One column: each layer a heading, then each plane that holds projects as a coloured band."""
    annotations: list[dict] = []
    shapes: list[dict] = []
    y = 0.0

    def text(at: float, label: str, size: int, color: str = "#1d2330") -> None:
        annotations.append({
            "xref": "x", "yref": "y", "x": 0.01, "y": at, "xanchor": "left", "yanchor": "middle",
            "text": label, "showarrow": False, "font": {"size": size, "color": color},
        })

    for r, band in enumerate(data.rows):
        text(y + 0.6, f"<b>{_escape(band.label)}</b>", 14)
        y += 1.2
        planes = [(c, col) for c, col in enumerate(data.columns) if cells.get((r, c))]
        if not planes:
            text(y + 0.5, "no project on this layer", 12, SECONDARY_COLOR)
            y += 1.0
        for c, col in planes:
            top = y
            text(y + 0.55, f"<b>{_escape(col.name)}</b>", 12, SECONDARY_COLOR)
            y += 1.0 + _stack(cells[(r, c)], y + 1.0, 0.03) + 0.3
            shapes.append({
                "type": "rect", "layer": "below", "xref": "x", "yref": "y", "x0": 0, "x1": 1, "y0": top, "y1": y,
                "fillcolor": PLANE_FILL.get(col.code, "#f3f5f9"), "line": {"color": "#ffffff", "width": 3},
            })
        y += 0.4
    hidden = {"showgrid": False, "zeroline": False, "fixedrange": True, "showticklabels": False, "ticks": ""}
    return {
        "total": y or 1.0,
        "annotations": annotations,
        "shapes": shapes,
        "margin": {"l": 4, "r": 4, "t": 8, "b": 70},
        "xaxis": {"range": [0, 1], **hidden},
        "yaxis": {"range": [y or 1.0, 0], **hidden},
    }


def _row_label(band: Band) -> str:
    if band.label != band.name:
        return f"<b>{_escape(band.code)}</b> " + "<br>".join(textwrap.wrap(_escape(band.name), 22))
    return "<br>".join(textwrap.wrap(f"<b>{_escape(band.name)}</b>", 30))


def _edge_annotations(edges, position, figure_data: list[dict]) -> list[dict]:
    """Arrows (annotations: an arrow from source to target) and a label at the middle; legend
    entries come from empty line traces, one per contract point drawn."""
    annotations: list[dict] = []
    pair_count: dict[frozenset, int] = defaultdict(int)
    shown_points: list[str] = []
    broken = False
    for edge in edges:
        if edge.source not in position or edge.target not in position:
            continue
        (x0, y0), (x1, y1) = position[edge.source], position[edge.target]
        pair = frozenset((edge.source, edge.target))
        k = pair_count[pair]
        pair_count[pair] += 1
        # Parallel offset when two contracts join the same pair (e.g. Advertise and Allocate):
        # shift perpendicular, measured in approximate pixels (a column is ~340 px, a line 24 px).
        if k:
            dx, dy = (x1 - x0) * 340, (y1 - y0) * LINE_PX
            norm = math.hypot(dx, dy) or 1.0
            shift = 7 * k * (1 if k % 2 else -1)
            ox, oy = -dy / norm * shift / 340, dx / norm * shift / LINE_PX
            x0, y0, x1, y1 = x0 + ox, y0 + oy, x1 + ox, y1 + oy
        color = POINT_COLORS.get(edge.point, "#444") if edge.holds else BROKEN_COLOR
        broken = broken or not edge.holds
        if edge.point not in shown_points:
            shown_points.append(edge.point)
        annotations.append(
            {
                "x": x1, "y": y1, "ax": x0, "ay": y0, "xref": "x", "yref": "y", "axref": "x", "ayref": "y",
                "text": "", "showarrow": True, "arrowhead": 2, "arrowsize": 1.2, "arrowwidth": 2.2,
                "arrowcolor": color, "standoff": 9, "startstandoff": 7, "opacity": 0.9,
            }
        )
        units = ", ".join(UNIT_LABELS.get(u, u) for u in edge.units)
        hover = (
            f"<b>{edge.label}</b> ({_escape(', '.join(edge.pools))}, {_escape(units)}): "
            + ("holds" if edge.holds else "<b>does not hold</b>")
            + "<br>"
            + _wrap(edge.reason, 80)
        )
        # Labels of parallel edges sit side by side instead of on top of each other.
        side = {} if not _has_twin(edges, edge) else (
            {"xanchor": "right", "xshift": -3} if k % 2 == 0 else {"xanchor": "left", "xshift": 3}
        )
        annotations.append(
            {
                **side,
                "x": (x0 + x1) / 2, "y": (y0 + y1) / 2, "xref": "x", "yref": "y", "showarrow": False,
                "text": edge.label if edge.holds else f"{edge.label} ✘", "font": {"size": 11, "color": color},
                "bgcolor": "rgba(255,255,255,0.9)", "bordercolor": color, "borderwidth": 1, "borderpad": 2,
                "hovertext": hover, "hoverlabel": {"align": "left", "bgcolor": "#ffffff", "font": {"color": "#1d2330"}},
            }
        )
    for point in shown_points:
        figure_data.append(_legend_line(f"{CONTRACT_LABELS.get(point, point)} contract", POINT_COLORS.get(point, "#444")))
    if broken:
        figure_data.append(_legend_line("Contract does not hold", BROKEN_COLOR))
    return annotations


def _has_twin(edges, edge: ContractEdge) -> bool:
    pair = {edge.source, edge.target}
    return any(other is not edge and {other.source, other.target} == pair for other in edges)


def _legend_line(name: str, color: str) -> dict:
    return {
        "type": "scatter", "mode": "lines", "name": name, "x": [None], "y": [None],
        "line": {"color": color, "width": 2.5}, "hoverinfo": "skip",
    }


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
