"""Kueue admission edges: a partially admitted PodGroup runs with its admitted count; a pinned workload gets
the flavor whose node labels match its selector; a workload asking for a resource its ClusterQueue does not
cover waits with Kueue's message and preempts nothing."""

from __future__ import annotations

from scheduler_core import simulate
from tests.scheduler_core.conftest import workload


def _run(pool: dict, cqs: list[dict], docs: list[dict], scheduler: str = "kube-default"):
    stack = {"control_plane": {"scheduler": scheduler, "admission": "kueue", "kueue": {"cluster_queues": cqs}}}
    return simulate({"name": "kueue-edge", "horizon": "2h", "pool": pool, "workloads": docs, "stack": stack})


def test_a_partially_admitted_podgroup_binds_its_admitted_pods_together_and_runs():
    # Kueue partial admission (podSet minCount 2) admits 2 of 4 pods of 2 GPUs in a 4-GPU ClusterQueue; the
    # PodGroup's minMember (4) is capped to the admitted count, so coscheduling binds both pods at once.
    pool = {"node_groups": [{"name": "dgx", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8}]}
    cqs = [{"name": "a", "flavors": [{"name": "a100", "quotas": {"nvidia.com/gpu": {"nominal": 4}}}]}]
    docs = [{"kind": "training", "name": "t", "tenant": "a", "workers": 4, "gpus_per_worker": 2,
             "min_available": 4, "min_count": 2, "duration": "1h"}]
    r = _run(pool, cqs, docs, scheduler="coscheduling")
    assert [(e.t, e.kind, e.detail) for e in r.events.entries] == [
        (0.0, "admit", "ClusterQueue a, flavor a100 (2 of 4 pods: partial admission)"),
        (0.0, "bind", "2 pod(s): dgx-0 x2")]
    t = workload(r, "t")
    assert (t.state, t.pods, t.start, t.end) == ("done", 2, 0.0, 3600.0)


def test_a_workload_asking_for_a_resource_the_queue_does_not_cover_preempts_nothing():
    # The ClusterQueue covers only nvidia.com/gpu; the incoming job also asks 2 CPU cores, so no flavor
    # can ever admit it - preempting the lower-priority job would not help, and it keeps running.
    pool = {"node_groups": [{"name": "dgx", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8, "cpu": 64}]}
    cqs = [{"name": "a", "flavors": [{"name": "a100", "quotas": {"nvidia.com/gpu": {"nominal": 4}}}],
            "preemption": {"within_cluster_queue": "LowerPriority"}}]
    docs = [{"kind": "batch", "name": "low", "tenant": "a", "priority": 0, "gpus_per_worker": 2, "duration": "10h"},
            {"kind": "batch", "name": "cpu-job", "tenant": "a", "priority": 10, "gpus_per_worker": 1, "cpu": 2,
             "duration": "1h", "arrival": {"at": 60}}]
    r = _run(pool, cqs, docs)
    assert workload(r, "low").state == "running" and r.preemption.preemptions == 0
    assert workload(r, "cpu-job").pending_reason == (
        "couldn't assign flavors to pod set main: resource cpu unavailable in ClusterQueue")


def test_a_workload_with_a_node_selector_gets_the_flavor_whose_node_labels_match_it():
    # Kueue's flavor assigner skips a ResourceFlavor whose nodeLabels the pod's nodeSelector excludes: the
    # first flavor (group a) is passed over for a job pinned to group b, which gets flavor fb and lands on b.
    pool = {"node_groups": [{"name": "a", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8},
                            {"name": "b", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8}]}
    cqs = [{"name": "q", "flavors": [
        {"name": "fa", "node_groups": ["a"], "quotas": {"nvidia.com/gpu": {"nominal": 8}}},
        {"name": "fb", "node_groups": ["b"], "quotas": {"nvidia.com/gpu": {"nominal": 8}}}]}]
    docs = [{"kind": "batch", "name": "pinned", "tenant": "q", "gpus_per_worker": 2, "duration": "1h",
             "node_group": "b"}]
    r = _run(pool, cqs, docs)
    assert [(e.kind, e.detail) for e in r.events.entries] == [
        ("admit", "ClusterQueue q, flavor fb"), ("bind", "1 pod(s): b-0 x1")]
