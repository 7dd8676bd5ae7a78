"""kube-scheduler's PostFilter default preemption (kubernetes pkg/scheduler/framework/plugins/defaultpreemption):
on the node whose victims have the lowest highest priority, then the fewest victims, then the first node,
it deletes the lowest-priority pods, the most recently bound first, until the preemptor fits; pods of
equal or higher priority are never victims.  The preemptor binds once the victims have terminated."""

from __future__ import annotations

import pytest

from scheduler_core import simulate


def preemption(running: list[tuple], per_pod: int, priority: int = 10):
    """Two 4-GPU nodes n0, n1; running: (name, node index, pods, GPUs per pod, priority, arrival) pinned to
    their node; a one-pod job ``urgent`` asking ``per_pod`` GPUs arrives at t=60 on any node.
    Returns the deleted pods (with the event text) and where ``urgent`` bound."""
    groups = [{"name": f"n{i}", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 4} for i in range(2)]
    docs = [{"kind": "batch", "name": name, "workers": pods, "gpus_per_worker": per, "node_group": f"n{node}",
             "priority": prio, "duration": "10h", "arrival": {"at": at}}
            for name, node, pods, per, prio, at in running]
    docs.append({"kind": "batch", "name": "urgent", "workers": 1, "gpus_per_worker": per_pod, "priority": priority,
                 "duration": "1h", "arrival": {"at": 60}})
    r = simulate({"name": "kube", "horizon": "2h", "pool": {"node_groups": groups},
                  "stack": {"control_plane": {"scheduler": "kube-default"}}, "workloads": docs})
    deleted = [(e.t, e.workload, e.detail) for e in r.events.entries if e.kind == "preempt"]
    binds = [(e.t, e.detail) for e in r.events.entries if e.kind == "bind" and e.workload == "urgent"]
    return deleted, binds


def test_the_node_whose_victims_have_the_lowest_priority_is_chosen():
    deleted, binds = preemption([("a", 0, 4, 1, 1, 0), ("b", 1, 4, 1, 5, 0)], per_pod=2)
    assert deleted == [(60.0, "a-3", "PreemptedByScheduler: Preempted by pod urgent on node n0-0"),
                       (60.0, "a-2", "PreemptedByScheduler: Preempted by pod urgent on node n0-0")]
    assert binds == [(90.0, "1 pod(s): n0-0 x1")]  # after the 30 s termination grace


def test_at_equal_priority_the_node_with_fewer_victims_is_chosen():
    # n0: one 2-GPU pod is enough; n1 would lose two 1-GPU pods.
    deleted, _ = preemption([("c", 0, 4, 1, 1, 0), ("a", 1, 2, 2, 1, 0)], per_pod=2)
    assert [pod for _, pod, _ in deleted] == ["a-1"]


def test_between_equal_nodes_the_first_is_chosen():
    deleted, binds = preemption([("a", 0, 4, 1, 1, 0), ("c", 1, 4, 1, 1, 0)], per_pod=2)
    assert [pod for _, pod, _ in deleted] == ["a-3", "a-2"] and binds == [(90.0, "1 pod(s): n0-0 x1")]


def test_on_the_node_the_most_recently_bound_pods_go_first():
    # n0 holds a (bound at 0) and b (bound at 30), both priority 1; n1's pods outrank nothing.
    deleted, _ = preemption([("a", 0, 2, 1, 1, 0), ("b", 0, 2, 1, 1, 30), ("c", 1, 4, 1, 10, 0)], per_pod=3)
    assert [pod for _, pod, _ in deleted] == ["b-1", "b-0", "a-1"]


def test_pods_of_equal_priority_are_never_deleted():
    deleted, binds = preemption([("a", 0, 4, 1, 10, 0), ("c", 1, 4, 1, 10, 0)], per_pod=2)
    assert (deleted, binds) == ([], [])


def test_a_preemptor_that_fits_deletes_nothing():
    deleted, binds = preemption([("a", 0, 2, 1, 1, 0), ("c", 1, 4, 1, 1, 0)], per_pod=2)
    assert (deleted, binds) == ([], [(60.0, "1 pod(s): n0-0 x1")])


def test_pods_of_equal_priority_never_make_up_what_a_lower_one_cannot_free():
    # n0: one priority-1 pod (1 GPU) beside three priority-10 pods; n1 all priority 10.  Deleting the
    # low pod frees 1 GPU of the 2 needed, and no equal-priority pod may go: nothing is deleted.
    deleted, binds = preemption([("a", 0, 1, 1, 1, 0), ("b", 0, 3, 1, 10, 0), ("c", 1, 4, 1, 10, 0)], per_pod=2)
    assert (deleted, binds) == ([], [])


def test_a_free_gpu_on_the_node_counts_toward_the_room_needed():
    # n0: three 1-GPU low pods and one free GPU: deleting one pod is enough for 2 GPUs.
    deleted, binds = preemption([("a", 0, 3, 1, 1, 0), ("c", 1, 4, 1, 10, 0)], per_pod=2)
    assert [pod for _, pod, _ in deleted] == ["a-2"] and binds == [(90.0, "1 pod(s): n0-0 x1")]


