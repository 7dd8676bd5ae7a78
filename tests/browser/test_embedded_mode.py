"""`make run` as a person meets it: one command (`manage.py serve_embedded --prepare`) serves the app
on SQLite with a Celery worker on the filesystem broker, nothing else running. Submitting a
simulation returns at once, the progress bar moves, Ctrl-C stops the web server and the worker.

The app runs as a subprocess with its own var/ directory (not pytest's live server), exactly as
`make run` starts it; this module also measures the map's first plot (printed, never asserted).
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ARTIFACTS, ROOT, watch_run_until_charts

pytestmark = pytest.mark.browser

DEMO_PASSWORD = "atlas-demo-password"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


class EmbeddedApp:
    def __init__(self, var_dir: Path, log: Path):
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL", "CELERY_RESULT_BACKEND", "ATLAS_CELERY_EAGER", "DJANGO_DEBUG"}}
        env.update(ATLAS_VAR_DIR=str(var_dir), DJANGO_SETTINGS_MODULE="config.settings")
        env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        self.handle = log.open("ab")
        # What `make run` runs (the Makefile's run target), on a port of its own.
        self.proc = subprocess.Popen(
            [sys.executable, "manage.py", "serve_embedded", "--prepare", "--noreload", f"127.0.0.1:{self.port}"],
            cwd=ROOT, env=env, stdout=self.handle, stderr=subprocess.STDOUT, start_new_session=True,
        )
        deadline = time.monotonic() + 180
        while not _answers(self.url + "/"):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"make run's server did not come up:\n{self.log.read_text()[-4000:]}")
            time.sleep(0.5)

    def child_pids(self) -> dict[str, int]:
        started = re.search(r"Started web server \(pid (\d+)\), worker \(pid (\d+)\)", self.log.read_text())
        assert started, f"serve_embedded did not start a worker beside the web server:\n{self.log.read_text()[-2000:]}"
        return {"web server": int(started.group(1)), "worker": int(started.group(2))}

    def ctrl_c(self) -> int:
        """What a terminal does on Ctrl-C: SIGINT to the foreground process group."""
        os.killpg(self.proc.pid, signal.SIGINT)
        return self.proc.wait(timeout=40)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.ctrl_c()
        self.handle.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie waiting for its parent to reap it is gone for every practical purpose
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


@pytest.fixture(scope="module")
def embedded_app(tmp_path_factory):
    var_dir = tmp_path_factory.mktemp("embedded-var")
    app = EmbeddedApp(var_dir, var_dir / "serve.log")
    yield app
    app.stop()


@pytest.fixture
def app_page(browser, embedded_app):
    context = browser.new_context(base_url=embedded_app.url, viewport={"width": 1440, "height": 900})
    context.set_default_timeout(20_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def test_map_first_plot_time_is_measured_with_a_cold_cache(app_page, embedded_app):
    """Reported, not asserted (timings belong to benchmarks): the figure lands in test-artifacts/."""
    app_page.goto("/map/")
    app_page.wait_for_selector("#layer-map-figure.js-plotly-plot[data-rendered=true]")
    drawn_ms = app_page.evaluate("performance.getEntriesByName('atlas-map-drawn')[0].startTime")
    # the server-drawn first frame (SVG) is on screen at the first paint after its mark
    frame_ms = app_page.evaluate("""() => Math.max(performance.getEntriesByName('atlas-map-first-frame')[0].startTime,
                                                    performance.getEntriesByName('first-contentful-paint')[0].startTime)""")
    script = app_page.evaluate(
        """() => performance.getEntriesByType('resource').filter(e => e.name.includes('plotly'))
              .map(e => ({name: e.name, transfer: e.transferSize, body: e.decodedBodySize}))"""
    )
    line = (f"/map/ first frame (server-drawn SVG) {frame_ms:.0f} ms, interactive plot {drawn_ms:.0f} ms after navigation "
            f"start (embedded `make run`, cold cache); plotly: {script}")
    print(line)
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "first-plot.txt").write_text(line + "\n")
    assert script and all("plotly-basic" in s["name"] for s in script), "the map loads the basic plotly bundle only"


def test_make_run_submits_at_once_and_the_progress_bar_moves_through_its_own_worker(app_page, embedded_app):
    page = app_page
    page.goto("/login/")
    page.get_by_label("Username").fill("architect")
    page.get_by_label("Password").fill(DEMO_PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(lambda url: "/login/" not in url)

    page.goto("/compose/")
    page.get_by_label("Workload profile").select_option("online_inference")
    page.get_by_role("button", name="Compose").click()
    card = page.locator("#compose-result .stack-card").first
    card.locator("summary").first.click()  # open the top stack's detail
    card.get_by_role("button", name="Save stack #1").click()
    page.wait_for_url(re.compile(r"/stacks/\d+/$"))

    page.get_by_label("Built-in scenario").select_option(index=0)
    started = time.monotonic()
    page.get_by_role("button", name="Run simulation").click()
    page.wait_for_url(re.compile(r"/runs/\d+/$"))
    answered_in = time.monotonic() - started
    status = page.locator("#run-progress [data-status]")
    progress = page.locator("#run-progress [role=progressbar]")
    first = (status.get_attribute("data-status"), int(progress.get_attribute("aria-valuenow")))
    # Eager mode computed the whole run inside the request and opened the page at 100%.
    assert first != ("succeeded", 100), f"the run page opened finished: the task ran inside the request ({answered_in:.1f} s)"

    seen = [first]
    watch_run_until_charts(page, status, progress, seen, 120)
    charts = page.locator(".chart.js-plotly-plot")
    expect(charts.first).to_be_visible()
    expect(status).to_have_attribute("data-status", "succeeded")
    final = (status.get_attribute("data-status"), int(progress.get_attribute("aria-valuenow")))
    if final != seen[-1]:
        seen.append(final)  # the last poll swapped in the finished run and the page drew its charts
    print(f"submit answered in {answered_in:.2f} s; progress bar observed: {seen}")
    assert seen[-1] == ("succeeded", 100) and len(seen) >= 2, f"the progress bar never moved: {seen}"
    assert [v for _, v in seen] == sorted(v for _, v in seen), f"progress went backwards: {seen}"


def test_ctrl_c_stops_the_web_server_and_the_worker(embedded_app):
    children = embedded_app.child_pids()
    assert all(_alive(pid) for pid in children.values()), children
    assert embedded_app.ctrl_c() == 0
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and any(_alive(pid) for pid in children.values()):
        time.sleep(0.2)
    assert not [name for name, pid in children.items() if _alive(pid)], "Ctrl-C left a process running"
    assert not _answers(embedded_app.url + "/")
