#!/usr/bin/env python
"""Every page at the speed of its data (issue 38): CPU per request of the main pages and API
endpoints as a ratio to a hello-world view in the same process, then throughput under wrk.

    tools/test_services.sh run -- .venv/bin/python benchmarks/page_bench.py [--requests 200] [--duration 20] [--connections 16] [--first-plot 5]

(tools/test_services.sh starts a private PostgreSQL and Redis and exports their URLs; BENCH_PG
and BENCH_REDIS name others.) The database `atlas_bench` is created afresh with the full catalog
(benchmarks/api_bench.py), the cache is Redis (real mode) unless `--local-cache`.

1. In one process, through the WSGI handler and every middleware (no HTTP, no test client):
   process CPU per request, the least of three rounds, for each URL warm (cached), cold (cache
   emptied before each request), as a 304 (If-None-Match) and gzip-compressed (Accept-Encoding).
   The hello view (`/bench/hello/`, benchmarks/api_bench_urls.py) is the unit.
2. gunicorn with 2 sync workers, wrk with 16 connections for 20 s per URL (as issue 38 states
   its targets): requests per second, p50/p99, non-2xx/3xx answers and socket errors.
3. With --first-plot N: the map's first plot in headless Chromium, N runs each with an empty
   browser cache (benchmarks/map_first_plot.py), against the same gunicorn.

Targets: project detail API <= 1.5x the list API; /projects/, /map/, /landscape/, a project page
<= 3x hello warm; /map/ and /projects/ >= 150 req/s under wrk with no errors. CPU ratios are
robust on a loaded machine; wrk figures are not (the machine's other load is printed with them).
Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.api_bench import DB_NAME, PYTHON, bench_pg, free_port, prepare_database, pyload, wait_for, wrk  # noqa: E402

URLS = [
    ("hello", "/bench/hello/"),
    ("project list API", "/api/v1/projects/"),
    ("project detail API", "/api/v1/projects/kueue/"),
    ("/projects/", "/projects/"),
    ("/map/", "/map/"),
    ("/landscape/", "/landscape/"),
    ("/projects/kueue/", "/projects/kueue/"),
    ("/ (home)", "/"),
]
PAGE_TARGETS = ("/projects/", "/map/", "/landscape/", "/projects/kueue/")
WRK_URLS = ["hello", "project list API", "project detail API", "/map/", "/projects/", "/landscape/", "/projects/kueue/"]


def bench_env(args) -> dict:
    env = {
        **os.environ,
        "DATABASE_URL": f"{bench_pg()}/{DB_NAME}",
        "DJANGO_SETTINGS_MODULE": "benchmarks.api_bench_settings",
        "DJANGO_DEBUG": "0",
        "PYTHONPATH": str(ROOT),
    }
    env.pop("CELERY_BROKER_URL", None)
    redis = os.environ.get("BENCH_REDIS") or os.environ.get("ATLAS_TEST_BROKER_URL", "").rsplit("/", 1)[0]
    env.pop("ATLAS_CACHE_URL", None)
    if redis and not args.local_cache:
        env["ATLAS_CACHE_URL"] = f"{redis}/14"
    return env


# --- 1. in one process ---------------------------------------------------------------------------


class InProcess:
    def __init__(self):
        from django.core.wsgi import get_wsgi_application

        from placement.catalog import page_cache

        self.app = get_wsgi_application()
        self.cache = page_cache

    def call(self, path: str, headers: dict | None = None) -> tuple[str, dict, bytes]:
        path, _, query = path.partition("?")
        environ = {
            "REQUEST_METHOD": "GET", "PATH_INFO": path, "QUERY_STRING": query, "SCRIPT_NAME": "",
            "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "8000", "SERVER_PROTOCOL": "HTTP/1.1", "HTTP_HOST": "127.0.0.1",
            "REMOTE_ADDR": "127.0.0.1", "wsgi.input": io.BytesIO(b""), "wsgi.errors": sys.stderr, "wsgi.url_scheme": "http",
            "wsgi.version": (1, 0), "wsgi.multithread": False, "wsgi.multiprocess": True, "wsgi.run_once": False,
            **(headers or {}),
        }  # fmt: skip
        seen = {}

        def start_response(status, response_headers, exc_info=None):
            seen["status"], seen["headers"] = status, dict(response_headers)

        result = self.app(environ, start_response)
        try:
            body = b"".join(result)
        finally:
            result.close()
        return seen["status"], seen["headers"], body

    def cpu_ms(self, path: str, requests: int, headers: dict | None = None, cold: bool = False) -> float:
        """Process CPU per request (ms), the least of three rounds."""
        for _ in range(10):
            self.call(path, headers)
        rounds = []
        for _ in range(3):
            spent = 0.0
            for _ in range(requests):
                if cold:
                    self.cache.clear()
                start = time.process_time()
                status, _, _ = self.call(path, headers)
                spent += time.process_time() - start
                assert status.split()[0] in ("200", "304"), (path, status)
            rounds.append(spent * 1000 / requests)
        return min(rounds)


def in_process(requests: int) -> dict:
    import django

    django.setup()
    bench = InProcess()
    results = {}
    # A returning browser: it holds the CSRF cookie the first page set (a page's ETag includes it).
    cookie = bench.call("/projects/")[1].get("Set-Cookie", "").split(";")[0]
    browser = {"HTTP_COOKIE": cookie}
    for name, path in URLS:
        status, headers, body = bench.call(path, browser)
        assert status.startswith("200"), (path, status)
        etag = {**browser, "HTTP_IF_NONE_MATCH": headers["ETag"]} if "ETag" in headers else None
        gzipped = {**browser, "HTTP_ACCEPT_ENCODING": "gzip"}
        results[name] = {
            "warm": bench.cpu_ms(path, requests, browser),
            "cold": bench.cpu_ms(path, max(5, requests // 10), browser, cold=True) if name != "hello" else None,
            "304": bench.cpu_ms(path, requests, etag) if etag else None,
            "gzip": bench.cpu_ms(path, requests, gzipped),
            "bytes": len(body),
            "gzip_bytes": len(bench.call(path, gzipped)[2]),
        }
    return results


def print_in_process(results: dict, requests: int, cache: str) -> bool:
    hello = results["hello"]["warm"]
    print(f"\nIn one process (WSGI handler, all middleware, PostgreSQL {DB_NAME}, cache: {cache}), "
          f"CPU ms per request, least of 3 rounds of {requests}; x = ratio to hello warm ({hello:.3f} ms)\n")  # fmt: skip
    print(f"{'url':<20}{'warm ms':>9}{'x':>7}{'cold ms':>9}{'x':>7}{'304 ms':>8}{'x':>6}{'gzip ms':>9}{'x':>7}{'KB':>8}{'gz KB':>7}")

    def x(ms):
        return f"{ms / hello:>6.1f}x" if ms is not None else f"{'-':>7}"

    for name, r in results.items():
        print(
            f"{name:<20}{r['warm']:>9.3f}{x(r['warm'])}{(r['cold'] or 0):>9.2f}{x(r['cold'])}"
            f"{(r['304'] or 0):>8.3f}{x(r['304'])[1:]}{r['gzip']:>9.3f}{x(r['gzip'])}{r['bytes'] / 1024:>8.1f}{r['gzip_bytes'] / 1024:>7.1f}"
        )
    detail = results["project detail API"]["warm"] / results["project list API"]["warm"]
    ok = detail <= 1.5
    print(f"\nproject detail API / list API = {detail:.2f}x (target <= 1.5x)")
    for name in PAGE_TARGETS:
        ratio = results[name]["warm"] / hello
        ok &= ratio <= 3.0
        print(f"{name} warm / hello = {ratio:.2f}x (target <= 3x)")
    return ok


# --- 2. under load -------------------------------------------------------------------------------


@contextmanager
def serving(env: dict, workers: int):
    """gunicorn with `workers` sync workers on a free port, as deployed; yields its base URL."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    gunicorn = shutil.which("gunicorn", path=str(Path(PYTHON).parent)) or "gunicorn"
    server = subprocess.Popen(
        [gunicorn, "config.wsgi:application", "-w", str(workers), "-b", f"127.0.0.1:{port}",
         "--worker-class", "sync", "--log-level", "warning"],
        cwd=ROOT, env=env,
    )  # fmt: skip
    try:
        wait_for(base + "/bench/hello/")
        yield base
    finally:
        server.terminate()
        server.wait(timeout=30)


