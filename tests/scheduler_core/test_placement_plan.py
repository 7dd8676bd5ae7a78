"""The binding phase's plan (nodes for a workload's pods, without committing): its strategies are a closed
set, so a misspelt one in a policy fails loudly instead of quietly placing like binpack."""

from __future__ import annotations

import pytest

from scheduler_core import parse_scenario
from scheduler_core.simulation import ClusterSimulation
from tests.scheduler_core.conftest import minimal


def test_a_misspelt_placement_strategy_is_refused_rather_than_taken_for_binpack():
    sim = ClusterSimulation(parse_scenario(minimal()))
    wl = sim.workloads[0]
    with pytest.raises(ValueError, match="unknown placement strategy 'bin-pack': expected one of spread, binpack, pack"):
        sim.plan(wl, 1, "bin-pack")
    assert [k for _, k in sim.plan(wl, 1, "binpack")] == [1]
