"""Issue 33: the bundle of a stack whose gang is kube-scheduler's own (the Workload API, Kubernetes >= 1.37)
writes, per gang workload, a scheduling.k8s.io/v1beta1 Workload with a gang pod-group template and the
PodGroup made from it, the pods name that PodGroup, and the README/install.sh say the control-plane flags.

Field names are those of k8s.io/api v0.37.2 (json tags), written out here so the test runs offline:
scheduling/v1beta1/types.go - WorkloadSpec{controllerRef, podGroupTemplates}, TypedLocalObjectReference
{apiGroup, kind, name}, PodGroupTemplate{name, schedulingPolicy}, PodGroupSchedulingPolicy{basic, gang},
GangSchedulingPolicy{minCount}, PodGroupSpec{workloadRef, schedulingPolicy}, WorkloadReference{workloadName,
templateName}; core/v1/types.go - PodSpec.schedulingGroup, PodSchedulingGroup{podGroupName}. The objects are
also validated strictly against Kubernetes 1.37's OpenAPI (kubernetes-validate's bundled schemas)."""

from __future__ import annotations

import pytest

from placement.catalog.files import read_catalog_dir
from placement.deploy import export_scenario
from placement.plans.scenario import scenario_document
from placement.rules import ComposeRequest, compose
from placement.rules.graph import build_graph
from scheduler_core.scenario import parse_scenario
from tests.deploy.schemas import object_errors
from tests.rules.conftest import CATALOG_DIR

GANG = {"name": "pretrain", "kind": "training", "replicas": 6, "gpus_per_replica": 1, "gpu_memory_gib": 40,
        "gang": True, "tenants": 2}
REQUEST = {"workloads": [GANG], "pool": {"gpu_model": "A100-80GB", "gpu_count": 8},
           "constraints": {"keep_default_scheduler": True}}
# json tags of the Go types above (k8s.io/api v0.37.2)
WORKLOAD_SPEC = {"controllerRef", "podGroupTemplates", "compositePodGroupTemplates"}
CONTROLLER_REF = {"apiGroup", "kind", "name"}
POD_GROUP_TEMPLATE = {"name", "schedulingPolicy", "schedulingConstraints", "resourceClaims", "disruptionMode",
                      "priorityClassName", "priority", "preemptionPolicy"}
SCHEDULING_POLICY = {"basic", "gang"}
GANG_POLICY = {"minCount"}
POD_GROUP_SPEC = {"parentCompositePodGroupName", "workloadRef", "schedulingPolicy", "schedulingConstraints",
                  "resourceClaims", "disruptionMode", "priorityClassName", "priority", "preemptionPolicy"}
WORKLOAD_REFERENCE = {"workloadName", "templateName"}
POD_SCHEDULING_GROUP = {"podGroupName"}


@pytest.fixture(scope="module")
def graph():
    return build_graph(read_catalog_dir(CATALOG_DIR))


def _bundle(graph, request, native: bool):
    stacks = compose(graph, ComposeRequest.model_validate(request)).stacks
    stack = next(s for s in stacks if ("kubernetes-workload-api" in s.components) == native)
    return stack.plan, export_scenario(parse_scenario(scenario_document(stack.plan)), plan=stack.plan)


