#!/usr/bin/env python
"""Run-time estimate against measured time (issue 39.2).

    .venv/bin/python benchmarks/estimate_bench.py [--repeat 3] [--scale] [--fit]

For every built-in scenario (fixtures/scenarios) it prints the estimate a submission is checked
against (scheduler_core.scenario.limits.estimate_seconds, from the document alone) beside the measured
time of the best of --repeat runs (CPU time, which the ratio uses: a worker has its core to itself,
this machine's two are shared; and wall time), with the unit of work the estimate spends most on.
--scale adds the sizes where the estimate decides: batch jobs on 16-1,024 nodes (whole GPUs, HAMi,
time-slicing, all submitted at once), inference services of 50-400 replicas, some OOM-killed again
and again or stepping their rate. --fit adds empty pools (nodes x tenants x samples) and prints the
per-unit costs that fit all the measured runs best (relative least squares), beside
limits.SECONDS_PER_UNIT.
Exit status 1 when a ratio is outside 1/2..2.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scheduler_core import simulate  # noqa: E402
from scheduler_core.scenario import load_scenario, parse_scenario  # noqa: E402
from scheduler_core.scenario.limits import SECONDS_PER_UNIT, estimate_cost, estimate_seconds  # noqa: E402


def batch(jobs: int, nodes: int, mechanism: str = "whole") -> dict:
    """Batch jobs of 1-4 GPUs arriving faster than they finish; on HAMi each takes half a card's cores."""
    return {
        "name": f"batch-{jobs}x{nodes}" + ("" if mechanism == "whole" else f"-{mechanism}"), "seed": 1, "horizon": "7d",
        "pool": {"node_groups": [{"name": "dgx", "count": nodes, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8}]},
        "stack": {"data_plane": {"mechanism": mechanism}},
        "tenants": [{"name": "research"}],
        "workloads": [{"kind": "batch", "name": "jobs", "tenant": "research", "count": jobs,
                       "arrival": {"poisson_per_hour": max(1.0, jobs / 100)},
                       "gpus_per_worker": {"dist": "choice", "values": [1, 2, 4]},
                       "duration": {"dist": "exponential", "mean": "2h"},
                       **({"unit": {"gpucores": 50}, "memory_gib": 30} if mechanism == "hami" else {})}],
    }


def flood(jobs: int, nodes: int) -> dict:
    """One-GPU jobs all submitted at once: every pass places pods until the pool is full."""
    return {"name": f"flood-{jobs}x{nodes}", "horizon": "1d",
            "pool": {"node_groups": [{"name": "big", "count": nodes, "gpus_per_node": 8}]},
            "workloads": [{"kind": "batch", "name": "flood", "count": jobs, "duration": 60}]}


