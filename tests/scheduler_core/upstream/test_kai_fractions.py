"""KAI's allocation of GPU fractions against queue quotas and limits, ported: NVIDIA/KAI-Scheduler
pkg/scheduler/actions/allocate/allocateFractionalGpu_test.go ``TestHandleFractionalGPUAllocation`` (read at
72de64f).  Each case cites its upstream name.

Priorities are KAI's classes (train 50, interactive-preemptible 75, build 100: non-preemptible); a queue's
``DeservedGPUs`` is its GPU quota and ``MaxAllowedGPUs`` its limit; a department is a parent queue.  Running
jobs are bound at t=0 by the model's own placement (upstream pins them to a GPU group), pending ones arrive
at t=60; a whole-GPU job states the card's memory (under kai-fraction the model reads a smaller memory
figure as a gpu-memory fraction); the cases assert which pending jobs are allocated and, where upstream
names GPU groups, whether a job shares a GPU with another (the model numbers GPUs its own way)."""

import pytest

from scheduler_core import parse_scenario
from scheduler_core.simulation.cluster_sim import ClusterSimulation

SRC = "KAI-Scheduler pkg/scheduler/actions/allocate/allocateFractionalGpu_test.go TestHandleFractionalGPUAllocation"
TRAIN, INTERACTIVE, BUILD = 50, 75, 100


def _sim(nodes, queues, running, pending):
    """nodes: {name: GPUs}; queues: KAI queue documents; running/pending: (name, queue, GPUs per pod, priority,
    pods)."""
    groups = [{"name": n, "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": g} for n, g in nodes.items()]
    docs = []
    for at, jobs in ((0.0, running), (60.0, pending)):
        for i, (name, queue, gpus, prio, *pods) in enumerate(jobs):
            pods = pods[0] if pods else 1
            doc = {"kind": "training", "name": name, "tenant": queue, "workers": pods, "min_available": pods,
                   "priority": prio, "duration": "10h", "arrival": {"at": at + i}}
            if gpus < 1:
                doc["unit"] = {"gpu_fraction": gpus}
            else:  # a whole GPU: the model reads a smaller memory figure under kai-fraction as a fraction
                doc["memory_gib"] = 80
            docs.append(doc)
    leaves = {q["name"] for q in queues} - {q.get("parent") for q in queues}
    sc = parse_scenario({
        "name": "kai-fractions", "horizon": "2h", "pool": {"node_groups": groups},
        "stack": {"data_plane": {"mechanism": "kai-fraction"},
                  "control_plane": {"scheduler": "kai", "kai": {"queues": queues, "gpu_sharing": True}}},
        "tenants": [{"name": q, "queue": q} for q in sorted(leaves)], "workloads": docs})
    sim = ClusterSimulation(sc)
    sim.execute()
    return sim


def _gpus(sim, name):
    """(node, GPU index) of each pod of ``name`` that is bound."""
    wl = next(w for w in sim.workloads if w.name == name)
    return [(p.node.name, c.index) for p in wl.pods if p.node is not None for c in p.contexts]


Q = [{"name": "queue0", "quota": 2}]
Q1 = [{"name": "queue0", "quota": 1}]