def _pod_specs(obj):
    if isinstance(obj, dict):
        if "containers" in obj:
            yield obj
        for v in obj.values():
            yield from _pod_specs(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _pod_specs(v)


def test_each_gang_workload_gets_a_workload_a_pod_group_and_pods_that_name_it(graph):
    plan, bundle = _bundle(graph, REQUEST, native=True)
    (planned,) = plan.workloads
    files = [f for f in bundle.files if f.path.startswith("workloads/")]
    assert files
    for f in files:
        workload, group, job = f.objects[:3]
        tenant = job["metadata"]["name"]
        minimum = planned.pod_group.min_count[tenant]
        assert (workload["apiVersion"], workload["kind"], group["apiVersion"], group["kind"]) == (
            "scheduling.k8s.io/v1beta1", "Workload", "scheduling.k8s.io/v1beta1", "PodGroup")
        spec = workload["spec"]
        assert set(spec) <= WORKLOAD_SPEC and set(spec["controllerRef"]) <= CONTROLLER_REF
        assert spec["controllerRef"] == {"apiGroup": "batch", "kind": job["kind"], "name": tenant}
        (template,) = spec["podGroupTemplates"]
        assert set(template) <= POD_GROUP_TEMPLATE and set(template["schedulingPolicy"]) <= SCHEDULING_POLICY
        assert set(template["schedulingPolicy"]["gang"]) <= GANG_POLICY
        assert template["schedulingPolicy"]["gang"]["minCount"] == minimum == 3
        assert set(group["spec"]) <= POD_GROUP_SPEC and set(group["spec"]["workloadRef"]) <= WORKLOAD_REFERENCE
        assert group["spec"]["workloadRef"] == {"workloadName": workload["metadata"]["name"], "templateName": template["name"]}
        assert group["spec"]["schedulingPolicy"] == template["schedulingPolicy"]
        assert group["metadata"]["namespace"] == workload["metadata"]["namespace"] == job["metadata"]["namespace"]
        pods = list(_pod_specs(job))
        assert pods and all(p["schedulingGroup"] == {"podGroupName": group["metadata"]["name"]} for p in pods)
        assert all(set(p["schedulingGroup"]) <= POD_SCHEDULING_GROUP for p in pods)
        assert job["spec"]["parallelism"] == planned.replicas_per_tenant[tenant]
        for obj in f.objects:
            assert object_errors(obj) == [], obj


def test_the_readme_and_install_script_say_the_flags_and_the_version(graph):
    _plan, bundle = _bundle(graph, REQUEST, native=True)
    readme = next(f for f in bundle.files if f.path == "README.md").body
    script = next(f for f in bundle.files if f.path == "install.sh").body
    assert "A cluster of Kubernetes 1.37 or later" in readme
    assert "### 2. Workload API (Kubernetes >= 1.37)" in readme
    for text in ("--feature-gates=GenericWorkload=true --runtime-config=scheduling.k8s.io/v1beta1=true",
                 "kube-scheduler and kube-controller-manager", "Keep WorkloadWithJob off"):
        assert text in readme
    assert "kubectl api-resources --api-group=scheduling.k8s.io -o name | grep -x podgroups.scheduling.k8s.io" in script
    assert "kubectl get podgroups.scheduling.k8s.io -A" in script
    assert "kubernetes-workload-api" not in readme.split("## Not installed by this bundle")[-1] or \
        "## Not installed by this bundle" not in readme  # part of Kubernetes: nothing to install by hand


def test_other_gang_stacks_write_no_workload_api_objects(graph):
    _plan, bundle = _bundle(graph, REQUEST, native=False)
    objects = [o for f in bundle.files if f.kind == "manifests" for o in f.objects]
    assert not [o for o in objects if o["apiVersion"].startswith("scheduling.k8s.io")]
    assert not [p for o in objects for p in _pod_specs(o) if "schedulingGroup" in p]
    readme = next(f for f in bundle.files if f.path == "README.md").body
    assert "A cluster of Kubernetes 1.34 or later" in readme and "GenericWorkload" not in readme


def test_the_bundle_reads_back_as_the_scenario_it_came_from(graph):
    # the PodGroups say kube-scheduler gangs (workload_gang): the rebuilt scenario simulates the same
    from placement.deploy.readback import read_export
    from tests.deploy.roundtrip import rebuilt, result_json

    plan, bundle = _bundle(graph, REQUEST, native=True)
    scenario = parse_scenario(scenario_document(plan))
    assert parse_scenario(read_export(bundle, scenario)).stack.control_plane.kube.workload_gang
    assert result_json(rebuilt(scenario)) == result_json(scenario)
