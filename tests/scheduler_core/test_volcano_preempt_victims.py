"""Which pods Volcano's preempt action evicts inside one queue (domain-facts §5; volcano-sh/volcano
pkg/scheduler/actions/preempt): only jobs of lower priority are victims, the lowest priority first
and, at equal priority, the most recently started first; the eviction names the preemptor."""

from __future__ import annotations

from scheduler_core import simulate

PLUGINS = ("priority", "proportion")  # no gang: every bound pod may be a victim


def evictions(running: list[tuple], pending: tuple, queues=({"name": "q1"},), pending_queue="q1",
              plugins=PLUGINS) -> list[tuple[str, str]]:
    """running: (name, priority, started at); pending: (name, priority) arriving at t=60 on a full
    2-GPU node of queue q1; one 1-GPU pod per job.  Returns (evicted pod, event text)."""
    docs = [{"kind": "training", "name": name, "tenant": "q1" if at < 60 else pending_queue, "workers": 1,
             "gpus_per_worker": 1, "min_available": 1, "priority": prio, "duration": "10h", "arrival": {"at": at}}
            for name, prio, at in [*running, (*pending, 60)]]
    r = simulate({
        "name": "volcano-preempt", "horizon": "2h",
        "pool": {"node_groups": [{"name": "n1", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 2}]},
        "stack": {"control_plane": {"scheduler": "volcano", "volcano": {
            "queues": list(queues), "actions": ["allocate", "preempt"], "plugins": list(plugins)}}},
        "tenants": [{"name": q["name"], "queue": q["name"]} for q in queues], "workloads": docs})
    return [(e.workload, e.detail) for e in r.events.entries if e.kind == "preempt"]


def test_the_lowest_priority_job_is_evicted_whatever_its_start():
    assert evictions([("low", 5, 30), ("mid", 10, 0)], ("urgent", 100)) == [
        ("low-0", "VolcanoPreempt: for urgent of queue q1")]
    assert evictions([("low", 5, 0), ("mid", 10, 30)], ("urgent", 100)) == [
        ("low-0", "VolcanoPreempt: for urgent of queue q1")]


def test_at_equal_priority_the_most_recently_started_job_is_evicted():
    assert [pod for pod, _ in evictions([("old", 5, 0), ("new", 5, 30)], ("urgent", 100))] == ["new-0"]
    assert [pod for pod, _ in evictions([("new", 5, 30), ("old", 5, 0)], ("urgent", 100))] == ["new-0"]


def test_a_job_of_equal_priority_is_never_a_victim():
    assert evictions([("peer-a", 10, 0), ("peer-b", 10, 30)], ("late", 10)) == []


def test_among_jobs_started_together_the_one_submitted_last_is_evicted():
    assert [pod for pod, _ in evictions([("first", 5, 0), ("second", 5, 0)], ("urgent", 100))] == ["second-0"]


def test_preempt_stays_inside_the_queue_even_for_a_capped_queue_with_nothing_running():
    queues = ({"name": "q1"}, {"name": "q2", "capability": 2})
    assert evictions([("low-a", 5, 0), ("low-b", 5, 0)], ("urgent", 100), queues, pending_queue="q2") == []


def test_a_job_held_back_by_its_queues_deserved_share_preempts_inside_its_queue_although_a_gpu_is_free():
    # 4 GPUs, two equal queues: q2's demand caps q1 at 2 deserved GPUs, which its low job already holds.
    # Upstream preempt.go (preemptorFitsOnNode): "the cluster has free resources, but the queue is not
    # allocatable" is a case same-queue preemption handles - one low pod goes, urgent fits q1's share.
    def job(name, queue, gpus, prio, at, workers=1):
        return {"kind": "training", "name": name, "tenant": queue, "workers": workers, "gpus_per_worker": gpus,
                "min_available": 1, "priority": prio, "duration": "10h", "arrival": {"at": at}}
    queues = [{"name": "q1"}, {"name": "q2"}]
    r = simulate({
        "name": "volcano-overused", "horizon": "2h",
        "pool": {"node_groups": [{"name": "n1", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 4}]},
        "stack": {"control_plane": {"scheduler": "volcano", "volcano": {
            "queues": queues, "actions": ["allocate", "preempt"], "plugins": list(PLUGINS)}}},
        "tenants": [{"name": q["name"], "queue": q["name"]} for q in queues],
        "workloads": [job("low", "q1", 1, 5, 0, workers=2), job("other", "q2", 1, 5, 0), job("big", "q2", 3, 5, 30),
                      job("urgent", "q1", 1, 100, 60)]})
    assert [(e.workload, e.detail) for e in r.events.entries if e.kind == "preempt"] == [
        ("low-1", "VolcanoPreempt: for urgent of queue q1")]


def test_while_its_victim_terminates_the_preemptor_evicts_no_one_else():
    # urgent evicts low-0 at t=60; the pod terminates for terminationGracePeriodSeconds (30 s).  A job
    # arriving at t=70 starts another session in which urgent still does not fit, but the victim's GPU is
    # releasing (Volcano counts it as FutureIdle and pipelines the preemptor there), so mid keeps running.
    assert evictions([("low", 5, 0), ("mid", 10, 0), ("small", 1, 70)], ("urgent", 100)) == [
        ("low-0", "VolcanoPreempt: for urgent of queue q1")]


def test_without_a_queue_plugin_preempt_still_evicts_by_priority():
    # No proportion or capacity plugin: queues bound nothing, and priority alone picks the victim.
    assert evictions([("low", 5, 0), ("mid", 10, 30)], ("urgent", 100), plugins=("priority",)) == [
        ("low-0", "VolcanoPreempt: for urgent of queue q1")]


