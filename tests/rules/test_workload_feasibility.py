"""Workload classes decide which units can serve a pool: a replica must fit the unit (memory, GPUs
per process, peer-to-peer), a gang needs a gang-capable scheduler, and every removal is a why_not.
Facts: fixtures/rules/feasibility.yaml (each rule cites its source)."""

from __future__ import annotations

import pytest

from placement.rules import ComposeRequest, RulesInputError, compose
from placement.rules.models import Pool


def _compose(graph, *classes, pool=None, **kwargs):
    result = compose(graph, ComposeRequest(workloads=list(classes), pool=pool or Pool(gpu_model="A100-80GB", gpu_count=64), **kwargs))
    assert result.feasible, result.failures
    return result


LLM_TRAINING = {"name": "llm", "kind": "training", "replicas": 8, "gpus_per_replica": 8, "gpu_memory_gib": 70,
                "gang": True, "peer_to_peer": True, "tenants": 2}


def test_eight_gpu_nvlink_workers_never_get_mig_slices(graph):
    # domain-facts §1.3: a process sees one MIG instance; no NVLink/P2P between instances
    result = _compose(graph, LLM_TRAINING)
    assert all(p.unit.value in ("whole_gpu", "dra_device") for s in result.stacks for p in s.pools)
    assert result.stacks[0].pools[0].unit_size == "8 whole GPUs per replica"
    why = {w.project: w for w in result.why_not}
    assert "one MIG instance" in why["mig"].reason
    # hami-core serves only memory shares (HAMi itself may also hand out whole GPUs and can rank in)
    assert "peer-to-peer" in why["hami-core"].reason


def test_a_gang_class_removes_schedulers_that_cannot_place_all_or_nothing(graph):
    result = _compose(graph, LLM_TRAINING)
    for stack in result.stacks:
        sched = next(a.project.slug for a in stack.slots if a.slot.value == "scheduling_policy")
        assert sched in {"volcano", "kai-scheduler", "coscheduling", "yunikorn", "koordinator", "kube-scheduler"}
        if sched == "kube-scheduler":  # gangs only through the Workload API it serves (Kubernetes >= 1.37)
            assert "kubernetes-workload-api" in stack.components
    assert "gang" in next(w.reason for w in result.why_not if w.project == "node-resource-topology")


def test_a_small_model_server_shares_cards_and_gets_a_memory_cap_of_its_size(graph):
    serving = {"name": "chat", "kind": "online_inference", "replicas": 16, "gpus_per_replica": 0.25,
               "gpu_memory_gib": 12, "p99_ms": 150, "tenants": 4}
    top = _compose(graph, serving, pool=Pool(gpu_model="A100-80GB")).stacks[0]
    assert top.pools[0].unit.value == "memory_compute_share"
    assert top.pools[0].unit_size.startswith("12 GiB memory cap + 25% cores")
    assert top.pools[0].gpus == 4  # 16 replicas x 0.25 GPU, derived from the class


def test_mig_gets_the_smallest_profile_that_holds_a_replica(graph):
    # domain-facts §1.1: A100-80GB profiles 1g.10gb ... 7g.80gb
    small = {"name": "notebooks", "kind": "interactive", "replicas": 7, "gpus_per_replica": 0.25, "gpu_memory_gib": 18}
    result = _compose(graph, small, slo={"isolation": "hard", "goal": "latency_sensitive", "multi_tenant": False})
    mig = [p for s in result.stacks for p in s.pools if p.unit.value == "mig_instance"]
    # 1g.20gb holds the memory but has 1/7 of the SMs, not a quarter: 2g.20gb holds both.
    assert mig and mig[0].unit_size == "MIG 2g.20gb per replica"


def test_an_mps_share_must_hold_the_replica_in_its_equal_memory_split(graph):
    # domain-facts §2.2: each MPS replica's pinned limit is total memory / replicas
    big = {"name": "batch", "kind": "batch_inference", "replicas": 8, "gpus_per_replica": 0.25, "gpu_memory_gib": 30}
    result = _compose(graph, big, slo={"isolation": "none", "goal": "throughput_first", "multi_tenant": False})
    assert "cuda-mps" not in {slug for s in result.stacks for slug in s.components}
    assert "equal 0.25 share" in next(w.reason for w in result.why_not if w.project == "cuda-mps")


def test_two_classes_become_two_pools_each_with_its_own_unit(graph):
    serving = {"name": "chat", "kind": "online_inference", "replicas": 16, "gpus_per_replica": 0.25, "gpu_memory_gib": 10}
    result = _compose(graph, LLM_TRAINING, serving)
    assert result.profile == "mixed"
    pools = {p.name: p for p in result.stacks[0].pools}
    assert set(pools) == {"llm", "chat"}
    assert pools["llm"].unit.value in ("whole_gpu", "dra_device")
    assert pools["llm"].workload == "llm"


@pytest.mark.parametrize("change, field", [
    ({"gpus_per_replica": 12}, "workloads[0].gpus_per_replica"),
    ({"gpu_memory_gib": 200}, "workloads[0].gpu_memory_gib"),
])
def test_a_replica_no_node_or_gpu_can_hold_is_an_input_error(graph, change, field):
    with pytest.raises(RulesInputError) as exc:
        compose(graph, {"workloads": [{**LLM_TRAINING, **change}], "pool": {"gpu_model": "A100-80GB"}})
    assert field in exc.value.errors


def test_a_profile_alone_fills_its_preset_classes(graph):
    result = compose(graph, ComposeRequest(profile="training"))
    assert [w.name for w in result.workloads] == ["training"] and result.workloads[0].gang
