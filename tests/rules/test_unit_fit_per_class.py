"""Can one replica of a workload class run on a unit (placement/rules/feasibility.py unit_misfit,
_mig_profile, unit_size)? The sentence an architect reads when a unit is removed, the MIG profile a
replica gets, and what one replica gets of the unit in a returned stack.
Facts: fixtures/rules/feasibility.yaml (unit_fit, mig_profiles), units.yaml (GPU models)."""

from __future__ import annotations

import pytest

from placement.catalog.schemas import ResourceUnit
from placement.rules import ComposeRequest, compose
from placement.rules.context import resolve, validated
from placement.rules.feasibility import _mig_profile, mig_profile_name, unit_misfit, unit_size

MIG_SOURCE = ("A CUDA process sees one MIG instance; CUDA IPC across instances is unsupported, so no NVLink/P2P between "
              "instances (https://docs.rapids.ai/deployment/stable/guides/mig).")
HAMI_SOURCE = ("HAMi: nvidia.com/gpu in a pod is the number of physical GPUs, each capped by nvidia.com/gpumem up to the "
               "card's memory; co-located pods share the card, so no exclusive P2P path.")
MPS_SOURCE = ("NVIDIA device plugin MPS: each replica gets total memory / replicas as its pinned limit; supported only "
              "for nvidia.com/gpu on full GPUs.")


def _class(**shape):
    return {"name": "w", "kind": "training", "replicas": 2, "gpus_per_replica": 1, "gpu_memory_gib": 10, **shape}


def _pool(graph, gpu_model="A100-80GB", **shape):
    ctx = resolve(graph, validated(ComposeRequest(workloads=[_class(**shape)], pool={"gpu_model": gpu_model})))
    return ctx, ctx.pools[0]


def test_a_multi_gpu_replica_cannot_use_a_unit_one_process_sees_one_of(graph):
    ctx, spec = _pool(graph, gpus_per_replica=2)
    assert unit_misfit(ctx, spec, ResourceUnit.MIG_INSTANCE) == (
        "MIG instance cannot serve class 'w': a replica needs 2 GPUs in one process, and one process can use at "
        f"most 1 mig instance ({MIG_SOURCE})")
    # whole GPUs, exclusive devices and HAMi's per-card caps serve a 2-GPU replica (no peer-to-peer asked)
    for unit in (ResourceUnit.WHOLE_GPU, ResourceUnit.DRA_DEVICE, ResourceUnit.MEMORY_COMPUTE_SHARE):
        assert unit_misfit(ctx, spec, unit) is None
    # one GPU per replica is within every unit's limit
    ctx, spec = _pool(graph, gpus_per_replica=1)
    assert unit_misfit(ctx, spec, ResourceUnit.MIG_INSTANCE) is None
    assert unit_misfit(ctx, spec, ResourceUnit.TIME_SLICE) is None


def test_the_eight_gpus_of_a_node_are_within_the_whole_gpu_limit(graph):
    ctx, spec = _pool(graph, gpus_per_replica=8, peer_to_peer=True)
    assert unit_misfit(ctx, spec, ResourceUnit.WHOLE_GPU) is None
    assert unit_size(ctx, spec, ResourceUnit.WHOLE_GPU) == "8 whole GPUs per replica"


def test_peer_to_peer_replicas_need_whole_gpus_or_exclusive_devices(graph):
    ctx, spec = _pool(graph, gpus_per_replica=2, peer_to_peer=True)
    assert unit_misfit(ctx, spec, ResourceUnit.MEMORY_COMPUTE_SHARE) == (
        "Memory quota + compute share cannot serve class 'w': its 2 GPUs per replica talk peer-to-peer "
        f"(NVLink/P2P), which only whole GPUs or exclusive devices give ({HAMI_SOURCE})")
    assert unit_misfit(ctx, spec, ResourceUnit.WHOLE_GPU) is None
    assert unit_misfit(ctx, spec, ResourceUnit.DRA_DEVICE) is None
    # a one-GPU replica has no peer to talk to: the flag does not remove shared units
    ctx, spec = _pool(graph, gpus_per_replica=1, peer_to_peer=True)
    assert unit_misfit(ctx, spec, ResourceUnit.MEMORY_COMPUTE_SHARE) is None


