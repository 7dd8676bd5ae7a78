#!/usr/bin/env python
"""REST API throughput and latency under gunicorn (2 sync workers) on PostgreSQL with the full catalog.

    .venv/bin/python benchmarks/api_bench.py [--duration 10] [--connections 4] [--keep-db]

Creates the database `atlas_bench` afresh (PostgreSQL at $BENCH_PG, default
postgres://postgres@127.0.0.1:5432), migrates it, imports fixtures/catalog, starts gunicorn with
`benchmarks.api_bench_settings` (the product's settings, DEBUG off, plus /bench/hello/), and runs
`wrk` against, in one run:

  hello           GET  /bench/hello/               plain Django view, same middleware: the ceiling
  project list    GET  /api/v1/projects/           default page (50 rows: the whole catalog)
  project detail  GET  /api/v1/projects/kueue/     the whole template
  compose         POST /api/v1/stacks/compose/     {"profile": "training"}

Without `wrk` (Debian: apt-get install -y wrk) a Python load generator (one thread per
connection, keep-alive, http.client) measures the same thing and says so; its own overhead lowers
every figure, hello's most.

Targets (issue 7): project list throughput >= 50% of hello's and its p99 < 50 ms. Exit status 1
when the list misses either.

    tools/test_services.sh run -- .venv/bin/python benchmarks/api_bench.py --issue37

The load run of issue 37 instead: exactly these five, wrk with 16 connections for 20 s each against
gunicorn with 2 sync workers (Redis as the cache when tools/test_services.sh or BENCH_REDIS gives
one), printing requests/s and errors per endpoint (non-2xx/3xx answers, wrk's "Non-2xx or 3xx
responses", plus socket errors: connect, read, write, timeout) and the load average when each
endpoint's run ended. Target: 0 errors; exit status 1 otherwise.

  project list    GET  /api/v1/projects/
  project detail  GET  /api/v1/projects/kueue/
  compare         POST /api/v1/compare/          {"slugs": ["hami", "volcano"]}
  compose         POST /api/v1/stacks/compose/   {"profile": "training"}
  /map/           GET  /map/                     the layer map page
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from http.client import HTTPConnection
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
DB_NAME = "atlas_bench"
COMPOSE_BODY = {"profile": "training"}
ENDPOINTS = [
    ("hello", "GET", "/bench/hello/", None),
    ("project list", "GET", "/api/v1/projects/", None),
    ("project detail", "GET", "/api/v1/projects/kueue/", None),
    ("compose", "POST", "/api/v1/stacks/compose/", COMPOSE_BODY),
]
LOAD_37 = [
    ("project list", "GET", "/api/v1/projects/", None),
    ("project detail", "GET", "/api/v1/projects/kueue/", None),
    ("compare", "POST", "/api/v1/compare/", {"slugs": ["hami", "volcano"]}),
    ("compose", "POST", "/api/v1/stacks/compose/", COMPOSE_BODY),
    ("/map/", "GET", "/map/", None),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bench_pg() -> str:
    """$BENCH_PG, else the PostgreSQL tools/test_services.sh started, else the default port."""
    default = os.environ.get("ATLAS_TEST_PG_URL", "postgres://postgres@127.0.0.1:5432")
    return os.environ.get("BENCH_PG", default).rstrip("/")


def run(cmd: list[str], env: dict) -> None:
    subprocess.run(cmd, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)


def prepare_database(pg: str, env: dict) -> None:
    import psycopg

    with psycopg.connect(f"{pg}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{DB_NAME}"')
    run([PYTHON, "manage.py", "migrate", "-v0"], env)
    run([PYTHON, "manage.py", "seed_roles"], env)
    run([PYTHON, "manage.py", "import_catalog", "fixtures/catalog"], env)


def wait_for(url: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"gunicorn did not answer {url}")


def warm_up(base: str, endpoints: list = ENDPOINTS) -> None:
    """Each worker builds the rules graph and fills its connection on first use; not measured."""
    for _ in range(20):
        for _, method, path, body in endpoints:
            data = json.dumps(body).encode() if body is not None else None
            request = urllib.request.Request(base + path, data=data, method=method, headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=30) as response:
                assert response.status == 200, (path, response.status)


# --- wrk ------------------------------------------------------------------------------------------

_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}


def _ms(text: str) -> float:
    value, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text).groups()
    return float(value) * _UNITS[unit]


def wrk(base: str, method: str, path: str, body, duration: int, connections: int, headers: dict | None = None) -> dict:
    args = ["wrk", f"-t{min(2, connections)}", f"-c{connections}", f"-d{duration}s", "--latency"]
    # wrk's default 2 s timeout (counted as a socket error), unless WRK_TIMEOUT says otherwise
    if os.environ.get("WRK_TIMEOUT"):
        args += ["--timeout", os.environ["WRK_TIMEOUT"]]
    for name, value in (headers or {}).items():
        args += ["-H", f"{name}: {value}"]
    script = None
    if method != "GET":
        script = tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False)
        script.write(
            f'wrk.method = "{method}"\nwrk.body = {json.dumps(json.dumps(body))}\n'
            'wrk.headers["Content-Type"] = "application/json"\n'
        )
        script.close()
        args += ["-s", script.name]
    try:
        out = subprocess.run(args + [base + path], capture_output=True, text=True, check=True).stdout
    finally:
        if script:
            os.unlink(script.name)
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: (.*)", out)
    return {
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
        "p50": _ms(re.search(r"\s50%\s+(\S+)", out).group(1)),
        "p99": _ms(re.search(r"\s99%\s+(\S+)", out).group(1)),
        "requests": int(re.search(r"(\d+) requests in", out).group(1)),
        "bad": int(non_2xx.group(1)) if non_2xx else 0,
        "socket_errors": errors.group(1) if errors else "",
    }


# --- fallback: Python load generator --------------------------------------------------------------


def pyload(base: str, method: str, path: str, body, duration: int, connections: int, headers: dict | None = None) -> dict:
    host, port = base.removeprefix("http://").split(":")
    payload = json.dumps(body).encode() if body is not None else None
    latencies: list[list[float]] = [[] for _ in range(connections)]
    bad = [0] * connections
    stop = time.monotonic() + duration

    def worker(i: int) -> None:
        conn = HTTPConnection(host, int(port), timeout=30)
        sent = {**(headers or {}), **({"Content-Type": "application/json"} if payload else {})}
        while time.monotonic() < stop:
            start = time.perf_counter()
            conn.request(method, path, body=payload, headers=sent)
            response = conn.getresponse()
            response.read()
            latencies[i].append((time.perf_counter() - start) * 1000)
            bad[i] += response.status >= 300

    started = time.monotonic()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    all_ms = sorted(x for xs in latencies for x in xs)
    return {
        "rps": len(all_ms) / elapsed,
        "p50": all_ms[len(all_ms) // 2],
        "p99": all_ms[min(len(all_ms) - 1, int(len(all_ms) * 0.99))],
        "requests": len(all_ms),
        "bad": sum(bad),
        "socket_errors": "",
    }


def socket_errors(text: str) -> int:
    """wrk's "connect 0, read 0, write 0, timeout 3" as one count."""
    return sum(int(n) for n in re.findall(r"\d+", text))


