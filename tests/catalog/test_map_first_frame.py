"""The map's first frame: the plotly figure drawn as SVG by the server, shown with the HTML before
plotly.js has run. It must be the same map (every project, linked, in its band) and safe markup."""

from __future__ import annotations

import re

import pytest

from placement.catalog.map_figure import layer_map_figure
from placement.catalog.map_frame import first_frame
from placement.catalog.selectors.layer_map import MapFilters, layer_map_data


def _frame_links(html: str) -> list[str]:
    return re.findall(r'<a href="([^"]+)">', html)


def _label_lines(text: str) -> list[str]:
    return [re.sub(r"</?[bi]>", "", line) for line in text.split("<br>")]


@pytest.mark.django_db
@pytest.mark.parametrize("narrow", [False, True], ids=["wide", "narrow"])
def test_the_first_frame_draws_every_project_of_the_figure_linked_to_its_page(ensure_catalog, narrow):
    figure = layer_map_figure(layer_map_data(MapFilters()), narrow=narrow)
    html = first_frame(figure, "narrow" if narrow else "wide")

    urls = [c[0] for trace in figure["data"] for c in trace.get("customdata", [])]
    assert len(urls) > 50 and sorted(_frame_links(html)) == sorted(urls)
    for trace in figure["data"]:
        for text in trace.get("text", []):
            for line in _label_lines(text):
                assert f">{line}<" in html, f"label line {line!r} not drawn"
    rects = [s for s in figure["layout"]["shapes"] if s["type"] == "rect"]
    assert html.count("<rect ") == len(rects)
    # the same height as plotly's figure, so nothing below moves when plotly replaces the frame
    assert f'height:{figure["layout"]["height"]}px' in html
    assert f'class="map-first-frame {"narrow" if narrow else "wide"}"' in html


def _figure(text: str, url: str) -> dict:
    return {
        "data": [{"type": "scatter", "mode": "markers+text", "name": "Primary", "x": [0.5], "y": [1.0], "text": [text],
                  "customdata": [[url, "x"]], "marker": {"size": 11, "color": ["#2456a6"]}, "textfont": {"size": 12}}],
        "layout": {"height": 400, "margin": {"l": 10, "r": 10, "t": 10, "b": 10}, "shapes": [], "annotations": [],
                   "xaxis": {"range": [0, 1]}, "yaxis": {"range": [2, 0]}},
    }


def test_the_first_frame_escapes_names_and_links_it_did_not_write():
    html = first_frame(_figure('A & B <img src=x onerror=alert(1)> &lt;ok&gt;', '/p/"><script>alert(1)</script>'))
    assert "<img" not in html and "<script" not in html
    assert "A &amp; B &lt;img src=x onerror=alert(1)&gt; &lt;ok&gt;" in html  # entities already escaped stay as they are
    assert '<a href="/p/&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;">' in html


def test_a_label_on_three_lines_is_centred_on_its_marker_with_bold_and_italic_kept():
    html = first_frame(_figure("<i>one<br>two<br><b>three</b></i>", "/p/"))
    lines = re.findall(r"<tspan x=\"[^\"]+\" dx=\"9.5\" dy=\"([^\"]+)\">", html)  # the label: 11 px marker, 4 px gap
    assert lines == ["-0.95em", "1.3em", "1.3em"]  # first line 1.3 em above the middle
    assert 'font-style="italic">one<' in html and 'font-weight="bold" font-style="italic">three<' in html
