"""Kueue's words for a pending workload (StrictFIFO, the cohort's maximum capacity, what the pool can still
lend) and waitForPodsReady's requeue backoff and deactivation (domain-facts §4.2, §4.5)."""

from __future__ import annotations

from scheduler_core import simulate
from tests.scheduler_core.conftest import minimal
from tests.scheduler_core.test_policies import ONE_NODE, cq, job, kueue

PREFIX = "couldn't assign flavors to pod set main: "


def run(cqs, docs, **extra):
    tenants = sorted({d["tenant"] for d in docs} | {c["name"] for c in cqs})
    return simulate(minimal(pool=ONE_NODE, workloads=docs, stack=kueue(cqs, **extra),
                            tenants=[{"name": t, "queue": t} for t in tenants]))


def reasons(r):
    return {w.name: w.pending_reason for w in r.workloads if w.start is None}


def test_strict_fifo_names_the_older_workload_that_blocks_a_small_one():
    r = run([cq("a", 8, queueing_strategy="StrictFIFO")],
            [job("run", 6, dur="8h"), job("head", 4, at=10), job("small", 1, at=20)])
    assert reasons(r) == {
        "head": PREFIX + "insufficient unused quota for nvidia.com/gpu in flavor a100, 2 more needed",
        "small": "Pending: StrictFIFO, waiting behind an older workload that does not fit"}


def test_the_borrowing_limit_caps_the_maximum_capacity_in_a_cohort():
    r = run([cq("a", 4, "org", borrowing_limit=2), cq("b", 4, "org")], [job("big", 7)])
    assert reasons(r) == {"big": PREFIX + "insufficient quota for nvidia.com/gpu in flavor a100, "
                                          "request > maximum capacity (7 > 6)"}


def test_the_lending_limit_of_the_others_caps_the_maximum_capacity():
    # b lends 1 of its 4: a may hold at most its own 4 and that 1.
    r = run([cq("a", 4, "org"), cq("b", 4, "org", lending_limit=1)], [job("big", 6)])
    assert reasons(r) == {"big": PREFIX + "insufficient quota for nvidia.com/gpu in flavor a100, "
                                          "request > maximum capacity (6 > 5)"}


def test_what_the_cohort_still_lends_is_the_unused_quota():
    # b runs 3 of the cohort's 8 GPUs: 5 left for a's 6-GPU job.
    r = run([cq("a", 4, "org"), cq("b", 4, "org")], [job("b1", 3, tenant="b", dur="8h"), job("big", 6, at=10)])
    assert reasons(r) == {"big": PREFIX + "insufficient unused quota for nvidia.com/gpu in flavor a100, 1 more needed"}


# waitForPodsReady: the quota admits an 8-pod gang but a resident pod holds one GPU, so it never gets ready.
GANG = {"kind": "training", "name": "gang", "tenant": "a", "workers": 8, "duration": "1h", "memory_gib": 10,
        "arrival": {"at": 60}}


def _stuck_gang(**wfpr):
    r = run([cq("a", 8, "org"), cq("b", 1, "org")], [job("resident", 1, dur="3h", tenant="b"), GANG],
            wait_for_pods_ready={"enable": True, "timeout": "10m", **wfpr})
    gang = next(w for w in r.workloads if w.name == "gang")
    events = [(e.t, e.kind, e.detail) for e in r.events.entries
              if e.workload == "gang" and e.kind in ("admit", "evict", "requeue", "fail")]
    return r, gang, events


def test_requeues_back_off_doubling_then_the_workload_is_deactivated():
    r, gang, events = _stuck_gang(backoff_limit_count=2)
    assert events == [(60.0, "admit", "ClusterQueue a, flavor a100"),
                      (660.0, "evict", "PodsReadyTimeout"), (660.0, "requeue", "after 60s"),
                      (720.0, "admit", "ClusterQueue a, flavor a100"),
                      (1320.0, "evict", "PodsReadyTimeout"), (1320.0, "requeue", "after 120s"),
                      (1440.0, "admit", "ClusterQueue a, flavor a100"),
                      (2040.0, "fail", "Deactivated")]
    assert gang.state == "failed"
    assert r.admission_errors.by_reason == {"KueueDeactivated": 1}


def test_the_backoff_is_capped_by_backoff_max():
    _, _, events = _stuck_gang(backoff_limit_count=2, backoff_max="90s")
    assert [d for _, k, d in events if k == "requeue"] == ["after 60s", "after 90s"]
    assert events[-1] == (2010.0, "fail", "Deactivated")


def test_backoff_limit_zero_deactivates_at_the_first_timeout():
    _, gang, events = _stuck_gang(backoff_limit_count=0)
    assert events == [(60.0, "admit", "ClusterQueue a, flavor a100"), (660.0, "fail", "Deactivated")]
    assert gang.state == "failed"


def test_a_service_stopped_during_its_requeue_backoff_is_not_admitted_again():
    # The 8-replica service never gets ready beside the resident pod, is evicted at 11 min with a 1 h backoff
    # and reaches its stop time (30 min) while it waits: Kueue does not admit it again.
    svc = {"kind": "inference", "name": "svc", "tenant": "a", "replicas": 8, "model_memory_gib": 10,
           "compute_fraction": 0.3, "arrival_rate": 1.0, "service_time": {"mean": "20ms", "cv": 0.5},
           "slo": {"p99": "200ms"}, "start": 60, "stop": "30m"}
    r = simulate(minimal(horizon="3h", pool=ONE_NODE, workloads=[job("resident", 1, dur="3h", tenant="b"), svc],
                         stack=kueue([cq("a", 8, "org"), cq("b", 1, "org")],
                                     wait_for_pods_ready={"enable": True, "timeout": "10m", "backoff_base": "1h"}),
                         tenants=[{"name": "a", "queue": "a"}, {"name": "b", "queue": "b"}]))
    events = [(e.t, e.kind, e.detail) for e in r.events.entries if e.workload == "svc" and e.kind != "bind"]
    assert events == [(60.0, "admit", "ClusterQueue a, flavor a100"), (660.0, "evict", "PodsReadyTimeout"),
                      (660.0, "requeue", "after 3600s")]
    assert next(w for w in r.workloads if w.name == "svc").state == "stopped"


def test_a_service_that_stops_while_waiting_for_quota_leaves_the_queue_to_the_job_behind_it():
    # first holds the ClusterQueue's 2 GPUs for 1 h; svc (stop at 30 min) and then next wait. svc stops
    # before quota frees: at 1 h the quota goes to next, and svc is never admitted.
    svc = {"kind": "inference", "name": "svc", "tenant": "a", "replicas": 1, "model_memory_gib": 10,
           "compute_fraction": 0.3, "arrival_rate": 1.0, "service_time": {"mean": "20ms", "cv": 0.5},
           "slo": {"p99": "200ms"}, "start": 60, "stop": "30m"}
    r = simulate(minimal(horizon="3h", pool=ONE_NODE,
                         workloads=[job("first", 2, dur="1h"), svc, job("next", 2, dur="1h", at=120)],
                         stack=kueue([cq("a", 2)]), tenants=[{"name": "a", "queue": "a"}]))
    assert [(e.t, e.workload) for e in r.events.entries if e.kind == "admit"] == [(0.0, "first"), (3600.0, "next")]
    assert {w.name: w.state for w in r.workloads} == {"first": "done", "svc": "stopped", "next": "done"}