# (upstream case, nodes, queues, running, pending, pending jobs bound, pairs of jobs sharing a GPU,
#  pairs of jobs on different GPUs)
CASES = [
    ("allocate job with multiple pods but does not allow it because project goes over allowance", {"node0": 4},
     [{"name": "department-a", "quota": 1, "limit": 1},
      {"name": "queue0", "parent": "department-a", "quota": 1, "limit": 1}],
     [], [("pending_job0", "queue0", 0.5, TRAIN, 3)], set(), [], []),
    ("allocate job with multiple pods but does not allow it because department to go over allowance", {"node0": 4},
     [{"name": "department-a", "quota": 1, "limit": 1}, {"name": "queue0", "parent": "department-a", "quota": 1}],
     [], [("pending_job0", "queue0", 0.5, TRAIN, 3)], set(), [], []),
    ("1 shared gpu job running, 1 pending interactive shared gpu job, allocate to same gpu", {"node0": 2}, Q,
     [("running_shared_gpu_job0", "queue0", 0.5, BUILD)], [("pending_shared_gpu_job1", "queue0", 0.5, BUILD)],
     {"pending_shared_gpu_job1"}, [("running_shared_gpu_job0", "pending_shared_gpu_job1")], []),
    ("1 shared gpu job running, 1 pending interactive shared gpu job, allocate to same gpu - even if multiple nodes, "
     "to check gpusharingorder plugin", {"node0": 2, "node1": 2}, Q,
     [("running_shared_gpu_job0", "queue0", 0.5, BUILD)], [("pending_shared_gpu_job1", "queue0", 0.5, BUILD)],
     {"pending_shared_gpu_job1"}, [("running_shared_gpu_job0", "pending_shared_gpu_job1")], []),
    ("1 shared gpu job running, 1 pending interactive shared gpu job - allocate to new gpu", {"node0": 2}, Q,
     [("running_shared_gpu_job0", "queue0", 0.6, BUILD)], [("pending_shared_gpu_job1", "queue0", 0.5, BUILD)],
     {"pending_shared_gpu_job1"}, [], [("running_shared_gpu_job0", "pending_shared_gpu_job1")]),
    ("1 shared gpu job running, 1 pending interactive shared gpu job - queue will be overused, don't allocate",
     {"node0": 2}, Q1, [("running_shared_gpu_job0", "queue0", 0.6, BUILD)],
     [("pending_shared_gpu_job1", "queue0", 0.5, BUILD)], set(), [], []),
    ("1 whole gpu job running, 1 pending interactive shared gpu job - allocate", {"node0": 2}, Q,
     [("running_job0", "queue0", 1, TRAIN)], [("pending_shared_gpu_job1", "queue0", 0.5, BUILD)],
     {"pending_shared_gpu_job1"}, [], [("running_job0", "pending_shared_gpu_job1")]),
    ("1 shared gpu interactive job running, 1 pending whole gpu job - allocate", {"node0": 2}, Q,
     [("running_shared_gpu_job0", "queue0", 0.5, BUILD)], [("pending_whole_gpu_job1", "queue0", 1, TRAIN)],
     {"pending_whole_gpu_job1"}, [], [("running_shared_gpu_job0", "pending_whole_gpu_job1")]),
    ("1 interactive shared gpu job running, 4 pending interactive shared gpus pending - allocate 3 of the shared GPUs "
     "jobs", {"node0": 2}, Q, [("running_shared_gpu_job0", "queue0", 0.5, BUILD)],
     [("pending_shared_gpu_job0", "queue0", 0.6, BUILD), ("pending_shared_gpu_job1", "queue0", 0.5, BUILD),
      ("pending_shared_gpu_job2", "queue0", 0.5, BUILD), ("pending_shared_gpu_job3", "queue0", 0.3, BUILD)],
     {"pending_shared_gpu_job0", "pending_shared_gpu_job1", "pending_shared_gpu_job3"},
     [("running_shared_gpu_job0", "pending_shared_gpu_job1"), ("pending_shared_gpu_job0", "pending_shared_gpu_job3")],
     [("running_shared_gpu_job0", "pending_shared_gpu_job0")]),
    ("Verify allocated fractional GPU jobs are counted in the overall number of GPUs the default department will have",
     {"node0": 2}, Q, [("running_job0", "queue0", 0.5, BUILD)], [("pending_job0", "queue0", 1, BUILD)],
     {"pending_job0"}, [], [("running_job0", "pending_job0")]),
    ("Allow allocation of fractional training when over quota with fractional jobs", {"node0": 2}, Q1,
     [("running_job0", "queue0", 0.5, BUILD), ("running_job1", "queue0", 0.5, BUILD)],
     [("pending_job0", "queue0", 0.5, TRAIN)], {"pending_job0"}, [("running_job0", "running_job1")],
     [("running_job0", "pending_job0")]),
    ("Allow allocation of fractional training when over quota with fractional jobs (a whole GPU running)",
     {"node0": 2}, Q1, [("running_job0", "queue0", 1, BUILD)], [("pending_job0", "queue0", 0.5, TRAIN)],
     {"pending_job0"}, [], [("running_job0", "pending_job0")]),
]


@pytest.mark.parametrize("name,nodes,queues,running,pending,bound,same,different", CASES,
                         ids=[c[0] for c in CASES])
def test_kai_fractions_against_queue_quota_and_limits(name, nodes, queues, running, pending, bound, same, different):
    sim = _sim(nodes, queues, running, pending)
    assert {j[0] for j in pending if _gpus(sim, j[0])} == bound, f"{SRC}: {name}"
    assert all(_gpus(sim, j[0]) for j in running), f"{SRC}: {name}"
    for a, b in same:
        assert set(_gpus(sim, a)) == set(_gpus(sim, b)), f"{SRC}: {name}: {a} and {b} share a GPU"
    for a, b in different:
        assert not set(_gpus(sim, a)) & set(_gpus(sim, b)), f"{SRC}: {name}: {a} and {b} on different GPUs"


def test_a_non_preemptible_fraction_over_quota_waits_with_kais_words():
    case = CASES[5]
    sim = _sim(*case[1:5])
    reason = sim.pending_reason(next(w for w in sim.workloads if w.name == "pending_shared_gpu_job1"))
    assert reason.startswith("Non-preemptible workload is over quota. Workload requested 0.5 GPUs, but queue0 quota "
                             "is 1 GPUs, while 0.6 GPUs are already allocated for non-preemptible pods")
