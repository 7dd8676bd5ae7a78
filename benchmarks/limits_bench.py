#!/usr/bin/env python
"""Run limits and broker outage, measured (issue 14).

    .venv/bin/python benchmarks/limits_bench.py [--memory-limit-mb 1024] [--jobs 1000000]

1. The worst scenarios of the issue (153 node groups of 4,096 x 16 GPUs; a batch of 100,000,000
   jobs): how long validation takes to refuse them and what it says.
2. A run past the worker's memory limit: a child process with RLIMIT_AS as a worker pool process
   gets it simulates `--jobs` jobs; its peak RSS when the MemoryError stops it, against the limit,
   and the cost estimate the budget check would have refused it with.
3. Broker down: POST /api/v1/simulations/ against a broker port where nothing listens, in-process
   on a throwaway SQLite database; the status, the time to answer and whether a run row is left.
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _batch(jobs: int, groups: list[dict] | None = None) -> dict:
    return {
        "name": "limits-bench", "seed": 1, "horizon": "7d",
        "pool": {"node_groups": groups or [{"name": "dgx", "count": 16, "gpus_per_node": 8}]},
        "workloads": [{"kind": "batch", "name": "jobs", "count": jobs,
                       "arrival": {"poisson_per_hour": max(1.0, jobs / 100)},
                       "gpus_per_worker": {"dist": "choice", "values": [1, 2, 4]},
                       "duration": {"dist": "exponential", "mean": "2h"}}],
    }


def worst_scenarios() -> None:
    from scheduler_core.scenario import ScenarioError, parse_scenario

    print("== the issue's worst scenarios, refused by validation")
    cases = {
        "153 node groups x 4,096 x 16 GPUs": _batch(10, [{"name": f"g{i}", "count": 4096, "gpus_per_node": 16}
                                                      for i in range(153)]),
        "batch count 100,000,000": _batch(100_000_000),
    }
    for label, doc in cases.items():
        t0 = time.perf_counter()
        try:
            parse_scenario(doc)
            print(f"  {label}: ACCEPTED (defect)")
        except ScenarioError as exc:
            ms = (time.perf_counter() - t0) * 1000
            print(f"  {label}: refused in {ms:.1f} ms; " + "; ".join(f"{loc}: {msg}" for loc, msg in exc.errors))
    print(f"  peak RSS of this process so far: {_maxrss_mib()} MiB")


def _maxrss_mib() -> int:
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r // 2**20 if sys.platform == "darwin" else r // 1024


def memory_limit(limit_mb: int, jobs: int) -> None:
    from scheduler_core.scenario.limits import estimate_cost
    from scheduler_core.scenario import parse_scenario

    print(f"== a run of {jobs:,} jobs in a process limited to {limit_mb:,} MiB of address space (RLIMIT_AS)")
    scenario = parse_scenario(_batch(jobs))
    print(f"  estimate_cost: {estimate_cost(scenario).memory_mib:,} MiB (the default budget, 1,024 MiB, refuses "
          f"it before it is queued)")
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child behaves as a worker pool process does
        os.close(read)
        resource.setrlimit(resource.RLIMIT_AS, (limit_mb * 2**20, resource.getrlimit(resource.RLIMIT_AS)[1]))
        from scheduler_core import simulate

        t0 = time.perf_counter()
        try:
            simulate(scenario)
            outcome = "finished"
        except MemoryError:
            outcome = "MemoryError"
        os.write(write, f"{outcome} {time.perf_counter() - t0:.1f} {_maxrss_mib()}".encode())
        os._exit(0)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    outcome, seconds, peak = os.read(read, 200).decode().split()
    print(f"  child: {outcome} after {seconds} s, peak RSS {peak} MiB (limit {limit_mb:,} MiB), "
          f"exit status {os.waitstatus_to_exitcode(status)}")


def broker_down() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    var = tempfile.mkdtemp(prefix="atlas-limits-")
    os.environ.update(DJANGO_SETTINGS_MODULE="config.settings", ATLAS_VAR_DIR=var,
                      CELERY_BROKER_URL=f"redis://127.0.0.1:{port}/0", ATLAS_LOGIN_THROTTLING="0")
    os.environ.pop("DATABASE_URL", None)
    import django

    django.setup()
    from django.core.management import call_command
    from django.test import Client

    from placement.evidence.models import SimulationRun
    from tests.conftest import make_user

    call_command("migrate", verbosity=0)
    call_command("seed_roles", verbosity=0)
    client = Client()
    client.force_login(make_user("bench-architect", "architect"))
    # Warm the process as a serving worker is (imports, models): an invalid scenario is a 400.
    client.post("/api/v1/simulations/", {"scenario": {"name": "x"}}, content_type="application/json")
    print(f"== broker down (redis://127.0.0.1:{port}, nothing listening): POST /api/v1/simulations/, warm process")
    for attempt in range(3):
        doc = {**_batch(100), "seed": attempt}
        t0 = time.perf_counter()
        response = client.post("/api/v1/simulations/", {"scenario": doc}, content_type="application/json")
        seconds = time.perf_counter() - t0
        print(f"  {response.status_code} in {seconds:.3f} s: {response.json()['detail'][:90]}...; "
              f"runs stored: {SimulationRun.objects.count()}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memory-limit-mb", type=int, default=1024)
    parser.add_argument("--jobs", type=int, default=1_000_000)
    args = parser.parse_args()
    worst_scenarios()
    memory_limit(args.memory_limit_mb, args.jobs)
    broker_down()
    return 0


if __name__ == "__main__":
    sys.exit(main())
