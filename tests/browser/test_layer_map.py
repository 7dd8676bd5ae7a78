"""The interactive layer map in a real browser: views, htmx filters kept in the URL, hover, a stack
laid over the map with its contract edges, and the embeddable views inside an iframe."""

from __future__ import annotations

import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from playwright.sync_api import expect

from placement.stacks.services import stacks as rules_services
from tests.browser.conftest import hover_map_point, wait_for_map
from tests.conftest import make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

INFERENCE = {
    "profile": "online_inference",
    "pool": {"gpu_model": "A100-80GB", "gpu_count": 32},
    "constraints": {},
    "slo": {"isolation": "hard", "goal": "latency_sensitive", "multi_tenant": True},
}


@pytest.fixture
def stack(ensure_catalog):
    return rules_services.stack_save(user=make_user("arch", "architect"), request_data=INFERENCE, rank=1, name="Inference stack")


def figure_annotations(page) -> list[str]:
    return page.evaluate("() => document.querySelector('#layer-map-figure').layout.annotations.map(a => a.text)")


def test_map_switches_views_overlays_a_stack_and_filters_in_place(page, stack):
    page.goto(f"/map/?view=control-plane&stack={stack.pk}")
    wait_for_map(page)
    figure = page.locator("#layer-map-figure")

    # The stack: its projects ringed, joined by contract edges labelled with their contract point.
    expect(figure.locator(".legendtext", has_text="Stack: Inference stack")).to_have_count(1)
    labels = figure.locator(".annotation-text")
    expect(labels.filter(has_text=re.compile(r"^Bind$"))).to_have_count(2)  # device plugin -> kube-scheduler, -> Kueue
    expect(labels.filter(has_text=re.compile(r"^Advertise$"))).to_have_count(1)  # device plugin -> MIG
    expect(labels.filter(has_text=re.compile(r"^Allocate$"))).to_have_count(1)
    ringed = page.evaluate(
        "() => document.querySelector('#layer-map-figure').data.find(t => t.name.startsWith('Stack:')).customdata.map(c => c[1])"
    )
    assert {"kueue", "kube-scheduler", "nvidia-device-plugin", "mig"} <= set(ringed)
    checks = len(stack.composition["contracts"])
    expect(page.locator(".map-contracts summary")).to_contain_text(f"Contracts of Inference stack ({checks})")

    # Hover: the promise and the non-promise.
    label = hover_map_point(page, "kueue")
    expect(label).to_contain_text("Kueue")
    expect(label).to_contain_text("Promise:")
    expect(label).to_contain_text("Does not promise:")

    # The three views, the stack staying laid over each.
    page.get_by_role("link", name="Three planes").click()
    page.wait_for_url(f"**/map/?view=planes&stack={stack.pk}")
    wait_for_map(page)
    assert "Primary layer ↓ · plane →" in figure_annotations(page)
    expect(figure.locator(".annotation-text", has_text="Bind")).to_have_count(2)
    page.get_by_role("link", name="Four-layer architecture view").click()
    page.wait_for_url(f"**/map/?view=architecture&stack={stack.pk}")
    wait_for_map(page)
    expect(figure.locator(".ytick", has_text="Device discovery")).to_have_count(1)
    expect(page.get_by_role("combobox", name="View")).to_have_value("architecture")

    # Filters re-render only the map fragment (no page load) and the URL keeps them.
    page.evaluate("() => { window.__samePage = true; }")
    page.get_by_role("combobox", name="Resource unit").select_option("mig_instance")
    page.wait_for_url(re.compile(rf"/map/\?view=architecture&unit=mig_instance&stack={stack.pk}$"))
    expect(page.locator("#map-description")).to_contain_text("resource unit MIG instance")
    wait_for_map(page)
    names = figure.locator(".scatterlayer .trace text")
    expect(names.filter(has_text="NVIDIA vGPU")).to_have_count(0)
    expect(names.filter(has_text="Kueue").first).to_be_visible()
    page.get_by_label("Pending review only").check()
    expect(page.locator("#map-description")).to_contain_text("pending review")
    page.wait_for_url(re.compile(r"pending=1"))
    assert page.evaluate("() => window.__samePage === true"), "the filter reloaded the page instead of swapping the map"

    # Back: the previous map is drawn again and the form agrees with the address bar.
    page.go_back()
    page.wait_for_url(re.compile(rf"/map/\?view=architecture&unit=mig_instance&stack={stack.pk}$"))
    expect(page.get_by_label("Pending review only")).not_to_be_checked()
    expect(page.get_by_role("combobox", name="Resource unit")).to_have_value("mig_instance")
    expect(figure.locator(".scatterlayer .trace text").filter(has_text="Kueue").first).to_be_visible()
    page.go_forward()
    page.wait_for_url(re.compile(r"pending=1"))
    expect(page.get_by_label("Pending review only")).to_be_checked()

    # The accessible list keeps the same state, one click away.
    page.get_by_role("link", name="Show as an accessible list").click()
    page.wait_for_url(re.compile(rf"/map/list/\?view=architecture&unit=mig_instance&pending=1&stack={stack.pk}$"))
    expect(page.get_by_role("heading", name="Device discovery")).to_be_visible()


