"""A Volcano Job with several task roles is one PodGroup: each role has its replicas, its minTaskMember
and its own pod request; the gang is satisfied only when every role reaches its minimum, the job runs
once all its pods are bound, and a short role is named in Volcano's words."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from scheduler_core import ScenarioError, parse_scenario, simulate
from scheduler_core.policies.base import ShapeQueue
from scheduler_core.policies.volcano import VolcanoScheduler
from tests.scheduler_core.conftest import minimal, workload

NODES = {"node_groups": [{"name": "cpu", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 2, "cpu": 32},
                         {"name": "gpu", "count": 2, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8, "cpu": 64}]}


def volcano(plugins=("priority", "gang", "proportion"), actions=("enqueue", "allocate", "backfill"), queues=None):
    return {"control_plane": {"scheduler": "volcano", "volcano": {
        "queues": queues or [{"name": "q"}], "actions": list(actions), "plugins": list(plugins)}}}


def pytorch_job(name="train", workers=2, worker_gpus=8, worker_min=None, master_cpu=8, at=0, min_available=None,
                dur="2h", priority=0):
    doc = {"kind": "training", "name": name, "tenant": "q", "duration": dur, "priority": priority,
           "arrival": {"at": at}, "roles": [
               {"name": "master", "replicas": 1, "cpu": master_cpu, "node_group": "cpu"},
               {"name": "worker", "replicas": workers, "gpus_per_worker": worker_gpus, "cpu": 16,
                "min_available": worker_min, "node_group": "gpu"}]}
    if min_available is not None:
        doc["min_available"] = min_available
    return doc


def run(docs, stack=None, pool=NODES, horizon="6h"):
    return simulate(minimal(horizon=horizon, pool=pool, stack=stack or volcano(), workloads=docs,
                            tenants=[{"name": "q", "queue": "q"}]))


def binds(r, at=0.0):
    return [(e.t, e.workload, e.detail) for e in r.events.entries if e.kind == "bind" and e.t == at]


def bound_at_start(r) -> dict[str, int]:
    out: dict[str, int] = {}
    for _, name, detail in binds(r):
        out[name] = out.get(name, 0) + int(detail.split(" ", 1)[0])
    return out


def test_every_role_binds_with_its_own_request_and_the_job_runs_once_all_are_bound():
    r = run([pytorch_job()])
    master, worker = workload(r, "train-master"), workload(r, "train-worker")
    assert (master.pods, worker.pods) == (1, 2)
    assert master.request == "1x nvidia.com/gpu + 8 CPU" and worker.request == "8x nvidia.com/gpu + 16 CPU"
    assert master.start == worker.start == 0
    assert {e[1]: e[2] for e in binds(r)} == {"train-master": "1 pod(s): cpu-0 x1",
                                               "train-worker": "2 pod(s): gpu-0 x1, gpu-1 x1"}


def test_a_role_short_of_its_minimum_holds_the_whole_podgroup():
    # Three 8-GPU workers on two 8-GPU nodes: the worker minimum (3) cannot be met, so not even the
    # master binds, and the PodGroup names the first worker pod that fits nowhere.
    r = run([pytorch_job(workers=3)], stack=volcano(plugins=("priority", "gang"), actions=("allocate", "backfill")))
    assert binds(r) == []
    reason = workload(r, "train-worker").pending_reason
    assert reason == workload(r, "train-master").pending_reason
    assert reason == (
        "4/4 tasks in gang unschedulable: pod group is not ready, 4 Pending, 4 minAvailable; "
        "Pending: 1 Unschedulable, 3 Schedulable. Origin reason is train-worker-2: 0/3 nodes are unavailable: "
        "2 Insufficient nvidia.com/gpu, 1 node(s) didn't match Pod's node affinity/selector.")


def test_a_role_minimum_below_its_replicas_lets_the_gang_bind_elastic():
    # minTaskMember 2 of 3 workers: the master and two workers bind, the third worker waits.
    r = run([pytorch_job(workers=3, worker_min=2)])
    assert bound_at_start(r) == {"train-master": 1, "train-worker": 2}
    assert workload(r, "train-worker").start is None  # the job waits for its last pod (rendezvous)


def test_role_minimums_are_ignored_when_the_podgroup_minimum_is_below_their_sum():
    # minMember 1 < 1 + 3: Volcano's CheckTaskReady skips the task minima, so pods bind while they fit
    # although the worker minimum (3) cannot be met.
    r = run([pytorch_job(workers=3, min_available=1)])
    assert bound_at_start(r) == {"train-master": 1, "train-worker": 2}
    assert bound_at_start(run([pytorch_job(workers=3)])) == {}


def test_the_minimum_beyond_the_role_minimums_comes_from_any_role_that_fits():
    # Role minima 0: the master fits nowhere (4 GPUs on a 2-GPU node), so minMember 3 cannot be made,
    # while minMember 2 is made by the two workers.
    pool = {"node_groups": [{"name": "cpu", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 2},
                            {"name": "gpu", "count": 2, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8}]}

    def job(min_available):
        return {"kind": "training", "name": "train", "tenant": "q", "duration": "2h", "min_available": min_available,
                "roles": [{"name": "master", "replicas": 1, "min_available": 0, "gpus_per_worker": 4, "node_group": "cpu"},
                          {"name": "worker", "replicas": 2, "min_available": 0, "gpus_per_worker": 8, "node_group": "gpu"}]}

    assert binds(run([job(3)], pool=pool)) == []
    assert bound_at_start(run([job(2)], pool=pool)) == {"train-worker": 2}


def test_the_queue_counts_every_role_against_its_capability():
    # capability 16 GPUs, 40 cores: master 8 + 2 x 16 cores = 40 fits; a 24-core master does not.
    queues = [{"name": "q", "capability": {"nvidia.com/gpu": 17, "cpu": 40}}]
    ok = run([pytorch_job()], stack=volcano(queues=queues))
    assert workload(ok, "train-master").start == 0
    held = run([pytorch_job(master_cpu=24)], stack=volcano(queues=queues))
    assert binds(held) == []
    assert workload(held, "train-master").pending_reason.startswith(
        "queue resource quota insufficient: insufficient cpu; 3/3 tasks in gang unschedulable")


def test_a_podgroup_job_finishes_and_frees_the_queue_for_the_next():
    r = run([pytorch_job(name="first", dur="1h"), pytorch_job(name="second", at=60, dur="1h")])
    assert workload(r, "first-worker").end == 3600
    assert workload(r, "second-master").start == workload(r, "second-worker").start == 3600


def test_a_high_priority_podgroup_preempts_lower_priority_jobs_in_its_queue():
    low = {"kind": "training", "name": "low", "tenant": "q", "workers": 2, "gpus_per_worker": 8, "min_available": 1,
           "duration": "8h", "node_group": "gpu"}
    r = run([low, pytorch_job(name="urgent", at=60, priority=100, workers=1)],
            stack=volcano(actions=("enqueue", "allocate", "preempt")))
    assert [e.workload for e in r.events.entries if e.kind == "preempt"] == ["low-1"]
    assert workload(r, "urgent-worker").start is not None


@pytest.mark.parametrize("change, where, words", [
    ({"scheduler": "kai"}, "workloads.0.roles", "volcano scheduler only"),
    ({"workers": 3}, "workloads.0.workers", "set per role"),
    ({"role_min": 5}, "workloads.0.roles.1.min_available", "5 > replicas 2"),
    ({"min_available": 9}, "workloads.0.min_available", "9 > the roles' 3 replicas"),
    ({"duplicate": True}, "workloads.0.roles", "role names must be unique"),
])
def test_roles_are_refused_where_the_model_cannot_state_them(change, where, words):
    job = pytorch_job()
    if "workers" in change:
        job["workers"] = change["workers"]
    if "role_min" in change:
        job["roles"][1]["min_available"] = change["role_min"]
    if "min_available" in change:
        job["min_available"] = change["min_available"]
    if "duplicate" in change:
        job["roles"][1]["name"] = "master"
    stack = volcano()
    if "scheduler" in change:
        stack = {"control_plane": {"scheduler": "kai", "kai": {"queues": [{"name": "q", "quota": 8}]}}}
    with pytest.raises(ScenarioError) as exc:
        parse_scenario(minimal(pool=NODES, stack=stack, workloads=[job], tenants=[{"name": "q", "queue": "q"}]))
    assert any(path == where and words in msg for path, msg in exc.value.errors)


def test_without_the_gang_plugin_roles_bind_pod_by_pod_and_the_partial_job_never_runs():
    # The same three 8-GPU workers, but no gang plugin: nothing holds the PodGroup to its minimum, so the
    # master and the two workers that fit bind at once; the job waits for its third worker, its bound
    # pods time out at the rendezvous and retry, and the job fails without ever running.
    r = run([pytorch_job(workers=3)], stack=volcano(plugins=("priority",), actions=("allocate", "backfill")))
    assert bound_at_start(r) == {"train-master": 1, "train-worker": 2}
    worker = workload(r, "train-worker")
    assert (worker.state, worker.start) == ("failed", None) and worker.restarts > 0
    assert ("fail", "train-worker", "RendezvousTimeout") in {(e.kind, e.workload, e.detail) for e in r.events.entries}


def test_past_its_minimum_a_podgroup_grows_the_role_that_has_pods_waiting():
    # Every role at its minTaskMember: the next pod preempt and reclaim make room for is one of the first
    # role with a pod still pending (here the workers), not the leader's role, which has none waiting.
    master, worker = SimpleNamespace(pending=0), SimpleNamespace(pending=2)
    group = SimpleNamespace(members=[master, worker], leader=master, floor=lambda: [(master, 0), (worker, 0)])
    assert VolcanoScheduler._parts(SimpleNamespace(group=group)) == [(master, 0), (worker, 1)]
    # below the minimum: each role's own shortfall
    group.floor = lambda: [(master, 1), (worker, 2)]
    assert VolcanoScheduler._parts(SimpleNamespace(group=group)) == [(master, 1), (worker, 2)]


def test_a_gang_counts_as_starving_while_its_group_still_waits_for_pods_even_if_this_role_is_placed():
    group = SimpleNamespace(pending=3)
    placed_role = SimpleNamespace(uid=1, group=group, pending=0, request="1 GPU", node_group=None, enqueued_at=None)
    policy = VolcanoScheduler.__new__(VolcanoScheduler)  # only its queue and the pass's keys are read
    policy.sim, policy.queue = SimpleNamespace(full_pass=True), ShapeQueue()
    policy.queue.push(placed_role, ("q", 0, "1 GPU"), now=0.0)
    assert list(policy._starving()) == [placed_role]
    group.pending = 0
    assert list(policy._starving()) == []


@pytest.mark.parametrize("finished, released", [((True, True), True), ((False, True), False)])
def test_a_podgroup_leaves_the_queues_inqueue_reservation_once_every_role_has_finished(finished, released):
    # The enqueue action reserves a job's minimum while it is inqueue; a PodGroup whose roles all ended
    # (done, failed or stopped) gives that reservation back, or its queue stays full for the jobs behind it.
    master, worker = (SimpleNamespace(uid=uid, finished=f, queue="q") for uid, f in zip((1, 2), finished))
    master.group = worker.group = SimpleNamespace(members=[master, worker], leader=master)
    policy = VolcanoScheduler.__new__(VolcanoScheduler)  # only its queue and inqueue bookkeeping are read
    policy.queue, policy.inqueue, policy._by_uid = ShapeQueue(), {1}, {1: master}
    policy.unqueued, policy._inq_members, policy._inq_dirty = ShapeQueue(), {"q": {1: master}}, set()
    policy._inq_key, policy._inq_per_key = {1: 7}, {7: 1}
    policy.on_finish(worker)
    assert (policy.inqueue == set()) is released and (policy._by_uid == {}) is released


@pytest.mark.parametrize("group_pending, still_queued", [(0, False), (2, True)])
def test_a_podgroup_leaves_the_queue_once_no_role_has_a_pod_pending(group_pending, still_queued):
    # A role's pending pods are dropped (the job was evicted, failed or finished): the PodGroup stays
    # queued while another role still waits for pods, else it leaves, so no idle GPU is counted as
    # stranded for a shape nobody waits for.
    master = SimpleNamespace(uid=1, request="1 GPU", node_group=None, enqueued_at=None, queue="q")
    worker = SimpleNamespace(uid=2, request="8 GPUs", node_group=None, enqueued_at=None, queue="q")
    master.group = worker.group = SimpleNamespace(members=[master, worker], leader=master, pending=group_pending)
    policy = VolcanoScheduler.__new__(VolcanoScheduler)  # only its queues are read
    policy.queue, policy.unqueued, policy._inq_dirty = ShapeQueue(), ShapeQueue(), set()
    policy.queue.push(master, ("q", 0, "1 GPU"), now=0.0)
    policy.remove(worker)
    assert (policy.queue.head(("q", 0, "1 GPU")) is master) is still_queued
