"""Reads of the evidence: a stack's runs, side-by-side comparison, sweep
statistics (mean with a 95% confidence interval)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from placement.catalog.selectors.scenarios import builtin_scenario_document
from placement.evidence.models import SimulationRun, Sweep
from placement.stacks.models import Stack
from scheduler_core.uncertainty import Estimate, confidence_interval  # noqa: F401 - re-exported for views


_PLAN_RUN = re.compile(r"^plan-[0-9a-f]{16}$")


def scenario_label(name: str) -> str:
    """A run's scenario as a person reads it: a run of a stack's own plan is named `plan-<digest>`."""
    return "the stack's own plan" if _PLAN_RUN.match(name or "") else name


def stack_evidence(stack: Stack) -> list[SimulationRun]:
    return list(stack.runs.defer("scenario", "timeseries").order_by("-created_at")[:100])


def flatten_metrics(metrics: dict | None, prefix: str = "") -> dict[str, float]:
    """Numeric leaves of a result as dotted names (lists and series are left out)."""
    out: dict[str, float] = {}
    if not isinstance(metrics, dict):
        return out
    for key, value in metrics.items():
        name = f"{prefix}{key}"
        if isinstance(value, bool):
            continue
        if isinstance(value, (int, float)) and math.isfinite(value):
            out[name] = float(value)
        elif isinstance(value, dict):
            out.update(flatten_metrics(value, f"{name}."))
    return out


def sweep_summary(sweep: Sweep) -> dict:
    """Per stack: run counts by status and every metric as mean ± 95% CI over succeeded seeds."""
    stacks = list(sweep.stacks.all())
    runs = list(sweep.runs.all())
    table: dict[str, dict[int, Estimate]] = {}
    status: dict[int, dict[str, int]] = {s.pk: {} for s in stacks}
    for stack in stacks:
        mine = [r for r in runs if r.stack_id == stack.pk]
        for r in mine:
            status[stack.pk][r.status] = status[stack.pk].get(r.status, 0) + 1
        flat = [flatten_metrics(r.metrics) for r in mine if r.status == SimulationRun.SUCCEEDED]
        for name in sorted({k for f in flat for k in f}):
            table.setdefault(name, {})[stack.pk] = confidence_interval([f[name] for f in flat if name in f])
    done = all(r.is_finished for r in runs) and bool(runs)
    return {"stacks": stacks, "status": status, "metrics": table, "done": done, "total": len(runs),
            "random": (rnd := scenario_random_elements(sweep.scenario_name)), "deterministic": rnd == []}


def scenario_random_elements(scenario_name: str) -> list[str] | None:
    """What a built-in scenario draws from its seed ([] = nothing: every seed gives the same run;
    None = unknown scenario)."""
    from scheduler_core.scenario import ScenarioError, parse_scenario
    from scheduler_core.uncertainty import random_elements

    doc = builtin_scenario_document(scenario_name)
    if doc is None:
        return None
    try:
        return random_elements(parse_scenario(doc))
    except ScenarioError:
        return None


def side_by_side(runs: list[SimulationRun]) -> dict[str, list[float | None]]:
    """Metric name -> value per run, for the comparison table."""
    flat = [flatten_metrics(r.metrics) for r in runs]
    names = sorted({k for f in flat for k in f})
    return {name: [f.get(name) for f in flat] for name in names}


@dataclass(frozen=True)
class RunTimeline:
    kinds: list[tuple[str, int]]  # every kind the run logged, with its total count
    kind: str  # the filter applied ("" = all)
    entries: list[dict]  # kept entries of that kind, in time order
    left_out: int  # events counted but not kept (the simulator's log is bounded)
    pending: list[dict]  # [{reason, workloads}] for workloads still waiting at the horizon
    waiting: int


def run_timeline(run: SimulationRun, kind: str = "") -> RunTimeline:
    """The run's decision log, filtered by kind, and why workloads still wait (empty for older runs)."""
    metrics = run.metrics or {}
    events = metrics.get("events") or {}
    by_kind = events.get("by_kind") or {}
    kind = kind.strip()[:40]
    entries = [e for e in events.get("entries") or [] if not kind or e.get("kind") == kind]
    pending = metrics.get("pending") or {}
    return RunTimeline(kinds=sorted(by_kind.items()), kind=kind, entries=entries,
                       left_out=int(events.get("left_out") or 0), pending=list(pending.get("by_reason") or []),
                       waiting=int(pending.get("waiting") or 0))