def test_pods_bound_for_a_gang_still_waiting_for_its_last_worker_are_victims():
    # a is a 3-worker training job pinned to n0 (4 GPUs): two 2-GPU workers bound, waiting for the third.
    groups = [{"name": f"n{i}", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 4} for i in range(2)]
    docs = [{"kind": "training", "name": "a", "workers": 3, "gpus_per_worker": 2, "node_group": "n0", "priority": 1,
             "duration": "10h", "arrival": {"at": 0}},
            {"kind": "batch", "name": "c", "workers": 4, "gpus_per_worker": 1, "node_group": "n1", "priority": 10,
             "duration": "10h", "arrival": {"at": 0}},
            {"kind": "batch", "name": "urgent", "workers": 1, "gpus_per_worker": 2, "priority": 10, "duration": "1h",
             "arrival": {"at": 60}}]
    r = simulate({"name": "kube", "horizon": "2h", "pool": {"node_groups": groups},
                  "stack": {"control_plane": {"scheduler": "kube-default"}}, "workloads": docs})
    assert [(e.t, e.workload) for e in r.events.entries if e.kind == "preempt"] == [(60.0, "a-1")]


def test_a_lower_priority_pod_that_fits_binds_while_the_preemptor_waits_for_its_victim():
    # kube-scheduler schedules pod by pod: urgent (4 GPUs) fits nowhere and nominates n0 by deleting low;
    # small (2 GPUs, lowest priority) is tried next in the same pass and binds at once on n1's free half,
    # it does not wait for the victim's 30 s termination.
    groups = [{"name": f"n{i}", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 4} for i in range(2)]
    docs = [{"kind": "batch", "name": "low", "gpus_per_worker": 4, "node_group": "n0", "priority": 1, "duration": "10h"},
            {"kind": "batch", "name": "half", "gpus_per_worker": 2, "node_group": "n1", "priority": 50,
             "duration": "10h"},
            {"kind": "batch", "name": "urgent", "gpus_per_worker": 4, "priority": 100, "duration": "1h",
             "arrival": {"at": 60}},
            {"kind": "batch", "name": "small", "gpus_per_worker": 2, "priority": 0, "duration": "1h",
             "arrival": {"at": 60}}]
    r = simulate({"name": "kube", "horizon": "2h", "pool": {"node_groups": groups},
                  "stack": {"control_plane": {"scheduler": "kube-default"}}, "workloads": docs})
    assert [(e.t, e.kind, e.workload) for e in r.events.entries if 60 <= e.t <= 90] == [
        (60.0, "preempt", "low-0"), (60.0, "bind", "small"), (90.0, "bind", "urgent")]


def _host_limited(low_cpu: int, urgent_cpu: int, low_gpus: int = 1):
    """One 8-GPU, 64-core node: ``low`` (priority 1, ``low_gpus`` GPU(s) and ``low_cpu`` cores a pod, two pods)
    runs from t=0; ``urgent`` (priority 10, 1 GPU, ``urgent_cpu`` cores) arrives at t=60."""
    groups = [{"name": "n", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8, "cpu": 64}]
    docs = [{"kind": "batch", "name": "low", "workers": 2, "gpus_per_worker": low_gpus, "cpu": low_cpu, "priority": 1,
             "duration": "10h"},
            {"kind": "batch", "name": "urgent", "gpus_per_worker": 1, "cpu": urgent_cpu, "priority": 10,
             "duration": "1h", "arrival": {"at": 60}}]
    r = simulate({"name": "kube", "horizon": "2h", "pool": {"node_groups": groups},
                  "stack": {"control_plane": {"scheduler": "kube-default"}}, "workloads": docs})
    return [(e.t, e.kind, e.workload) for e in r.events.entries if e.kind in ("preempt", "bind") and 60 <= e.t <= 90]


def test_a_pod_short_of_host_cpu_preempts_a_lower_pod_though_gpus_are_free():
    # Six GPUs are free but the two low pods hold all 64 cores: kube-scheduler's preemption checks the
    # whole request (NodeResourcesFit), so one low pod goes and urgent binds after the grace period.
    assert _host_limited(low_cpu=32, urgent_cpu=16) == [(60.0, "preempt", "low-1"), (90.0, "bind", "urgent")]


def test_a_pod_whose_cpu_no_deletion_can_free_preempts_nothing():
    # urgent asks for 80 cores on a 64-core node: no set of victims makes it fit, so nobody is deleted.
    assert _host_limited(low_cpu=16, urgent_cpu=80) == []


