"""Uncertainty on every number: seed sweeps with 95% intervals and a sensitivity band.

* :func:`random_elements` names what a scenario draws from its seed.  A sweep over a scenario
  with none gives the same result for every seed; callers say so instead of showing a
  zero-width interval.
* :func:`confidence_interval` is the mean with a two-sided 95% Student-t half-width.
* :func:`unverified_parameters` are the named parameters tagged [U] (no authoritative figure) or
  fitted; :func:`perturbed` scales one of them by a factor (the band uses x0.5 and x1.5).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import mean, stdev
from typing import Callable, Iterable

from scheduler_core.scenario import DurationDist, IntChoice, ModelParameters, Scenario

# Two-sided 95% Student t quantiles by degrees of freedom (1..30); 1.96 beyond.
_T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
        2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
        2.045, 2.042]

BAND_FACTORS = (0.5, 1.5)


@dataclass(frozen=True)
class Estimate:
    mean: float
    half_width: float
    n: int

    @property
    def low(self) -> float:
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        return self.mean + self.half_width


def confidence_interval(values: list[float]) -> Estimate:
    n = len(values)
    if n == 0:
        return Estimate(float("nan"), float("nan"), 0)
    if n == 1:
        return Estimate(values[0], float("nan"), 1)
    t = _T95[n - 2] if n - 1 <= len(_T95) else 1.96
    return Estimate(mean(values), t * stdev(values) / math.sqrt(n), n)


def random_elements(scenario: Scenario) -> list[str]:
    """Field paths of everything the scenario draws from its seed (empty: fully deterministic)."""
    out = []
    for i, w in enumerate(scenario.workloads):
        arrival = getattr(w, "arrival", None)
        if arrival is not None and arrival.poisson_per_hour is not None and getattr(w, "count", 1) > 1:
            out.append(f"workloads.{i}.arrival (Poisson)")
        for field in ("duration", "workers", "gpus_per_worker"):
            value = getattr(w, field, None)
            if isinstance(value, (DurationDist, IntChoice)) and getattr(w, "count", 1) >= 1:
                out.append(f"workloads.{i}.{field} ({value.dist})")
    for g in scenario.pool.node_groups:
        dp = scenario.stack.data_plane_for(g.name)
        if dp.mechanism == "time-slicing" and g.gpus_per_node > 1:
            out.append(f"pool.{g.name}: time-slicing replica choice")
    return out


def with_seed(scenario: Scenario, seed: int) -> Scenario:
    return scenario.model_copy(update={"seed": seed})


def seeds(base_seed: int, n: int) -> list[int]:
    return list(range(base_seed, base_seed + n))


def sweep(scenario: Scenario, measure: Callable, n: int = 10, base_seed: int = 1) -> list:
    """``measure(result)`` for each of ``n`` seeds (one run each)."""
    from scheduler_core.api import simulate

    return [measure(simulate(with_seed(scenario, s))) for s in seeds(base_seed, n)]


def unverified_parameters() -> list[str]:
    """Numeric named parameters without an authoritative figure ([U]) or fitted to one figure."""
    out = []
    for name, field in ModelParameters.model_fields.items():
        desc = field.description or ""
        if not (desc.startswith("[U") or "fitted" in desc):
            continue
        if isinstance(field.default, bool) or not isinstance(field.default, (int, float)):
            continue
        if field.default == 0:
            continue  # x0.5 / x1.5 of zero is zero: nothing to vary
        out.append(name)
    return out


def perturbed(scenario: Scenario, name: str, factor: float) -> Scenario | None:
    """The scenario with parameter ``name`` scaled by ``factor``; None if that leaves its valid range."""
    params = scenario.parameters
    value = getattr(params, name) * factor
    if isinstance(ModelParameters.model_fields[name].default, int) and not isinstance(value, bool):
        value = max(1, round(value)) if isinstance(getattr(params, name), int) else value
    try:
        new = ModelParameters(**{**params.model_dump(), name: value})
    except ValueError:
        return None
    return scenario.model_copy(update={"parameters": new})


def spread(values: Iterable[float]) -> float:
    vals = list(values)
    return max(vals) - min(vals) if vals else 0.0
