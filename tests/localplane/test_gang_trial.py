"""A kube-scheduler gang through the Workload API (Kubernetes 1.37) on the real control plane: the API
server serves scheduling.k8s.io/v1beta1 (the plane starts it with --runtime-config and the GenericWorkload
gate), accepts the bundle's Workload, PodGroup and the Job whose pods name the PodGroup, and
kube-scheduler's GangScheduling plugin places the gang all or nothing - as the simulator says."""

import pytest

from placement.deploy.localplane.trial import clean, try_on_plane
from tests.localplane.gang_stack import gang_stack

pytestmark = pytest.mark.controlplane

WORKLOAD_API = "scheduling.k8s.io/v1beta1"


def _gang_trial(plane, gpus_per_node):
    scenario, export = gang_stack(gpus_per_node)
    try:  # Kueue and kube-scheduler as the bundle's installs configure them
        trial = try_on_plane(plane, scenario, export=export)
        (result,) = trial.workloads
        ns = result.namespace
        served = {(kind, o["metadata"]["name"]) for kind in ("Workload", "PodGroup")
                  for o in plane.kube.list(WORKLOAD_API, kind, ns)}  # list items carry no kind
        groups = plane.kube.list(WORKLOAD_API, "PodGroup", ns)
        pods = plane.kube.list("v1", "Pod", ns, label_selector=f"app.kubernetes.io/name={result.name}")
        return trial, result, served, groups, pods
    finally:
        clean(plane.kube, scenario, export)


def test_a_gang_with_room_for_all_its_pods_is_accepted_and_bound_whole(plane):
    trial, result, served, groups, pods = _gang_trial(plane, 8)
    assert [(r.file, r.kind, r.name, r.message) for r in trial.rejected] == []
    assert served == {("Workload", result.name), ("PodGroup", f"{result.name}-workers")}
    # the API server kept each pod's schedulingGroup (with the gate off it drops it without a word)
    assert {p["spec"].get("schedulingGroup", {}).get("podGroupName") for p in pods} == {f"{result.name}-workers"}
    assert result.admitted and result.pods == 3 and sum(result.bound.values()) == 3
    (group,) = groups
    scheduled = next(c for c in group["status"]["conditions"] if c["type"] == "PodGroupInitiallyScheduled")
    assert (scheduled["status"], scheduled["reason"]) == ("True", "Scheduled")
    assert result.agree, result.note


def test_a_gang_with_room_for_fewer_than_min_count_binds_no_pod_and_says_why(plane):
    trial, result, served, groups, pods = _gang_trial(plane, 2)  # 2 instances for a gang of minCount 3
    assert [(r.file, r.kind, r.name, r.message) for r in trial.rejected] == []
    assert result.admitted  # Kueue's quota (3 per tenant) holds it; only kube-scheduler says no
    assert result.pods == 3 and result.bound == {}
    # kube-scheduler's own words: the pod group's verdict on the pods it tried, the node filter on the last
    assert any("minCount (3) cannot be satisfied" in m for m in result.pending_messages), result.pending_messages
    (group,) = groups
    scheduled = next(c for c in group["status"]["conditions"] if c["type"] == "PodGroupInitiallyScheduled")
    assert (scheduled["status"], scheduled["reason"]) == ("False", "Unschedulable")
    assert "minCount (3) cannot be satisfied" in scheduled["message"]
    assert "fewer than minCount 3" in result.sim_reason  # the simulator holds the whole gang back too
    assert result.agree, result.note
