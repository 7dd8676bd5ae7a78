"""DRA in the simulator: DeviceClasses, selectors, allocation modes and shared ResourceClaims.

The NVIDIA DRA driver publishes a whole GPU as a device of type ``gpu`` and a MIG device as type ``mig``;
its DeviceClass ``gpu.nvidia.com`` selects only the first, ``mig.nvidia.com`` only the second
(k8s-dra-driver-gpu deviceclass-gpu.yaml / deviceclass-mig.yaml). kube-scheduler's DynamicResources plugin
says ``cannot allocate all claims`` when a pod's claims find no devices on a node, and ``resourceclaim not
available on the node`` when a claim is already allocated on another node.
"""

import pytest

from scheduler_core import ScenarioError, parse_scenario
from scheduler_core.simulation import ClusterSimulation


def run(workloads, mig=None, gpus=2, dra=None, count=1, gpu="A100-SXM4-80GB"):
    group = {"name": "n", "count": count, "gpu": gpu, "gpus_per_node": gpus}
    if mig:
        group["mig"] = mig
    dp = {"mechanism": "dra"}
    if dra:
        dp["dra"] = dra
    sc = parse_scenario({"name": "dra", "horizon": "1h", "pool": {"node_groups": [group]},
                         "stack": {"data_plane": dp}, "workloads": workloads})
    sim = ClusterSimulation(sc)
    sim.execute()
    return sim


def job(name, at=0, memory_gib=8, duration="10h", **kw):
    return {"kind": "batch", "name": name, "duration": duration, "memory_gib": memory_gib, "arrival": {"at": at}, **kw}


def devices(sim, name):
    wl = next(w for w in sim.workloads if w.name == name)
    return [c.name for p in wl.pods for c in p.contexts]


def reason(sim, name):
    wl = next(w for w in sim.workloads if w.name == name)
    return sim.pending_reason(wl) if wl.pending else None


MIG_GPU0 = [{"devices": [0], "layout": "all-1g.10gb"}]


def test_a_whole_gpu_claim_never_gets_a_mig_device():
    # GPU 0 is MIG-enabled (seven 1g.10gb devices), GPU 1 whole. A whole-GPU pod (class gpu.nvidia.com)
    # must get GPU 1; the model used to hand it the smallest device whose memory held its 8 GiB: a MIG slice.
    sim = run([job("whole", unit={"whole_gpu": True})], mig=MIG_GPU0)
    assert devices(sim, "whole") == ["n-0/gpu1"]


def test_the_default_claim_is_the_exported_one_whole_gpus_only():
    # Without unit.dra the export writes class gpu.nvidia.com with a memory selector; the model used to give
    # the pod a 1g.10gb MIG device (smallest holding 8 GiB), which that claim can never get.
    sim = run([job("plain")], mig=MIG_GPU0)
    assert devices(sim, "plain") == ["n-0/gpu1"]


def test_a_second_whole_gpu_claim_waits_with_the_plugins_words():
    sim = run([job("a", unit={"whole_gpu": True}), job("b", at=1, unit={"whole_gpu": True})], mig=MIG_GPU0)
    assert devices(sim, "a") == ["n-0/gpu1"]
    assert reason(sim, "b") == "0/1 nodes are available: 1 cannot allocate all claims."


def test_a_mig_claim_gets_the_first_mig_device_in_slice_order():
    sim = run([job("m", unit={"dra": {"device_class": "mig.nvidia.com"}})], mig=MIG_GPU0)
    assert devices(sim, "m") == ["n-0/gpu0/1g.10gb@0"]


def test_a_selector_on_the_product_name_picks_the_board():
    groups_sc = parse_scenario({
        "name": "dra-boards", "horizon": "1h",
        "pool": {"node_groups": [{"name": "a", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 1},
                                 {"name": "h", "count": 1, "gpu": "H100-SXM5-80GB", "gpus_per_node": 1}]},
        "stack": {"data_plane": {"mechanism": "dra"}},
        "workloads": [job("h100", unit={"dra": {"selectors": [
            "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100-SXM5-80GB'"]}})]})
    sim = ClusterSimulation(groups_sc)
    sim.execute()
    assert devices(sim, "h100") == ["h-0/gpu0"]


