"""The built-in failure stories as verdicts: naive stack vs right stack on the metric that shows the failure.

Each :class:`Verdict` compares two built-in scenarios (same pool and workloads, different stacks)
on one headline metric.  :func:`judge` runs both over >= 10 seeds, pairs them by seed and gives
the mean improvement with its 95% interval, then the sensitivity band: every unverified named
parameter at x0.5 and x1.5 (at the scenario's own seed), the three that move the improvement
most, and whether any perturbation flips the verdict.

``python -m scheduler_core stories`` prints them; ``tests/scheduler_core/test_story_verdicts.py``
fails if a verdict flips across seeds or under the band.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from scheduler_core import uncertainty as U
from scheduler_core.metrics import SimulationResult
from scheduler_core.scenario import Scenario, load_scenario

SCENARIOS = Path(__file__).resolve().parents[1] / "fixtures" / "scenarios"


def _service(r: SimulationResult, name: str):
    return next(s for s in r.inference.services if s.name == name)


@dataclass(frozen=True)
class Verdict:
    story: str
    naive: str  # scenario file stem
    right: str
    metric: str  # human label, with its unit
    measure: Callable[[SimulationResult], float]
    lower_is_better: bool = True

    def improvement(self, naive: SimulationResult, right: SimulationResult) -> float:
        """How much better the right stack is (> 0: the verdict holds)."""
        a, b = self.measure(naive), self.measure(right)
        return a - b if self.lower_is_better else b - a


def _unfinished(r: SimulationResult) -> float:
    return float(r.jobs.submitted - r.jobs.completed)


def _violations(name: str) -> Callable[[SimulationResult], float]:
    return lambda r: _service(r, name).slo_violation_fraction * 100.0


VERDICTS: list[Verdict] = [
    Verdict("partial gang", "partial-gang-default", "partial-gang-coscheduling",
            "GPU-hours held by partial gangs", lambda r: r.gangs.partial_start_gpu_hours),
    Verdict("partial gang", "partial-gang-default", "partial-gang-volcano",
            "GPU-hours held by partial gangs", lambda r: r.gangs.partial_start_gpu_hours),
    Verdict("topology cliff", "topology-cliff-default", "topology-cliff-kueue-tas",
            "worst step-time factor of the all-reduce gang", lambda r: r.gangs.topology_factor.max or 1.0),
    Verdict("topology cliff", "topology-cliff-default", "topology-cliff-volcano",
            "worst step-time factor of the all-reduce gang", lambda r: r.gangs.topology_factor.max or 1.0),
    Verdict("shared-card OOM", "shared-card-oom-timeslicing", "shared-card-oom-hami",
            "collateral OOM kills", lambda r: float(r.oom.collateral_kills)),
    Verdict("shared-card OOM", "shared-card-oom-timeslicing", "shared-card-oom-mig",
            "collateral OOM kills", lambda r: float(r.oom.collateral_kills)),
    Verdict("starved tenant", "starved-tenant-default", "starved-tenant-kueue",
            "Jain's fairness index (tenants with demand)", lambda r: r.fairness.jain_index or 0.0,
            lower_is_better=False),
    Verdict("starved tenant", "starved-tenant-default", "starved-tenant-volcano",
            "Jain's fairness index (tenants with demand)", lambda r: r.fairness.jain_index or 0.0,
            lower_is_better=False),
    Verdict("starved tenant", "starved-tenant-default", "starved-tenant-kueue",
            "b-search requests over SLO or unserved (%)", _violations("b-search")),
    Verdict("device plugin", "device-plugin-default", "device-plugin-readiness",
            "jobs not completed", _unfinished),
    Verdict("device plugin", "device-plugin-default", "device-plugin-dra", "jobs not completed", _unfinished),
    Verdict("noisy neighbour (labs 2 -> 3)", "lab2-time-slicing", "lab3-hami",
            "chat-victim requests over SLO (%)", _violations("chat-victim")),
]


@dataclass
class BandRow:
    parameter: str
    factor: float
    improvement: float

    @property
    def holds(self) -> bool:
        return self.improvement > 0


@dataclass
class Judgement:
    verdict: Verdict
    seeds: list[int]
    naive: U.Estimate
    right: U.Estimate
    improvement: U.Estimate
    random_elements: list[str]
    base_improvement: float
    band: list[BandRow] = field(default_factory=list)  # the top parameters, both factors
    band_checked: int = 0
    flips: list[BandRow] = field(default_factory=list)  # every perturbation that flips the verdict

    @property
    def holds_over_seeds(self) -> bool:
        e = self.improvement
        return e.low > 0 if math.isfinite(e.half_width) and e.half_width > 0 else e.mean > 0

    @property
    def holds(self) -> bool:
        return self.holds_over_seeds and not self.flips


def _load(stem: str) -> Scenario:
    return load_scenario(SCENARIOS / f"{stem}.yaml")


def judge(v: Verdict, n_seeds: int = 10, base_seed: int = 1, top: int = 3) -> Judgement:
    from scheduler_core.api import simulate

    naive, right = _load(v.naive), _load(v.right)
    seeds = U.seeds(base_seed, n_seeds)
    a = [v.measure(simulate(U.with_seed(naive, s))) for s in seeds]
    b = [v.measure(simulate(U.with_seed(right, s))) for s in seeds]
    diffs = [(x - y) if v.lower_is_better else (y - x) for x, y in zip(a, b)]
    base = v.improvement(simulate(naive), simulate(right))
    rows: list[BandRow] = []
    for name in U.unverified_parameters():
        for f in U.BAND_FACTORS:
            pn, pr = U.perturbed(naive, name, f), U.perturbed(right, name, f)
            if pn is None or pr is None:
                continue
            rows.append(BandRow(name, f, v.improvement(simulate(pn), simulate(pr))))
    effect: dict[str, float] = {}
    for row in rows:
        effect[row.parameter] = max(effect.get(row.parameter, 0.0), abs(row.improvement - base))
    ranked = sorted((k for k in effect if effect[k] > 1e-9), key=lambda k: (-effect[k], k))[:top]
    band = [r for r in rows if r.parameter in ranked]
    band.sort(key=lambda r: (ranked.index(r.parameter), r.factor))
    return Judgement(v, seeds, U.confidence_interval(a), U.confidence_interval(b), U.confidence_interval(diffs),
                     U.random_elements(naive), base, band, len(rows), [r for r in rows if not r.holds])


def _num(x: float) -> str:
    return "-" if not math.isfinite(x) else f"{x:.3g}"


def format_judgement(j: Judgement) -> str:
    v = j.verdict
    e = j.improvement
    width = f" ± {_num(e.half_width)}" if math.isfinite(e.half_width) and e.half_width > 0 else ""
    rand = ", ".join(j.random_elements) if j.random_elements else "nothing random: every seed gives the same run"
    lines = [
        f"{v.story}: {v.right} vs {v.naive} on {v.metric} ({'lower' if v.lower_is_better else 'higher'} is better)",
        f"  {v.naive}: {_num(j.naive.mean)} ± {_num(j.naive.half_width)}   {v.right}: {_num(j.right.mean)} ± "
        f"{_num(j.right.half_width)}   (95% interval, {len(j.seeds)} seeds; random: {rand})",
        f"  improvement {_num(e.mean)}{width} -> verdict {'holds' if j.holds_over_seeds else 'DOES NOT HOLD'} over seeds",
        "  band, improvement at x0.5 / x1.5: " + ("; ".join(
            f"{p} " + " / ".join(_num(r.improvement) for r in j.band if r.parameter == p)
            for p in dict.fromkeys(r.parameter for r in j.band)) or "no unverified parameter moves it"),
        f"  {j.band_checked} perturbations checked, "
        + (f"{len(j.flips)} FLIP the verdict: " + ", ".join(f"{r.parameter} x{r.factor}" for r in j.flips)
           if j.flips else "none flips the verdict"),
    ]
    return "\n".join(lines)


def verdicts_for(scenario_stem: str) -> list[Verdict]:
    """The verdicts a built-in scenario takes part in (as naive or right stack)."""
    return [v for v in VERDICTS if scenario_stem in (v.naive, v.right)]


def summary(j: Judgement) -> dict:
    """A plain (cacheable, JSON-able) account of a judgement for pages and APIs."""
    v = j.verdict

    def est(e: U.Estimate) -> dict:
        hw = e.half_width if math.isfinite(e.half_width) else None
        return {"mean": e.mean, "half_width": hw, "n": e.n}

    return {
        "story": v.story, "naive": v.naive, "right": v.right, "metric": v.metric,
        "better": "lower" if v.lower_is_better else "higher", "seeds": j.seeds,
        "naive_estimate": est(j.naive), "right_estimate": est(j.right), "improvement": est(j.improvement),
        "random": j.random_elements, "holds_over_seeds": j.holds_over_seeds, "holds": j.holds,
        "base_improvement": j.base_improvement,
        "band": [{"parameter": r.parameter, "factor": r.factor, "improvement": r.improvement, "holds": r.holds}
                 for r in j.band],
        "checked": j.band_checked,
        "flips": [{"parameter": r.parameter, "factor": r.factor, "improvement": r.improvement} for r in j.flips],
    }
