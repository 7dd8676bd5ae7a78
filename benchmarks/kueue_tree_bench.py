#!/usr/bin/env python
"""Kueue's cohort tree against the flat cohort pool (issue 34, hierarchical cohorts).

    .venv/bin/python benchmarks/kueue_tree_bench.py [--jobs 2000,8000] [--seed 1]

The synthetic Kueue week (128 nodes, 8 ClusterQueues in one cohort, GPU, cpu and memory quotas) is run
twice per size: as generated (the flat pool) and with an unrelated Cohort object, which sends every
quota check and preemption through ``scheduler_core.policies.kueue_cohorts``.  Prints the CPU seconds of
each and whether the two event logs agree (preemption messages compared without the tree's paths).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _run(doc):
    from scheduler_core import simulate

    c0 = time.process_time()
    result = simulate(doc, progress=None)
    return time.process_time() - c0, [(e.t, e.kind, e.workload, e.detail.split("; preemptor path")[0])
                                      for e in result.events.entries]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", default="2000,8000")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    from scheduler_core import synthetic_scenario

    ok = True
    for jobs in [int(x) for x in args.jobs.split(",")]:
        doc = synthetic_scenario(nodes=128, jobs=jobs, services=100, days=7, seed=args.seed, stack="kueue",
                                 host_resources=True)
        doc = doc.model_dump() if hasattr(doc, "model_dump") else doc
        flat_cpu, flat = _run(doc)
        doc["stack"]["control_plane"]["kueue"]["cohorts"] = [{"name": "unrelated"}]
        tree_cpu, tree = _run(doc)
        same = flat == tree
        ok = ok and same
        print(f"jobs={jobs:>6}  flat {flat_cpu:6.2f} s  tree {tree_cpu:6.2f} s  ratio {tree_cpu / flat_cpu:4.2f}  "
              f"same decisions: {'yes' if same else 'NO'}  ({sum(1 for e in flat if e[1] == 'preempt')} preemptions)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
