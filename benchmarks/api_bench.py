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


def warm_up(base: str) -> None:
    """Each worker builds the rules graph and fills its connection on first use; not measured."""
    for _ in range(20):
        for _, method, path, body in ENDPOINTS:
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=int, default=10, help="seconds per endpoint")
    parser.add_argument("--connections", type=int, default=4, help="concurrent keep-alive connections")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--keep-db", action="store_true", help="reuse atlas_bench as it is")
    args = parser.parse_args()

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
