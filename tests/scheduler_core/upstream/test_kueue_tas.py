"""Kueue Topology-Aware Scheduling, ported from kubernetes-sigs/kueue v0.19 (ff69552e).

* ``pkg/cache/scheduler/tas_cache_test.go`` ``TestFindTopologyAssignments``: nodes with their rack and free
  capacity, a pod set with or without a topology request; upstream asserts the pods per node (or the
  reason none fits).
* ``pkg/scheduler/scheduler_tas_test.go`` ``TestScheduleForTAS``: the same through a scheduling cycle
  (admitted or pending with Kueue's message).

Upstream's nodes are named ``x<k>`` under block ``b<i>`` and rack ``r<j>``; here each is a one-node group
``x<k>`` (node ``x<k>-0``) in rack ``b<i>-r<j>``, so names and (block, rack) sort as upstream's level values.
Requests are CPU upstream and GPUs here (node capacity: 1 CPU = 1 GPU).  With TAS on every flavor names the
topology, so every ClusterQueue is TAS-only: a pod set without a topology request is an implied unconstrained
request (``isTASImplied``), placed with ``TASProfileMixed`` (on by default since v0.15).
"""

from collections import Counter

import pytest

from scheduler_core import parse_scenario
from scheduler_core.simulation import ClusterSimulation

CACHE_TEST = "kueue pkg/cache/scheduler/tas_cache_test.go TestFindTopologyAssignments"
SCHEDULE_TEST = "kueue pkg/scheduler/scheduler_tas_test.go TestScheduleForTAS"

# (node, rack, capacity)
SCATTERED = [("x3", "b1-r1", 4), ("x5", "b1-r1", 1), ("x1", "b1-r1", 1), ("x6", "b2-r1", 2), ("x2", "b2-r1", 1)]
DEFAULT = [("x3", "b1-r1", 1), ("x5", "b1-r2", 1), ("x1", "b1-r2", 1), ("x6", "b1-r2", 1), ("x2", "b2-r1", 1),
           ("x4", "b2-r2", 2)]


def _run(nodes, workloads, topology_name="default", cpu=None):
    quotas = {"nvidia.com/gpu": 50} if cpu is None else {"nvidia.com/gpu": 50, "cpu": 50}
    groups = [{"name": n, "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": cap, "rack": rack}
              for n, rack, cap in nodes]
    if cpu is not None:
        for g in groups:
            g["cpu"] = cpu
    docs = [{"kind": "training", "name": name, "workers": pods, "gpus_per_worker": 1, "duration": "10h",
             "arrival": {"at": float(i)}, **extra} for i, (name, pods, extra) in enumerate(workloads)]
    sc = parse_scenario({
        "name": "kueue-tas", "horizon": "1h", "pool": {"node_groups": groups},
        "stack": {"control_plane": {"scheduler": "kube-default", "admission": "kueue", "kueue": {
            "topology_aware_scheduling": True, "topology_name": topology_name,
            "local_queues": {"default": "tas-main"},
            "cluster_queues": [{"name": "tas-main", "flavors": [{"name": "tas-default",
                                                                 "quotas": quotas}]}]}}},
        "workloads": docs})
    sim = ClusterSimulation(sc)
    sim.execute()
    return sim


def _placement(sim, name):
    wl = next(w for w in sim.workloads if w.name == name)
    return dict(Counter(p.node.name.removesuffix("-0") for p in wl.pods if p.node is not None))


@pytest.mark.parametrize("name,topology", [
    ("no annotation; implied default to unconstrained; 6 pods fit into hosts scattered across the whole datacenter "
     "even they could fit into single rack; BestFit", {}),
    ("unconstrained; 6 pods fit into hosts scattered across the whole datacenter even they could fit into single "
     "rack; BestFit", {"unconstrained": True}),
])
def test_unconstrained_pods_fill_the_least_free_nodes_first(name, topology):
    sim = _run(SCATTERED, [("wl", 6, {"topology": topology})])
    assert _placement(sim, "wl") == {"x1": 1, "x3": 1, "x5": 1, "x2": 1, "x6": 2}, f"{CACHE_TEST} / {name}"


