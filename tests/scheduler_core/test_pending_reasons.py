"""Every waiting workload says why, in the words of the component that holds it; the run keeps a bounded log."""

from scheduler_core import simulate
from scheduler_core.simulation.eventlog import EVENT_LOG_PER_KIND
from tests.scheduler_core.conftest import minimal, workload
from tests.scheduler_core.test_policies import ONE_NODE, cq, job, kueue

TWO_NODES = {"node_groups": [{"name": "dgx", "count": 2, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8}]}


def test_kube_scheduler_names_the_short_resource_per_node():
    r = simulate(minimal(pool=TWO_NODES, workloads=[job("hog", 8, dur="8h"), job("hog2", 8, dur="8h"),
                                                     job("late", 1, at=60)]))
    assert workload(r, "late").pending_reason == "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."
    assert r.pending.waiting == 1
    assert [(p.reason, p.workloads) for p in r.pending.by_reason] == [
        ("0/2 nodes are available: 2 Insufficient nvidia.com/gpu.", 1)]


def test_a_node_selector_and_a_cordon_are_reported_as_such():
    pool = {"node_groups": [{"name": "a", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8},
                            {"name": "b", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8}]}
    r = simulate(minimal(pool=pool, workloads=[job("hog", 8, dur="8h", node_group="a"),
                                               job("late", 1, at=60, node_group="a")]))
    assert workload(r, "late").pending_reason == (
        "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) didn't match Pod's node affinity/selector.")


def test_kueue_says_how_much_quota_is_missing_in_which_flavor():
    r = simulate(minimal(pool=ONE_NODE, workloads=[job("j1", 3, dur="8h"), job("j2", 3, at=60)],
                         stack=kueue([cq("a", 4)])))
    assert workload(r, "j2").pending_reason == (
        "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor a100, "
        "2 more needed")


def test_kueue_says_when_a_request_exceeds_what_the_queue_can_ever_hold():
    r = simulate(minimal(pool=ONE_NODE, workloads=[job("huge", 6)], stack=kueue([cq("a", 4)])))
    assert workload(r, "huge").pending_reason == (
        "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in flavor a100, "
        "request > maximum capacity (6 > 4)")


def test_kueue_reclaim_by_a_borrowing_preemptor_is_in_cohort_reclaim_while_borrowing():
    # b borrows to run its 6-GPU job; a's borrowed job is reclaimed (borrowWithinCohort LowerPriority).
    pre = {"reclaim_within_cohort": "Any", "borrow_within_cohort": "LowerPriority"}
    docs = [job("a-borrow", 6, dur="8h", priority=0), job("b-big", 6, tenant="b", at=600, priority=10)]
    r = simulate(minimal(pool=ONE_NODE, workloads=docs,
                         stack=kueue([cq("a", 4, "org", preemption=pre), cq("b", 4, "org", preemption=pre)])))
    assert r.preemption.by_reason == {"KueueInCohortReclaimWhileBorrowing": 1}
    preempt = [e for e in r.events.entries if e.kind == "preempt"]
    assert preempt[0].workload == "a-borrow"
    assert "due to reclamation within the cohort while borrowing" in preempt[0].detail


def _volcano_gang_behind(hog_gpus: int, workers: int, actions=("enqueue", "allocate", "backfill"),
                         plugins=("priority", "gang", "proportion")):
    stack = {"control_plane": {"scheduler": "volcano", "volcano": {
        "queues": [{"name": "a"}], "actions": list(actions), "plugins": list(plugins)}}}
    docs = [job("hog", hog_gpus, dur="8h"),
            {"kind": "training", "name": "gang", "tenant": "a", "workers": workers, "duration": "1h",
             "memory_gib": 10, "arrival": {"at": 60}}]
    return workload(simulate(minimal(pool=ONE_NODE, workloads=docs, stack=stack)), "gang").pending_reason


def test_volcano_gang_reports_schedulable_and_unschedulable_tasks():
    # Without enqueue and proportion the PodGroup reaches allocate, which finds room for one of its two tasks.
    assert _volcano_gang_behind(7, 2, actions=("allocate", "backfill"), plugins=("priority", "gang")) == (
        "2/2 tasks in gang unschedulable: pod group is not ready, 2 Pending, 2 minAvailable; "
        "Pending: 1 Schedulable, 1 Unschedulable. Origin reason is gang-1: "
        "0/1 nodes are unavailable: 1 Insufficient nvidia.com/gpu.")


def test_volcano_enqueue_rejection_is_queue_resource_quota_insufficient():
    # 6 allocated + 4 asked > the queue's realCapability of 8 GPUs: proportion's JobEnqueueable rejects
    # with the event volcano records (FormatResourceNames), and the PodGroup never leaves Pending.
    assert _volcano_gang_behind(6, 4) == (
        "queue resource quota insufficient: insufficient nvidia.com/gpu; 4/4 tasks in gang unschedulable: "
        "pod group is not ready, 4 Pending, 4 minAvailable; Pending: 4 Undetermined")


def test_volcano_enqueue_rejection_by_overcommit_comes_first_in_plugin_order():
    # overcommit runs before proportion in the chart's plugin list: 6 + 4 > 8 x 1.2 is its rejection.
    plugins = ("priority", "gang", "overcommit", "proportion")
    assert _volcano_gang_behind(6, 4, plugins=plugins).startswith(
        "resource in cluster is overused: overused nvidia.com/gpu; 4/4 tasks in gang unschedulable")