def test_an_mps_share_holds_a_replica_only_within_its_equal_memory_split(graph):
    ctx, spec = _pool(graph, gpu_model="A30", gpus_per_replica=0.3, gpu_memory_gib=10)
    assert unit_misfit(ctx, spec, ResourceUnit.MPS_SHARE) == (
        "MPS share cannot serve class 'w': 10 GiB per replica, and an equal 0.3 share of the 24 GB card is 7.2 GB "
        f"({MPS_SOURCE})")
    # exactly the split fits: half of an 80 GB card holds 40 GiB
    ctx, spec = _pool(graph, gpus_per_replica=0.5, gpu_memory_gib=40)
    assert unit_misfit(ctx, spec, ResourceUnit.MPS_SHARE) is None
    ctx, spec = _pool(graph, gpus_per_replica=0.5, gpu_memory_gib=41)
    assert unit_misfit(ctx, spec, ResourceUnit.MPS_SHARE).startswith(
        "MPS share cannot serve class 'w': 41 GiB per replica, and an equal 0.5 share of the 80 GB card is 40 GB")
    # a unit capped by the whole card's memory takes what the card holds
    ctx, spec = _pool(graph, gpus_per_replica=0.5, gpu_memory_gib=41)
    assert unit_misfit(ctx, spec, ResourceUnit.TIME_SLICE) is None


def test_a_card_of_unknown_memory_bounds_no_share(graph):
    # the GPU model is not in the table: nothing to compare the replica's memory with
    ctx, spec = _pool(graph, gpu_model="X9", gpus_per_replica=0.1, gpu_memory_gib=60)
    assert unit_misfit(ctx, spec, ResourceUnit.MPS_SHARE) is None


def test_a_multi_pool_removal_names_the_pool_it_happened_in(graph):
    big = _class(name="big", gpus_per_replica=2, peer_to_peer=True)
    small = _class(name="small", kind="online_inference", gpus_per_replica=0.5, gpu_memory_gib=45)
    result = compose(graph, ComposeRequest(workloads=[big, small], slo={"isolation": "soft"}))
    why = {w.project: w for w in result.why_not}
    assert why["hami"].rule == "feasibility"
    assert why["hami"].reason == (
        "big pool: Memory quota + compute share cannot serve class 'big': its 2 GPUs per replica talk peer-to-peer "
        f"(NVLink/P2P), which only whole GPUs or exclusive devices give ({HAMI_SOURCE})")
    # ... and one pool alone has no prefix
    single = compose(graph, ComposeRequest(workloads=[big], slo={"isolation": "soft"}))
    assert {w.project: w.reason for w in single.why_not}["hami"].startswith("Memory quota + compute share cannot serve")
    sizes = {p.name: (p.unit.value, p.unit_size) for p in result.stacks[0].pools}
    assert sizes["big"] == ("whole_gpu", "2 whole GPUs per replica")


@pytest.mark.parametrize(
    ("memory", "share", "profile"),
    [
        (10, 0.0, ("1g.10gb", 10.0)),   # the smallest that holds the memory
        (11, 0.0, ("1g.20gb", 20.0)),   # next memory size; 1g before 2g at equal memory
        (20, 0.0, ("1g.20gb", 20.0)),
        (80, 0.0, ("7g.80gb", 80.0)),
        (81, 0.0, None),                # nothing holds it
        (10, 0.15, ("1g.10gb", 10.0)),  # 1/7 of the SMs is within tolerance of 0.15
        (10, 0.25, ("2g.20gb", 20.0)),  # 1g (0.14) is not a quarter of the SMs
        (10, 0.5, ("3g.40gb", 40.0)),   # 3g (0.43) is NVIDIA's half GPU
        (10, 0.99, ("7g.80gb", 80.0)),
    ],
)
def test_a_replica_gets_the_smallest_mig_profile_with_its_memory_and_compute(graph, memory, share, profile):
    ctx, _spec = _pool(graph)
    assert _mig_profile(ctx, memory, share) == profile


