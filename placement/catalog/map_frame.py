"""The map's first frame: the plotly figure of `map_figure` drawn as static SVG on the server.

The page shows it with the HTML, before plotly.js (1.1 MB) is parsed and has drawn the interactive
figure, which then replaces it. It is a rendering of the same figure dict, not a second map: the same
bands, points, colours, labels and links, at the same places and the same height, so nothing moves when
plotly takes over. Pure: no Django, reads nothing but the figure.

Geometry follows plotly's: the plot area is the container's width less the left and right margins, so
x is written in percent of an inner SVG that spans exactly that area, y in pixels of `layout.height`
less the top and bottom margins. Text is plotly's subset (`<b>`, `<i>`, `<br>`, entities already
escaped by `map_figure`; any other markup is escaped here).
"""

from __future__ import annotations

import re
from html import escape

LINE_EM = 1.3  # plotly's line height for multi-line text, in em
TAG = re.compile(r"(<br>|<b>|</b>|<i>|</i>)")
ENTITY_SAFE = re.compile(r"&(?!(amp|lt|gt|quot|#\d+);)")


def _text(part: str) -> str:
    """Text between plotly's tags: entities `map_figure` wrote stay, any other markup is escaped."""
    return ENTITY_SAFE.sub("&amp;", part).replace("<", "&lt;").replace(">", "&gt;")


def _attr(value) -> str:
    return escape(str(value), quote=True)


def _tspans(text: str, x: str, dx: float = 0.0, anchor_middle: bool = True) -> str:
    """plotly's text subset as SVG tspans: one line per `<br>`, bold and italic runs kept."""
    lines: list[list[tuple[str, bool, bool]]] = [[]]
    bold = italic = False
    for part in TAG.split(text):
        if part == "<br>":
            lines.append([])
        elif part in ("<b>", "</b>"):
            bold = part == "<b>"
        elif part in ("<i>", "</i>"):
            italic = part == "<i>"
        elif part:
            lines[-1].append((_text(part), bold, italic))
    first = -(len(lines) - 1) * LINE_EM / 2 if anchor_middle else 0.0
    out = []
    for n, runs in enumerate(lines):
        dy = f"{first + 0.35:.2f}em" if n == 0 else f"{LINE_EM}em"
        body = "".join(_run(s, b, i) for s, b, i in runs)
        out.append(f'<tspan x="{x}" dx="{dx:g}" dy="{dy}">{body}</tspan>')
    return "".join(out)


def _run(text: str, bold: bool, italic: bool) -> str:
    if not (bold or italic):
        return text
    weight = ' font-weight="bold"' if bold else ""
    style = ' font-style="italic"' if italic else ""
    return f"<tspan{weight}{style}>{text}</tspan>"


class _Axes:
    def __init__(self, layout: dict):
        self.x0, self.x1 = layout["xaxis"]["range"]
        bottom, top = layout["yaxis"]["range"]
        margin = layout["margin"]
        self.height = layout["height"] - margin["t"] - margin["b"]
        self.bottom, self.top = bottom, top

    def x(self, value: float) -> str:
        return f"{(value - self.x0) / ((self.x1 - self.x0) or 1) * 100:.3f}%"

    def y(self, value: float) -> float:
        return round((self.top - value) / ((self.top - self.bottom) or 1) * self.height, 1)


def _shapes(layout: dict, axes: _Axes) -> list[str]:
    out = []
    for s in layout.get("shapes", []):
        if s.get("type") != "rect" or s.get("xref") != "x" or s.get("yref") != "y":
            continue
        x0, x1 = sorted((s["x0"], s["x1"]))
        top, bottom = sorted((axes.y(s["y0"]), axes.y(s["y1"])))
        line = s.get("line", {})
        out.append(
            f'<rect x="{axes.x(x0)}" y="{top}" width="{(x1 - x0) / ((axes.x1 - axes.x0) or 1) * 100:.3f}%" '
            f'height="{round(bottom - top, 1)}" fill="{_attr(s.get("fillcolor", "none"))}" '
            f'stroke="{_attr(line.get("color", "none"))}" stroke-width="{line.get("width", 0)}"/>'
        )
    return out


def _at(values, i, default):
    return values[i] if isinstance(values, list) else (default if values is None else values)


def _points(trace: dict, axes: _Axes) -> list[str]:
    """A markers(+text) trace: each point a circle (open or filled) and its label, linked to its page."""
    marker = trace.get("marker", {})
    line = marker.get("line", {})
    is_open = str(marker.get("symbol", "circle")).endswith("-open")
    font = trace.get("textfont", {})
    texts = trace.get("text") or []
    out = []
    for i, (x, y) in enumerate(zip(trace.get("x", []), trace.get("y", []))):
        if x is None or y is None:
            continue
        px, py = axes.x(x), axes.y(y)
        size = _at(marker.get("size"), i, 6)
        color = _at(marker.get("color"), i, "#444")
        opacity = _at(marker.get("opacity"), i, 1)
        stroke = _at(line.get("color"), i, "none")
        fill = "none" if is_open else color
        parts = [
            f'<circle cx="{px}" cy="{py}" r="{size / 2:g}" fill="{_attr(fill)}" stroke="{_attr(color if is_open else stroke)}" '
            f'stroke-width="{_at(line.get("width"), i, 0)}" opacity="{opacity}"/>'
        ]
        if "text" in trace.get("mode", "") and i < len(texts):
            parts.append(
                f'<text y="{py}" font-size="{font.get("size", 12)}" fill="{_attr(_at(font.get("color"), i, "#1d2330"))}">'
                f"{_tspans(texts[i], px, dx=size / 2 + 4)}</text>"
            )
        custom = trace.get("customdata")
        url = custom[i][0] if isinstance(custom, list) and i < len(custom) and custom[i] else None
        body = "".join(parts)
        out.append(f'<a href="{_attr(url)}">{body}</a>' if url else body)
    return out