@pytest.mark.parametrize("name", ["unconstrained; a single pod fits into each host; BestFit",
                                  "unconstrained; a single pod fits into each host; LeastFreeCapacity; "
                                  "TASProfileMixed"])
def test_one_unconstrained_pod_takes_the_fullest_node_first_in_level_order(name):
    sim = _run(DEFAULT, [("wl", 1, {"topology": {"unconstrained": True}})])
    assert _placement(sim, "wl") == {"x3": 1}, f"{CACHE_TEST} / {name}"


def test_host_required_single_pod_fits_in_the_host():
    sim = _run(DEFAULT, [("wl", 1, {"topology": {"required": "node"}})])
    assert _placement(sim, "wl") == {"x3": 1}, f"{CACHE_TEST} / host required; single Pod fits in the host; BestFit"


def test_the_exclusion_names_the_most_restrictive_resource():
    # "resource exclusion picks most restrictive resource": a node with 500m CPU and no free GPU; the pod asks
    # 1 CPU and 1 GPU: both give 0 pods and the alphabetical tie-break names cpu.  Here a first workload
    # holds the node's only GPU.
    sim = _run([("dual-shortage", "r", 1)], [("holder", 1, {}), ("wl", 1, {"cpu": 1, "topology": {"required": "node"}})],
               cpu=0.5)
    wl = next(w for w in sim.workloads if w.name == "wl")
    assert sim.pending_reason(wl) == ('couldn\'t assign flavors to pod set main: topology "default" doesn\'t allow to fit '
                               'any of 1 pod(s). Total nodes: 1; excluded: resource "cpu": 1'), CACHE_TEST


def test_a_workload_without_a_topology_request_is_placed_by_tas():
    sim = _run([("x1", "r", 1)], [("foo", 1, {})], topology_name="tas-single-level")
    assert _placement(sim, "foo") == {"x1": 1}, (
        f"{SCHEDULE_TEST} / workload which does not specify TAS annotation uses the only TAS flavor")
    assert any(e.kind == "admit" and e.workload == "foo" for e in sim.log.entries)


def test_a_node_held_by_another_tas_workload_leaves_no_room():
    sim = _run([("x1", "r", 1)], [("bar-admitted", 1, {"topology": {"required": "node"}}),
                                  ("foo", 1, {"topology": {"required": "node"}})], topology_name="tas-single-level")
    foo = next(w for w in sim.workloads if w.name == "foo")
    assert foo.admitted_at is None
    assert sim.pending_reason(foo) == (
        'couldn\'t assign flavors to pod set main: topology "tas-single-level" doesn\'t allow to fit any of 1 '
        'pod(s). Total nodes: 1; excluded: resource "nvidia.com/gpu": 1'), (
        f"{SCHEDULE_TEST} / workload does not get scheduled as the node capacity is already used by another TAS "
        "workload")


def test_unconstrained_pods_skip_a_node_without_room():
    # "admits workload when nodes are partially empty; unconstrained": x1 has no free capacity (here a first
    # workload holds it), two unconstrained pods go to x2 and x3.
    sim = _run([("x1", "r1", 1), ("x2", "r1", 1), ("x3", "r1", 1)],
               [("holder", 1, {}), ("foo", 2, {"topology": {"unconstrained": True}})])
    assert _placement(sim, "holder") == {"x1": 1}
    assert _placement(sim, "foo") == {"x2": 1, "x3": 1}, (
        f"{SCHEDULE_TEST} / admits workload when nodes are partially empty; unconstrained")


def test_tas_admits_a_workload_only_when_all_its_pods_fit():
    # Quota (50) is free but the nodes hold 4 pods: the 5-pod workload waits, with Kueue's count.
    sim = _run([("x1", "r", 2), ("x2", "r", 2)], [("big", 5, {})])
    big = sim.workloads[0]
    assert big.admitted_at is None and not big.pods
    assert sim.pending_reason(big) == ('couldn\'t assign flavors to pod set main: topology "default" allows to fit only 4 '
                                'out of 5 pod(s)')


def test_a_pod_set_states_one_topology_request():
    with pytest.raises(Exception, match="give one of required, preferred and unconstrained"):
        _run(DEFAULT, [("wl", 1, {"topology": {"required": "node", "unconstrained": True}})])