def test_a_gpu_without_mig_profiles_gives_no_profile(graph):
    ctx, spec = _pool(graph, gpu_model="L40S", gpus_per_replica=0.5)
    assert _mig_profile(ctx, 10, 0.5) is None
    assert mig_profile_name(ctx, spec) is None
    assert unit_size(ctx, spec, ResourceUnit.MIG_INSTANCE) == "a MIG instance per replica"


def test_the_replica_share_sets_the_compute_its_mig_profile_needs(graph):
    ctx, spec = _pool(graph, gpus_per_replica=0.5, gpu_memory_gib=10)
    assert mig_profile_name(ctx, spec) == "3g.40gb"
    assert unit_size(ctx, spec, ResourceUnit.MIG_INSTANCE) == "MIG 3g.40gb per replica"
    ctx, spec = _pool(graph, gpus_per_replica=1, gpu_memory_gib=10)  # a whole GPU gets the whole card (issue 29)
    assert mig_profile_name(ctx, spec) == "7g.80gb"


def test_a_profile_pool_without_a_class_gets_no_size(graph):
    ctx = resolve(graph, validated(ComposeRequest(profile="mixed")))
    spec = ctx.pools[0]
    from dataclasses import replace

    bare = replace(spec, workload=None)
    assert unit_size(ctx, bare, ResourceUnit.WHOLE_GPU) == ""
    assert mig_profile_name(ctx, bare) is None
    assert unit_misfit(ctx, bare, ResourceUnit.MIG_INSTANCE) is None


@pytest.mark.parametrize(
    ("shape", "unit", "size"),
    [
        ({"gpus_per_replica": 1}, ResourceUnit.WHOLE_GPU, "1 whole GPU per replica"),
        ({"gpus_per_replica": 2}, ResourceUnit.WHOLE_GPU, "2 whole GPUs per replica"),
        ({"gpus_per_replica": 1}, ResourceUnit.DRA_DEVICE, "1 exclusive device per replica"),
        ({"gpus_per_replica": 4}, ResourceUnit.DRA_DEVICE, "4 exclusive devices per replica"),
        ({"gpus_per_replica": 0.5, "gpu_memory_gib": 12}, ResourceUnit.WHOLE_GPU, "1 whole GPU per replica"),
        ({"gpus_per_replica": 0.333, "gpu_memory_gib": 12}, ResourceUnit.MEMORY_COMPUTE_SHARE,
         "12 GiB memory cap + 33% cores on 1 GPU per replica"),
        ({"gpus_per_replica": 2, "gpu_memory_gib": 30}, ResourceUnit.MEMORY_COMPUTE_SHARE,
         "30 GiB memory cap + 100% cores on 2 GPUs per replica"),
        ({"gpus_per_replica": 0.25}, ResourceUnit.TIME_SLICE, "0.25 GPU as Time slice per replica"),
        ({"gpus_per_replica": 1}, ResourceUnit.MPS_SHARE, "1 GPU as MPS share per replica"),
        ({"gpus_per_replica": 0.5}, ResourceUnit.FRACTION, "0.5 GPU as Fraction (accounting only) per replica"),
    ],
)
def test_what_one_replica_gets_of_each_unit(graph, shape, unit, size):
    ctx, spec = _pool(graph, **shape)
    assert unit_size(ctx, spec, unit) == size


def test_the_smallest_profile_is_chosen_by_memory_not_by_name(graph):
    # A100-40GB: 1g.5gb holds 4 GiB; "1g.10gb" sorts before it by name
    ctx, _spec = _pool(graph, gpu_model="A100-40GB", gpu_memory_gib=4)
    assert _mig_profile(ctx, 4, 0.0) == ("1g.5gb", 5.0)