def load_37(args) -> int:
    """Issue 37's load run: the five endpoints, 16 connections x 20 s, 2 workers; 0 errors."""
    pg = bench_pg()
    env = {**os.environ, "DATABASE_URL": f"{pg}/{DB_NAME}", "DJANGO_SETTINGS_MODULE": "benchmarks.api_bench_settings",
           "DJANGO_DEBUG": "0", "PYTHONPATH": str(ROOT)}
    env.pop("CELERY_BROKER_URL", None)
    env.pop("ATLAS_CACHE_URL", None)
    redis = os.environ.get("BENCH_REDIS") or os.environ.get("ATLAS_TEST_BROKER_URL", "").rsplit("/", 1)[0]
    if redis:
        env["ATLAS_CACHE_URL"] = f"{redis}/14"
    if not args.keep_db:
        prepare_database(pg, env)
    # DEBUG off: /map/ links the content-hashed static files collected as on deploy.
    run([PYTHON, "manage.py", "collectstatic", "--noinput", "-v0"], env)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    gunicorn = shutil.which("gunicorn", path=str(Path(PYTHON).parent)) or "gunicorn"
    server = subprocess.Popen([gunicorn, "config.wsgi:application", "-w", str(args.workers), "-b", f"127.0.0.1:{port}",
                               "--worker-class", "sync", "--timeout", "30", "--log-level", "warning"], cwd=ROOT, env=env)
    results, loads = {}, {}
    try:
        wait_for(base + "/api/v1/")
        warm_up(base, LOAD_37)
        measure = wrk if shutil.which("wrk") else pyload
        for name, method, path, body in LOAD_37:
            results[name] = measure(base, method, path, body, args.duration, args.connections)
            loads[name] = os.getloadavg()
    finally:
        server.terminate()
        server.wait(timeout=30)
    tool = "wrk" if shutil.which("wrk") else "python threads (wrk not installed)"
    timeout = os.environ.get("WRK_TIMEOUT", "2s (wrk's default)")
    print(f"\nissue 37 load run: gunicorn {args.workers} sync workers, PostgreSQL {DB_NAME} (full catalog), cache: "
          f"{'Redis' if redis else 'local memory'}; {tool}, {args.connections} connections x {args.duration} s per endpoint, "
          f"timeout {timeout}; {os.cpu_count()} CPUs\n")
    print(f"{'endpoint':<16}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'requests':>10}{'non-2xx/3xx':>13}{'socket err':>12}"
          f"{'errors':>8}  load average after")
    errors = 0
    for name, r in results.items():
        bad = r["bad"] + socket_errors(r["socket_errors"])
        errors += bad
        load = loads[name]
        print(f"{name:<16}{r['rps']:>9.1f}{r['p50']:>9.1f}{r['p99']:>9.1f}{r['requests']:>10}{r['bad']:>13}"
              f"{socket_errors(r['socket_errors']):>12}{bad:>8}  {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"\nerrors in all: {errors} (target 0): {'met' if errors == 0 else 'MISSED'}")
    return 0 if errors == 0 else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=int, default=None, help="seconds per endpoint (10; --issue37: 20)")
    parser.add_argument("--connections", type=int, default=None, help="concurrent keep-alive connections (4; --issue37: 16)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--keep-db", action="store_true", help="reuse atlas_bench as it is")
    parser.add_argument("--issue37", action="store_true", help="issue 37's load run (see above)")
    args = parser.parse_args()
    if args.issue37:
        args.duration, args.connections = args.duration or 20, args.connections or 16
        return load_37(args)
    args.duration, args.connections = args.duration or 10, args.connections or 4

    pg = bench_pg()
    env = {
        **os.environ,
        "DATABASE_URL": f"{pg}/{DB_NAME}",
        "DJANGO_SETTINGS_MODULE": "benchmarks.api_bench_settings",
        "DJANGO_DEBUG": "0",
        "PYTHONPATH": str(ROOT),
    }
    env.pop("CELERY_BROKER_URL", None)
    if not args.keep_db:
        prepare_database(pg, env)

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    gunicorn = shutil.which("gunicorn", path=str(Path(PYTHON).parent)) or "gunicorn"
    server = subprocess.Popen(
        [gunicorn, "config.wsgi:application", "-w", str(args.workers), "-b", f"127.0.0.1:{port}",
         "--worker-class", "sync", "--log-level", "warning"],
        cwd=ROOT, env=env,
    )  # fmt: skip
    try:
        wait_for(base + "/bench/hello/")
        warm_up(base)
        tool = "wrk" if shutil.which("wrk") else "python threads (wrk not installed)"
        measure = wrk if shutil.which("wrk") else pyload
        results = {}
        for name, method, path, body in ENDPOINTS:
            results[name] = measure(base, method, path, body, args.duration, args.connections)
    finally:
        server.terminate()
        server.wait(timeout=30)

    hello = results["hello"]["rps"]
    print(
        f"\ngunicorn {args.workers} sync workers, PostgreSQL {DB_NAME} (full catalog), "
        f"{args.connections} connections x {args.duration}s each, load: {tool}, {os.cpu_count()} CPUs\n"
    )
    print(f"{'endpoint':<16}{'req/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'vs hello':>10}{'requests':>10}{'non-2xx':>9}")
    for name, r in results.items():
        print(
            f"{name:<16}{r['rps']:>10.0f}{r['p50']:>10.2f}{r['p99']:>10.2f}{r['rps'] / hello:>10.0%}"
            f"{r['requests']:>10}{r['bad']:>9}" + (f"  socket errors: {r['socket_errors']}" if r["socket_errors"] else "")
        )
    listing = results["project list"]
    ratio = listing["rps"] / hello
    ok = ratio >= 0.5 and listing["p99"] < 50 and all(r["bad"] == 0 for r in results.values())
    print(
        f"\nproject list / hello = {ratio:.0%} (target >= 50%), project list p99 = {listing['p99']:.1f} ms "
        f"(target < 50 ms): {'OK' if ok else 'MISSED'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