def test_volcano_names_the_overused_queue():
    assert _volcano_gang_behind(7, 2, actions=("allocate", "backfill")) == (
        "2/2 tasks in gang unschedulable: pod group is not ready, 2 Pending, 2 minAvailable; "
        "Pending: 2 Undetermined; queue a is overused: insufficient nvidia.com/gpu (allocated 7 + 2 > deserved 8)")


def test_hami_names_the_card_rule_that_failed():
    pool = {"node_groups": [{"name": "shared", "count": 1, "gpu": "A100-PCIE-80GB", "gpus_per_node": 2}]}
    stack = {"data_plane": {"mechanism": "hami"}}
    docs = [job("big", 1, dur="8h", memory_gib=70), job("big2", 1, dur="8h", memory_gib=70),
            job("more", 1, at=60, memory_gib=20)]
    r = simulate(minimal(pool=pool, workloads=docs, stack=stack))
    assert workload(r, "more").pending_reason == "0/1 nodes are available: 1 2/2 CardInsufficientMemory."


def test_the_event_log_is_bounded_and_counts_what_it_left_out():
    docs = [job(f"j{i}", 1, dur="1m", at=i) for i in range(EVENT_LOG_PER_KIND + 50)]
    r = simulate(minimal(horizon="2h", pool=TWO_NODES, workloads=docs))
    ev = r.events
    assert ev.by_kind["bind"] == EVENT_LOG_PER_KIND + 50
    assert sum(1 for e in ev.entries if e.kind == "bind") == EVENT_LOG_PER_KIND
    assert ev.left_out == ev.total - ev.kept == 50


def test_admission_and_binding_are_logged_in_time_order():
    r = simulate(minimal(pool=ONE_NODE, workloads=[job("j1", 2)], stack=kueue([cq("a", 4)])))
    kinds = [(e.kind, e.workload) for e in r.events.entries]
    assert kinds == [("admit", "j1"), ("bind", "j1")]
    assert r.events.entries[0].detail == "ClusterQueue a, flavor a100"


def test_coscheduling_gang_that_must_share_a_node_is_never_said_to_fit_now():
    # Two 4-GPU nodes, each half used; a PodGroup of 2 x 2 GPUs that must land on one node fits pod by
    # pod but never together, so it is not "waiting for the next scheduling cycle": the second pod has
    # no room on the first pod's node and the other node does not match the group's pod affinity.
    pool = {"node_groups": [{"name": "dgx", "count": 2, "gpu": "A100-SXM4-80GB", "gpus_per_node": 4}]}
    gang = {"kind": "training", "name": "pair", "tenant": "a", "workers": 2, "gpus_per_worker": 2,
            "duration": "1h", "memory_gib": 10, "arrival": {"at": 60}, "topology": {"required": "node"}}
    r = simulate(minimal(pool=pool, workloads=[job("hog", 2, dur="8h"), job("hog2", 2, dur="8h"), gang],
                         stack={"control_plane": {"scheduler": "coscheduling"}}))
    reason = workload(r, "pair").pending_reason
    assert "fits now" not in reason
    assert reason == ("0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) didn't match pod "
                      "affinity rules. PodGroup pair gets rejected due to Pod pair-1 is unschedulable even "
                      "after PostFilter")


def test_a_job_whose_failed_pod_awaits_its_controller_says_no_pod_is_pending():
    # failRequestsGreaterThanOne: the kubelet rejects the 2-replica pod (UnexpectedAdmissionError); the Job
    # controller recreates it after its 10 s backoff, so at 5 s the job has no pod for a scheduler to explain.
    pool = {"node_groups": [{"name": "dgx", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 1}]}
    stack = {"data_plane": {"mechanism": "time-slicing",
                            "time_slicing": {"replicas": 4, "fail_requests_greater_than_one": True}}}
    r = simulate(minimal(horizon="5s", pool=pool, workloads=[job("two", 2)], stack=stack))
    assert r.admission_errors.by_reason == {"UnexpectedAdmissionError": 1}
    assert workload(r, "two").pending_reason == (
        "no pod pending: its controller recreates the failed pod(s) after a backoff")


def test_a_podgroup_whose_failed_pod_awaits_its_controller_says_no_pod_is_pending_though_the_node_is_full():
    # As above under coscheduling, with four 1-replica jobs filling the node at 1 s: the PodGroup still has
    # no pod to explain, so it is not "rejected because a pod is unschedulable".
    pool = {"node_groups": [{"name": "dgx", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 1}]}
    stack = {"control_plane": {"scheduler": "coscheduling"},
             "data_plane": {"mechanism": "time-slicing",
                            "time_slicing": {"replicas": 4, "fail_requests_greater_than_one": True}}}
    fillers = [job(f"f{i}", 1, at=1) for i in range(4)]
    r = simulate(minimal(horizon="5s", pool=pool, workloads=[job("two", 2), *fillers], stack=stack))
    assert r.admission_errors.by_reason == {"UnexpectedAdmissionError": 1}
    assert all(workload(r, f"f{i}").start == 1.0 for i in range(4))
    assert workload(r, "two").pending_reason == (
        "no pod pending: its controller recreates the failed pod(s) after a backoff")
