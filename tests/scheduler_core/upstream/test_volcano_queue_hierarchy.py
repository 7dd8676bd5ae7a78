"""Volcano's capacity plugin with hierarchical queues, ported: volcano-sh/volcano
pkg/scheduler/plugins/capacity/capacity_test.go ``Test_capacityPlugin_OnSessionOpenWithHierarchy`` (read at
ed72c7c).  Each case cites its upstream name.

As in test_volcano_queue_resources.py, upstream's cpu is stated as GPUs and its memory as host memory where
the pods ask for no GPU (cases 0-7, 10); where they ask for GPUs (8, 11, 12; upstream's ``nvidia.com/a100``
in 12) every dimension is stated as it is.  Upstream's ``pods`` and ``rdma`` dimensions are left out (the
model has neither; no case is decided by them).  ``buildQueueWithParents(name, parent, deserved,
capability)``; a queue without parent hangs below ``root``.  Upstream's tier enables gang only for
JobStarving, so the session runs the capacity plugin alone; actions enqueue, allocate, reclaim.  Running pods
are bound at t=0, pending ones arrive at t=60."""

import pytest

from scheduler_core import ScenarioError
from tests.scheduler_core.conftest import workload
from tests.scheduler_core.upstream.volcano_harness import START, run_queue_case

SRC = "volcano pkg/scheduler/plugins/capacity/capacity_test.go Test_capacityPlugin_OnSessionOpenWithHierarchy"
GPU = "nvidia.com/gpu"


def q(name, parent=None, deserved=None, capability=None, **more):
    out = {"name": name, **more}
    if parent is not None:
        out["parent"] = parent
    if deserved is not None:
        out["deserved"] = deserved
    if capability is not None:
        out["capability"] = capability
    return out


def cm(cpu, mem):  # upstream's BuildResourceList(cpu, memory) where the pods ask no GPU
    return {GPU: cpu, "memory": mem}


N1 = [{"name": "n1", "gpus": 8, "memory": 8}]
ROOT = q("root")
CASE0_QUEUES = [ROOT, q("q1", capability=cm(4, 4)), q("q2", capability=cm(4, 4)),
                q("q11", "q1", capability=cm(1, 1)), q("q12", "q1", capability=cm(3, 3))]
Q3 = q("q3", deserved=cm(4, 4), capability=cm(4, 4))
Q4 = q("q4", deserved=cm(2, 2), capability=cm(4, 4))
Q31 = q("q31", "q3", deserved=cm(2, 2), capability=cm(4, 4))
Q32 = q("q32", "q3", deserved=cm(2, 2), capability=cm(4, 4))
Q33 = q("q33", "q3", deserved=cm(0, 0), capability=cm(4, 4))
GPU_NODE = [{"name": "n-gpu", "gpus": 8, "cpu": 8, "memory": 8}]


def job(name, queue, gpus, memory=0, cpu=0, pods=1, **more):
    return {"name": name, "queue": queue, "gpus": gpus, "memory": memory, "cpu": cpu, "pods": pods, **more}


