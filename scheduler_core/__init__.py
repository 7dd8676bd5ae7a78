"""scheduler_core: discrete-event simulator of GPU placement on Kubernetes (A100 pools).

No Django, no Celery: pure Python (pydantic, PyYAML, numpy) so it runs in a
worker, a CLI or a test without a database.

Public API::

    from scheduler_core import simulate, load_scenario, synthetic_scenario
    result = simulate(load_scenario("fixtures/scenarios/partial-gang-default.yaml"),
                      progress=lambda f: print(f"{f:.0%}"))
    print(result.gangs.partial_start_gpu_hours)

The event heap (:mod:`scheduler_core.events`) is public too, for trace replay.
"""

from scheduler_core.events import Environment, Event, Priority, SchedulingError

__all__ = [
    "Environment", "Event", "Priority", "SchedulingError",
    "simulate", "load_scenario", "parse_scenario", "synthetic_scenario",
    "Scenario", "ScenarioError", "SimulationResult",
]


def __getattr__(name):
    # Lazy imports keep `import scheduler_core.events` light for the trace replayer.
    if name in ("simulate",):
        from scheduler_core.api import simulate
        return simulate
    if name in ("load_scenario", "parse_scenario", "Scenario", "ScenarioError"):
        from scheduler_core import scenario
        return getattr(scenario, name)
    if name == "SimulationResult":
        from scheduler_core.metrics import SimulationResult
        return SimulationResult
    if name == "synthetic_scenario":
        from scheduler_core.synthetic import synthetic_scenario
        return synthetic_scenario
    raise AttributeError(f"module 'scheduler_core' has no attribute {name!r}")
