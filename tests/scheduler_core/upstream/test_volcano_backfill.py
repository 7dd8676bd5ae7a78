"""Volcano's BestEffort pods and the backfill action, ported: volcano-sh/volcano
pkg/scheduler/actions/backfill/backfill_test.go (TestPickUpPendingTasks),
pkg/scheduler/actions/preempt/preempt_test.go (TestPreempt, TestTopologyAwarePreempt: the cases about #3335)
and pkg/scheduler/api/unschedule_info_test.go (TestFitErrors: the pod-number cases).

A BestEffort pod requests nothing: ``gpus: 0`` and no cpu or memory.  A node's allocatable ``pods`` is
its ``max_pods``.  Upstream's pods that request CPU ask for GPUs here (cpu as GPUs, memory as host
memory), except where the case is about a pod that requests something other than GPUs (Burstable: cpu
only).  A PodGroup whose tasks differ (some BestEffort, some not) is stated as one workload per kind,
with the job's priority.  Running pods are placed at t=0 on the node upstream names; the outcome is
what the session at t=60 binds and evicts, and the pending pods' words.
"""

import pytest

from tests.scheduler_core.conftest import workload
from tests.scheduler_core.upstream.volcano_harness import run_queue_case

GPU = "nvidia.com/gpu"
BACKFILL = "volcano pkg/scheduler/actions/backfill/backfill_test.go TestPickUpPendingTasks"


def test_pick_up_pending_tasks_takes_only_best_effort_pods_higher_priority_job_first():
    # Upstream: pg2 (job-priority-2) and pg1 (job-priority-1) in q1, each with BestEffort tasks and tasks
    # asking for 500m cpu; backfill picks pg2's BestEffort tasks, then pg1's, and no other task.  A node
    # with room for 4 pods shows the order: pg2's four take it; the cpu-asking pods are not backfill's.
    nodes = [{"name": "n1", "gpus": 8, "pods": 4}]
    pending = [
        {"name": "pg1-besteffort", "queue": "q1", "pods": 4, "gpus": 0, "priority": 1},
        {"name": "pg1-unbesteffort", "queue": "q1", "pods": 4, "gpus": 0, "cpu": 0.5, "priority": 1},
        {"name": "pg2-besteffort", "queue": "q1", "pods": 4, "gpus": 0, "priority": 2},
        {"name": "pg2-unbesteffort", "queue": "q1", "pods": 4, "gpus": 0, "cpu": 0.5, "priority": 2},
    ]
    r, bound, _ = run_queue_case(nodes, [{"name": "q1"}], [], pending, actions=("enqueue", "backfill"),
                                 plugins=("priority", "gang", "proportion"))
    assert bound == {"pg2-besteffort": ["n1"] * 4}, f"{BACKFILL} / test"
    assert workload(r, "pg1-besteffort").pending_reason == (
        "4/4 tasks in gang unschedulable: pod group is ready, 1 minAvailable, 4 Pending; Pending: 4 Unschedulable. "
        "Origin reason is pg1-besteffort-0: 0/1 nodes are unavailable: 1 node(s) pod number exceeded.")


PREEMPT = "volcano pkg/scheduler/actions/preempt/preempt_test.go"

# (upstream test, case, the preemptor's GPUs and host memory).  One node with room for one pod holds a
# low-priority BestEffort pod (pg1, minAvailable 0); a high-priority pod of pg2 in the same queue (capability
# 6 cpu / 6G) needs the pod slot: it evicts the BestEffort pod, whether it requests resources or not.
PREEMPT_CASES = [
    ("TestPreempt", "unBestEffort high-priority pod preempt BestEffort low-priority pod in same queue", 3, 3),
    ("TestPreempt", "BestEffort high-priority pod preempt BestEffort low-priority pod in same queue", 0, 0),
    ("TestTopologyAwarePreempt", "unBestEffort high-priority pod preempt BestEffort low-priority pod in same queue",
     3, 3),
    ("TestTopologyAwarePreempt", "BestEffort high-priority pod preempt BestEffort low-priority pod in same queue",
     0, 0),
]


@pytest.mark.parametrize("test,name,gpus,memory", PREEMPT_CASES, ids=[f"{c[0]}-{c[1]}" for c in PREEMPT_CASES])
def test_preempt_frees_a_pod_slot_held_by_a_best_effort_pod(test, name, gpus, memory):
    nodes = [{"name": "n1", "gpus": 12, "memory": 12, "pods": 1}]
    queues = [{"name": "q1", "capability": {GPU: 6, "memory": 6}}]
    running = [{"name": "pg1", "queue": "q1", "gpus": 0, "min": 0, "priority": 10, "on": "n1"}]
    pending = [{"name": "pg2", "queue": "q1", "gpus": gpus, "memory": memory, "priority": 100000}]
    _, _, evicted = run_queue_case(nodes, queues, running, pending,
                                   actions=("enqueue", "allocate", "backfill", "preempt"),
                                   plugins=("priority", "gang", "proportion"))
    assert evicted == {"pg1": 1}, f"{PREEMPT} {test} / {name}"


def test_best_effort_preemptor_does_not_evict_a_pod_that_requests_resources():
    # preempt.go: "BestEffort pod is not supported to preempt unBestEffort pod" - the slot stays taken.
    nodes = [{"name": "n1", "gpus": 12, "pods": 1}]
    running = [{"name": "pg1", "queue": "q1", "gpus": 1, "min": 0, "priority": 10, "on": "n1"}]
    pending = [{"name": "pg2", "queue": "q1", "gpus": 0, "priority": 100000}]
    _, bound, evicted = run_queue_case(nodes, [{"name": "q1"}], running, pending,
                                       actions=("enqueue", "allocate", "backfill", "preempt"),
                                       plugins=("priority", "gang", "proportion"))
    assert (bound, evicted) == ({}, {})


FIT_ERRORS = "volcano pkg/scheduler/api/unschedule_info_test.go TestFitErrors"

# (case, nodes, the pending BestEffort job's node selector, the FitErrors histogram).  Upstream builds the
# FitErrors by hand (one with the prefix 'NodeResourceFitFailed', one inside hyperNode1); here a BestEffort
# pod meets the nodes and the default prefix '0/N nodes are unavailable' stands before the same reasons.
FIT_ERROR_CASES = [
    ("hyperNode1: 1 node(s) pod number exceeded", [{"name": "n1", "gpus": 1, "pods": 1}], None,
     "0/1 nodes are unavailable: 1 node(s) pod number exceeded."),
    ("NodeResourceFitFailed: node affinity and pod number",
     [{"name": "n1", "gpus": 1, "pods": 1}, {"name": "n2", "gpus": 1, "pods": 10}], "n1",
     "0/2 nodes are unavailable: 1 node(s) didn't match Pod's node affinity/selector, "
     "1 node(s) pod number exceeded."),
]


@pytest.mark.parametrize("name,nodes,on,want", FIT_ERROR_CASES, ids=[c[0] for c in FIT_ERROR_CASES])
def test_a_best_effort_pod_on_full_nodes_gets_volcano_fit_errors(name, nodes, on, want):
    running = [{"name": "holder", "queue": "q1", "gpus": 0, "on": "n1"}]
    pending = [{"name": "be", "queue": "q1", "gpus": 0, "on": on}]
    r, bound, _ = run_queue_case(nodes, [{"name": "q1"}], running, pending)
    assert bound == {}
    reason = workload(r, "be").pending_reason
    assert reason.endswith(f"Origin reason is be-0: {want}"), f"{FIT_ERRORS} / {name}"
