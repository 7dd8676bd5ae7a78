"""Kueue TAS says why a workload does not fit (tas_flavor_snapshot.go ``notFitMessage``): how many pods the
requested level holds, and per excluded node the resource that leaves no room for one pod, named as Kueue
names it (``CountInWithLimitingResource``)."""

from __future__ import annotations

from scheduler_core import parse_scenario
from scheduler_core.simulation import ClusterSimulation

PREFIX = "couldn't assign flavors to pod set main: "


def node(name, gpus, **host):
    return {"name": name, "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": gpus, "rack": "r", **host}


def pending(groups, workloads, flavor_node_groups=None):
    """workloads: (name, pods, extra), one second apart; returns {name: (admitted_at, pending reason)}."""
    flavor = {"name": "tas-default", "quotas": {"nvidia.com/gpu": 50, "cpu": 500, "memory": 5000}}
    if flavor_node_groups:
        flavor["node_groups"] = flavor_node_groups
    docs = [{"kind": "training", "name": name, "workers": pods, "gpus_per_worker": 1, "duration": "10h",
             "arrival": {"at": float(i)}, **extra} for i, (name, pods, extra) in enumerate(workloads)]
    sc = parse_scenario({
        "name": "kueue-tas", "horizon": "1h", "pool": {"node_groups": groups},
        "stack": {"control_plane": {"scheduler": "kube-default", "admission": "kueue", "kueue": {
            "topology_aware_scheduling": True, "local_queues": {"default": "main"},
            "cluster_queues": [{"name": "main", "flavors": [flavor]}]}}},
        "workloads": docs})
    sim = ClusterSimulation(sc)
    sim.execute()
    return {w.name: (w.admitted_at, sim.pending_reason(w)) for w in sim.workloads}


def test_a_required_node_level_counts_one_node_at_a_time():
    # Two nodes with one free GPU each: the whole topology holds both pods, but no single node does.
    out = pending([node("x1", 1), node("x2", 1)], [("wl", 2, {"topology": {"required": "node"}})])
    assert out["wl"] == (None, PREFIX + 'topology "default" allows to fit only 1 out of 2 pod(s)')


def test_only_the_nodes_of_the_flavor_count():
    # The flavor's nodeLabels select x1 (one GPU); x2's four GPUs are outside it.
    out = pending([node("x1", 1), node("x2", 4)], [("wl", 2, {})], flavor_node_groups=["x1"])
    assert out["wl"] == (None, PREFIX + 'topology "default" allows to fit only 1 out of 2 pod(s)')


def test_a_node_without_enough_cores_is_excluded_for_cpu():
    out = pending([node("x1", 2, cpu=2)], [("wl", 1, {"cpu": 4})])
    assert out["wl"] == (None, PREFIX + 'topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; '
                                        'excluded: resource "cpu": 1')


def test_a_node_without_enough_host_memory_is_excluded_for_memory():
    out = pending([node("x1", 2, memory_gib=16)], [("wl", 1, {"host_memory_gib": 32})])
    assert out["wl"] == (None, PREFIX + 'topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; '
                                        'excluded: resource "memory": 1')


def test_exactly_enough_cores_or_memory_leave_the_gpu_as_the_limiting_resource():
    # The holder takes the node's only GPU; the node still has exactly the core (or the GiB) the pod asks.
    gpu_short = PREFIX + ('topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; '
                          'excluded: resource "nvidia.com/gpu": 1')
    out = pending([node("x1", 1, cpu=1)], [("holder", 1, {}), ("wl", 1, {"cpu": 1})])
    assert out["wl"] == (None, gpu_short)
    out = pending([node("x1", 1, memory_gib=32)], [("holder", 1, {}), ("wl", 1, {"host_memory_gib": 32})])
    assert out["wl"] == (None, gpu_short)