def _annotations(layout: dict, axes: _Axes) -> list[str]:
    """Text annotations in data coordinates and arrows (a stack's contract edges); paper-placed ones
    (the corner label) are drawn with the y-axis labels."""
    out = []
    for a in layout.get("annotations", []):
        if a.get("xref") != "x" or a.get("yref") != "y":
            continue
        font = a.get("font", {})
        color = a.get("arrowcolor") or font.get("color", "#1d2330")
        if a.get("showarrow"):
            out.append(
                f'<line x1="{axes.x(a["ax"])}" y1="{axes.y(a["ay"])}" x2="{axes.x(a["x"])}" y2="{axes.y(a["y"])}" '
                f'stroke="{_attr(color)}" stroke-width="{a.get("arrowwidth", 1)}" opacity="{a.get("opacity", 1)}"/>'
            )
            continue
        if not a.get("text"):
            continue
        anchor = {"left": "start", "right": "end"}.get(a.get("xanchor", "center"), "middle")
        out.append(
            f'<text y="{axes.y(a["y"])}" font-size="{font.get("size", 12)}" fill="{_attr(font.get("color", "#1d2330"))}" '
            f'text-anchor="{anchor}" paint-order="stroke" stroke="#ffffff" stroke-width="3">'
            f'{_tspans(a["text"], axes.x(a["x"]), dx=a.get("xshift", 0))}</text>'
        )
    return out


def _legend(data: list[dict], top: float) -> str:
    """plotly's horizontal legend under the plot, one entry per named trace, widths estimated."""
    x, out = 0.0, []
    for trace in data:
        name = trace.get("name")
        if not name:
            continue
        marker = trace.get("marker", {})
        color = marker.get("color", trace.get("line", {}).get("color", "#444"))
        color = color[0] if isinstance(color, list) and color else color
        if trace.get("mode") == "lines":
            out.append(f'<line x1="{x + 2}" x2="{x + 30}" y1="{top}" y2="{top}" stroke="{_attr(color)}" stroke-width="2.5"/>')
        else:
            is_open = str(marker.get("symbol", "")).endswith("-open")
            out.append(f'<circle cx="{x + 16}" cy="{top}" r="5" fill="{"none" if is_open else _attr(color)}" stroke="{_attr(color)}" stroke-width="1.5"/>')
        out.append(f'<text x="{x + 40}" y="{top}" dy="0.35em" font-size="12">{_tspans(name, f"{x + 40:g}")}</text>')
        x += 50 + 6.6 * len(re.sub(r"<[^>]+>|&\w+;", "x", name))
    return "".join(out)


def first_frame(figure: dict, variant: str = "wide") -> str:
    """The figure as static SVG markup (a string of trusted markup: every value is escaped here);
    `variant` (wide or narrow) names the CSS class that shows it at the page's width."""
    layout = figure["layout"]
    axes = _Axes(layout)
    margin = layout["margin"]
    font = layout.get("font", {})
    xaxis, yaxis = layout["xaxis"], layout["yaxis"]
    plot = _shapes(layout, axes)
    if xaxis.get("showticklabels", True):
        for value, text in zip(xaxis.get("tickvals", []), xaxis.get("ticktext", [])):
            plot.append(f'<text y="-10" text-anchor="middle" font-size="12">{_tspans(text, axes.x(value), anchor_middle=False)}</text>')
    for trace in figure["data"]:
        if trace.get("mode", "").startswith("markers"):
            plot += _points(trace, axes)
    plot += _annotations(layout, axes)
    plot.append(_legend(figure["data"], axes.height + 30))
    side = []
    if yaxis.get("showticklabels", True):
        for value, text in zip(yaxis.get("tickvals", []), yaxis.get("ticktext", [])):
            side.append(f'<text y="{axes.y(value) + margin["t"]}" text-anchor="end" font-size="12">{_tspans(text, str(margin["l"] - 8))}</text>')
    for a in layout.get("annotations", []):
        if a.get("xref") == "paper" and a.get("text"):
            side.append(
                f'<text y="{margin["t"] - 6}" text-anchor="end" font-size="{a.get("font", {}).get("size", 12)}" '
                f'fill="{_attr(a.get("font", {}).get("color", "#1d2330"))}">{_tspans(a["text"], str(margin["l"] - 8), anchor_middle=False)}</text>'
            )
    family = _attr(font.get("family", "sans-serif"))
    return (
        f'<div class="map-first-frame {_attr(variant)}" style="position:relative;height:{layout["height"]}px;font-family:{family}" aria-hidden="true">'
        f'<svg style="position:absolute;left:0;top:0;overflow:visible" width="{margin["l"]}" height="{layout["height"]}" '
        f'fill="{_attr(font.get("color", "#1d2330"))}">{"".join(side)}</svg>'
        f'<svg style="position:absolute;left:{margin["l"]}px;top:{margin["t"]}px;overflow:visible;'
        f'width:calc(100% - {margin["l"] + margin["r"]}px)" height="{axes.height}" fill="{_attr(font.get("color", "#1d2330"))}">'
        f'{"".join(plot)}</svg></div>'
    )
