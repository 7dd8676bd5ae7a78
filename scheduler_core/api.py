"""Public entry points: :func:`simulate`, :func:`load_scenario`, :func:`synthetic_scenario`."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from scheduler_core.metrics import SimulationResult
from scheduler_core.scenario import Scenario, load_scenario, parse_scenario
from scheduler_core.simulation import ClusterSimulation


def simulate(scenario: Scenario | dict | str | Path, progress: Callable[[float], None] | None = None) -> SimulationResult:
    """Run a scenario to its horizon and return the result.

    ``scenario`` may be a :class:`Scenario`, a decoded dict, or a path to a
    YAML/JSON file.  ``progress``, if given, is called with the fraction of
    simulated time done (0.0 .. 1.0) at every time-series sample and once
    with 1.0 at the end; it must not touch the simulation.
    """
    if isinstance(scenario, (str, Path)):
        sc = load_scenario(scenario)
    else:
        sc = parse_scenario(scenario)
    return ClusterSimulation(sc, progress=progress).execute()


__all__ = ["simulate", "load_scenario", "parse_scenario", "Scenario", "SimulationResult"]


