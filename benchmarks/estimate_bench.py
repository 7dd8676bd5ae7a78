#!/usr/bin/env python
"""Run-time estimate against measured time (issue 39.2).

    .venv/bin/python benchmarks/estimate_bench.py [--repeat 3] [--scale]

For every built-in scenario (fixtures/scenarios) it prints the estimate a submission is checked
against (scheduler_core.scenario.limits.estimate_seconds, from the document alone) beside the measured wall
time (best of --repeat runs) and their ratio; --scale adds batch scenarios of 2,000-8,000 jobs on
16-512 nodes, the sizes where the estimate decides. Exit status 1 when a ratio is outside 1/2..2.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scheduler_core import simulate  # noqa: E402
from scheduler_core.scenario.limits import SAMPLE_EVENTS, estimate_cost, estimate_events, estimate_seconds  # noqa: E402
from scheduler_core.scenario import load_scenario, parse_scenario  # noqa: E402


def batch(jobs: int, nodes: int) -> dict:
    return {
        "name": f"batch-{jobs}x{nodes}", "seed": 1, "horizon": "7d",
        "pool": {"node_groups": [{"name": "dgx", "count": nodes, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8}]},
        "tenants": [{"name": "research"}],
        "workloads": [{"kind": "batch", "name": "jobs", "tenant": "research", "count": jobs,
                       "arrival": {"poisson_per_hour": max(1.0, jobs / 100)},
                       "gpus_per_worker": {"dist": "choice", "values": [1, 2, 4]},
                       "duration": {"dist": "exponential", "mean": "2h"}}],
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scale", action="store_true")
    args = parser.parse_args()
    cases = [(p.stem, load_scenario(p)) for p in sorted((ROOT / "fixtures" / "scenarios").glob("*.yaml"))]
    if args.scale:
        cases += [(f"batch-{j}x{n}", parse_scenario(batch(j, n))) for j, n in ((2000, 16), (8000, 16), (2000, 128), (4000, 512))]
    simulate(cases[0][1])  # warm the imports so the first case is not charged for them
    print(f"{'scenario':34} {'nodes':>6} {'jobs':>6} {'events est/real':>16} {'estimate s':>11} {'measured s':>11} {'ratio':>6}")
    worst = 1.0
    for name, sc in cases:
        cost = estimate_cost(sc)
        best, events = float("inf"), 0
        for _ in range(args.repeat if cost.jobs < 1000 else 1):
            start = time.perf_counter()
            events = simulate(sc).events_processed
            best = min(best, time.perf_counter() - start)
        estimate = estimate_seconds(cost)
        ratio = estimate / best
        worst = max(worst, ratio, 1 / ratio)
        print(f"{name:34} {cost.nodes:>6} {cost.jobs:>6} {estimate_events(cost) + SAMPLE_EVENTS:>7}/{events:<8} {estimate:>11.3f} {best:>11.3f} {ratio:>6.2f}",
              flush=True)
    print(f"worst factor {worst:.2f} (target: within 2)")
    return 0 if worst <= 2 else 1


if __name__ == "__main__":
    sys.exit(main())