# (upstream case, nodes, queues, running, pending, bound at t=60, evicted, pipelined (bound after the victims go))
CASES = [
    ("case0: Pod allocatable when queue is leaf queue", N1, CASE0_QUEUES, [], [job("pg1", "q11", 1, 1)],
     {"pg1": ["n1"]}, {}, None),
    ("case1: Pod not allocatable when queue is not leaf queue", N1, CASE0_QUEUES, [], [job("pg2", "q1", 1, 1)],
     {}, {}, None),
    ("case2: Pod allocatable when queue has not exceed capability", N1, [ROOT, Q3, Q4, Q31, Q32], [],
     [job("pg3", "q31", 2, 2, pods=2, min=2)], {"pg3": ["n1", "n1"]}, {}, None),
    # pg5 holds p6 (preemptable: false) and p7: the model marks whole jobs, so pg5 is preemptable and gang
    # (off, as upstream's tier has it for reclaim) does not keep its pods; reclaim takes one of them.
    ("case3: Can reclaim from other queues when allocated < deserved", N1, [ROOT, Q3, Q31, Q32, Q4],
     [job("pg4", "q4", 4, 4), job("pg5", "q31", 2, 2, pods=2)], [job("pg6", "q32", 2, 2)], {}, {"pg5": 1}, "pg6"),
    ("case4: Pod is not allocatable when ancestor queue's real capability not enough", N1,
     [ROOT, Q3, Q31, Q32, Q33], [job("pg5", "q31", 2, 2, preemptable=False), job("pg7", "q32", 2, 2)],
     [job("pg8", "q33", 3, 3)], {}, {}, None),
    ("case5: If the capability cpu or memory is not specified, the value should be inherited from parent queue", N1,
     [ROOT, q("q5", capability={"memory": 4}), q("q51", "q5", capability={"memory": 2})], [], [job("pg9", "q51", 1)],
     {"pg9": ["n1"]}, {}, None),
    ("case8: When the queue's deserved value has a scalar resource set, the check can pass", GPU_NODE,
     [ROOT, q("q8", deserved={"cpu": 4, "memory": 4, GPU: 8}),
      q("q81", "q8", deserved={"cpu": 2, "memory": 2, GPU: 4}),
      q("q82", "q8", deserved={"cpu": 2, "memory": 2, GPU: 4})],
     [], [job("pg12", "q81", 1, 2, cpu=2)], {"pg12": ["n-gpu"]}, {}, None),
    ("case11: If the capability scalar resources is not specified, the value should be inherited from parent queue",
     GPU_NODE, [ROOT, q("case11_queue1"),
                q("case11_queue11", "case11_queue1", capability={"cpu": 4, "memory": 4, GPU: 4}),
                q("case11_queue12", "case11_queue1", capability={"cpu": 4, "memory": 4, GPU: 4})],
     [], [job("pg14", "case11_queue11", 4, 1, cpu=1), job("pg15", "case11_queue12", 4, 1, cpu=1)],
     {"pg14": ["n-gpu"], "pg15": ["n-gpu"]}, {}, None),
    ("case12: Can reclaim from other queues when allocated <= deserved on a single scalar dimension",
     [{"name": "n3", "gpus": 5, "cpu": 16, "memory": 16}],
     [q("root", deserved={"cpu": 16, "memory": 16, GPU: 4}), q("case12_queue1", deserved={GPU: 2}),
      q("case12_queue11", "case12_queue1", deserved={GPU: 2}), q("case12_queue12", "case12_queue1")],
     [job("pg17", "case12_queue12", 2, 1, cpu=1), job("pg18", "case12_queue12", 2, 1, cpu=1, preemptable=False)],
     [job("pg16", "case12_queue11", 2, 1, cpu=1)], {}, {"pg17": 1}, "pg16"),
]


def _run(nodes, queues, running, pending, actions=("enqueue", "allocate", "reclaim")):
    return run_queue_case(nodes, queues, running, pending, actions=actions, plugins=("capacity",),
                          config={"enable_hierarchy": True})


# case3's pg6 is Inqueue when the session opens.  The model's enqueue would hold it at q3 (allocated 4 + 2 >
# capability 4): it does not deduct the running jobs' elastic resources as jobEnqueueable does, and its
# PodGroups always state their minimum resources.  So that case runs without the enqueue action.
ALREADY_INQUEUE = {"case3"}


@pytest.mark.parametrize("name,nodes,queues,running,pending,want_bound,want_evicted,pipelined", CASES,
                         ids=[c[0].split(":")[0] for c in CASES])
def test_capacity_plugin_with_hierarchy_matches_upstream(name, nodes, queues, running, pending, want_bound,
                                                         want_evicted, pipelined):
    actions = ("allocate", "reclaim") if name.split(":")[0] in ALREADY_INQUEUE else ("enqueue", "allocate", "reclaim")
    r, bound, evicted = _run(nodes, queues, running, pending, actions)
    assert (bound, evicted) == (want_bound, want_evicted), f"{SRC} / {name}"
    if pipelined is not None:  # ExpectPipeLined: it runs once its victims have terminated
        assert [e for e in r.events.entries if e.kind == "bind" and e.workload == pipelined and e.t > START]


