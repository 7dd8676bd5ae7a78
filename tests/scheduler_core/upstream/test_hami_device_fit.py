"""HAMi's device fit table, ported: Project-HAMi/HAMi pkg/device/nvidia/device_test.go, TestDevices_Fit.

Each case states a card (slots ``Count``, ``Used``, ``Totalmem``/``Usedmem`` MiB, ``Usedcores``) and a
request (``Nums``, ``Memreq`` MiB, ``Coresreq``) and expects HAMi's verdict and reason string
(``1/1 CardInsufficientMemory``).  Cases the model cannot state are listed in docs/upstream-tests.md.
"""

import pytest

from scheduler_core import parse_scenario
from scheduler_core.cluster import DeviceRequest
from scheduler_core.simulation import ClusterSimulation
from scheduler_core.simulation.explain import hami_node_reason

SRC = "HAMi pkg/device/nvidia/device_test.go TestDevices_Fit"


def _node(cards):
    sc = parse_scenario({
        "name": "hami-fit", "horizon": "1h",
        "pool": {"node_groups": [{"name": "n", "count": 1, "gpu": "A100-PCIE-80GB", "gpus_per_node": len(cards)}]},
        "stack": {"data_plane": {"mechanism": "hami", "hami": {"device_split_count": 100}}},
        "workloads": [{"kind": "batch", "name": "j", "duration": "1m"}]})
    node = ClusterSimulation(sc).nodes[0]
    for c, (used, totalmem, usedmem, usedcores) in zip(node.contexts, cards):
        c.slots, c.used_slots, c.memory_mib, c.mem_declared, c.cores_used = 100, used, totalmem, usedmem, usedcores
    return node


# (upstream case name, cards [(Used, Totalmem, Usedmem, Usedcores)], (Nums, Memreq, Coresreq), want reason or None)
CASES = [
    ("fit success", [(0, 128, 0, 0), (0, 128, 0, 0)], (1, 64, 50), None),
    ("fit fail: memory not enough", [(0, 128, 0, 0)], (1, 512, 50), "1/1 CardInsufficientMemory"),
    ("fit fail: core not enough", [(0, 1024, 0, 100)], (1, 512, 50), "1/1 CardInsufficientCore"),
    ("fit fail: card overused", [(100, 1280, 0, 0)], (1, 512, 50), "1/1 CardTimeSlicingExhausted"),
    ("fit success: but core limit can't exceed 100", [(0, 1280, 0, 0)], (1, 512, 120), None),
    ("fit fail:  card exclusively", [(20, 1280, 0, 0)], (1, 512, 100), "1/1 ExclusiveDeviceAllocateConflict"),
    ("fit fail:  CardComputeUnitsExhausted", [(20, 1280, 0, 100)], (1, 512, 0), "1/1 CardComputeUnitsExhausted"),
    ("fit fail:  AllocatedCardsInsufficientRequest", [(20, 1280, 0, 10)], (2, 512, 20),
     "1/1 AllocatedCardsInsufficientRequest"),
    # MemPercentagereq 10 of a 1280 MiB card, stated as the 128 MiB it resolves to.
    ("fit success:  memory percentage", [(20, 1280, 0, 10)], (1, 128, 20), None),
]


@pytest.mark.parametrize("name,cards,request_,want", CASES, ids=[c[0] for c in CASES])
def test_hami_fit_matches_upstream(name, cards, request_, want):
    nums, mem, cores = request_
    req = DeviceRequest(kind="hami", resource="nvidia.com/gpu", count=nums, memory_mib=mem, cores=cores)
    node = _node(cards)
    assert hami_node_reason(node, req) == want, f"{SRC} / {name}"
    assert (node.fit_count(req) >= 1) == (want is None)
