"""Which pools a compose request asks for (placement/rules/pools.py): one pool per workload class,
sized by the class's demand or by splitting the given pool; with only a profile, its pool templates
narrowed by the SLO's isolation. What a user reads: the pool sizes, the notes, the field errors."""

from __future__ import annotations

import pytest

from placement.rules import ComposeRequest, RulesInputError
from placement.rules.context import resolve, validated
from placement.rules.data import Isolation

TRAIN = {"name": "train", "kind": "training", "replicas": 3, "gpus_per_replica": 2, "gpu_memory_gib": 10,
         "gang": True, "peer_to_peer": True}
CHAT = {"name": "chat", "kind": "online_inference", "replicas": 5, "gpus_per_replica": 0.3, "gpu_memory_gib": 8,
        "p99_ms": 120.5}


def _ctx(graph, **request):
    return resolve(graph, validated(ComposeRequest(**request)))


def _errors(graph, **request):
    with pytest.raises(RulesInputError) as exc:
        _ctx(graph, **request)
    return exc.value.errors


def test_the_profile_follows_the_classes_kinds_unless_one_is_given(graph):
    assert _ctx(graph, workloads=[TRAIN]).profile.profile == "training"
    assert _ctx(graph, workloads=[CHAT]).profile.profile == "online_inference"
    assert _ctx(graph, workloads=[TRAIN, CHAT]).profile.profile == "mixed"
    assert _ctx(graph, profile="batch_inference", workloads=[TRAIN, CHAT]).profile.profile == "batch_inference"
    assert _errors(graph) == {"profile": ["Give a workload profile or at least one workload class."]}


def test_each_class_gets_a_pool_of_its_demand_when_no_pool_size_is_given(graph):
    ctx = _ctx(graph, workloads=[TRAIN, CHAT])
    # 3 x 2 GPUs = 6; 5 x 0.3 = 1.5 shares packed onto 2 whole GPUs
    assert [(p.name, p.gpus) for p in ctx.pools] == [("train", 6), ("chat", 2)]
    assert [p.workload.name for p in ctx.pools] == ["train", "chat"]  # each pool serves its class
    assert ctx.pool.gpu_count == 8
    assert ctx.notes[0] == "Pool size derived from the workload classes: 8 A100-80GB GPUs."
    assert ctx.pools[0].serves == "train: 3 x 2 GPUs, 10 GiB per GPU (training, gang, peer-to-peer)"
    assert ctx.pools[1].serves == "chat: 5 x 0.3 GPU share, 8 GiB per GPU (online_inference, P99 120.5 ms)"
    assert ctx.notes[1] == (
        "Pools: train (hard/soft, 6 GPUs): train: 3 x 2 GPUs, 10 GiB per GPU (training, gang, peer-to-peer); "
        "chat (hard/soft, 2 GPUs): chat: 5 x 0.3 GPU share, 8 GiB per GPU (online_inference, P99 120.5 ms). "
        "Per-pool components run only on their pool's nodes.")


def test_a_pool_model_without_a_size_still_derives_the_size_from_the_classes(graph):
    ctx = _ctx(graph, workloads=[TRAIN], pool={"gpu_model": "H100-80GB"})
    assert ctx.pool.gpu_count == 6 and ctx.pools[0].gpus == 6
    assert ctx.notes == ["Pool size derived from the workload classes: 6 H100-80GB GPUs."]


def test_a_single_gpu_class_reads_one_gpu_and_a_tiny_share_still_needs_a_gpu(graph):
    one = {"name": "one", "kind": "batch_inference", "replicas": 1, "gpus_per_replica": 1, "gpu_memory_gib": 4}
    tiny = {"name": "tiny", "kind": "batch_inference", "replicas": 1, "gpus_per_replica": 0.01, "gpu_memory_gib": 1}
    ctx = _ctx(graph, workloads=[one, tiny])
    assert [(p.name, p.gpus) for p in ctx.pools] == [("one", 1), ("tiny", 1)]
    assert ctx.pools[0].serves == "one: 1 x 1 GPU, 4 GiB per GPU (batch_inference)"


