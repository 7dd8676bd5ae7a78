"""Volcano and pods that request nothing (BestEffort): the behaviours around the backfill action that
upstream's tables do not state (tests/scheduler_core/upstream/test_volcano_backfill.py holds the ported
cases)."""

from __future__ import annotations

from tests.scheduler_core.upstream.volcano_harness import run_queue_case


def test_volcano_gpu_preemptor_evicts_the_best_effort_pod_holding_the_only_pod_slot():
    # A GPU-only preemptor (no host request): the idle GPUs alone would say it fits; the pod count says not.
    nodes = [{"name": "n1", "gpus": 8, "pods": 1}]
    running = [{"name": "low", "queue": "q1", "gpus": 0, "min": 0, "priority": 10, "on": "n1"}]
    pending = [{"name": "high", "queue": "q1", "gpus": 1, "priority": 100}]
    _, _, evicted = run_queue_case(nodes, [{"name": "q1"}], running, pending,
                                   actions=("enqueue", "allocate", "backfill", "preempt"))
    assert evicted == {"low": 1}


def test_volcano_backfills_best_effort_pods_of_a_queue_at_its_capability():
    # q1 holds all the GPUs its capability allows: allocate would skip it, backfill balances no queues.
    nodes = [{"name": "n1", "gpus": 8, "pods": 10}]
    queues = [{"name": "q1", "capability": {"nvidia.com/gpu": 1}}]
    running = [{"name": "gpu-job", "queue": "q1", "gpus": 1, "on": "n1"}]
    pending = [{"name": "be", "queue": "q1", "pods": 3, "gpus": 0, "min": 3}]
    _, bound, _ = run_queue_case(nodes, queues, running, pending, plugins=("priority", "gang", "capacity"))
    assert bound == {"be": ["n1"] * 3}


def test_volcano_best_effort_pods_bind_one_by_one_without_waiting_for_the_gang():
    # minAvailable 4, room for 2 pods: pending BestEffort tasks count as ready, so two bind at once (the
    # model's job then runs only once all four are bound, as any of its jobs).
    nodes = [{"name": "n1", "gpus": 8, "pods": 2}]
    _, bound, _ = run_queue_case(nodes, [{"name": "q1"}], [], [{"name": "be", "queue": "q1", "pods": 4, "gpus": 0,
                                                                "min": 4}])
    assert bound == {"be": ["n1", "n1"]}


def test_volcano_without_backfill_leaves_best_effort_pods_pending():
    nodes = [{"name": "n1", "gpus": 8, "pods": 10}]
    _, bound, _ = run_queue_case(nodes, [{"name": "q1"}], [], [{"name": "be", "queue": "q1", "gpus": 0}],
                                 actions=("enqueue", "allocate"))
    assert bound == {}


def test_volcano_backfill_alone_leaves_pending_pod_groups_pending():
    # allocate.go turns Pending PodGroups Inqueue when enqueue is not configured; with neither, backfill
    # skips them (job.IsPending()).
    nodes = [{"name": "n1", "gpus": 8, "pods": 10}]
    pending = [{"name": "be", "queue": "q1", "gpus": 0}]
    _, alone, _ = run_queue_case(nodes, [{"name": "q1"}], [], pending, actions=("backfill",))
    _, after_allocate, _ = run_queue_case(nodes, [{"name": "q1"}], [], pending, actions=("allocate", "backfill"))
    assert (alone, after_allocate) == ({}, {"be": ["n1"]})