@pytest.fixture
def embedder():
    """Another site (its own server on 127.0.0.1, another origin than the live server's
    localhost) whose page frames the Atlas; `embedder(html)` serves the page and returns its URL."""
    pages: dict[str, bytes] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            body = pages.get(self.path, b"not found")
            self.send_response(200 if self.path in pages else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def serve(html: str, path: str = "/a-blog-post") -> str:
        pages[path] = html.encode()
        return f"http://127.0.0.1:{server.server_address[1]}{path}"

    yield serve
    server.shutdown()
    server.server_close()


def test_embedded_map_and_stack_render_inside_an_iframe_while_app_pages_refuse_framing(page, live_server, stack, embedder):
    url = embedder(
        "<!doctype html><title>A blog post</title>"
        f'<iframe id="map" title="map" src="{live_server.url}/embed/map/?view=planes&unit=mig_instance" width="1200" height="700"></iframe>'
        f'<iframe id="stack" title="stack" src="{live_server.url}/embed/stacks/{stack.pk}/" width="1200" height="900"></iframe>'
        f'<iframe id="app" name="app" title="app" src="{live_server.url}/map/" width="600" height="300"></iframe>'
    )
    page.goto(url)
    map_frame = page.frame_locator("#map")
    expect(map_frame.locator("#layer-map-figure.js-plotly-plot[data-rendered=true]")).to_be_visible()
    expect(map_frame.locator("h1")).to_have_text("Three planes")
    expect(map_frame.locator("nav, form, header")).to_have_count(0)  # read-only: no chrome, no forms
    stack_frame = page.frame_locator("#stack")
    expect(stack_frame.locator("#layer-map-figure.js-plotly-plot[data-rendered=true]")).to_be_visible()
    expect(stack_frame.locator("#layer-map-figure .annotation-text", has_text="Bind")).to_have_count(2)
    expect(stack_frame.locator("h1")).to_have_text("Inference stack")
    expect(stack_frame.locator("nav, form, header")).to_have_count(0)

    # The app's own pages stay unframeable (Django's X-Frame-Options DENY); only the embeds opt out.
    app = page.frame(name="app")
    for _ in range(50):  # Chromium swaps the refused document for its error page
        if app.url.startswith("chrome-error://"):
            break
        page.wait_for_timeout(100)
    assert app.url.startswith("chrome-error://"), f"/map/ was framed: {app.url}"
    assert page.request.get(f"{live_server.url}/map/").headers.get("x-frame-options") == "DENY"
    assert "x-frame-options" not in page.request.get(f"{live_server.url}/embed/map/").headers
    assert "x-frame-options" not in page.request.get(f"{live_server.url}/embed/stacks/{stack.pk}/").headers


def _label_texts(page) -> list[str]:
    """What plotly drew next to each marker, its lines joined (a long name wraps onto lines)."""
    return page.evaluate(
        """() => [...document.querySelectorAll('#layer-map-figure .scatterlayer .textpoint text')].map(t =>
              t.querySelectorAll('tspan.line').length
                ? [...t.querySelectorAll('tspan.line')].map(l => l.textContent).join(' ')
                : t.textContent)"""
    )


def test_map_labels_show_whole_names_on_a_desktop_and_on_a_phone(page):
    from placement.catalog.selectors.layer_map import MapFilters, layer_map_data

    names = {p.name for p in layer_map_data(MapFilters()).projects}  # what the default map shows
    assert len(names) > 20
    for width in (1440, 375):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto("/map/")
        wait_for_map(page)
        drawn = set(_label_texts(page))
        assert not [t for t in drawn if "…" in t], f"labels cut off at {width}px"
        assert names <= drawn, f"names not drawn whole at {width}px: {sorted(names - drawn)[:5]}"
        box = page.locator("#layer-map-figure").bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width, f"the map is wider than the {width}px screen"
        assert page.evaluate("document.documentElement.scrollWidth") <= width
    # On the phone the map is one column: every marker sits in the same band of x.
    xs = page.evaluate("() => document.querySelector('#layer-map-figure').data[0].x")
    assert len(set(xs)) == 1


def test_the_default_inference_stack_overlay_draws_advertise_bind_and_allocate(page):
    request = {"profile": "online_inference", "pool": {"gpu_model": "A100-80GB", "gpu_count": 32}, "constraints": {}}
    stack = rules_services.stack_save(user=make_user("arch", "architect"), request_data=request, rank=1, name="Default inference")
    page.goto(f"/map/?stack={stack.pk}")
    wait_for_map(page)
    labels = page.locator("#layer-map-figure .annotation-text")
    for point in ("Advertise", "Bind", "Allocate"):
        expect(labels.filter(has_text=re.compile(rf"^{point}$"))).to_have_count(1)
    expect(page.locator("#layer-map-figure .legendtext", has_text="Allocate contract")).to_have_count(1)


def test_the_map_is_on_screen_and_clickable_before_plotly_runs_and_plotly_replaces_it(page, browser, live_server):
    # Without JavaScript (or while plotly.js loads) the server-drawn first frame is the map.
    for width, shown in ((1440, "wide"), (375, "narrow")):
        context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": 900}, java_script_enabled=False)
        bare = context.new_page()
        bare.goto("/map/")
        frame = bare.locator(f"#layer-map-figure .map-first-frame.{shown}")
        expect(frame).to_be_visible()
        expect(bare.locator("#layer-map-figure .map-first-frame:visible")).to_have_count(1)
        expect(frame.locator("text", has_text=re.compile(r"^Kueue$"))).to_be_visible()
        assert bare.evaluate("document.documentElement.scrollWidth") <= width
        frame.locator('a[href="/projects/kueue/"]').click()
        bare.wait_for_url("**/projects/kueue/")
        context.close()
    # With JavaScript, plotly draws the interactive figure in the frame's place, at the same height.
    page.set_viewport_size({"width": 1440, "height": 900})
    html = page.request.get(f"{live_server.url}/map/").text()
    frame_height = int(re.search(r'class="map-first-frame wide" style="position:relative;height:(\d+)px', html).group(1))
    page.goto("/map/")
    wait_for_map(page)
    expect(page.locator("#layer-map-figure .map-first-frame")).to_have_count(0)
    assert page.locator("#layer-map-figure").evaluate("e => e.offsetHeight") == frame_height
