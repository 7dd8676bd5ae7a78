"""Volcano's action tables, ported: volcano-sh/volcano pkg/scheduler/actions/allocate/allocate_test.go
(TestAllocate).  Pods request GPUs where upstream requests CPU; nodes hold as many GPUs as upstream's
nodes hold CPUs.  The outcome is the pods bound per job in the session."""

import pytest

from tests.scheduler_core.upstream.volcano_harness import run_volcano

ALLOCATE = "volcano pkg/scheduler/actions/allocate/allocate_test.go TestAllocate"

# (upstream case, nodes [GPUs], queues, pending jobs [(name, queue, pods, per-pod, minAvailable, priority)],
#  pods bound per job)
ALLOCATE_CASES = [
    ("one Job with two Pods on one node", [2], [{"name": "c1"}],
     [("pg1", "c1", 2, 1, 1, 0)], {"pg1": 2}),
    ("two Jobs on one node", [2], [{"name": "c1"}, {"name": "c2"}],
     [("pg1", "c1", 2, 1, 1, 0), ("pg2", "c2", 2, 1, 1, 0)], {"pg1": 1, "pg2": 1}),
    ("high priority queue should not block others", [2], [{"name": "c1"}, {"name": "c2"}],
     [("pg1", "c1", 1, 3, 1, 0), ("pg2", "c2", 1, 1, 1, 0)], {"pg2": 1}),
]


@pytest.mark.parametrize("name,nodes,queues,pending,want", ALLOCATE_CASES, ids=[c[0] for c in ALLOCATE_CASES])
def test_volcano_allocate_matches_upstream(name, nodes, queues, pending, want):
    bound, _ = run_volcano(nodes, queues, [], pending, actions=("allocate",),
                           plugins=("priority", "gang", "proportion"))
    assert bound == want, f"{ALLOCATE} / {name}"


RECLAIM = "volcano pkg/scheduler/actions/reclaim/reclaim_test.go TestReclaim"


def test_volcano_reclaim_two_queues_one_overusing_reclaims_one_pod():
    # q1 runs 3 one-GPU pods on a 3-GPU node; q2's one pending pod reclaims exactly one of them.
    name = "Two Queue with one Queue overusing resource, should reclaim"
    queues = [{"name": "q1"}, {"name": "q2"}]
    _, evicted = run_volcano([3], queues, [("pg1", "q1", 3, 1, 1, 10)], [("pg2", "q2", 1, 1, 1, 100000)],
                             actions=("enqueue", "allocate", "reclaim"))
    assert evicted == {"pg1": 1}, f"{RECLAIM} / {name}"


def test_volcano_reclaim_leaves_non_preemptable_jobs_alone():
    queues = [{"name": "q1"}, {"name": "q2"}]
    _, evicted = run_volcano([3], queues, [("pg1", "q1", 3, 1, 1, 10)], [("pg2", "q2", 1, 1, 1, 100000)],
                             actions=("enqueue", "allocate", "reclaim"), preemptable={"pg1": False})
    assert evicted == {}


PREEMPT = "volcano pkg/scheduler/actions/preempt/preempt_test.go TestPreempt"

# (upstream case, nodes, queues, running, pending, evicted pods per job).  Upstream marks single pods
# preemptable=false; here the gang minimum protects the same number of pods (which pod is not stated).
PREEMPT_CASES = [
    ("preempt one task of different job to fit both jobs on one node", [2], [{"name": "q1"}],
     [("pg1", "q1", 2, 1, 1, 10)], [("pg2", "q1", 2, 1, 1, 100000)], {"pg1": 1}),
    ("preempt enough tasks to fit large task of different job", [6], [{"name": "q1"}],
     [("pg1", "q1", 3, 1, 1, 10)], [("pg2", "q1", 1, 5, 1, 100000)], {"pg1": 2}),
    ("preempt low priority job in same queue", [12], [{"name": "q1", "capability": 4}],
     [("pg1", "q1", 1, 3, 0, 10)], [("pg2", "q1", 1, 3, 1, 100000)], {"pg1": 1}),
    ("preempt low priority job in same queue: allocatable and has enough resource, don't preempt", [12],
     [{"name": "q1", "capability": 6}], [("pg1", "q1", 1, 3, 1, 10)], [("pg2", "q1", 1, 3, 1, 100000)], {}),
]


@pytest.mark.parametrize("name,nodes,queues,running,pending,want", PREEMPT_CASES, ids=[c[0] for c in PREEMPT_CASES])
def test_volcano_preempt_matches_upstream(name, nodes, queues, running, pending, want):
    _, evicted = run_volcano(nodes, queues, running, pending, actions=("allocate", "preempt"),
                             plugins=("priority", "gang", "proportion"))
    assert evicted == want, f"{PREEMPT} / {name}"