def service(replicas: int, mechanism: str, *, growth: float = 0.0, steps: int = 0, gpucores: int | None = None) -> dict:
    """One inference service on a pool just big enough; `growth` GiB/h of KV cache over an 18 GiB cap."""
    per_card = 100 // gpucores if gpucores else {"time-slicing": 4, "mig": 7}.get(mechanism, 1)
    nodes = -(-replicas // (8 * per_card))
    return {
        "name": f"{mechanism}-{replicas}", "seed": 1, "horizon": "6h",
        "pool": {"node_groups": [{"name": "infer", "count": nodes, "gpus_per_node": 8,
                                  **({"mig": [{"layout": "all-1g.10gb"}]} if mechanism == "mig" else {})}]},
        "stack": {"data_plane": {"mechanism": mechanism}},
        "workloads": [{"kind": "inference", "name": "svc", "tenant": "t", "replicas": replicas,
                       "model_memory_gib": 6 if mechanism == "mig" else 12,
                       "memory_request_gib": 8 if mechanism == "mig" else 18,
                       "kv_cache": {"initial_gib": 2, "growth_gib_per_hour": growth, "max_gib": 60},
                       "compute_fraction": 0.15, "arrival_rate": 10.0 * replicas,
                       "service_time": {"mean": "15ms"}, "slo": {"p99": "200ms"},
                       "rate_schedule": [{"at": f"{(i + 1) * 10}m", "rps": 5.0 * replicas * (1 + i % 2)}
                                         for i in range(steps)],
                       **({"unit": {"gpucores": gpucores}} if gpucores else {})}],
    }


def empty(nodes: int, tenants: int, points: int) -> dict:
    return {"name": f"empty-{nodes}n-{tenants}t-{points}p", "horizon": "6h", "sampling": {"max_points": points},
            "pool": {"node_groups": [{"name": "g", "count": nodes, "gpus_per_node": 8}]},
            "tenants": [{"name": f"t{i}"} for i in range(tenants)]}


def scale_cases() -> list[dict]:
    return ([batch(j, n) for j, n in ((2000, 16), (8000, 16), (2000, 128), (4000, 512))]
            + [batch(j, n, m) for m in ("hami", "time-slicing") for j, n in ((2000, 16), (1000, 128))]
            + [flood(2000, 1024)]
            + [service(r, "whole") for r in (50, 100, 200, 400)]
            + [service(100, "whole", steps=20), service(30, "hami", gpucores=25, growth=24.0),
               service(10, "hami", gpucores=25, growth=24.0), service(30, "time-slicing", growth=24.0),
               service(20, "mig", growth=6.0)])


def fit_cases() -> list[dict]:
    return [empty(n, t, p) for n in (1, 64, 512) for t in (1, 100) for p in (240, 2000)]


def measure(sc, repeat: int) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of the best of `repeat` runs. The estimate is compared with the CPU
    time: a worker process has a core to itself, this machine's cores may be shared."""
    best = (float("inf"), float("inf"))
    for _ in range(repeat):
        cpu, wall = time.process_time(), time.perf_counter()
        simulate(sc)
        best = min(best, (time.process_time() - cpu, time.perf_counter() - wall))
    return best


def fit(rows: list[tuple[dict[str, float], float]]) -> dict[str, float]:
    """Non-negative per-unit costs minimising the squared relative error over the runs."""
    keys = list(SECONDS_PER_UNIT)
    a = np.array([[work[k] / measured for k in keys] for work, measured in rows])
    scale = np.maximum(a.max(axis=0), 1e-12)
    a = a / scale
    active = list(range(len(keys)))
    coef = np.zeros(len(keys))
    while active:  # least squares, dropping the most negative unit until none is negative
        sol, *_ = np.linalg.lstsq(a[:, active], np.ones(len(rows)), rcond=None)
        if sol.min() >= 0:
            coef[active] = sol
            break
        active.pop(int(np.argmin(sol)))
    return {k: float(c / s) for k, c, s in zip(keys, coef, scale)}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scale", action="store_true")
    parser.add_argument("--fit", action="store_true")
    args = parser.parse_args()
    cases = [(p.stem, load_scenario(p)) for p in sorted((ROOT / "fixtures" / "scenarios").glob("*.yaml"))]
    if args.scale or args.fit:
        cases += [(doc["name"], parse_scenario(doc)) for doc in scale_cases()]
    if args.fit:
        cases += [(doc["name"], parse_scenario(doc)) for doc in fit_cases()]
    simulate(cases[0][1])  # warm the imports so the first case is not charged for them
    print(f"{'scenario':34} {'nodes':>6} {'jobs':>6} {'replicas':>8} {'events':>7} {'estimate s':>11} "
          f"{'cpu s':>8} {'wall s':>8} {'ratio':>6}  most of the estimate")
    worst, rows = 1.0, []
    for name, sc in cases:
        cost = estimate_cost(sc)
        estimate = estimate_seconds(cost)
        measured, wall = measure(sc, args.repeat if estimate < 1 else 1)
        ratio = estimate / measured
        worst = max(worst, ratio, 1 / ratio)
        parts = cost.work.seconds()
        top = max(parts, key=parts.get)
        rows.append(({k: float(getattr(cost.work, k)) for k in SECONDS_PER_UNIT}, measured))
        print(f"{name:34} {cost.nodes:>6} {cost.jobs:>6} {cost.inference_replicas:>8} {cost.work.events:>7} "
              f"{estimate:>11.3f} {measured:>8.3f} {wall:>8.3f} {ratio:>6.2f}  {top} {parts[top] / estimate:.0%}", flush=True)
    print(f"worst factor {worst:.2f} (target: within 2)")
    if args.fit:
        print("per-unit cost: fitted (limits.SECONDS_PER_UNIT)")
        for key, value in fit(rows).items():
            print(f"  {key:16} {value:.3g} ({SECONDS_PER_UNIT[key]:.3g})")
    return 0 if worst <= 2 else 1


if __name__ == "__main__":
    sys.exit(main())
