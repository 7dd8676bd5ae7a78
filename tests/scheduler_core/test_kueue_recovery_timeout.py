"""Kueue's waitForPodsReady recoveryTimeout (v0.19, pkg/controller/core/workload_controller.go
``admittedNotReadyWorkload``; docs "Setup All-or-nothing with ready Pods"): a workload that was PodsReady and
loses pods to a node failure stays admitted - its quota reserved - while its job recreates them
(PodsReady=False, WaitForRecovery, "At least one pod has failed, waiting for recovery"); if they are not
all ready again within ``recovery_timeout`` (unset: ``timeout``; 0: never) it is evicted with reason
PodsReadyTimeout ("Exceeded the PodsReady timeout <namespace>/<name>") and requeued after the backoff.
Kueue's own tests are integration tests (test/integration/singlecluster/controller/jobs/job/
job_controller_test.go: "A tiny recoveryTimeout is configured and a pod fails", "A long recoveryTimeout is
configured and a pod fails"), restated here on a node failure."""

from __future__ import annotations

from scheduler_core import simulate
from tests.scheduler_core.conftest import minimal
from tests.scheduler_core.test_policies import cq, kueue

TWO_NODES = {"node_groups": [{"name": "dgx", "count": 2, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8}]}
# A 2-node gang fills the pool; dgx-0 fails at 1 h for 30 min, so the lost worker has nowhere to go until then.
TRAIN = {"kind": "training", "name": "train", "tenant": "a", "workers": 2, "gpus_per_worker": 8, "duration": "4h",
         "memory_gib": 10, "arrival": {"at": 0}}
OUTAGE = [{"at": "1h", "kind": "node_failure", "node": "dgx-0", "duration": "30m"}]


def run(wfpr, extra=()):
    stack = kueue([cq("a", 16)], **({"wait_for_pods_ready": wfpr} if wfpr is not None else {}))
    return simulate(minimal(horizon="8h", pool=TWO_NODES, workloads=[TRAIN, *extra], stack=stack, events=OUTAGE,
                            tenants=[{"name": "a", "queue": "a"}]))


def kueue_events(r, name="train"):
    return [(e.t, e.kind, e.detail) for e in r.events.entries
            if e.workload == name and e.kind in ("admit", "evict", "requeue", "pods-ready-false", "fail")]


def test_a_node_failure_keeps_the_reservation_until_the_recovery_timeout_then_evicts():
    r = run({"enable": True, "timeout": "30m", "recovery_timeout": "10m"})
    assert kueue_events(r)[:5] == [
        (0.0, "admit", "ClusterQueue a, flavor a100"),
        (3600.0, "pods-ready-false", "WaitForRecovery: At least one pod has failed, waiting for recovery"),
        (4200.0, "evict", "PodsReadyTimeout: Exceeded the PodsReady timeout a/train (underlying cause "
                          "WaitForRecovery)"),
        (4200.0, "requeue", "after 60s"),
        (4260.0, "admit", "ClusterQueue a, flavor a100")]


def test_the_recovery_timeout_defaults_to_the_pods_ready_timeout():
    r = run({"enable": True, "timeout": "20m"})
    evicted = [(t, d) for t, k, d in kueue_events(r) if k == "evict"]
    assert evicted[0][0] == 3600.0 + 1200.0 and evicted[0][1].startswith("PodsReadyTimeout: ")


def test_a_job_that_recovers_within_the_timeout_keeps_its_quota_and_is_never_evicted():
    # The outage (30 min) is shorter than the recovery timeout (45 min): the worker returns with dgx-0 and
    # the job runs on; meanwhile its 16 GPUs of quota stay reserved, so a job arriving during the outage waits.
    late = {"kind": "batch", "name": "late", "tenant": "a", "gpus_per_worker": 8, "duration": "1h",
            "memory_gib": 10, "arrival": {"at": "65m"}}
    r = run({"enable": True, "timeout": "30m", "recovery_timeout": "45m"}, [late])
    assert [k for _, k, _ in kueue_events(r)] == ["admit", "pods-ready-false"]
    train = next(w for w in r.workloads if w.name == "train")
    assert train.state == "done"
    late_admit = next(e.t for e in r.events.entries if e.kind == "admit" and e.workload == "late")
    assert late_admit >= train.end


def test_recovery_timeout_zero_never_evicts_a_job_that_lost_pods():
    r = run({"enable": True, "timeout": "10m", "recovery_timeout": 0})
    assert [k for _, k, _ in kueue_events(r)] == ["admit", "pods-ready-false"]


def test_without_wait_for_pods_ready_a_node_failure_still_requeues_the_workload():
    # The model's simplification is kept when waitForPodsReady is off (docs/simulator-model.md §12).
    r = run(None)
    assert [(t, k) for t, k, _ in kueue_events(r)][:3] == [(0.0, "admit"), (3600.0, "evict"), (3600.0, "requeue")]