def _mig_node(urgent: dict, whole: dict, whole_at: float, slice_at: float):
    """One node: GPU 0 whole, GPU 1 one 7g.80gb MIG instance (mixed strategy), 32 cores, 256 GiB.
    ``whole`` (whole GPU) and ``slice`` (the MIG instance, 4 cores) run at priority 1; ``urgent`` (priority
    10) asks the MIG instance at t=60. Returns the preemptions and binds from t=60 to t=90."""
    groups = [{"name": "n", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 2, "cpu": 32, "memory_gib": 256,
               "mig": [{"devices": [1], "layout": ["7g.80gb@0"]}]}]
    docs = [{"kind": "batch", "name": "whole", "unit": {"whole_gpu": True}, "priority": 1, "duration": "10h",
             "arrival": {"at": whole_at}, **whole},
            {"kind": "batch", "name": "slice", "unit": {"mig_profile": "7g.80gb"}, "cpu": 4, "priority": 1,
             "duration": "10h", "arrival": {"at": slice_at}},
            {"kind": "batch", "name": "urgent", "unit": {"mig_profile": "7g.80gb"}, "priority": 10, "duration": "1h",
             "arrival": {"at": 60}, **urgent}]
    r = simulate({"name": "kube-mig", "horizon": "2h", "pool": {"node_groups": groups},
                  "stack": {"data_plane": {"mechanism": "mig", "mig_strategy": "mixed"},
                            "control_plane": {"scheduler": "kube-default"}}, "workloads": docs})
    return [(e.t, e.kind, e.workload) for e in r.events.entries if e.kind in ("preempt", "bind") and 60 <= e.t <= 90]


@pytest.mark.parametrize("whole", [{"cpu": 8}, {"host_memory_gib": 64}])
def test_a_pod_holding_none_of_what_the_preemptor_lacks_is_not_deleted(whole):
    # urgent asks only the MIG instance: the whole-GPU pod, bound later, holds cores or memory urgent does not
    # ask for, so deleting it frees nothing urgent needs; only the pod on the instance goes.
    assert _mig_node({}, whole, whole_at=10, slice_at=0) == [(60.0, "preempt", "slice-0"), (90.0, "bind", "urgent")]


def test_a_pod_without_the_preemptors_device_is_deleted_for_the_cores_it_holds():
    # urgent asks the instance and 20 cores; whole holds 28 of the 32 cores: deleting the instance's pod alone
    # frees 4, so the whole-GPU pod goes too, for its cores.
    assert _mig_node({"cpu": 20}, {"cpu": 28}, whole_at=0, slice_at=10) == [
        (60.0, "preempt", "slice-0"), (60.0, "preempt", "whole-0"), (90.0, "bind", "urgent")]


def test_a_preempted_pods_replacement_queues_behind_pods_created_before_it():
    # w1's pod is deleted at t=20 for urgent; its controller creates a new pod then, after w2's (t=10). When
    # urgent ends, kube-scheduler's activeQ (priority, then creation) gives the node to w2 first.
    groups = [{"name": "n", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 4}]
    docs = [{"kind": "batch", "name": "w1", "gpus_per_worker": 1, "priority": 5, "duration": "10h", "arrival": {"at": 0}},
            {"kind": "batch", "name": "w2", "gpus_per_worker": 4, "priority": 5, "duration": "10h", "arrival": {"at": 10}},
            {"kind": "batch", "name": "urgent", "gpus_per_worker": 4, "priority": 10, "duration": "1h",
             "arrival": {"at": 20}}]
    r = simulate({"name": "kube", "horizon": "3h", "pool": {"node_groups": groups},
                  "stack": {"control_plane": {"scheduler": "kube-default"}}, "workloads": docs})
    assert [(e.t, e.kind, e.workload) for e in r.events.entries] == [
        (0.0, "bind", "w1"), (20.0, "preempt", "w1-0"), (50.0, "bind", "urgent"), (3650.0, "bind", "w2")]


def test_under_kueue_pods_carry_no_priority_so_kube_scheduler_deletes_nothing():
    # The export states a workload's priority as a Kueue WorkloadPriorityClass (the kueue.x-k8s.io/
    # priority-class label), which orders admission and Kueue's preemption only; the pods get no
    # PriorityClass, so kube-scheduler sees priority 0 everywhere. Differential seed 33 on the real plane:
    # Kueue admitted a priority-100 job by borrowing, kube-scheduler left its pod pending ("No preemption
    # victims found for incoming pod"); the simulator used to delete the priority-0 job's pod for it.
    groups = [{"name": "n", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 4}]
    cq = {"name": "q", "cohort": "org", "flavors": [{"name": "f", "node_groups": ["n"], "quotas": {"nvidia.com/gpu": {"nominal": 8}}}]}
    docs = [{"kind": "batch", "name": "low", "tenant": "q", "workers": 1, "gpus_per_worker": 3, "priority": 0,
             "duration": "10h", "arrival": {"at": 0}},
            {"kind": "batch", "name": "high", "tenant": "q", "workers": 1, "gpus_per_worker": 2, "priority": 100,
             "duration": "1h", "arrival": {"at": 60}}]
    r = simulate({"name": "kueue", "horizon": "2h", "pool": {"node_groups": groups},
                  "stack": {"control_plane": {"scheduler": "kube-default", "admission": "kueue", "kueue": {"cluster_queues": [cq]}}},
                  "tenants": [{"name": "q", "queue": "q"}], "workloads": docs})
    assert [e for e in r.events.entries if e.kind == "preempt"] == []
    high = next(w for w in r.workloads if w.name == "high")
    assert high.state == "admitted" and high.start is None
    assert high.pending_reason.startswith("0/1 nodes are available: 1 Insufficient nvidia.com/gpu.")