def test_a_capacity_selector_no_device_meets_waits_with_the_plugins_words():
    sim = run([job("big", unit={"dra": {"selectors": [
        "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('100Gi')) >= 0"]}})])
    assert devices(sim, "big") == []
    assert reason(sim, "big") == "0/1 nodes are available: 1 cannot allocate all claims."


def test_a_deviceclass_of_the_scenario_selects_by_capacity():
    # A class for "any NVIDIA device of at least 20 GiB": MIG 1g.10gb devices are too small, GPU 1 is first.
    dra = {"device_classes": [{"name": "big.example.com", "selectors": [
        "device.driver == 'gpu.nvidia.com' && device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('20Gi')) >= 0"]}]}
    sim = run([job("x", unit={"dra": {"device_class": "big.example.com"}})], mig=MIG_GPU0, dra=dra)
    assert devices(sim, "x") == ["n-0/gpu1"]


def test_allocation_mode_all_takes_every_matching_device_or_waits():
    sim = run([job("every", unit={"dra": {"device_class": "mig.nvidia.com", "allocation_mode": "All"}}),
               job("late", at=1, unit={"dra": {"device_class": "mig.nvidia.com"}})], mig=MIG_GPU0)
    assert len(devices(sim, "every")) == 7
    assert reason(sim, "late") == "0/1 nodes are available: 1 cannot allocate all claims."
    # ... and a claim for All waits while one matching device is taken
    sim = run([job("one", unit={"dra": {"device_class": "mig.nvidia.com"}}),
               job("every", at=1, unit={"dra": {"device_class": "mig.nvidia.com", "allocation_mode": "All"}})],
              mig=MIG_GPU0)
    assert devices(sim, "every") == []
    assert reason(sim, "every") == "0/1 nodes are available: 1 cannot allocate all claims."


def test_a_shared_claim_is_allocated_once_and_its_consumers_follow_it():
    # Two workloads name the claim "shared": the first pod allocates GPU 0 of node n-0; the second uses the
    # same device on the same node (time-sliced), and a third claim takes the next free GPU.
    shared = {"dra": {"resource_claim_name": "shared"}}
    sim = run([job("a", unit=shared), job("b", at=1, unit=shared), job("c", at=2, unit={"dra": {}})], gpus=1, count=2)
    assert devices(sim, "a") == devices(sim, "b") == ["n-0/gpu0"]
    assert devices(sim, "c") == ["n-1/gpu0"]
    a = next(w for w in sim.workloads if w.name == "a")
    assert a.pods[0].contexts[0].isolation == "timeslice" and len(a.pods[0].contexts[0].tenants) == 2


def test_a_consumer_of_a_claim_allocated_elsewhere_is_told_so_on_the_other_nodes():
    # n-0's only GPU holds the shared claim and a second workload keeps... the claim's node full for others:
    # a consumer restricted to n-1 cannot use it there.
    sc = parse_scenario({
        "name": "dra-shared", "horizon": "1h",
        "pool": {"node_groups": [{"name": "x", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 1},
                                 {"name": "y", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 1}]},
        "stack": {"data_plane": {"mechanism": "dra"}},
        "workloads": [job("a", node_group="x", unit={"dra": {"resource_claim_name": "shared"}}),
                      job("b", at=1, node_group="y", unit={"dra": {"resource_claim_name": "shared"}})]})
    sim = ClusterSimulation(sc)
    sim.execute()
    assert reason(sim, "b") == ("0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
                                "1 resourceclaim not available on the node.")