def test_case1_a_job_in_a_parent_queue_waits_with_the_capacity_plugins_words():
    r, _, _ = _run(N1, CASE0_QUEUES, [], [job("pg2", "q1", 1, 1)])
    assert workload(r, "pg2").pending_reason.startswith("Queue <q1> is not a leaf queue, can not allocate task <pg2-0>")


def test_case4_the_ancestor_that_is_full_is_named():
    r, _, _ = _run(N1, [ROOT, Q3, Q31, Q32, Q33], [job("pg5", "q31", 2, 2), job("pg7", "q32", 2, 2)],
                   [job("pg8", "q33", 3, 3)])
    # enqueue rejects the PodGroup at q3 (checkJobEnqueueableHierarchically), with the event's words
    assert workload(r, "pg8").pending_reason.startswith(
        "queue resource quota insufficient: insufficient nvidia.com/gpu, insufficient memory")


def test_case6_a_podgroup_is_not_enqueued_when_an_ancestor_capability_is_not_enough():
    """case6: q61 and q62 inherit q6's capability (2 cpu, 4Gi); pg10 is enqueued, pg11 stays Pending.  The
    model's PodGroups have pods, so pg10 also runs."""
    queues = [ROOT, q("q6", capability=cm(2, 4)), q("q61", "q6"), q("q62", "q6")]
    r, bound, _ = _run(N1, queues, [], [job("pg10", "q61", 2, 4), job("pg11", "q62", 2, 4)])
    assert bound == {"pg10": ["n1"]}, f"{SRC} / case6"
    assert workload(r, "pg11").pending_reason.startswith("queue resource quota insufficient"), f"{SRC} / case6"


@pytest.mark.parametrize("name,queues", [
    ("case7: the sum of sub queue 71 and 72's guarantee exceeds the capacity of queue7, but should not panic",
     [ROOT, q("q7", capability=cm(6, 4)), q("q71", "q7", capability=cm(6, 4), guarantee=cm(4, 3)),
      q("q72", "q7", capability=cm(6, 4), guarantee=cm(4, 3))]),
    ("case10: root queue's capability > cluster total resource, but should not panic",
     [q("root", capability=cm(16, 16)), q("q10", capability=cm(10, 4))]),
], ids=["case7", "case10"])
def test_capacity_plugin_with_hierarchy_accepts_odd_trees(name, queues):
    r, bound, evicted = _run(N1, queues, [], [])
    assert (bound, evicted) == ({}, {}), f"{SRC} / {name}"
    assert r is not None


@pytest.mark.parametrize("change,where,words", [
    ({"enable_hierarchy": False}, "queues.1.parent", "needs enable_hierarchy"),
    ({"queues": [q("a", "nowhere")]}, "queues.0.parent", "unknown queue 'nowhere'"),
    ({"queues": [q("a", "b"), q("b", "a")]}, "queues.0.parent", "parent cycle: a -> b -> a"),
    ({"queues": [q("root", "a"), q("a")]}, "queues.0.parent", "the root queue has no parent"),
])
def test_bad_queue_trees_are_refused_naming_the_field(change, where, words):
    cfg = {"enable_hierarchy": True, "queues": [q("a"), q("b", "a")], **change}
    queues = cfg.pop("queues")
    with pytest.raises(ScenarioError) as e:
        run_queue_case(N1, queues, [], [], plugins=("capacity",), config=cfg)
    assert f"stack.control_plane.volcano.{where}" in str(e.value) and words in str(e.value)


def test_enable_hierarchy_needs_the_capacity_plugin():
    with pytest.raises(ScenarioError, match="enable_hierarchy is an option of the capacity plugin"):
        run_queue_case(N1, [q("a")], [], [], plugins=("proportion",), config={"enable_hierarchy": True})
