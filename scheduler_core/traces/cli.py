"""``replay`` subcommand: replay a job/pod trace and print (or save) the metrics (and ``fgd``, from
:mod:`scheduler_core.traces.fgd_cli`, the FGD paper's policy comparison).

    python -m scheduler_core replay --trace PATH --format philly|alibaba|generic \
        --policy fifo|las|binpack|spread [--nodes PATH] [--json OUT]
    python -m scheduler_core.traces replay --trace ../shared/data/philly-gavel-b436b2/jobs.csv \
        --format philly --policy fifo|las --gavel-compatible   # Gavel's rounds, resets and policies

:func:`register` adds the subcommand to an argparse ``subparsers`` object and
sets ``func`` to :func:`run`.  Importing this module hands :func:`register` to
the simulator CLI's registrar list (``scheduler_core.cli.register``; that CLI
imports this module as a plugin), so ``python -m scheduler_core replay`` works;
``python -m scheduler_core.traces replay ...`` works on its own through
:func:`main`.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Sequence

from scheduler_core.traces.csvio import FORMATS, TraceError, write_output
from scheduler_core.traces.fgd_cli import register as register_fgd
from scheduler_core.traces.replay import POLICIES, replay_trace, result_json
from scheduler_core.traces.sharing import SharingResult

__all__ = ["add_arguments", "main", "register", "run"]

HELP = "replay a job/pod trace (Philly, Alibaba GPU-sharing or generic CSV) under a policy"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--trace", required=True, help="job/pod CSV file")
    p.add_argument("--format", dest="fmt", default="generic", choices=sorted(FORMATS),
                   help="column map of the CSV (default: generic)")
    p.add_argument("--policy", required=True, choices=list(POLICIES),
                   help="fifo/las: whole-GPU jobs; binpack/spread: GPU sharing")
    p.add_argument("--nodes", help="node list CSV for binpack/spread (Alibaba columns: sn,cpu_milli,"
                   "memory_mib,gpu,model); default for --format alibaba: the node list next to the trace")
    p.add_argument("--servers", type=int, help="pool size in servers (fifo/las default 12; "
                   "for binpack/spread: a uniform pool instead of --nodes)")
    p.add_argument("--gpus-per-server", type=int, help="GPUs per server (default 8)")
    p.add_argument("--gpu-model", default="A100-80GB", help="GPU model of a uniform sharing pool")
    p.add_argument("--backfill", action="store_true", help="fifo: let later jobs that fit start first")
    p.add_argument("--las-thresholds", type=lambda s: tuple(float(x) for x in s.split(",")),
                   help="las: queue limits in GPU-hours, comma separated (default 1,10,100)")
    p.add_argument("--preemption-overhead", type=float, help="las: seconds lost per restart (default 0)")
    p.add_argument("--gavel-compatible", action="store_true",
                   help="fifo/las: replay as Gavel's simulator does (360 s rounds, allocation reset at most "
                   "every 1,920 s, Gavel's fifo; las = Gavel's max_min_fairness)")
    p.add_argument("--round", dest="round_s", type=float, help="--gavel-compatible: round length in s (default 360)")
    p.add_argument("--reset-interval", dest="reset_interval_s", type=float,
                   help="--gavel-compatible: minimum seconds between allocation resets (default 1920)")
    p.add_argument("--split-count", type=int, help="binpack/spread: max pods per GPU (default 10; 0 = unlimited)")
    p.add_argument("--departures", action="store_true",
                   help="binpack/spread: pods leave after their duration (default: arrivals only)")
    p.add_argument("--json", dest="json_out", metavar="OUT", help="write the full result as JSON ('-' = stdout)")


def _options(args: argparse.Namespace) -> dict:
    kind = POLICIES[args.policy]
    opts: dict = {}
    if kind == "whole_gpu":
        if args.backfill:
            opts["fifo_backfill"] = True
        if args.las_thresholds:
            opts["las_thresholds_gpu_h"] = args.las_thresholds
        if args.preemption_overhead is not None:
            opts["preemption_overhead_s"] = args.preemption_overhead
        if args.gavel_compatible:
            opts["mode"] = "gavel"
        for name in ("round_s", "reset_interval_s"):
            if getattr(args, name) is not None:
                if not args.gavel_compatible:
                    raise ValueError(f"--{name[:-2].replace('_', '-')} needs --gavel-compatible")
                opts[name] = getattr(args, name)
    else:
        if args.split_count is not None:
            opts["split_count"] = args.split_count or None
        if args.departures:
            opts["departures"] = True
    return opts


def _print_summary(result, wall: float, out) -> None:
    s = result.summary
    if isinstance(result, SharingResult):
        print(f"pods {s['pods']} (GPU pods {s['gpu_pods']}) on {s['nodes']} nodes / {s['gpus']} GPUs; "
              f"placed {s['placed']}, unplaced {s['unplaced']} ({s['unplaced_gpus']:.1f} GPUs)", file=out)
        print(f"arrived {s['arrived_share']:.3f} of capacity, allocated {s['final_allocated_share']:.3f}; "
              f"fragmentation {s['final_frag_ratio']:.3f} of free ({s['final_frag_share']:.3f} of capacity), "
              f"mean over pods {s['mean_frag_ratio']:.3f}", file=out)
        for share, point in s["at_allocated_share"].items():
            if point:
                print(f"  at {float(share):.0%} allocated (pod {point['pod']}): frag {point['frag_ratio']:.3f} "
                      f"of free, {point['frag_share']:.3f} of capacity", file=out)
        print(f"{s['pods'] / wall:,.0f} pods/s, {s['events']} events in {wall:.3f} s", file=out)
    else:
        j, w = s["jct_s"], s["queue_wait_s"]
        print(f"jobs {s['jobs']}: completed {s['completed']}, rejected {s['rejected']}, "
              f"preemptions {s['preemptions']}", file=out)
        print(f"JCT mean {j['mean']:.0f} s, median {j['median']:.0f} s, p99 {j['p99']:.0f} s; "
              f"queue wait mean {w['mean']:.0f} s, median {w['median']:.0f} s, p99 {w['p99']:.0f} s", file=out)
        print(f"makespan {s['makespan_s']:.0f} s, utilisation {s['utilisation']:.3f}", file=out)
        unit = "rounds" if result.config.mode == "gavel" else "events"
        print(f"{s['events']} {unit} in {wall:.3f} s", file=out)


def run(args: argparse.Namespace) -> int:
    """Execute a parsed ``replay`` command; returns the exit status."""
    t0 = time.perf_counter()
    try:
        result = replay_trace(
            args.trace, args.fmt, args.policy, nodes=args.nodes, servers=args.servers,
            gpus_per_server=args.gpus_per_server, gpu_model=args.gpu_model, **_options(args),
        )
    except (TraceError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    wall = time.perf_counter() - t0
    to_stdout = args.json_out == "-"
    _print_summary(result, wall, sys.stderr if to_stdout else sys.stdout)
    if args.json_out:
        write_output(result_json(result), args.json_out)
    return 0


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``replay`` subcommand to an argparse ``subparsers`` object."""
    p = subparsers.add_parser("replay", help=HELP, description=HELP)
    add_arguments(p)
    p.set_defaults(func=run)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scheduler_core.traces", description=HELP)
    sub = parser.add_subparsers(dest="command", required=True)
    register(sub)
    register_fgd(sub)
    args = parser.parse_args(argv)
    return args.func(args)


try:  # mount into `python -m scheduler_core` (its CLI imports this module as a plugin)
    from scheduler_core.cli import register as _register_with_core_cli
except ImportError:  # pragma: no cover - the core CLI is optional for this module
    pass
else:
    _register_with_core_cli(register)
    _register_with_core_cli(register_fgd)
