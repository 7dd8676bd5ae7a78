"""Kueue TAS says why a workload does not fit (tas_flavor_snapshot.go ``notFitMessage``): how many pods the
requested level holds, and per excluded node the resource that leaves no room for one pod, named as Kueue
names it (``CountInWithLimitingResource``)."""

from __future__ import annotations

from scheduler_core import parse_scenario
from scheduler_core.simulation import ClusterSimulation

PREFIX = "couldn't assign flavors to pod set main: "


def node(name, gpus, **host):
    return {"name": name, "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": gpus, "rack": "r", **host}


def pending(groups, workloads, flavor_node_groups=None, events=()):
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
        "workloads": docs, "events": list(events)})
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


def test_a_required_rack_level_counts_one_rack_at_a_time():
    racks = [node("x1", 1) | {"rack": "r1"}, node("x2", 1) | {"rack": "r2"}]
    out = pending(racks, [("wl", 2, {"topology": {"required": "rack"}})])
    assert out["wl"] == (None, PREFIX + 'topology "default" allows to fit only 1 out of 2 pod(s)')


def test_cores_and_memory_the_pod_does_not_ask_for_are_not_the_limit():
    # The node has cores and host memory to spare; the pod asks only a GPU, which the holder has taken.
    out = pending([node("x1", 1, cpu=4, memory_gib=64)], [("holder", 1, {}), ("wl", 1, {})])
    assert out["wl"] == (None, PREFIX + 'topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; '
                                        'excluded: resource "nvidia.com/gpu": 1')


def test_kueue_names_a_hami_vgpu_request_nvidia_com_gpu():
    # HAMi's pods ask hami/nvidia.com/gpu of the scheduler; Kueue counts and names nvidia.com/gpu.
    flavor = {"name": "tas-default", "quotas": {"nvidia.com/gpu": 50, "nvidia.com/gpumem": 10**7}}
    sc = parse_scenario({
        "name": "kueue-tas-hami", "horizon": "1h", "pool": {"node_groups": [node("x1", 1)]},
        "stack": {"data_plane": {"mechanism": "hami"},
                  "control_plane": {"scheduler": "kube-default", "admission": "kueue", "kueue": {
                      "topology_aware_scheduling": True, "local_queues": {"default": "main"},
                      "cluster_queues": [{"name": "main", "flavors": [flavor]}]}}},
        "workloads": [{"kind": "training", "name": "wl", "workers": 1, "gpus_per_worker": 2, "duration": "10h"}]})
    sim = ClusterSimulation(sc)
    sim.execute()
    wl = sim.workloads[0]
    assert wl.request.resource == "hami/nvidia.com/gpu"
    assert sim.pending_reason(wl) == PREFIX + ('topology "default" doesn\'t allow to fit any of 1 pod(s). Total '
                                               'nodes: 1; excluded: resource "nvidia.com/gpu": 1')


def test_nodes_outside_the_pods_node_selector_are_excluded_by_nodeselector():
    # The pods select x1 (held by the holder): x2 and x3 are excluded by the selector, x1 by its GPU.
    out = pending([node("x1", 1), node("x2", 1), node("x3", 1)],
                  [("holder", 1, {"node_group": "x1"}), ("wl", 1, {"node_group": "x1"})])
    assert out["wl"] == (None, PREFIX + 'topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 3; '
                                        'excluded: nodeSelector: 2, resource "nvidia.com/gpu": 1')


def test_a_mig_request_is_excluded_by_its_mig_resource():
    # The node's one GPU is cut into a single 3g.40gb instance, which the holder takes.
    groups = [node("x1", 1) | {"mig": [{"layout": ["3g.40gb@0"]}]}]
    flavor = {"name": "tas-default", "quotas": {"nvidia.com/mig-3g.40gb": 50}}
    docs = [{"kind": "training", "name": name, "workers": 1, "duration": "10h", "unit": {"mig_profile": "3g.40gb"},
             "arrival": {"at": float(i)}} for i, name in enumerate(("holder", "wl"))]
    sc = parse_scenario({
        "name": "kueue-tas-mig", "horizon": "1h", "pool": {"node_groups": groups},
        "stack": {"data_plane": {"mechanism": "mig"},
                  "control_plane": {"scheduler": "kube-default", "admission": "kueue", "kueue": {
                      "topology_aware_scheduling": True, "local_queues": {"default": "main"},
                      "cluster_queues": [{"name": "main", "flavors": [flavor]}]}}},
        "workloads": docs})
    sim = ClusterSimulation(sc)
    sim.execute()
    wl = next(w for w in sim.workloads if w.name == "wl")
    assert sim.pending_reason(wl) == PREFIX + ('topology "default" doesn\'t allow to fit any of 1 pod(s). Total '
                                               'nodes: 1; excluded: resource "nvidia.com/mig-3g.40gb": 1')


def test_memory_and_gpu_both_short_name_memory_first_as_kueue_breaks_ties():
    # The holder takes the only GPU and the pod asks 32 GiB of the 16 left: no room in either resource; Kueue
    # breaks the tie alphabetically, so memory is named.
    out = pending([node("x1", 1, memory_gib=16)], [("holder", 1, {}), ("wl", 1, {"host_memory_gib": 32})])
    assert out["wl"] == (None, PREFIX + 'topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; '
                                        'excluded: resource "memory": 1')


def test_when_every_node_of_the_flavor_is_down_no_pod_fits():
    # x1 fails before the workload arrives and stays down past the horizon: TAS has no node to offer.
    out = pending([node("x1", 4)], [("wl", 2, {"arrival": {"at": 60}})],
                  events=[{"at": 0, "kind": "node_failure", "node": "x1-0", "duration": "2h"}])
    assert out["wl"] == (None, PREFIX + 'topology "default" doesn\'t allow to fit any of 2 pod(s)')
