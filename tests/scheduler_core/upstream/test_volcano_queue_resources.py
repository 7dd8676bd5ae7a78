"""Volcano's queue plugins with several resources, ported: volcano-sh/volcano
pkg/scheduler/plugins/proportion/proportion_test.go (TestEnqueueAndAllocable, TestAllocate) and
pkg/scheduler/plugins/capacity/capacity_test.go (Test_capacityPlugin_OnSessionOpenWithoutHierarchy).

Every upstream pod asks for CPU, and the model's pods ask for at least one GPU: upstream's cpu is stated
as GPUs and its memory as host memory (G and Gi alike as GiB), so a queue's ResourceList
``{cpu: 2, memory: 4Gi}`` reads ``{nvidia.com/gpu: 2, memory: 4}``.  The dimensions keep their roles:
the queue checks compare only the dimensions a pod asks for, and overused needs every dimension.
Running pods are placed at t=0 on the node upstream names (a node selector on their own node group);
the outcome is what the session at t=60 binds and evicts.
"""

import pytest

from tests.scheduler_core.conftest import workload
from tests.scheduler_core.upstream.volcano_harness import run_queue_case

GPU = "nvidia.com/gpu"

PROPORTION_ENQ = "volcano pkg/scheduler/plugins/proportion/proportion_test.go TestEnqueueAndAllocable"
TWO_SMALL = [{"name": "n1", "gpus": 2, "memory": 2}, {"name": "n2", "gpus": 2, "memory": 2}]
PROPORTION_QUEUES = [{"name": "q1", "capability": {GPU: 2, "memory": 2}},
                     {"name": "q2", "capability": {GPU: 3, "memory": 3}}]
PROPORTION_RUNNING = [{"name": "p1", "queue": "q1", "gpus": 1, "memory": 2, "on": "n1"},
                      {"name": "p2", "queue": "q2", "gpus": 2, "memory": 1, "on": "n2"}]


def test_proportion_case0_memory_exceeds_deserved_a_job_asking_only_cpu_is_enqueued_and_allocated():
    # q1 has used its 2 GiB of memory but only 1 of its 2 CPUs: a pod asking for no memory still fits.
    r, bound, _ = run_queue_case(TWO_SMALL, PROPORTION_QUEUES, PROPORTION_RUNNING,
                                 [{"name": "p3", "queue": "q1", "gpus": 1}],
                                 actions=("enqueue", "allocate"), plugins=("proportion",))
    assert bound == {"p3": ["n1"]}, f"{PROPORTION_ENQ} / case0"


def test_proportion_case2_exceeding_capability_is_not_enqueued():
    r, bound, _ = run_queue_case(TWO_SMALL, PROPORTION_QUEUES, PROPORTION_RUNNING,
                                 [{"name": "p5", "queue": "q1", "gpus": 1, "memory": 1}],
                                 actions=("enqueue", "allocate"), plugins=("proportion",))
    assert bound == {}, f"{PROPORTION_ENQ} / case2: exceed capacity, can not enqueue"
    assert workload(r, "p5").pending_reason == "queue resource quota insufficient: insufficient memory"


def test_proportion_case3_exceeding_deserved_is_not_allocated():
    r, bound, _ = run_queue_case(TWO_SMALL, PROPORTION_QUEUES, PROPORTION_RUNNING,
                                 [{"name": "p5", "queue": "q1", "gpus": 1, "memory": 1}],
                                 actions=("allocate",), plugins=("proportion",))
    assert bound == {}, f"{PROPORTION_ENQ} / case3: exceed deserved, can not allocate"
    assert workload(r, "p5").pending_reason == (
        "queue q1 is overused: insufficient memory (allocated 2Gi + 1Gi > deserved 2Gi)")


PROPORTION_ALLOC = "volcano pkg/scheduler/plugins/proportion/proportion_test.go TestAllocate"


def test_proportion_allocate_case0_queues_are_served_in_queue_priority_order():
    # Upstream enables only proportion's queue order: no deserved bound, the priority-10 queue goes first.
    nodes = [{"name": "n1", "gpus": 2, "memory": 4}, {"name": "n2", "gpus": 2, "memory": 4}]
    queues = [{"name": "q1", "priority": 5, "capability": {GPU: 2, "memory": 4}},
              {"name": "q2", "priority": 1, "capability": {GPU: 2, "memory": 4}},
              {"name": "q3", "priority": 10, "capability": {GPU: 2, "memory": 4}}]
    _, bound, _ = run_queue_case(nodes, queues, [{"name": "p1", "queue": "q1", "gpus": 2, "memory": 4, "on": "n1"}],
                                 [{"name": "p2", "queue": "q2", "gpus": 2, "memory": 4},
                                  {"name": "p3", "queue": "q3", "gpus": 2, "memory": 4}],
                                 actions=("allocate", "reclaim"), plugins=("priority",))
    assert bound == {"p3": ["n2"]}, f"{PROPORTION_ALLOC} / case0"


CAPACITY = "volcano pkg/scheduler/plugins/capacity/capacity_test.go Test_capacityPlugin_OnSessionOpenWithoutHierarchy"
ONE_PAIR = [{"name": "n1", "gpus": 2, "memory": 4}, {"name": "n2", "gpus": 2, "memory": 4}]


