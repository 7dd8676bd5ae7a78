"""KAI's in-queue preempt action, ported: NVIDIA/KAI-Scheduler pkg/scheduler/actions/preempt/preempt_test.go
``TestHandlePreempt`` (read at 72de64f).  Each case cites its upstream name.  Priorities are KAI's priority
classes (pkg/scheduler/constants/priorities.go): train 50, interactive-preemptible 75, build 100, inference
125; a job below 100 is preemptible.  Upstream's ``DeservedGPUs`` is the queue's GPU quota.  The running
jobs are bound at t=0, the pending one arrives at t=60; upstream's ``Releasing`` is a job evicted then,
``Pipelined`` the preemptor bound once its victims are gone."""

import pytest

from tests.scheduler_core.upstream.volcano_harness import START, run_queue_case

SRC = "KAI-Scheduler pkg/scheduler/actions/preempt/preempt_test.go TestHandlePreempt"
TRAIN, INTERACTIVE, BUILD, INFERENCE = 50, 75, 100, 125


def job(name, queue, gpus, priority):
    return {"name": name, "queue": queue, "gpus": gpus, "priority": priority}


# (upstream case, node GPUs, queues (name, deserved GPUs), running jobs, the pending job, evicted jobs)
CASES = [
    ("1 train job running, 1 build job pending for the same queue - preempt", 1, [("queue0", 1)],
     [job("running_job0", "queue0", 1, TRAIN)], job("pending_job0", "queue0", 1, BUILD), {"running_job0"}),
    ("1 train job running, 1 train job pending for the same queue - don't preempt", 1, [("queue0", 1)],
     [job("running_job0", "queue0", 1, TRAIN)], job("pending_job0", "queue0", 1, TRAIN), set()),
    ("1 train job running, 1 build job pending for the different queue - don't preempt", 1,
     [("queue0", 1), ("queue1", 1)],
     [job("running_job0", "queue0", 1, TRAIN)], job("pending_job0", "queue1", 1, BUILD), set()),
    ("2 train jobs running, 1 build job with 2 GPUs pending for the same queue - preempt", 2, [("queue0", 2)],
     [job("running_job0", "queue0", 1, TRAIN), job("running_job1", "queue0", 1, TRAIN)],
     job("pending_job0", "queue0", 2, BUILD), {"running_job0", "running_job1"}),
    ("2 train jobs running require 2 GPUs, 1 build job with 2 GPUs pending - preempt", 4,
     [("queue0", 2), ("queue1", 2)],
     [job("running_job0", "queue0", 2, TRAIN), job("running_job1", "queue1", 2, TRAIN)],
     job("pending_job0", "queue0", 2, BUILD), {"running_job0"}),
    ("1 train requires 1 GPU for queue0, 1 train that requires 2 GPU for queue1, 1 build job with 2 GPUs pending - "
     "preempt", 4, [("queue0", 2), ("queue1", 2)],
     [job("running_job0", "queue0", 1, TRAIN), job("running_job1", "queue1", 2, TRAIN)],
     job("pending_job0", "queue0", 2, BUILD), {"running_job0"}),
    ("1 train, 1 preemptible interactive jobs running, 1 build job with 1 GPUs pending for the same queue - "
     "preempt train", 2, [("queue0", 2)],
     [job("running_job0", "queue0", 1, TRAIN), job("running_job1", "queue0", 1, INTERACTIVE)],
     job("pending_job0", "queue0", 1, BUILD), {"running_job0"}),
    ("2 preemptible interactive jobs running, 1 build job with 1 GPUs pending for the same queue - preempt", 2,
     [("queue0", 2)],
     [job("running_job0", "queue0", 1, INTERACTIVE), job("running_job1", "queue0", 1, INTERACTIVE)],
     job("pending_job0", "queue0", 1, BUILD), {"running_job1"}),
    ("1 train job, 1 preemptible interactive job with 1 GPUs pending for the same queue - preempt", 1,
     [("queue0", 1)],
     [job("running_job0", "queue0", 1, TRAIN)], job("pending_job0", "queue0", 1, INTERACTIVE), {"running_job0"}),
    ("Inference shouldn't preempt interactive", 1, [("queue0", 10)],
     [job("running_job0", "queue0", 1, BUILD)], job("pending_job0", "queue0", 1, INFERENCE), set()),
    ("Interactive shouldn't preempt inference", 1, [("queue0", 10)],
     [job("running_job0", "queue0", 1, INFERENCE)], job("pending_job0", "queue0", 1, BUILD), set()),
    ("Inference should preempt train", 1, [("queue0", 10)],
     [job("running_job0", "queue0", 1, TRAIN)], job("pending_job0", "queue0", 1, INFERENCE), {"running_job0"}),
]