def test_a_job_started_half_a_second_later_is_the_more_recent():
    assert [pod for pod, _ in evictions([("old", 5, 0), ("new", 5, 0.5)], ("urgent", 100))] == ["new-0"]


def _volcano(queues, node_gpus, docs, plugins):
    r = simulate({
        "name": "volcano-preempt", "horizon": "2h",
        "pool": {"node_groups": [{"name": "n1", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": node_gpus}]},
        "stack": {"control_plane": {"scheduler": "volcano", "volcano": {
            "queues": queues, "actions": ["allocate", "preempt"], "plugins": list(plugins)}}},
        "tenants": [{"name": q["name"], "queue": q["name"]} for q in queues], "workloads": docs})
    return [e.workload for e in r.events.entries if e.kind == "preempt"]


def _job(name, prio, at, workers=1, gpus=1):
    return {"kind": "training", "name": name, "tenant": "q1", "workers": workers, "gpus_per_worker": gpus,
            "min_available": workers, "priority": prio, "duration": "10h", "arrival": {"at": at}}


def test_a_gang_preemptor_that_fits_only_one_pod_on_free_room_still_preempts():
    # One GPU of two is free; urgent needs two pods at once, so low goes.
    assert _volcano([{"name": "q1"}], 2, [_job("low", 5, 0), _job("urgent", 100, 60, workers=2)],
                    PLUGINS) == ["low-0"]


def test_a_queue_at_its_capability_preempts_inside_it_until_the_preemptor_fits_the_queue():
    # q1 may hold 2 GPUs (capacity plugin) and holds them; the node has 6 more free, but urgent (2 GPUs)
    # fits the queue only once both 1-GPU jobs are gone.
    queues = [{"name": "q1", "capability": {"nvidia.com/gpu": 2}}]
    assert _volcano(queues, 8, [_job("low-a", 5, 0), _job("low-b", 5, 10), _job("urgent", 100, 60, gpus=2)],
                    ("priority", "capacity")) == ["low-b-0", "low-a-0"]


def test_a_gang_whose_first_pod_fits_but_not_its_minimum_preempts_for_the_rest():
    # Three 4-GPU nodes with 2, 1 and 1 GPUs free: one 2-GPU pod of urgent fits (on g0), its minimum of two
    # does not, and allocate under the gang plugin binds none. preempt must make room for the whole minimum:
    # the most recently started job (low-c) gives up a pod above its own minAvailable, and urgent starts
    # once that pod has terminated.
    def job(name, workers, gpus, prio, at, group=None):
        return {"kind": "training", "name": name, "tenant": "q1", "workers": workers, "gpus_per_worker": gpus,
                "min_available": 1 if name != "urgent" else workers, "priority": prio, "duration": "10h",
                "arrival": {"at": at}, **({"node_group": group} if group else {})}
    r = simulate({
        "name": "volcano-gang-minimum", "horizon": "2h",
        "pool": {"node_groups": [{"name": g, "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 4}
                                 for g in ("g0", "g1", "g2")]},
        "stack": {"control_plane": {"scheduler": "volcano", "volcano": {
            "queues": [{"name": "q1"}], "actions": ["allocate", "preempt"], "plugins": ["priority", "gang", "proportion"]}}},
        "tenants": [{"name": "q1", "queue": "q1"}],
        "workloads": [job("low-a", 1, 2, 5, 0, "g0"), job("low-b", 3, 1, 5, 1, "g1"), job("low-c", 3, 1, 5, 2, "g2"),
                      job("urgent", 2, 2, 100, 60)]})
    events = [(e.t, e.kind, e.workload, e.detail) for e in r.events.entries if e.t < 100]
    assert events[3:] == [(60.0, "preempt", "low-c-2", "VolcanoPreempt: for urgent of queue q1"),
                          (90.0, "bind", "urgent", "2 pod(s): g0-0 x1, g2-0 x1")]


def test_a_starving_job_that_preempt_skips_does_not_stop_the_jobs_behind_it_from_preempting():
    # "pinned" (priority 200) needs its two 1-GPU pods on one node: a GPU is free on each node, so its
    # pods fit by count and preempt passes it by (the plan fails on the required node, not on room). The
    # next starving job, urgent (priority 100, one 2-GPU pod), still preempts a low-priority pod.
    def job(name, workers, gpus, prio, group=None, **kw):
        return {"kind": "training", "name": name, "tenant": "q1", "workers": workers, "gpus_per_worker": gpus,
                "min_available": workers if prio > 5 else 1, "priority": prio, "duration": "10h",
                "arrival": {"at": 60 if prio > 5 else 0}, **({"node_group": group} if group else {}), **kw}
    r = simulate({
        "name": "volcano-skip-then-preempt", "horizon": "2h",
        "pool": {"node_groups": [{"name": g, "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 4} for g in ("g0", "g1")]},
        "stack": {"control_plane": {"scheduler": "volcano", "volcano": {
            "queues": [{"name": "q1"}], "actions": ["allocate", "preempt"], "plugins": ["priority", "gang", "proportion"]}}},
        "tenants": [{"name": "q1", "queue": "q1"}],
        "workloads": [job("low-a", 3, 1, 5, "g0"), job("low-b", 3, 1, 5, "g1"),
                      job("pinned", 2, 1, 200, topology={"required": "node"}), job("urgent", 1, 2, 100)]})
    assert [(e.t, e.workload, e.detail) for e in r.events.entries if e.kind == "preempt"][:1] == [
        (60.0, "low-b-2", "VolcanoPreempt: for urgent of queue q1")]
