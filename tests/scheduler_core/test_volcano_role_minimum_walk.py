"""Volcano's allocate walk over a PodGroup's tasks when not every pending pod fits (actions/allocate with
gang's JobReady): each role's minTaskMember first when minMember covers them, else none; then pods role
by role until minMember is reached, or one more pod once it is (elastic growth)."""

from __future__ import annotations

from tests.scheduler_core.test_volcano_roles import pytorch_job, run


def pool(gpu_nodes: int) -> dict:
    return {"node_groups": [{"name": "cpu", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 2, "cpu": 32},
                            {"name": "gpu", "count": gpu_nodes, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8, "cpu": 64}]}


def blocker(name: str, duration: str) -> dict:
    """A one-pod job holding a whole 8-GPU node of the ``gpu`` group."""
    return {"kind": "training", "name": name, "tenant": "q", "workers": 1, "gpus_per_worker": 8,
            "duration": duration, "node_group": "gpu", "arrival": {"at": 0}}


def binds_at(r, t: float) -> list[tuple[str, str]]:
    return [(e.workload, e.detail) for e in r.events.entries if e.kind == "bind" and e.t == t]


def test_a_podgroup_at_its_minimum_grows_by_the_one_worker_that_fits():
    # 4 GPU nodes, two held by blockers: master + 2 workers (the minimum 3) bind at t=0, 2 workers wait.
    # At 1 h one blocker ends: both waiting workers do not fit, the one that does binds.
    r = run([blocker("short", "1h"), blocker("long", "10h"), pytorch_job(workers=4, worker_min=2, dur="20h")],
            pool=pool(4), horizon="3h")
    assert binds_at(r, 0.0)[-2:] == [("train-master", "1 pod(s): cpu-0 x1"),
                                     ("train-worker", "2 pod(s): gpu-2 x1, gpu-3 x1")]
    assert binds_at(r, 3600.0) == [("train-worker", "1 pod(s): gpu-0 x1")]


def test_a_minmember_below_the_role_minima_binds_the_first_role_alone():
    # minMember 1 does not cover the role minima (1 + 2): they do not apply, and the master is enough.
    r = run([blocker("long", "10h"), pytorch_job(workers=2, worker_min=2, min_available=1)], pool=pool(1), horizon="3h")
    assert binds_at(r, 0.0) == [("long", "1 pod(s): gpu-0 x1"), ("train-master", "1 pod(s): cpu-0 x1")]


def test_the_role_minimum_is_spread_as_nodeorder_spreads_then_the_group_grows_pod_by_pod():
    # 5 workers of 4 GPUs do not fit two 8-GPU nodes: the minimum (master + 2 workers) binds on two nodes
    # (LeastRequested), then one more worker per node while they fit.
    r = run([pytorch_job(workers=5, worker_gpus=4, worker_min=2, dur="20h")], pool=pool(2), horizon="1h")
    assert binds_at(r, 0.0) == [("train-master", "1 pod(s): cpu-0 x1"),
                                ("train-worker", "2 pod(s): gpu-0 x1, gpu-1 x1"),
                                ("train-worker", "1 pod(s): gpu-0 x1"), ("train-worker", "1 pod(s): gpu-1 x1")]