def _run(node_gpus, queues, running, pending, preempt=True):
    # Jobs running before the pending one are created a second apart (upstream's creation order).
    return run_queue_case([{"name": "node0", "gpus": node_gpus}],
                          [{"name": q, "quota": d} for q, d in queues], running, [pending],
                          scheduler="kai", config={"preempt": preempt})


@pytest.mark.parametrize("name,node_gpus,queues,running,pending,evicted", CASES, ids=[c[0] for c in CASES])
def test_kai_preempts_lower_priority_preemptible_jobs_of_the_same_queue(name, node_gpus, queues, running, pending,
                                                                        evicted):
    r, _bound, got = _run(node_gpus, queues, running, pending)
    assert set(got) == evicted, f"{SRC}: {name}"
    binds = [e for e in r.events.entries if e.kind == "bind" and e.workload == pending["name"]]
    # Pipelined: the preemptor runs once its victims have terminated; without victims it keeps waiting.
    assert bool(binds) is bool(evicted), f"{SRC}: {name}"
    if evicted:
        assert binds[0].t > START


def test_kai_preempt_eviction_message_names_the_higher_priority_workload():
    case = CASES[0]
    r, _bound, _evicted = _run(*case[1:5])
    [e] = [e for e in r.events.entries if e.kind == "preempt"]
    # unschedule_info.go GetPreemptMessage, per pod (the model has no namespaces)
    assert e.detail == "KaiPreempt: Pod running_job0-0 was preempted by higher priority workload pending_job0"


def test_kai_without_the_preempt_action_keeps_the_build_job_waiting():
    """`preempt: false` (the model's default, so scenarios written before it keep their results)."""
    r, _bound, evicted = _run(*CASES[0][1:5], preempt=False)
    assert evicted == {}
    assert not [e for e in r.events.entries if e.kind == "bind" and e.workload == "pending_job0"]


def test_kai_preempt_with_gpu_fractions_evicts_only_the_job_it_needs():
    """"3 train job running, 1 build job pending for the same queue - no need to preempt both": two 0.5
    fractions share GPU 0, a whole-GPU train job holds GPU 1; the whole-GPU build job takes GPU 1 - evicting
    the newest fraction first would free half a GPU only, and the fractions stay."""
    from scheduler_core import simulate

    jobs = [("running_job0", 0.5, TRAIN, 0), ("running_job1", 1, TRAIN, 1), ("running_job2", 0.5, TRAIN, 2),
            ("pending_job0", 1, BUILD, 60)]
    docs = [{"kind": "training", "name": n, "tenant": "queue0", "workers": 1, "priority": p, "duration": "10h",
             "arrival": {"at": at}, **({"unit": {"gpu_fraction": g}} if g < 1 else {"memory_gib": 80})}
            for n, g, p, at in jobs]
    r = simulate({"name": "kai-preempt-fractions", "horizon": "2h",
                  "pool": {"node_groups": [{"name": "node0", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 2}]},
                  "stack": {"data_plane": {"mechanism": "kai-fraction"},
                            "control_plane": {"scheduler": "kai", "kai": {"queues": [{"name": "queue0", "quota": 2}],
                                                                           "gpu_sharing": True, "preempt": True}}},
                  "tenants": [{"name": "queue0", "queue": "queue0"}], "workloads": docs})
    name = "3 train job running, 1 build job pending for the same queue - no need to preempt both"
    assert [e.workload for e in r.events.entries if e.kind == "preempt"] == ["running_job1"], f"{SRC}: {name}"
    assert [e.t for e in r.events.entries if e.kind == "bind" and e.workload == "pending_job0"], f"{SRC}: {name}"
