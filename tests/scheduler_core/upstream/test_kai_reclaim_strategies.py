"""KAI's reclaim strategies, ported: NVIDIA/KAI-Scheduler pkg/scheduler/plugins/proportion/reclaimable/strategies/
strategies_test.go (read at 72de64f), contexts "Maintain Fair Share Strategy" and "Guarantee Deserved Quota
Strategy".  Each case cites its upstream name; quantities are per resource (gpu, cpu, memory) as upstream
states them (unset = 0, unlimited = -1).  The single-resource Maintain Fair Share cases pass the reclaimee's
allocation as its remaining share, as upstream's test does."""

import pytest

from scheduler_core.cluster import GPU
from scheduler_core.policies.kai import (
    allocatable_share,
    can_reclaim_resources,
    guarantee_deserved_quota,
    maintain_fair_share,
)
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
    ("deserved less than fair share. GPU under, CPU over, Memory over", 100, (80, 220, 220), True),
    ("deserved less than fair share. GPU under, CPU under, Memory over", 100, (220, 80, 220), True),
    ("deserved less than fair share. GPU over, CPU over, Memory under", 100, (220, 220, 80), True),
    ("deserved equal to fair share. GPU under, CPU over, Memory over", 200, (80, 220, 220), True),
    ("deserved equal to fair share. GPU over, CPU under, Memory over", 200, (220, 80, 220), True),
    ("deserved equal to fair share. GPU over, CPU over, Memory under", 200, (220, 220, 80), True),
    ("deserved equal to fair share. GPU over, CPU under, Memory under", 200, (220, 120, 120), True),
    ("deserved equal to fair share. GPU under, CPU over, Memory under", 200, (120, 220, 120), True),
    ("deserved equal to fair share. GPU under, CPU under, Memory over", 200, (120, 120, 220), True),
    ("deserved equal to fair share. GPU under, CPU under, Memory under", 200, (120, 120, 120), False),
]


@pytest.mark.parametrize("name,deserved,remaining,expected", MULTI, ids=[c[0] for c in MULTI])
def test_maintain_fair_share_strategy_multi_resource(name, deserved, remaining, expected):
    # fair share 200 in every resource, maxAllowed unlimited
    allocatable = {r: allocatable_share(deserved, 200, UNLIMITED) for r in (GPU, CPU, MEMORY)}
    assert maintain_fair_share(_res(*remaining), allocatable) is expected, f"{SRC}: {name}"


def test_maintain_fair_share_strategy_max_allowed_below_deserved_and_fair_share():
    # "Max Allowed is lower than Deserved/FairShare": deserved and fair share 200, maxAllowed 100; CPU 120 > 100
    allocatable = {r: allocatable_share(200, 200, 100) for r in (GPU, CPU, MEMORY)}
    assert maintain_fair_share(_res(50, 120, 30), allocatable) is True, f"{SRC}: Max Allowed is lower than ..."


# Guarantee Deserved Quota Strategy: reclaimer requests 2 GPUs; (reclaimer deserved, allocated), (reclaimee
# deserved, allocated) in GPUs (CPU and memory deserved 0 unless stated), expected.
# The reclaimee's deserved and allocated are (gpu, cpu, memory).
GUARANTEE = [
    ("Reclaimer is above deserved quota and reclaimee above deserved quota", (1, 3), ((1, 0, 0), (3, 0, 0)), False),
    ("Reclaimer reaches exactly deserved quota and reclaimee above deserved quota", (5, 3), ((1, 0, 0), (4, 0, 0)),
     True),
    ("Reclaimer gets exactly deserved quota and reclaimee remains with exactly deserved quota", (5, 3),
     ((1, 0, 0), (3, 0, 0)), True),
    ("Reclaimer gets exactly deserved quota and reclaimee goes below deserved quota", (4, 2),
     ((3, 1, 1), (4, 0, 0)), True),
    ("Reclaimer is below deserved quota and reclaimee is above deserved quota in *only one* of the resources",
     (5, 2), ((1, 100, 0), (3, 0, 0)), True),
    ("Reclaimer is below deserved quota and reclaimee has exactly deserved quota", (5, 2), ((3, 0, 0), (3, 0, 0)),
     False),
    ("Reclaimer is below deserved quota and reclaimee is below deserved quota", (5, 2), ((3, 0, 0), (2, 0, 0)), False),
    ("Zero quota queue gives up on all resources in favor of a starved queue", (4, 2), ((0, 0, 0), (2, 0, 0)), True),
]