def test_a_given_pool_is_split_by_demand_and_the_rest_goes_to_the_biggest_class(graph):
    # demands 6 and 2 over 5 GPUs: int(5*6/8)=3, int(5*2/8)=1, the spare GPU to the 6-GPU class
    ctx = _ctx(graph, workloads=[TRAIN, CHAT], pool={"gpu_count": 5})
    assert [(p.name, p.gpus) for p in ctx.pools] == [("train", 4), ("chat", 1)]
    assert ctx.pool.gpu_count == 5
    assert ctx.notes[0] == "The classes ask for 8 GPUs at once; the pool has 5: work queues for its turn."
    # the biggest class second: the spare GPU still goes to it
    ctx = _ctx(graph, workloads=[CHAT, TRAIN], pool={"gpu_count": 5})
    assert [(p.name, p.gpus) for p in ctx.pools] == [("chat", 1), ("train", 4)]


def test_a_pool_exactly_as_large_as_the_demand_has_no_queueing_note(graph):
    ctx = _ctx(graph, workloads=[TRAIN, CHAT], pool={"gpu_count": 8})
    assert [(p.name, p.gpus) for p in ctx.pools] == [("train", 6), ("chat", 2)]
    assert not any("work queues" in n for n in ctx.notes)
    ctx = _ctx(graph, workloads=[TRAIN, CHAT], pool={"gpu_count": 16})
    assert [(p.name, p.gpus) for p in ctx.pools] == [("train", 12), ("chat", 4)]


def test_a_pool_with_fewer_gpus_than_classes_is_a_field_error(graph):
    assert _errors(graph, workloads=[TRAIN, CHAT], pool={"gpu_count": 1}) == {
        "pool.gpu_count": ["1 GPU(s) cannot hold 2 workload pools (one per class)."]}
    ctx = _ctx(graph, workloads=[TRAIN, CHAT], pool={"gpu_count": 2})  # one GPU each is enough
    assert [(p.name, p.gpus) for p in ctx.pools] == [("train", 1), ("chat", 1)]


def test_classes_no_node_or_gpu_could_hold_are_refused_field_by_field(graph):
    big = {"name": "big", "kind": "training", "replicas": 1, "gpus_per_replica": 9, "gpu_memory_gib": 81}
    errors = _errors(graph, workloads=[big, {**TRAIN, "name": "big"}])
    assert errors == {
        "workloads": ["Workload class names repeat; each names its own pool."],
        "workloads[0].gpus_per_replica": [
            "9 GPUs per replica: a replica is one pod on one node, and nodes carry at most 8 GPUs (NVIDIA HGX/DGX "
            "A100 and H100 nodes carry 8 GPUs (NVIDIA DGX and HGX system documentation); a pod's devices come from one kubelet.)"],
        "workloads[0].gpu_memory_gib": [
            "81 GiB per GPU is above the 80 GB of the pool's A100-80GB; split the model over more GPUs per replica "
            "(tensor parallelism) instead"],
    }
    # the limits themselves fit: 8 GPUs on one node, 80 GiB on an 80 GB card
    edge = {"name": "edge", "kind": "training", "replicas": 1, "gpus_per_replica": 8, "gpu_memory_gib": 80}
    assert _ctx(graph, workloads=[edge]).pools[0].gpus == 8


def test_an_unknown_gpu_model_bounds_memory_by_the_largest_known_gpu(graph):
    huge = {"name": "huge", "kind": "training", "replicas": 1, "gpus_per_replica": 1, "gpu_memory_gib": 181}
    assert _errors(graph, workloads=[huge], pool={"gpu_model": "X9"}) == {"workloads[0].gpu_memory_gib": [
        "181 GiB per GPU is above the 180 GB of any GPU model known (largest: B200); split the model over more "
        "GPUs per replica (tensor parallelism) instead"]}
    assert _ctx(graph, workloads=[{**huge, "gpu_memory_gib": 180}], pool={"gpu_model": "X9"}).pools[0].gpus == 1


