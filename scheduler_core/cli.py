"""Command line: ``python -m scheduler_core {run,validate,mig} ...``.

Subcommands are registered through :data:`REGISTRARS`: each registrar is a
function ``(subparsers) -> None`` that adds its parser and sets
``func=handler`` (handler: ``(args) -> int`` exit code).  Another module can
add a subcommand without editing this file::

    from scheduler_core.cli import register

    @register
    def _replay(sub):
        p = sub.add_parser("replay", help="...")
        p.set_defaults(func=run_replay)

Modules listed in :data:`PLUGIN_MODULES` are imported (if present) before
parsing so their registrars run; ``scheduler_core.traces.cli`` is the slot
reserved for trace replay.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from typing import Callable

REGISTRARS: list[Callable[[argparse._SubParsersAction], None]] = []
PLUGIN_MODULES = ["scheduler_core.traces.cli"]


def register(fn: Callable[[argparse._SubParsersAction], None]) -> Callable:
    """Decorator: add a subcommand registrar (idempotent)."""
    if fn not in REGISTRARS:
        REGISTRARS.append(fn)
    return fn


def _load_plugins() -> None:
    for mod in PLUGIN_MODULES:
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as exc:
            if exc.name is None or not mod.startswith(exc.name):
                raise


def build_parser() -> argparse.ArgumentParser:
    _load_plugins()
    parser = argparse.ArgumentParser(prog="python -m scheduler_core",
                                     description="Discrete-event simulator of GPU placement on Kubernetes (A100 pools)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for reg in REGISTRARS:
        reg(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # e.g. `mig layouts | head`: the reader went away, not an error
        import os
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:  # pragma: no cover
        print("interrupted", file=sys.stderr)
        return 130


# ------------------------------------------------------------------- errors
def _print_scenario_error(exc) -> None:
    print(f"{exc.source}: invalid scenario ({len(exc.errors)} error(s))", file=sys.stderr)
    for loc, msg in exc.errors:
        print(f"  {loc or '(root)'}: {msg}", file=sys.stderr)


# ---------------------------------------------------------------------- run
@register
def _register_run(sub) -> None:
    p = sub.add_parser("run", help="run a scenario file and print a summary")
    p.add_argument("scenario", help="scenario YAML/JSON file")
    p.add_argument("--json", metavar="OUT", help="write the full result as JSON ('-' for stdout)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=cmd_run)


def cmd_run(args) -> int:
    from scheduler_core.scenario import ScenarioError, load_scenario
    from scheduler_core.simulation import ClusterSimulation

    try:
        sc = load_scenario(args.scenario)
    except ScenarioError as exc:
        _print_scenario_error(exc)
        return 2
    last = [-1]

    def progress(f: float) -> None:
        step = int(f * 10)  # one line per 10% of simulated time
        if step != last[0]:
            last[0] = step
            print(f"[{sc.name}] {step * 10:3d}% simulated", file=sys.stderr, flush=True)

    result = ClusterSimulation(sc, progress=None if args.quiet else progress).execute()
    if args.json:
        text = result.to_json()
        if args.json == "-":
            print(text)
            return 0
        Path(args.json).write_text(text + "\n", encoding="utf-8")
    print(summary_table(result))
    return 0


def summary_table(r) -> str:
    """A human summary of the metrics that decide between stacks."""
    def f(x, unit="", nd=2):
        if x is None:
            return "-"
        if isinstance(x, float):
            return f"{x:.{nd}f}{unit}"
        return f"{x}{unit}"

    def hours(s):
        return None if s is None else s / 3600.0

    import json

    from scheduler_core.labels import headline

    # The metrics that show each failure lead, failures first (marked with "!").
    lead = [(("! " if failing else "  ") + label, value) for label, value, failing in headline(json.loads(r.to_json()))]
    rows = lead + [
        ("scenario / stack", f"{r.scenario} / {r.stack} (seed {r.seed}, horizon {hours(r.horizon):.1f} h)"),
        ("jobs submitted / completed / failed", f"{r.jobs.submitted} / {r.jobs.completed} / {r.jobs.failed}"),
        ("queue wait mean / p95", f"{f(hours(r.jobs.queue_wait.mean), ' h')} / {f(hours(r.jobs.queue_wait.p95), ' h')}"),
        ("completion time mean / p95", f"{f(hours(r.jobs.completion_time.mean), ' h')} / "
                                       f"{f(hours(r.jobs.completion_time.p95), ' h')}"),
        ("makespan", f(hours(r.jobs.makespan), " h")),
        ("utilisation allocated / effective", f"{f(r.utilisation.allocated * 100, '%', 1)} / "
                                              f"{f(r.utilisation.effective * 100, '%', 1)}"),
        ("stranded GPUs (mean) / fragmentation", f"{f(r.utilisation.stranded_gpus_mean)} / "
                                                 f"{f(r.utilisation.fragmentation_mean)}"),
        ("pending pods mean / max", f"{f(r.utilisation.pending_pods_mean, '', 1)} / {r.utilisation.pending_pods_max}"),
        ("gang partial-start GPU-hours", f(r.gangs.partial_start_gpu_hours)),
        ("topology factor max", f(r.gangs.topology_factor.max)),
        ("inference p50 / p99", f"{f(r.inference.p50_ms, ' ms', 1)} / "
                                f"{f(r.inference.p99_ms, ' ms', 1) if r.inference.p99_ms is not None or not r.inference.requests else 'unbounded (overloaded)'}"),
        ("SLO violations / services missing SLO", f"{f(r.inference.slo_violation_fraction * 100, '%', 2)} / "
                                                  f"{r.inference.services_missing_slo}"),
        ("OOM kills (collateral) / max blast", f"{r.oom.kills} ({r.oom.collateral_kills}) / {r.oom.max_blast_radius}"),
        ("preemptions / lost GPU-hours", f"{r.preemption.preemptions} / {f(r.preemption.lost_gpu_hours)}"),
        ("Jain's index over tenants", f(r.fairness.jain_index, "", 3)),
        ("admission errors", f"{r.admission_errors.total} {dict(r.admission_errors.by_reason) or ''}".strip()),
        ("MIG reconfiguration drains", f"{r.reconfiguration.drains} ({f(r.reconfiguration.drain_seconds, ' s', 0)})"),
        ("events processed", str(r.events_processed)),
    ]
    width = max(len(k) for k, _ in rows)
    lines = [f"{k.ljust(width)}  {v}" for k, v in rows]
    if r.inference.services:
        lines.append("")
        lines.append(f"{'service'.ljust(24)} {'mech':>12} {'p50 ms':>9} {'p99 ms':>9} {'SLO ms':>8} {'viol %':>7} {'OOM':>4}")
        for s in r.inference.services[:30]:
            p99 = f(s.p99_ms, '', 1) if s.p99_ms is not None or s.requests == 0 else "unbound"
            lines.append(f"{s.name[:24].ljust(24)} {s.mechanism:>12} {f(s.p50_ms, '', 1):>9} {p99:>9} "
                         f"{f(s.slo_p99_ms, '', 0):>8} {f(s.slo_violation_fraction * 100, '', 2):>7} {s.oom_kills:>4}")
    if r.fairness.tenants and len(r.fairness.tenants) > 1:
        lines.append("")
        lines.append(f"{'tenant'.ljust(16)} {'GPU-h':>9} {'fair GPU-h':>11} {'ratio':>6} {'wait p95 h':>11}")
        for t in r.fairness.tenants:
            lines.append(f"{t.name[:16].ljust(16)} {f(t.gpu_hours, '', 1):>9} {f(t.fair_gpu_hours, '', 1):>11} "
                         f"{f(t.share_ratio, '', 2):>6} {f(hours(t.queue_wait.p95), '', 2):>11}")
    return "\n".join(lines)


# ----------------------------------------------------------------- validate
@register
def _register_validate(sub) -> None:
    p = sub.add_parser("validate", help="check a scenario file; field-level errors, exit 0 if valid")
    p.add_argument("scenario")
    p.set_defaults(func=cmd_validate)


def cmd_validate(args) -> int:
    from scheduler_core.scenario import ScenarioError, load_scenario

    try:
        sc = load_scenario(args.scenario)
    except ScenarioError as exc:
        _print_scenario_error(exc)
        return 2
    gpus = sc.pool.total_gpus
    print(f"{args.scenario}: valid ({sc.name}: {len(sc.pool.node_groups)} node group(s), {gpus} GPUs, "
          f"{len(sc.workloads)} workload entr{'y' if len(sc.workloads) == 1 else 'ies'}, stack {sc.stack.name})")
    return 0


# --------------------------------------------------------------- calibrate
@register
def _register_calibrate(sub) -> None:
    p = sub.add_parser("calibrate", help="published interference figures against the simulator (exit 1 if off by >10%%)")
    p.set_defaults(func=cmd_calibrate)


def cmd_calibrate(args) -> int:
    from scheduler_core.calibration import calibration_table, format_table

    rows = calibration_table()
    print(format_table(rows))
    return 0 if all(r.within for r in rows) else 1


# ----------------------------------------------------------------- stories
@register
def _register_stories(sub) -> None:
    p = sub.add_parser("stories", help="each built-in story's verdict: 95%% interval over seeds and sensitivity band")
    p.add_argument("--seeds", type=int, default=10, help="seeds per stack (default 10)")
    p.set_defaults(func=cmd_stories)


def cmd_stories(args) -> int:
    from scheduler_core.stories import VERDICTS, format_judgement, judge

    ok = True
    for v in VERDICTS:
        j = judge(v, n_seeds=max(2, args.seeds))
        ok = ok and j.holds
        print(format_judgement(j))
        print()
    return 0 if ok else 1


# ---------------------------------------------------------------------- mig
@register
def _register_mig(sub) -> None:
    p = sub.add_parser("mig", help="A100 MIG geometry: list layouts, check a layout")
    msub = p.add_subparsers(dest="mig_command", metavar="MIGCOMMAND")
    msub.required = True
    lay = msub.add_parser("layouts", help="every valid layout, one per line (profile@start ...)")
    lay.add_argument("--gpu", required=True, help="a100-40gb, a100-80gb or an A100 model name")
    lay.add_argument("--maximal", action="store_true", help="only layouts to which no instance can be added")
    lay.set_defaults(func=cmd_mig_layouts)
    chk = msub.add_parser("check", help="check instances (profile@start, or bare profiles in creation order)")
    chk.add_argument("--gpu", required=True)
    chk.add_argument("instances", nargs="+", help="e.g. 3g.20gb@0 2g.10gb@4 1g.5gb@6, or all-balanced")
    chk.set_defaults(func=cmd_mig_check)
    pro = msub.add_parser("profiles", help="the placement table of a GPU")
    pro.add_argument("--gpu", required=True)
    pro.set_defaults(func=cmd_mig_profiles)


def cmd_mig_layouts(args) -> int:
    from scheduler_core import mig

    try:
        fam = mig.family_of(args.gpu)
    except mig.MigLayoutError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    n = 0
    for layout in mig.enumerate_layouts(fam, maximal_only=args.maximal):
        print(layout)
        n += 1
    print(f"{n} {'maximal ' if args.maximal else ''}layouts for {fam}", file=sys.stderr)
    return 0


def cmd_mig_check(args) -> int:
    from scheduler_core import mig

    try:
        fam = mig.family_of(args.gpu)
        spec = args.instances[0] if len(args.instances) == 1 and args.instances[0].startswith("all-") \
            else args.instances
        layout = mig.layout_from_spec(fam, spec)
    except mig.MigLayoutError as exc:
        print(f"invalid: {exc}")
        return 1
    if layout is None:
        print("valid: MIG disabled")
        return 0
    extra = "" if layout.is_maximal() else " (not maximal: more instances fit)"
    print(f"valid: {layout} — {layout.compute_slices}/7 compute slices, "
          f"{len(layout.used_slices)}/8 memory slices, {layout.sms} SMs{extra}")
    return 0


def cmd_mig_profiles(args) -> int:
    from scheduler_core import mig

    try:
        fam = mig.family_of(args.gpu)
    except mig.MigLayoutError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{'profile':<12} {'id':>3} {'g':>2} {'mem':>4} {'starts':<15} {'max':>3} {'SMs':>4} {'MiB':>6}")
    for p in mig.PROFILES[fam].values():
        print(f"{p.name:<12} {p.nvml_id:>3} {p.compute_slices:>2} {p.memory_slices:>4} "
              f"{','.join(map(str, p.allowed_starts)):<15} {p.max_instances:>3} {p.sms:>4} {p.memory_mib:>6}")
    return 0
