"""An elastic gang (minAvailable below its workers) that must share one node starts with its minimum only
where that minimum fits on one node, and its other pods (and replacements) join that node or wait: a required
topology binds the whole gang, not each placement on its own."""

from __future__ import annotations

import pytest

from scheduler_core import simulate
from tests.scheduler_core.conftest import minimal, workload


def _run(min_available: int):
    # Two 4-GPU nodes, each half taken by a pinned 2-GPU job; the gang: 4 x 1 GPU, all on one node.
    pool = {"node_groups": [{"name": f"n{i}", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 4, "rack": "r"}
                            for i in range(2)]}  # one rack: the node, not the rack, is the required domain
    hogs = [{"kind": "batch", "name": f"hog{i}", "gpus_per_worker": 2, "node_group": f"n{i}", "duration": "8h",
             "memory_gib": 10} for i in range(2)]
    gang = {"kind": "training", "name": "pg", "workers": 4, "gpus_per_worker": 1, "min_available": min_available,
            "memory_gib": 10, "topology": {"required": "node"}, "duration": "1h", "arrival": {"at": 60}}
    r = simulate(minimal(horizon="2h", pool=pool, workloads=[*hogs, gang],
                         stack={"control_plane": {"scheduler": "coscheduling"}}))
    return r, workload(r, "pg")


def test_the_pods_past_the_minimum_join_the_minimums_node_or_wait():
    # The minimum (2) binds on n0; the other two fit only on n1, outside the gang's one node, so they never
    # bind (not split over two nodes), and the training job, which needs all its workers, times out waiting.
    r, pg = _run(min_available=2)
    assert {e.detail for e in r.events.entries if e.workload == "pg" and e.kind == "bind"} == {"2 pod(s): n0-0 x2"}
    assert pg.start is None and pg.state == "failed"
    assert [e.detail for e in r.events.entries if e.workload == "pg" and e.kind == "fail"] == ["RendezvousTimeout"]


def test_a_minimum_that_fits_only_across_nodes_does_not_start():
    # Three pods fit in the pool (2 + 2 free GPUs) but on no single node.
    r, pg = _run(min_available=3)
    assert pg.start is None and not [e for e in r.events.entries if e.workload == "pg" and e.kind == "bind"]


def test_with_a_required_rack_the_pods_past_the_minimum_stay_in_the_minimums_rack():
    # Racks r1 (a-0, a-1) and r2 (b-0) have two free GPUs each: the 4-pod gang fits in neither, its minimum (2)
    # in either; the other two pods would fit only in the other rack, so they never bind there.
    pool = {"node_groups": [{"name": "a", "count": 2, "gpu": "A100-SXM4-80GB", "gpus_per_node": 4, "rack": "r1"},
                            {"name": "b", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 4, "rack": "r2"}]}
    hogs = [{"kind": "batch", "name": "hog-a", "workers": 2, "gpus_per_worker": 3, "node_group": "a", "duration": "8h",
             "memory_gib": 10},
            {"kind": "batch", "name": "hog-b", "gpus_per_worker": 2, "node_group": "b", "duration": "8h", "memory_gib": 10}]
    gang = {"kind": "training", "name": "pg", "workers": 4, "gpus_per_worker": 1, "min_available": 2, "memory_gib": 10,
            "topology": {"required": "rack"}, "duration": "1h", "arrival": {"at": 60}}
    r = simulate(minimal(horizon="2h", pool=pool, workloads=[*hogs, gang],
                         stack={"control_plane": {"scheduler": "coscheduling"}}))
    nodes = {part.split(" x")[0] for e in r.events.entries if e.workload == "pg" and e.kind == "bind"
             for part in e.detail.split(": ", 1)[1].split(", ")}
    assert nodes and (nodes <= {"a-0", "a-1"} or nodes == {"b-0"}), nodes
    assert workload(r, "pg").start is None


def _grow(gpus_free: int, min_available: int):
    """One 4-GPU node with 4 - gpus_free GPUs held by a hog; a 4 x 1 GPU gang that must share the node."""
    pool = {"node_groups": [{"name": "n", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 4}]}
    hog = [{"kind": "batch", "name": "hog", "gpus_per_worker": 4 - gpus_free, "duration": "8h", "memory_gib": 10}]
    docs = [*(hog if gpus_free < 4 else []),
            {"kind": "training", "name": "pg", "workers": 4, "gpus_per_worker": 1, "min_available": min_available,
             "memory_gib": 10, "topology": {"required": "node"}, "duration": "1h", "arrival": {"at": 60}}]
    r = simulate(minimal(horizon="2h", pool=pool, workloads=docs, stack={"control_plane": {"scheduler": "coscheduling"}}))
    return [e.detail for e in r.events.entries if e.workload == "pg" and e.kind == "bind" and e.t == 60.0]


def test_a_gang_that_fits_whole_binds_all_its_pods_at_once():
    assert _grow(gpus_free=4, min_available=2) == ["4 pod(s): n-0 x4"]


def test_an_elastic_gang_grows_one_pod_at_a_time_past_its_minimum_as_room_allows():
    # Three GPUs free: the minimum (2) binds, then the one more pod that fits; the fourth waits.
    assert _grow(gpus_free=3, min_available=2) == ["2 pod(s): n-0 x2", "1 pod(s): n-0 x1"]


@pytest.mark.parametrize("stack, suffix", [
    ({"control_plane": {"scheduler": "coscheduling"}},
     " PodGroup pg gets rejected due to Pod pg-2 is unschedulable even after PostFilter"),
    ({"control_plane": {"scheduler": "kai", "kai": {"queues": [{"name": "default", "quota": 8}]}}}, ""),
])
def test_pods_waiting_to_join_their_gangs_node_are_not_said_to_fit_now(stack, suffix):
    # Ten minutes in, the minimum runs on n0 and the other two pods would fit on n1 but must join n0: the
    # PodGroup's condition names n0's shortage and n1's pod affinity, not "fits now".
    pool = {"node_groups": [{"name": f"n{i}", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 4, "rack": "r"}
                            for i in range(2)]}
    hogs = [{"kind": "batch", "name": f"hog{i}", "gpus_per_worker": 2, "node_group": f"n{i}", "duration": "8h",
             "memory_gib": 10} for i in range(2)]
    gang = {"kind": "training", "name": "pg", "workers": 4, "gpus_per_worker": 1, "min_available": 2, "memory_gib": 10,
            "topology": {"required": "node"}, "duration": "1h", "arrival": {"at": 60}}
    r = simulate(minimal(horizon="10m", pool=pool, workloads=[*hogs, gang], stack=stack))
    assert workload(r, "pg").pending_reason == (
        "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) didn't match pod affinity rules." + suffix)
