"""Time to first plot of /map/ in headless Chromium, each run with a cold cache (a new context).

    .venv/bin/python benchmarks/map_first_plot.py http://127.0.0.1:8000 [runs]

Start the server first (`make run`, or with DJANGO_DEBUG=0 after collectstatic for the deployed
static files). Prints each run's milliseconds from navigation start to the first frame (the map drawn
as SVG by the server, painted with the HTML) and to the interactive figure (plotly drawn, which then
replaces the frame), the medians, and the plotly bundle's transfer and decoded sizes.
"""

from __future__ import annotations

import statistics
import sys

from playwright.sync_api import sync_playwright

CHROMIUM = "/usr/bin/chromium"


def main(url: str, runs: int) -> None:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"], headless=True)
        times, frames, bundles, parts = [], [], [], []
        for _ in range(runs):
            context = browser.new_context(viewport={"width": 1440, "height": 900})
            page = context.new_page()
            page.goto(url.rstrip("/") + "/map/")
            page.wait_for_selector("#layer-map-figure.js-plotly-plot[data-rendered=true]", timeout=60_000)
            times.append(page.evaluate("performance.now()"))
            frames.append(page.evaluate(
                """() => { const f = performance.getEntriesByName('atlas-map-first-frame')[0];
                           const p = performance.getEntriesByName('first-contentful-paint')[0];
                           return [f ? f.startTime : NaN, p ? p.startTime : NaN]; }"""
            ))
            parts.append(page.evaluate(
                """() => { const n = performance.getEntriesByType('navigation')[0];
                           const p = performance.getEntriesByType('resource').find(e => e.name.includes('plotly'));
                           return [n.responseEnd, p ? p.responseEnd : 0, n.domContentLoadedEventStart]; }"""
            ))
            bundles = page.evaluate(
                """() => performance.getEntriesByType('resource').filter(e => e.name.includes('plotly'))
                      .map(e => [e.name.split('/').pop(), e.transferSize, e.decodedBodySize])"""
            )
            context.close()
        browser.close()
    # The frame is in the DOM at the mark (a requestAnimationFrame callback, run just before a paint);
    # it is on screen at the first paint that is not earlier than the mark: first-contentful-paint
    # when the page's first paint already had it.
    shown = [max(mark, fcp) for mark, fcp in frames]
    print(f"first frame of /map/ (server-drawn SVG painted, ms, cold cache): {[round(t) for t in shown]}, "
          f"median {round(statistics.median(shown))} (first-contentful-paint median "
          f"{round(statistics.median(f[1] for f in frames))})")
    print(f"interactive plot of /map/ (plotly drawn, ms, cold cache): {[round(t) for t in times]}, median {round(statistics.median(times))}")
    html, script, ready = (round(statistics.median(p[i] for p in parts)) for i in range(3))
    print(f"  medians: HTML received {html} ms, plotly.js received {script} ms, DOMContentLoaded {ready} ms, "
          f"interactive figure drawn {round(statistics.median(times)) - ready} ms after (plotly.js is run after the "
          f"first frame's paint)")
    for name, transfer, body in bundles:
        print(f"  {name}: {transfer:,} bytes transferred, {body:,} bytes decoded")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5)
