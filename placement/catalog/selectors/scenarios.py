"""The built-in scenarios (fixtures/scenarios/*.yaml): their list with a run-time estimate each, and
one scenario's document by name."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml
from django.conf import settings

SCENARIO_DIR = Path(settings.BASE_DIR) / "fixtures" / "scenarios"


@dataclass(frozen=True)
class ScenarioInfo:
    name: str
    title: str
    description: str
    file: str
    estimate_s: float | None = None  # predicted run time on a worker (placement.evidence.services.runs)


@lru_cache(maxsize=1)
def builtin_scenarios() -> list[ScenarioInfo]:
    infos = []
    for path in sorted(SCENARIO_DIR.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        infos.append(
            ScenarioInfo(
                name=path.stem,
                title=str(data.get("name", path.stem)),
                description=str(data.get("description", "")).strip(),
                file=path.name,
                estimate_s=_estimate(data),
            )
        )
    return infos


def _estimate(data: dict) -> float | None:
    from scheduler_core.scenario import parse_scenario
    from scheduler_core.scenario.limits import estimate_cost

    try:
        return run_seconds_estimate(estimate_cost(parse_scenario(data)))
    except Exception:  # noqa: BLE001 - a file the lint reports; the page still lists it
        return None


def builtin_scenario_document(name: str) -> dict | None:
    # Only a name the file system can hold: a 5,000-character name made is_file() raise (a 500).
    if not name or "/" in name or len(name) > 200:
        return None
    path = SCENARIO_DIR / f"{name}.yaml"
    if not path.is_file():
        return None
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def run_seconds_estimate(cost) -> float:
    """The simulator's measured cost per event (scheduler_core.scenario.limits.estimate_seconds) scaled by
    ATLAS_RUN_SPEED_FACTOR for workers slower (> 1) or faster (< 1) than the benchmark machine."""
    from scheduler_core.scenario.limits import estimate_seconds

    return estimate_seconds(cost) * settings.ATLAS_RUN_SPEED_FACTOR