@pytest.mark.parametrize("unit,field,message", [
    ({"dra": {"device_class": "nope.example.com"}}, "workloads.0.unit.dra.device_class", "no DeviceClass"),
    ({"dra": {"selectors": ["device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA')"]}},
     "selectors.0", "unsupported CEL expression"),
    ({"dra": {"allocation_mode": "All", "count": 2}}, "count", "allocationMode All"),
    ({"dra": {}, "whole_gpu": True}, "workloads.0.unit.dra", "leave mig_profile and whole_gpu out"),
])
def test_bad_claims_are_refused_naming_the_field(unit, field, message):
    with pytest.raises(ScenarioError) as err:
        run([job("x", unit=unit)])
    assert field in str(err.value) and message in str(err.value)


def test_a_claim_needs_the_dra_mechanism():
    with pytest.raises(ScenarioError, match="workloads.0.unit.dra"):
        parse_scenario({"name": "x", "horizon": "1h",
                        "pool": {"node_groups": [{"name": "n", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 1}]},
                        "workloads": [job("x", unit={"dra": {}})]})


def test_a_deviceclass_with_unsupported_cel_is_refused():
    with pytest.raises(ScenarioError, match="device_classes.0.*unsupported CEL"):
        run([job("x")], dra={"device_classes": [{"name": "c.example.com", "selectors": ["device.foo == 1"]}]})


def test_a_shared_claim_is_freed_when_its_last_consumer_ends():
    # a (10 min) and b (20 min) share GPU 0 of a one-GPU node; c, a claim of its own, waits until b ends too.
    shared = {"dra": {"resource_claim_name": "shared"}}
    sim = run([job("a", unit=shared, duration="10m"), job("b", at=1, unit=shared, duration="20m"),
               job("c", at=2, unit={"dra": {}}, duration="5m")], gpus=1)
    start = {w.name: w.first_bind for w in sim.workloads}
    assert start["a"] == 0 and start["b"] == 1
    assert start["c"] >= 21 * 60 - 1e-6  # not when a ended (10 min): b still held the claim
    assert not sim.nodes[0].shared_claims


# ------------------------------------------------------------------ partitionable devices
PART = {"partitionable_devices": True}


def mig_claim(profile=None):
    sel = [f"device.attributes['gpu.nvidia.com'].profile == '{profile}'"] if profile else []
    return {"dra": {"device_class": "mig.nvidia.com", "selectors": sel}}


def test_a_whole_gpu_allocated_blocks_its_partitions():
    # The NVIDIA driver with partitionable devices publishes GPU 0 whole and as every MIG partition, all
    # consuming the GPU's one counter set: once the whole GPU is allocated no partition fits.
    sim = run([job("whole"), job("mig", at=1, unit=mig_claim())], gpus=1, dra=PART)
    assert devices(sim, "whole") == ["n-0/gpu0"]
    assert reason(sim, "mig") == "0/1 nodes are available: 1 cannot allocate all claims."


def test_a_partition_allocated_blocks_the_whole_gpu_but_not_its_neighbours():
    sim = run([job("a", unit=mig_claim("3g.40gb")), job("whole", at=1), job("b", at=2, unit=mig_claim("3g.40gb")),
               job("c", at=3, unit=mig_claim("1g.10gb"))], gpus=1, dra=PART)
    assert devices(sim, "a") == ["n-0/gpu0/3g.40gb@0"]
    assert reason(sim, "whole") == "0/1 nodes are available: 1 cannot allocate all claims."
    assert devices(sim, "b") == ["n-0/gpu0/3g.40gb@4"]  # the next partition whose memory slices are free
    assert devices(sim, "c") == []  # 3g + 3g leave a memory slice but no compute slice (7 of 7 used)


def test_partitions_are_published_only_for_gpus_not_mig_enabled_in_the_pool():
    sim = run([job("m", unit=mig_claim())], gpus=2, dra=PART, mig=MIG_GPU0)
    gpu0, gpu1 = sim.nodes[0].gpus
    assert not gpu0.partitionable and len(gpu0.contexts) == 7  # the pool's static layout
    assert gpu1.partitionable and gpu1.contexts[0].placement is None and len(gpu1.contexts) > 8
    assert devices(sim, "m") == ["n-0/gpu0/1g.10gb@0"]
