"""KAI's reclaim strategies, ported: NVIDIA/KAI-Scheduler pkg/scheduler/plugins/proportion/reclaimable/strategies/
strategies_test.go (read at 72de64f), contexts "Maintain Fair Share Strategy" and "Guarantee Deserved Quota
Strategy".  Each case cites its upstream name; quantities are per resource (gpu, cpu, memory) as upstream
states them (unset = 0, unlimited = -1).  The single-resource Maintain Fair Share cases pass the reclaimee's
allocation as its remaining share, as upstream's test does."""

import pytest

from scheduler_core.cluster import GPU
from scheduler_core.policies.kai import allocatable_share, guarantee_deserved_quota, maintain_fair_share
from scheduler_core.resources import CPU, MEMORY

SRC = "KAI-Scheduler pkg/scheduler/plugins/proportion/reclaimable/strategies/strategies_test.go"
UNLIMITED = -1


def gpus(x):
    return {GPU: float(x)}


# (upstream case, reclaimee deserved, fair share, allocated (GPUs; maxAllowed unlimited), expected)
MAINTAIN = [
    ("Reclaimee has less than quota", 3, 4, 1, False),
    ("Reclaimee has less than fair share", 3, 4, 3, False),
    ("Reclaimee has exactly fair share and above quota", 1, 3, 3, False),
    ("Reclaimee has exactly fair share and equal to quota", 3, 3, 3, False),
    ("Reclaimee has more than fair share", 2, 3, 4, True),
]


@pytest.mark.parametrize("name,deserved,fair,allocated,expected", MAINTAIN, ids=[c[0] for c in MAINTAIN])
def test_maintain_fair_share_strategy(name, deserved, fair, allocated, expected):
    allocatable = {GPU: allocatable_share(deserved, fair, UNLIMITED), CPU: 0.0, MEMORY: 0.0}
    assert maintain_fair_share(gpus(allocated), allocatable) is expected, f"{SRC}: {name}"


def _res(g, c, m):
    return {GPU: float(g), CPU: float(c), MEMORY: float(m)}


# Maintain Fair Share Strategy - Multi Resource: deserved 100, fair share 200 in every resource; the
# remaining share per resource (gpu, cpu, memory in MinMemory units).
MULTI = [
    ("deserved less than fair share. GPU under, CPU over, Memory over", (80, 220, 220), True),
    ("deserved less than fair share. GPU under, CPU under, Memory over", (220, 80, 220), True),
]


@pytest.mark.parametrize("name,remaining,expected", MULTI, ids=[c[0] for c in MULTI])
def test_maintain_fair_share_strategy_multi_resource(name, remaining, expected):
    allocatable = {r: allocatable_share(100, 200, UNLIMITED) for r in (GPU, CPU, MEMORY)}
    assert maintain_fair_share(_res(*remaining), allocatable) is expected, f"{SRC}: {name}"


# Guarantee Deserved Quota Strategy: reclaimer requests 2 GPUs; (reclaimer deserved, allocated), (reclaimee
# deserved, allocated) in GPUs (CPU and memory deserved 0 unless stated), expected.
GUARANTEE = [
    ("Reclaimer is above deserved quota and reclaimee above deserved quota", (1, 3), (1, 3), False),
    ("Reclaimer reaches exactly deserved quota and reclaimee above deserved quota", (5, 3), (1, 4), True),
    ("Reclaimer gets exactly deserved quota and reclaimee remains with exactly deserved quota", (5, 3), (1, 3), True),
]


@pytest.mark.parametrize("name,reclaimer,reclaimee,expected", GUARANTEE, ids=[c[0] for c in GUARANTEE])
def test_guarantee_deserved_quota_strategy(name, reclaimer, reclaimee, expected):
    (r_deserved, r_alloc), (v_deserved, v_alloc) = reclaimer, reclaimee
    got = guarantee_deserved_quota(gpus(2), gpus(r_alloc), _res(r_deserved, 0, 0), gpus(v_alloc),
                                   _res(v_deserved, 0, 0))
    assert got is expected, f"{SRC}: {name}"
