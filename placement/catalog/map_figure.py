"""The layer map as a plotly figure (a plain dict), from `LayerMapData`. It reads no database; the wide layout has the three planes as columns, the narrow (phone) layout one column."""

from __future__ import annotations

import math
import textwrap
from collections import defaultdict
from dataclasses import dataclass

from django.urls import reverse

from placement.catalog.selectors.layer_map import (
    CONTRACT_LABELS,
    UNIT_LABELS,
    Band,
    ContractEdge,
    LayerMapData,
    Placed,
    placements,
)

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