@pytest.mark.parametrize("name,reclaimer,reclaimee,expected", GUARANTEE, ids=[c[0] for c in GUARANTEE])
def test_guarantee_deserved_quota_strategy(name, reclaimer, reclaimee, expected):
    (r_deserved, r_alloc), (v_deserved, v_alloc) = reclaimer, reclaimee
    got = guarantee_deserved_quota(gpus(2), gpus(r_alloc), _res(r_deserved, 0, 0), _res(*v_alloc), _res(*v_deserved))
    assert got is expected, f"{SRC}: {name}"


# KAI-Scheduler pkg/scheduler/plugins/proportion/reclaimable/reclaimable_test.go, "Can Reclaim Resources".
# Per resource (gpu, cpu milli, memory): the job's request, the queue's allocated and fair share (preemptible
# job), or its deserved, fair share, allocated and allocated non-preemptible (non-preemptible job).
RECLAIMABLE = "KAI-Scheduler pkg/scheduler/plugins/proportion/reclaimable/reclaimable_test.go Can Reclaim Resources"
CAN_RECLAIM_PREEMPTIBLE = [
    ("No allocated resources, below fair share", (1, 1000, 1000), (0, 0, 0), (2, 2000, 2000), True),
    ("Some resources allocated, below fair share", (1, 1000, 1000), (1, 1000, 1000), (3, 3000, 3000), True),
    ("Some resources at fair share with job, other stay below", (0, 500, 1000), (1, 1000, 1000), (2, 2000, 2000),
     True),
    ("Exactly at fair share with job", (1, 1000, 1000), (1, 1000, 1000), (2, 2000, 2000), True),
    ("Partially above fair share", (1000, 1, 1000), (1, 1000, 1000), (1, 1500, 3000), False),
    ("Fully above fair share", (1000, 1, 1000), (1, 1000, 1000), (1, 1500, 1500), False),
    ("Queue partially above fair share without job resources", (1000, 1, 1000), (1, 2000, 1000), (0, 3000, 3000),
     False),
]


@pytest.mark.parametrize("name,request_,allocated,fair,expected", CAN_RECLAIM_PREEMPTIBLE,
                         ids=[c[0] for c in CAN_RECLAIM_PREEMPTIBLE])
def test_can_reclaim_resources_preemptible_job(name, request_, allocated, fair, expected):
    got = can_reclaim_resources(_res(*allocated), _res(*request_), _res(*fair), True, {}, {})
    assert got is expected, f"{RECLAIMABLE}: {name}"


CAN_RECLAIM_NON_PREEMPTIBLE = [
    ("No allocated resources, below quota", (1, 1000, 1000), (2, 2000, 2000), (2, 2000, 2000), (0, 0, 0), (0, 0, 0),
     True),
    ("No allocated resources, exactly at quota", (1, 1000, 1000), (1, 1000, 1000), (2, 2000, 2000), (0, 0, 0),
     (0, 0, 0), True),
    ("No allocated resources, partially above quota", (1000, 1, 1000), (0, 1000, 500), (2, 2000, 2000), (0, 0, 0),
     (0, 0, 0), False),
    ("Some resources allocated, below quota", (1, 1000, 1000), (3, 3000, 3000), (3, 3000, 3000), (1, 1000, 1000),
     (1, 1000, 1000), True),
    ("Some preemptible resources allocated, zero quota", (1000, 1, 1000), (0, 0, 0), (3, 3000, 3000),
     (1, 1000, 1000), (0, 0, 0), False),
    ("Partially above quota", (1000, 1, 1000), (0, 1500, 3000), (3, 3000, 3000), (1, 1000, 1000), (1, 1000, 1000),
     False),
    ("Fully above quota", (1000, 1, 1000), (1, 1500, 1500), (3, 3000, 3000), (1, 1000, 1000), (1, 1000, 1000),
     False),
    ("Queue partially over quota without job resources", (1000, 1, 1000), (0, 1500, 3000), (3, 3000, 3000),
     (1, 1000, 1000), (1, 1000, 1000), False),
]


@pytest.mark.parametrize("name,request_,deserved,fair,allocated,non_preemptible,expected", CAN_RECLAIM_NON_PREEMPTIBLE,
                         ids=[c[0] for c in CAN_RECLAIM_NON_PREEMPTIBLE])
def test_can_reclaim_resources_non_preemptible_job(name, request_, deserved, fair, allocated, non_preemptible,
                                                    expected):
    got = can_reclaim_resources(_res(*allocated), _res(*request_), _res(*fair), False, _res(*non_preemptible),
                                _res(*deserved))
    assert got is expected, f"{RECLAIMABLE}: {name}"
