"""Same scenario and seed -> byte-identical JSON; a different seed changes the draws."""

import pytest

from scheduler_core import simulate, synthetic_scenario
from scheduler_core.scenario import load_scenario
from tests.scheduler_core.conftest import SCENARIOS


@pytest.mark.parametrize("name", ["form-c-mig-hami-volcano", "shared-card-oom-timeslicing", "starved-tenant-kueue"])
def test_builtin_scenario_json_is_byte_identical_across_runs(name):
    sc = load_scenario(SCENARIOS / f"{name}.yaml")
    assert simulate(sc).to_json() == simulate(sc).to_json()


def test_synthetic_run_is_byte_identical_and_seed_sensitive():
    a = simulate(synthetic_scenario(nodes=4, jobs=300, services=3, days=1, seed=3)).to_json()
    b = simulate(synthetic_scenario(nodes=4, jobs=300, services=3, days=1, seed=3)).to_json()
    c = simulate(synthetic_scenario(nodes=4, jobs=300, services=3, days=1, seed=4)).to_json()
    assert a == b
    assert a != c
