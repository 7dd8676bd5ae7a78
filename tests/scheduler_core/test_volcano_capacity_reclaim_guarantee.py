"""Volcano's capacity plugin as a reclaim victim check (volcano-sh/volcano pkg/scheduler/plugins/capacity,
Reclaimable): a queue above its deserved share in the victim's dimension gives pods, but never so many
that its allocation falls below its guarantee; a guarantee of zero in a dimension it does not use
does not hold anything back."""

from __future__ import annotations

from tests.scheduler_core.upstream.volcano_harness import run_queue_case

GPU = "nvidia.com/gpu"
NODE = [{"name": "n1", "gpus": 4}]
RUNNING = [{"name": "a", "queue": "qa", "pods": 4, "on": "n1"}]  # qa holds the node: 4 one-GPU pods


def evicted(qa_guarantee: dict, pods: int, min_pods: int) -> dict:
    queues = [{"name": "qa", "guarantee": qa_guarantee, "deserved": {GPU: 2}}, {"name": "qb", "deserved": {GPU: 2}}]
    _, _, out = run_queue_case(NODE, queues, RUNNING, [{"name": "b", "queue": "qb", "pods": pods, "min": min_pods}],
                               actions=("allocate", "reclaim"), plugins=("capacity",))
    return out


def test_a_queue_above_its_guarantee_gives_two_pods_to_a_two_pod_gang():
    assert evicted({GPU: 1}, pods=2, min_pods=2) == {"a": 2}


def test_a_zero_guarantee_in_an_unused_dimension_does_not_block_reclaim():
    assert evicted({GPU: 1, "memory": 0}, pods=2, min_pods=2) == {"a": 2}


def test_a_queue_may_be_reclaimed_down_to_exactly_its_guarantee():
    # guarantee 3 (deserved is floored at it): 4 -> 3 is allowed, qb's one-pod job gets its GPU.
    assert evicted({GPU: 3}, pods=1, min_pods=1) == {"a": 1}


def test_a_queue_below_its_guarantee_in_a_dimension_it_does_not_use_gives_nothing():
    # Upstream's check is guarantee <= allocated - victim in every dimension: 0.5 GiB of memory
    # guaranteed and none allocated fails it, so qa is no victim.
    assert evicted({GPU: 1, "memory": 0.5}, pods=2, min_pods=2) == {}


def test_a_best_effort_queue_without_deserved_is_an_immediate_victim():
    queues = [{"name": "qa"}, {"name": "qb", "deserved": {GPU: 2}}]
    _, _, out = run_queue_case(NODE, queues, RUNNING, [{"name": "b", "queue": "qb", "pods": 2, "min": 2}],
                               actions=("allocate", "reclaim"), plugins=("capacity",))
    assert out == {"a": 2}


def test_only_a_pod_using_the_dimension_its_queue_exceeds_is_a_victim():
    # qa is at its GPU deserved (4) and above its memory deserved (1 GiB): x's pods use no memory and are
    # spared although x is the newest job; one of y's pods (4 GiB each) goes.
    queues = [{"name": "qa", "deserved": {GPU: 4, "memory": 1}}, {"name": "qb", "deserved": {GPU: 2}}]
    running = [{"name": "y", "queue": "qa", "pods": 2, "memory": 4, "on": "n1"},
               {"name": "x", "queue": "qa", "pods": 2, "on": "n1"}]
    _, _, out = run_queue_case([{"name": "n1", "gpus": 4, "memory": 64}], queues, running,
                               [{"name": "b", "queue": "qb", "pods": 1, "min": 1}],
                               actions=("allocate", "reclaim"), plugins=("capacity",))
    assert out == {"y": 1}


def _reclaimed_from_memory_pods(qa_deserved: dict) -> dict:
    queues = [{"name": "qa", "deserved": qa_deserved}, {"name": "qb", "deserved": {GPU: 2}}]
    _, _, out = run_queue_case([{"name": "n1", "gpus": 4, "memory": 64}], queues,
                               [{"name": "a", "queue": "qa", "pods": 4, "memory": 1, "on": "n1"}],
                               [{"name": "b", "queue": "qb", "pods": 2, "min": 2}],
                               actions=("allocate", "reclaim"), plugins=("capacity",))
    return out


def test_a_victim_using_memory_its_queues_deserved_does_not_name_is_judged_on_gpus():
    assert _reclaimed_from_memory_pods({GPU: 2}) == {"a": 2}


def test_a_zero_gpu_deserved_still_makes_every_gpu_of_the_queue_reclaimable():
    # deserved {gpu: 0, memory: 4}: qa's 4 GiB are at deserved, its GPUs above it (a GPU counts even at zero).
    assert _reclaimed_from_memory_pods({GPU: 0, "memory": 4}) == {"a": 2}