def test_the_mixed_profile_splits_the_pool_between_its_templates(graph):
    ctx = _ctx(graph, profile="mixed", pool={"gpu_count": 7})
    # shares 0.5/0.5: int(3.5)=3 each, the spare GPU to the first template
    assert [(p.name, p.gpus, p.accepts) for p in ctx.pools] == [
        ("isolated", 4, (Isolation.HARD,)), ("shared", 3, (Isolation.SOFT,))]
    assert [p.serves for p in ctx.pools] == ["Training gangs and latency-critical services",
                                            "Interactive development, batch and small inference"]
    # each template carries the profile's preset class for it
    presets = {w.pool: w.name for w in graph.rules.profile["mixed"].workloads}
    assert [p.workload.name for p in ctx.pools] == [presets["isolated"], presets["shared"]]


def test_a_template_the_slo_isolation_rules_out_is_dropped_with_where_its_work_goes(graph):
    ctx = _ctx(graph, profile="mixed", slo={"isolation": "hard"}, pool={"gpu_count": 8})
    assert [(p.name, p.gpus, p.accepts) for p in ctx.pools] == [("isolated", 8, (Isolation.HARD,))]
    assert ctx.notes == [
        "Pool 'shared' (soft isolation) dropped: the SLO asks for hard isolation, so its work (interactive "
        "development, batch and small inference) goes to the remaining pools."]


def test_a_pool_too_small_to_split_keeps_the_first_template(graph):
    ctx = _ctx(graph, profile="mixed", pool={"gpu_count": 1})
    assert [(p.name, p.gpus) for p in ctx.pools] == [("isolated", 1)]
    assert ctx.notes == ["Pool 'shared' dropped: 1 GPU(s) cannot be split into 2 pools."]


def test_a_from_slo_template_takes_the_slo_isolation(graph):
    ctx = _ctx(graph, profile="online_inference", slo={"isolation": "soft"}, pool={"gpu_count": 4})
    assert [(p.name, p.gpus) for p in ctx.pools] == [("serving", 4)]
    assert ctx.pools[0].accepts == tuple(graph.rules.isolation_accepts[Isolation.SOFT])
    assert ctx.notes == []  # nothing dropped


def test_when_the_slo_rules_out_every_template_the_first_one_serves_at_the_slo_isolation(graph):
    from placement.rules.data import PoolTemplate
    from placement.rules.models import Pool, Slo
    from placement.rules.pools import template_pools

    base = graph.rules.profile["mixed"]
    soft_only = base.model_copy(update={"pools": [
        PoolTemplate(name="shared", accepts=[Isolation.SOFT], share=0.5, serves="Notebooks"),
        PoolTemplate(name="other", accepts=[Isolation.SOFT, Isolation.NONE], share=0.5, serves="Batch")]})
    notes: list[str] = []
    pools = template_pools(soft_only, Slo(isolation="hard"), Pool(gpu_count=4), graph.rules, notes)
    assert [(p.name, p.accepts, p.gpus, p.serves) for p in pools] == [("shared", (Isolation.HARD,), 4, "Notebooks")]
    # no "goes to the remaining pools": there are none; the first template serves everything
    assert notes == [
        "No pool of this profile allows hard isolation ('shared': soft, 'other': soft/none): one pool, 'shared', "
        "takes all 4 GPU(s) at hard isolation."]


def test_template_shares_are_relative_to_each_other(graph):
    from placement.rules.data import PoolTemplate
    from placement.rules.models import Pool, Slo
    from placement.rules.pools import template_pools

    base = graph.rules.profile["mixed"]
    uneven = base.model_copy(update={"pools": [
        PoolTemplate(name="isolated", accepts=[Isolation.HARD], share=1.0, serves="Training"),
        PoolTemplate(name="shared", accepts=[Isolation.SOFT], share=0.5, serves="Notebooks")]})
    notes: list[str] = []
    pools = template_pools(uneven, Slo(isolation="soft"), Pool(gpu_count=6), graph.rules, notes)
    assert [(p.name, p.gpus) for p in pools] == [("isolated", 4), ("shared", 2)]  # 2:1 of 6 GPUs
    assert notes == []


def test_two_gpus_split_one_each_between_two_templates(graph):
    ctx = _ctx(graph, profile="mixed", pool={"gpu_count": 2})
    assert [(p.name, p.gpus) for p in ctx.pools] == [("isolated", 1), ("shared", 1)]
    assert not any("dropped" in n for n in ctx.notes)
