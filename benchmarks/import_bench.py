"""Cluster import speed: a synthetic 5,000-GPU-node snapshot (kubectl JSON, four node classes incl.
MIG, 4 GPU pods per node across 40 teams) through the same code as `manage.py import_cluster`.

    .venv/bin/python benchmarks/import_bench.py [--nodes 5000] [--pods-per-node 4] [--runs 3]

Prints the time to decode the JSON files and build + validate the scenario (median of runs), and
the export of a built-in scenario for comparison. Target of issue 15: under 10 s for 5,000 nodes.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from placement.deploy import export_scenario  # noqa: E402
from placement.deploy.cluster_import import cluster_scenario  # noqa: E402
from placement.deploy.synthetic_cluster import large_snapshot  # noqa: E402
from scheduler_core import load_scenario  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods-per-node", type=float, default=4.0)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    nodes, pods = large_snapshot(args.nodes, args.pods_per_node)
    raw = (json.dumps(nodes).encode(), json.dumps(pods).encode())
    times, doc = [], None
    for _ in range(args.runs):
        start = time.perf_counter()
        doc = cluster_scenario(json.loads(raw[0]), json.loads(raw[1]))
        times.append(time.perf_counter() - start)
    median = statistics.median(times)
    print(f"python {platform.python_version()} on {platform.machine()}, {args.runs} runs")
    print(f"snapshot: {args.nodes} GPU nodes ({len(raw[0]) / 2**20:.1f} MiB), {len(pods['items'])} GPU pods "
          f"({len(raw[1]) / 2**20:.1f} MiB) -> {len(doc['pool']['node_groups'])} node groups, {len(doc['workloads'])} workloads")
    print(f"import (decode + group + validate): median {median:.2f} s, max {max(times):.2f} s  [target < 10 s: "
          f"{'met' if median < 10 else 'MISSED'}]")
    scenario = load_scenario(ROOT / "fixtures" / "scenarios" / "form-c-mig-hami-volcano.yaml")
    start = time.perf_counter()
    export = export_scenario(scenario)
    print(f"export of form-c-mig-hami-volcano: {len(export.objects())} objects in {(time.perf_counter() - start) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