def _capacity(nodes, queues, running, pending):
    # Upstream's tier enables gang only for JobStarving: gang does not protect minAvailable from reclaim here.
    return run_queue_case(nodes, queues, running, pending, actions=("allocate", "reclaim"), plugins=("capacity",))


CAPACITY_CASES = [
    # (upstream case, nodes, queues, running, pending, bound at t=60, evicted)
    ("case0: Pod allocatable when queue has not exceed capability", ONE_PAIR,
     [{"name": "q1", "capability": {GPU: 2, "memory": 2}}],
     [{"name": "p1", "queue": "q1", "memory": 1, "on": "n1"}],
     [{"name": "p2", "queue": "q1", "memory": 1, "on": "n1"}], {"p2": ["n1"]}, {}),
    ("case1: Pod not allocatable when queue exceed queue capability", ONE_PAIR,
     [{"name": "q2", "capability": {GPU: 1.5, "memory": 1.5}}],
     [{"name": "p3", "queue": "q2", "memory": 1, "on": "n1"}],
     [{"name": "p4", "queue": "q2", "memory": 1}], {}, {}),
    # p5 and p6 share PodGroup pg5 upstream; without gang's reclaim check they are two jobs here.
    ("case2: Can reclaim from other queues when allocated < deserved", ONE_PAIR,
     [{"name": "q3", "deserved": {GPU: 2, "memory": 4}}, {"name": "q4", "deserved": {GPU: 2, "memory": 4}}],
     [{"name": "p5", "queue": "q3", "gpus": 2, "memory": 4, "on": "n1", "preemptable": False},
      {"name": "p6", "queue": "q3", "gpus": 2, "memory": 4, "on": "n2"}],
     [{"name": "p7", "queue": "q4", "gpus": 2, "memory": 4}], {}, {"p6": 1}),
    ("case4: Pods are assigned according to the order of Queue Priority in which PGs are placed",
     [{"name": "n5", "gpus": 2, "memory": 4}, {"name": "n6", "gpus": 2, "memory": 4}],
     [{"name": "q7", "priority": 5, "capability": {GPU: 2, "memory": 4}},
      {"name": "q8", "priority": 1, "capability": {GPU: 2, "memory": 4}},
      {"name": "q9", "priority": 10, "capability": {GPU: 2, "memory": 4}}],
     [{"name": "p13", "queue": "q7", "gpus": 2, "memory": 4, "on": "n5"}],
     [{"name": "p14", "queue": "q8", "gpus": 2, "memory": 4}, {"name": "p15", "queue": "q9", "gpus": 2, "memory": 4}],
     {"p15": ["n6"]}, {}),
    ("case5: Can reclaim from other queues when allocated + req <= deserved on one dimension",
     [{"name": "n1", "gpus": 2, "memory": 4}],
     [{"name": "q10", "deserved": {GPU: 2, "memory": 2}, "capability": {GPU: 4, "memory": 4}},
      {"name": "q11", "deserved": {GPU: 0, "memory": 0}, "capability": {GPU: 2, "memory": 2}}],
     [{"name": "p16", "queue": "q10", "memory": 3, "on": "n1"}, {"name": "p18", "queue": "q11", "memory": 1, "on": "n1"}],
     [{"name": "p17", "queue": "q10", "memory": 1}], {}, {"p18": 1}),
    ("case6: Can not reclaim from other queues when allocated + req > deserved",
     [{"name": "n1", "gpus": 2, "memory": 4}],
     [{"name": "q12", "deserved": {GPU: 1, "memory": 2}, "capability": {GPU: 4, "memory": 4}},
      {"name": "q13", "deserved": {GPU: 0, "memory": 0}, "capability": {GPU: 2, "memory": 2}}],
     [{"name": "p19", "queue": "q12", "memory": 1, "on": "n1"}, {"name": "p21", "queue": "q13", "memory": 1, "on": "n1"}],
     [{"name": "p20", "queue": "q12", "memory": 2}], {}, {}),
    ("case10: PreemptiveFn respects capability - no reclaim when futureUsed would exceed capability",
     [{"name": "n9", "gpus": 8, "memory": 100}, {"name": "n10", "gpus": 8, "memory": 100}],
     [{"name": "queue21", "deserved": {GPU: 8, "memory": 100}, "capability": {GPU: 8, "memory": 100}},
      {"name": "queue22", "capability": {GPU: 2, "memory": 5}}],
     [{"name": "p33", "queue": "queue21", "gpus": 7, "memory": 90, "on": "n9"},
      {"name": "p35", "queue": "queue22", "gpus": 2, "memory": 5, "on": "n10"}],
     [{"name": "p34", "queue": "queue21", "gpus": 2, "memory": 5}], {}, {}),
]


@pytest.mark.parametrize("name,nodes,queues,running,pending,want_bound,want_evicted", CAPACITY_CASES,
                         ids=[c[0].split(":")[0] for c in CAPACITY_CASES])
def test_capacity_plugin_matches_upstream(name, nodes, queues, running, pending, want_bound, want_evicted):
    _, bound, evicted = _capacity(nodes, queues, running, pending)
    assert (bound, evicted) == (want_bound, want_evicted), f"{CAPACITY} / {name}"
