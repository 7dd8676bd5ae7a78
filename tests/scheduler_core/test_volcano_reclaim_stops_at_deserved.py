"""Volcano's reclaim action with the proportion plugin (volcano-sh/volcano pkg/scheduler/actions/reclaim,
plugins/proportion Reclaimable): a victim queue gives pods one at a time while it stays above its deserved
share, and stops once it is back at it; the reclaimer takes only what its gang minimum needs."""

from __future__ import annotations

from tests.scheduler_core.upstream.volcano_harness import run_volcano

QUEUES = [{"name": "q1"}, {"name": "q2"}]
ACTIONS = ("enqueue", "allocate", "reclaim")


def test_a_queue_above_its_share_gives_two_pods_for_a_two_pod_gang():
    # One 4-GPU node held by q1's 4 pods; equal weights give each queue 2 deserved GPUs.
    _, evicted = run_volcano([4], QUEUES, [("low", "q1", 4, 1, 1, 0)], [("new", "q2", 2, 1, 2, 0)], actions=ACTIONS)
    assert evicted == {"low": 2}


def test_an_elastic_reclaimer_takes_one_pod_for_its_minimum_of_one():
    _, evicted = run_volcano([4], QUEUES, [("low", "q1", 4, 1, 1, 0)], [("new", "q2", 3, 1, 1, 0)], actions=ACTIONS)
    assert evicted == {"low": 1}


def test_each_queue_above_its_share_gives_only_its_surplus():
    # 6 GPUs, three equal queues: deserved 2 each.  q1 and q3 run 3 pods (one over); q2's 2-pod gang
    # takes one pod from each, not two from the first victim queue.
    _, evicted = run_volcano([6], [{"name": "q1"}, {"name": "q2"}, {"name": "q3"}],
                             [("a", "q1", 3, 1, 1, 0), ("c", "q3", 3, 1, 1, 0)], [("new", "q2", 2, 1, 2, 0)],
                             actions=ACTIONS)
    assert evicted == {"a": 1, "c": 1}