def under_load(env: dict, duration: int, connections: int, workers: int) -> tuple[dict, str]:
    paths = dict(URLS)
    with serving(env, workers) as base:
        for _ in range(10):  # each worker's first requests: the rules graph, connections, the cache
            for name in WRK_URLS:
                with urllib.request.urlopen(base + paths[name], timeout=60) as response:
                    assert response.status == 200, (name, response.status)
        measure = wrk if shutil.which("wrk") else pyload
        tool = "wrk" if shutil.which("wrk") else "python threads (wrk not installed)"
        results = {name: measure(base, "GET", paths[name], None, duration, connections) for name in WRK_URLS}
        results["/map/ gzip"] = measure(base, "GET", "/map/", None, duration, connections, {"Accept-Encoding": "gzip"})
    return results, tool


def first_plot(env: dict, workers: int, runs: int) -> None:
    """The map's first plot in headless Chromium with an empty browser cache, against gunicorn
    (the server's page cache warm, as for any visitor after the first)."""
    from benchmarks.map_first_plot import main as measure

    with serving(env, workers) as base:
        urllib.request.urlopen(base + "/map/", timeout=60).read()
        print(f"\nload average {os.getloadavg()[0]:.1f}")
        measure(base, runs)


def print_under_load(results: dict, tool: str, duration: int, connections: int, workers: int, cache: str) -> bool:
    load = os.getloadavg()
    print(f"\ngunicorn {workers} sync workers, PostgreSQL {DB_NAME}, cache: {cache}; {tool}, {connections} connections x "
          f"{duration}s per URL; {os.cpu_count()} CPUs, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}\n")  # fmt: skip
    print(f"{'url':<20}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'vs hello':>10}{'requests':>10}{'non-2xx':>9}")
    hello = results["hello"]["rps"]
    for name, r in results.items():
        errors = f"  socket errors: {r['socket_errors']}" if r["socket_errors"] else ""
        print(f"{name:<20}{r['rps']:>9.0f}{r['p50']:>9.2f}{r['p99']:>9.2f}{r['rps'] / hello:>10.0%}{r['requests']:>10}{r['bad']:>9}{errors}")
    ok = True
    for name in ("/map/", "/projects/"):
        r = results[name]
        ok &= r["rps"] >= 150 and r["bad"] == 0 and not r["socket_errors"]
        print(f"{name}: {r['rps']:.0f} req/s (target >= 150), {r['bad']} errors (target 0)")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=200, help="requests per round, in one process")
    parser.add_argument("--duration", type=int, default=20, help="wrk seconds per URL")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--keep-db", action="store_true", help="reuse atlas_bench as it is")
    parser.add_argument("--local-cache", action="store_true", help="the embedded default's local-memory cache")
    parser.add_argument("--skip-load", action="store_true", help="in one process only")
    parser.add_argument("--first-plot", type=int, default=0, metavar="RUNS",
                        help="then the map's first plot in headless Chromium, RUNS runs with an empty browser cache")
    args = parser.parse_args()

    env = bench_env(args)
    cache = "Redis " + env["ATLAS_CACHE_URL"] if "ATLAS_CACHE_URL" in env else "local memory"
    if not args.keep_db:
        prepare_database(bench_pg(), env)
    # DEBUG off: pages link the content-hashed static files collected as on deploy.
    subprocess.run([PYTHON, "manage.py", "collectstatic", "--noinput", "-v0"], cwd=ROOT, env=env, check=True)
    os.environ.update({k: v for k, v in env.items() if k in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE", "DJANGO_DEBUG", "ATLAS_CACHE_URL")})
    if "ATLAS_CACHE_URL" not in env:
        os.environ.pop("ATLAS_CACHE_URL", None)
    os.environ.pop("CELERY_BROKER_URL", None)

    ok = print_in_process(in_process(args.requests), args.requests, cache)
    if not args.skip_load:
        results, tool = under_load(env, args.duration, args.connections, args.workers)
        ok &= print_under_load(results, tool, args.duration, args.connections, args.workers, cache)
    if args.first_plot:
        first_plot(env, args.workers, args.first_plot)
    print("\nrerun: tools/test_services.sh run -- .venv/bin/python benchmarks/page_bench.py " + " ".join(sys.argv[1:]))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
