"""``fgd`` subcommand: the FGD paper's policy comparison on an Alibaba pod list.

    python -m scheduler_core.traces fgd --trace ../shared/data/alibaba-gpu-v2023/openb_pod_list_default.csv \
        [--nodes NODES.csv] [--policies fgd,bestfit,...] [--seeds 3] [--tune-ratio 1.3] \
        [--tie-break order|random] [--json OUT|-]

Prints, per policy and averaged over the seeds, the GPU allocation ratio and the fragmentation
(ratio of unallocated, and share of capacity) at points of arrived load, plus run times.
See :mod:`scheduler_core.traces.fgd` and ``docs/fgd.md``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Sequence

from scheduler_core.traces.csvio import TraceError, load_jobs, load_nodes, write_output
from scheduler_core.traces.fgd import (
    ALLOC_POINTS,
    DEFAULT_POPULARITY,
    DEFAULT_TUNE_RATIO,
    FGD_POLICIES,
    FRAG_POINTS,
    FRAG_RATIO_POINTS,
    TIE_BREAKS,
    FgdResult,
    compare,
    mean_curve,
    seed_list,
)
from scheduler_core.traces.replay import default_node_list

__all__ = ["add_arguments", "format_table", "register", "run", "table_rows"]

HELP = "compare FGD with the ATC'23 paper's baselines on an Alibaba GPU-sharing pod list"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--trace", required=True, help="Alibaba pod list CSV (openb_pod_list_*.csv)")
    p.add_argument("--nodes", help="node list CSV (default: openb_node_list_gpu_node.csv beside the trace)")
    p.add_argument("--policies", default=",".join(FGD_POLICIES),
                   help=f"comma-separated, from {','.join(FGD_POLICIES)} (default: all)")
    p.add_argument("--seeds", default="1", help="a count N (seeds 42..42+N-1, as the artifact) or a comma list")
    p.add_argument("--tune-ratio", type=float, default=DEFAULT_TUNE_RATIO,
                   help="arrived GPU demand as a multiple of capacity (default 1.3)")
    p.add_argument("--popularity", type=float, default=DEFAULT_POPULARITY,
                   help="typical pods cover this share of the pods (default 0.95)")
    p.add_argument("--no-cpu-pods", action="store_true", help="leave CPU-only pods out of the typical pods")
    p.add_argument("--tie-break", choices=TIE_BREAKS, default="order",
                   help="equal best scores: first node in a seeded order (default, as the artifact) or random")
    p.add_argument("--json", dest="json_out", metavar="OUT", help="write per-policy curves as JSON ('-' = stdout)")


def table_rows(results: dict[str, list[FgdResult]]) -> list[dict]:
    """One row per policy: mean curves at the table's points, failures and run time."""
    rows = []
    for policy, runs in results.items():
        cpu = sum(r.cpu_s for r in runs)
        wall = sum(r.wall_s for r in runs)
        pods = sum(r.pods for r in runs)
        rows.append({
            "policy": policy,
            "seeds": [r.seed for r in runs],
            "alloc": mean_curve(runs, "alloc", ALLOC_POINTS),
            "frag_ratio": mean_curve(runs, "frag_ratio", FRAG_RATIO_POINTS),
            "frag": mean_curve(runs, "frag", FRAG_POINTS),
            "failed_pods": sum(r.pods - r.placed for r in runs) / len(runs),
            "pods": pods / len(runs),
            "cpu_s": cpu / len(runs),
            "wall_s": wall / len(runs),
            "pods_per_cpu_s": pods / cpu if cpu else float("inf"),
        })
    return rows


def format_table(rows: Sequence[dict], reference: dict[str, dict] | None = None) -> str:
    """Plain-text table; with ``reference`` (policy -> same keys) each figure gets ``ours/theirs``."""
    def cell(row, key, b):
        v = row[key].get(b)
        if v is None:
            return "-"
        ref = (reference or {}).get(row["policy"], {}).get(key, {}).get(b)
        return f"{v:.2f}" if ref is None else f"{v:.2f}/{ref:.2f}"

    head = (["policy"] + [f"alloc@{b}" for b in ALLOC_POINTS] + [f"fragR@{b}" for b in FRAG_RATIO_POINTS]
            + [f"frag@{b}" for b in FRAG_POINTS] + ["failed", "cpu s", "pods/cpu-s"])
    body = []
    for r in rows:
        body.append([r["policy"]] + [cell(r, "alloc", b) for b in ALLOC_POINTS]
                    + [cell(r, "frag_ratio", b) for b in FRAG_RATIO_POINTS] + [cell(r, "frag", b) for b in FRAG_POINTS]
                    + [f"{r['failed_pods']:.0f}", f"{r['cpu_s']:.1f}", f"{r['pods_per_cpu_s']:,.0f}"])
    widths = [max(len(x[i]) for x in [head] + body) for i in range(len(head))]

    def line(xs):
        return "  ".join(x.rjust(w) if i else x.ljust(w) for i, (x, w) in enumerate(zip(xs, widths)))

    return "\n".join([line(head)] + [line(b) for b in body])


def run(args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    try:
        pods = load_jobs(args.trace, "alibaba")
        node_path = args.nodes or default_node_list(args.trace)
        if node_path is None:
            raise ValueError("no node list: pass --nodes (openb_node_list_gpu_node.csv)")
        nodes = load_nodes(node_path)
        policies = [p.strip() for p in args.policies.split(",") if p.strip()]
        results = compare(pods, nodes, policies, seed_list(args.seeds), tune_ratio=args.tune_ratio,
                          popularity=args.popularity, include_cpu_pods=not args.no_cpu_pods,
                          tie_break=args.tie_break)
    except (TraceError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    rows = table_rows(results)
    out = sys.stderr if args.json_out == "-" else sys.stdout
    print(f"{len(pods)} pods on {len(nodes)} nodes; tuned to {args.tune_ratio:g} x GPU capacity; "
          f"seeds {','.join(str(s) for s in rows[0]['seeds'])}; ties: {args.tie_break}", file=out)
    print("alloc = GPU allocated / capacity, fragR = fragment / unallocated, frag = fragment / capacity "
          "(percent, at arrived load @ percent of capacity)", file=out)
    print(format_table(rows), file=out)
    print(f"total {time.perf_counter() - t0:.1f} s wall", file=out)
    if args.json_out:
        write_output(json.dumps(rows, indent=1, sort_keys=True) + "\n", args.json_out)
    return 0


def register(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("fgd", help=HELP, description=HELP)
    add_arguments(p)
    p.set_defaults(func=run)
    return p
