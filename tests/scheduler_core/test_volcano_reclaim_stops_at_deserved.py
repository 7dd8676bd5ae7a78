"""Volcano's reclaim action with the proportion plugin (volcano-sh/volcano pkg/scheduler/actions/reclaim,
plugins/proportion Reclaimable): a victim queue gives pods one at a time while it stays above its deserved
share, and stops once it is back at it; the reclaimer takes only what its gang minimum needs."""

from __future__ import annotations

from scheduler_core import simulate
from tests.scheduler_core.conftest import minimal
from tests.scheduler_core.test_queue_resources import NODE, job, volcano
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


def test_two_reclaimers_in_one_session_never_take_a_queue_below_its_deserved_share():
    # Four equal queues on one 8-GPU node, deserved 2 GPUs each: c runs four 1-GPU jobs (2 over), d one
    # 3-GPU job, a one GPU. At t=60 a asks for 1 more and b for 2. a's job takes one of c's pods; for b's,
    # c is then one over, not two: the pod already evicted is releasing and counts in no queue's
    # allocation (proportion's allocated), so c gives one more at most and is never left below 2.
    queues = ("a", "b", "c", "d")
    docs = ([job("a0", 1)] + [job(f"c{i}", 1, tenant="c") for i in range(4)] + [job("d0", 3, tenant="d")]
            + [job("a-more", 1, at=60), job("b-new", 2, tenant="b", at=60)])
    r = simulate(minimal(pool=NODE, workloads=docs, tenants=[{"name": q, "queue": q} for q in queues],
                         stack=volcano([{"name": q} for q in queues], actions=("allocate", "reclaim"),
                                       plugins=("priority", "proportion"))))
    reclaimed_from_c = [e.workload for e in r.events.entries if e.kind == "preempt" and e.workload.startswith("c")]
    assert len(reclaimed_from_c) <= 2, reclaimed_from_c
    assert {w.name: w.start for w in r.workloads if w.name in ("a-more", "b-new")} == {"a-more": 90.0, "b-new": 90.0}


def test_victims_come_from_the_lowest_priority_queue_first():
    # 6 GPUs, three queues deserving 2 each; q1 (priority 0) and q3 (priority 2) both run 3 pods, one over.
    # Volcano orders reclaim victims by the reverse of the queue order (session_plugins.go
    # BuildVictimsPriorityQueue / VictimQueueOrderFn): the lower-priority queue q1 gives its pod, although
    # q3's job is newer (the model used to take the newest job first, ignoring queue priority).
    queues = [{"name": "q1", "priority": 0}, {"name": "q2"}, {"name": "q3", "priority": 2}]
    _, evicted = run_volcano([6], queues, [("a", "q1", 3, 1, 1, 0), ("c", "q3", 3, 1, 1, 0)],
                             [("new", "q2", 1, 1, 1, 0)], actions=ACTIONS)
    assert evicted == {"a": 1}
