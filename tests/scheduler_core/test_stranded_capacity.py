"""Stranded capacity (results `utilisation.stranded_gpus_mean`): free GPUs that no waiting workload could
use on their node, sampled once a minute. The waiting shapes come from the scheduler's queue, which drops
workloads lazily, so a workload that left the queue must not hide the ones still waiting behind it."""

from __future__ import annotations

from scheduler_core import simulate

POOL = {"node_groups": [{"name": "g1", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 2},
                        {"name": "g2", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 1}]}
HOG = {"kind": "training", "name": "hog", "workers": 1, "gpus_per_worker": 2, "node_group": "g1", "duration": "3h"}


def _pair(gpus):
    return {"kind": "training", "name": "pair", "workers": 1, "gpus_per_worker": gpus, "duration": "1h",
            "arrival": {"at": 120}}


def test_a_service_that_stopped_while_pending_does_not_hide_the_job_waiting_behind_it():
    # hog fills g1; svc (g1 only) waits from 60 s and stops at 30 min; pair (2 GPUs) waits from 120 s.
    # g2's one GPU is of no use to either: it is stranded at every sample but the first (at t=0 nothing
    # waits), including the samples after svc left the queue ahead of pair.
    svc = {"kind": "inference", "name": "svc", "replicas": 1, "model_memory_gib": 10, "node_group": "g1",
           "compute_fraction": 0.3, "arrival_rate": 1.0, "service_time": {"mean": "20ms", "cv": 0.5},
           "slo": {"p99": "200ms"}, "start": 60, "stop": "30m"}
    r = simulate({"name": "stranded", "horizon": "2h", "pool": POOL, "workloads": [HOG, svc, _pair(2)]})
    assert {w.name: w.state for w in r.workloads} == {"hog": "running", "svc": "stopped", "pair": "queued"}
    assert r.utilisation.stranded_gpus_mean == round(119 / 120, 6)


def test_a_free_gpu_a_waiting_job_could_use_is_not_stranded():
    # pair asks for one GPU: g2's is free for it, so it runs there and nothing is stranded
    r = simulate({"name": "not-stranded", "horizon": "2h", "pool": POOL, "workloads": [HOG, _pair(1)]})
    assert r.utilisation.stranded_gpus_mean == 0.0
