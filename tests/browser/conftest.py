"""Headless Chromium (Debian's, at /usr/bin/chromium) driven by Playwright's sync API against
pytest-django's live server.

The live server is transactional (what a test writes is committed and the next test starts from
a flushed database), so every browser test uses `ensure_catalog`. A failing test leaves a full-page
screenshot in test-artifacts/<test name>.png.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from tests.evidence.conftest import celery_broker, worker_factory  # noqa: F401  (real worker fixtures)

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = os.environ.get("ATLAS_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-quic",
    "--disable-sync",
]
PASSWORD_PREFIX = "pw-"  # tests.conftest.make_user: password is "pw-" + username


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the item, so the page fixture knows whether the test failed."""
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        pytest.fail(f"no Chromium at {CHROMIUM}; `make browser` installs Debian's chromium")
    # Playwright's sync API keeps an event loop running in this thread; Django refuses ORM calls
    # from such a thread unless told it is deliberate (the tests' own fixtures touch the DB).
    # Only while the browser is up: the browser tests run last (they are transactional).
    saved = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            yield browser
            browser.close()
    finally:
        if saved is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = saved


@pytest.fixture
def page(request, browser, live_server, ensure_catalog):
    """A fresh browser context (no cookies) on the live server; JavaScript errors fail the test."""
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1360, "height": 900})
    context.set_default_timeout(15_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.js_errors = errors
    yield page
    failed = any(getattr(request.node, f"rep_{when}", None) and getattr(request.node, f"rep_{when}").failed for when in ("setup", "call"))
    if failed:
        ARTIFACTS.mkdir(exist_ok=True)
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.nodeid)[-150:]
        try:
            page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
        except Exception as exc:  # a crashed page must not hide the test's own failure
            print(f"could not save a screenshot: {exc}")
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def login(page, username: str, password: str | None = None) -> None:
    page.goto("/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password or PASSWORD_PREFIX + username)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(lambda url: "/login/" not in url)


def logout(page) -> None:
    page.get_by_role("button", name="Log out").click()
    page.wait_for_load_state()


def wait_for_map(page, selector: str = "#layer-map-figure") -> None:
    """The plotly figure is drawn (the page's script sets data-rendered when Plotly is done)."""
    page.wait_for_selector(f"{selector}.js-plotly-plot[data-rendered=true]")


def map_point(page, slug: str, selector: str = "#layer-map-figure") -> dict:
    """Viewport coordinates of the primary marker of `slug` where plotly drew it (scrolled into view)."""
    box = page.evaluate(
        """([selector, slug]) => {
            const gd = document.querySelector(selector);
            const trace = gd.data.find(t => t.name === "Primary placement");
            const i = trace.customdata.findIndex(c => c[1] === slug);
            if (i < 0) { return null; }
            const fl = gd._fullLayout;
            const at = () => {
                const rect = gd.getBoundingClientRect();
                return {x: rect.left + fl._size.l + fl.xaxis.l2p(trace.x[i]), y: rect.top + fl._size.t + fl.yaxis.l2p(trace.y[i])};
            };
            window.scrollBy(0, at().y - window.innerHeight / 2);  // bring the point into the viewport
            return at();
        }""",
        [selector, slug],
    )
    assert box is not None, f"{slug} is not on the map"
    return box


def hover_map_point(page, slug: str, selector: str = "#layer-map-figure"):
    """Move the pointer onto the point; returns the hover label plotly shows for it."""
    box = map_point(page, slug, selector)
    page.mouse.move(box["x"] - 30, box["y"])
    page.mouse.move(box["x"], box["y"], steps=3)
    label = page.locator(f"{selector} .hoverlayer .hovertext").first
    label.wait_for(state="visible")
    return label


def click_map_point(page, slug: str, selector: str = "#layer-map-figure") -> None:
    """Click the point the way a person does: plotly picks the point under the pointer on
    mousemove (asynchronously), then fires plotly_click on the click."""
    hover_map_point(page, slug, selector)
    box = map_point(page, slug, selector)
    page.mouse.click(box["x"], box["y"])


def watch_run_until_charts(page, status, progress, seen: list, seconds: float) -> None:
    """Poll the run page's status and progress bar until its charts are drawn, appending every
    (status, percent) change to `seen`: the bar a person watches move."""
    import time

    charts = page.locator(".chart.js-plotly-plot")
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not charts.count():
        try:
            current = (status.get_attribute("data-status", timeout=500), int(progress.get_attribute("aria-valuenow", timeout=500)))
        except Exception:
            current = None  # between two swaps, or the page is reloading
        if current and current != seen[-1]:
            seen.append(current)
        page.wait_for_timeout(100)
