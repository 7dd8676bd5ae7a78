"""A workload's priority reaches the component the simulator gave it to. Without Kueue, kube-scheduler
(PostFilter preemption, activeQ order) and Volcano read the pods' PriorityClass, so the bundle writes
scheduling.k8s.io/v1 PriorityClasses and names them on the pods; under Kueue the priority is a
WorkloadPriorityClass (admission order, Kueue's preemption) and the pods carry none, which is what the
simulator's kube-scheduler sees there (pod priority 0)."""

from __future__ import annotations

import pytest

from placement.deploy import export_scenario
from scheduler_core.scenario import parse_scenario


def _scenario(scheduler: str, admission: str = "none") -> object:
    cp: dict = {"scheduler": scheduler}
    tenants = [{"name": "team-a", "queue": "default"}] if scheduler == "volcano" else [{"name": "team-a"}]
    if admission == "kueue":
        cp.update(admission="kueue", kueue={"cluster_queues": [{"name": "team-a", "flavors": [
            {"name": "a100", "node_groups": ["gpu"], "quotas": {"nvidia.com/gpu": {"nominal": 8}}}]}]})
        tenants = [{"name": "team-a", "queue": "team-a"}]
    doc = {"name": "priorities", "horizon": "1h",
           "pool": {"node_groups": [{"name": "gpu", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8}]},
           "stack": {"control_plane": cp}, "tenants": tenants,
           "workloads": [{"kind": "batch", "name": "urgent", "tenant": "team-a", "gpus_per_worker": 2, "priority": 100,
                          "duration": "1h", "node_group": "gpu"},
                         {"kind": "batch", "name": "filler", "tenant": "team-a", "gpus_per_worker": 4, "priority": 0,
                          "duration": "1h", "node_group": "gpu", "workers": 2}]}
    return parse_scenario(doc, source="test")


def _objects(export) -> list[tuple[str, dict]]:
    return [(f.path, o) for f in export.files if f.kind == "manifests" for o in f.objects]


def _pod_specs(obj: dict) -> list[dict]:
    if obj["kind"] == "Job" and "tasks" in obj["spec"]:
        return [t["template"]["spec"] for t in obj["spec"]["tasks"]]
    return [obj["spec"]["template"]["spec"]]


@pytest.mark.parametrize("scheduler", ["kube-default", "volcano"])
def test_without_kueue_the_pods_name_a_priority_class_the_bundle_creates(scheduler):
    export = export_scenario(_scenario(scheduler))
    classes = {o["metadata"]["name"]: o for _, o in _objects(export) if o["kind"] == "PriorityClass"}
    assert classes["priority-100"]["apiVersion"] == "scheduling.k8s.io/v1" and classes["priority-100"]["value"] == 100
    assert classes["priority-100"]["preemptionPolicy"] == "PreemptLowerPriority" and not classes["priority-100"]["globalDefault"]
    workloads = {o["metadata"]["name"]: o for p, o in _objects(export) if p.startswith("workloads/")}
    assert [s.get("priorityClassName") for s in _pod_specs(workloads["urgent"])] == ["priority-100"]
    if workloads["urgent"]["apiVersion"].startswith("batch.volcano.sh"):  # its PodGroup takes the job's class
        assert workloads["urgent"]["spec"]["priorityClassName"] == "priority-100"
    # created before the workloads that name them (the API server refuses an unknown priorityClassName)
    paths = [f.path for f in export.files if f.kind == "manifests"]
    first_workload = next(i for i, p in enumerate(paths) if p.startswith("workloads/"))
    assert paths.index("priorityclasses.yaml") < first_workload
    assert "priorityclasses.yaml" in export.file("install.sh").body


def test_under_kueue_priority_is_a_workload_priority_class_and_pods_carry_none():
    export = export_scenario(_scenario("kube-default", "kueue"))
    kinds = {o["kind"] for _, o in _objects(export)}
    assert "PriorityClass" not in kinds and "WorkloadPriorityClass" in kinds
    urgent = next(o for p, o in _objects(export) if p.startswith("workloads/") and o["metadata"]["name"] == "urgent")
    assert urgent["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] == "priority-100"
    assert "priorityClassName" not in _pod_specs(urgent)[0]
