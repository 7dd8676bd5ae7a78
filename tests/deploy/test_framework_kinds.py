"""The serving-framework and batch-wrapper kinds the plan names validate as their upstream APIs: the
RayService against KubeRay v1.7.0's CRD in ../shared/schemas; InferenceService, DynamoGraphDeployment and
AppWrapper (no CRD in ../shared) against the fields read upstream (tests/deploy/schemas.py names the
files) with every embedded pod spec validated as core Kubernetes. Failed on main: the bundle held a
NOT-RENDERED note for each. Kueue's chart (../shared/charts/kueue v0.19.2) ships every integration they need."""

from __future__ import annotations

import copy

import pytest
import yaml

from placement.catalog.files import read_catalog_dir
from placement.deploy import export_scenario, frameworks
from placement.deploy.control_plane import KUEUE_FRAMEWORKS, kueue_frameworks
from placement.deploy.readback import read_workload
from placement.plans.scenario import scenario_document
from placement.rules import ComposeRequest, compose
from placement.rules.graph import build_graph
from scheduler_core.scenario import parse_scenario
from tests.deploy.charts import chart_defaults
from tests.deploy.schemas import object_errors
from tests.rules.conftest import CATALOG_DIR

KINDS = {"RayService": ("kuberay", "online_inference"), "InferenceService": ("kserve", "online_inference"),
         "DynamoGraphDeployment": ("nvidia-dynamo", "online_inference"), "AppWrapper": ("appwrapper", "training")}


@pytest.fixture(scope="module")
def graph():
    return build_graph(read_catalog_dir(CATALOG_DIR))


def _exports(graph, kind: str):
    project, workload = KINDS[kind]
    for gpus in (1, 0.5, 8):
        body = {"workloads": [{"name": "w", "kind": workload, "replicas": 6, "gpus_per_replica": gpus, "gpu_memory_gib": 30,
                               "gang": workload == "training", "tenants": 2}],
                "constraints": {"require": [project]}, "limit": 10}
        for stack in compose(graph, ComposeRequest.model_validate(body)).stacks:
            if stack.plan and stack.plan.workloads[0].object_kind == kind:
                yield stack.plan, export_scenario(parse_scenario(scenario_document(stack.plan)), plan=stack.plan)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_exported_object_of_a_framework_kind_validates_as_its_upstream_api(graph, kind):
    seen = set()
    for plan, export in _exports(graph, kind):
        assert not [f.path for f in export.files if f.path.endswith(".NOT-RENDERED.md")]
        assert [e for obj in export.objects() for e in object_errors(obj)] == []
        seen.add(plan.node_groups[0].data_plane.mechanism)
    assert seen, kind  # at least one stack of the catalog plans this kind


def test_an_unknown_field_fails_the_shape_checks():
    isvc = {"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService", "metadata": {"name": "x"},
            "spec": {"predictor": {"minReplicas": 1, "maxReplicas": 1, "replica": 2,
                                   "containers": [{"name": "kserve-container", "image": "i"}]}}}
    assert any("replica" in e for e in object_errors(isvc))
    main = {"name": "main", "image": "i", "resources": {"limits": {"nvidia.com/gpu": 1}}}
    dgd = {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment", "metadata": {"name": "x"},
           "spec": {"backendFramework": "vllm", "components": [
               {"name": "worker", "type": "worker", "replicas": 1, "podTemplate": {"spec": {"containers": [main]}}}]}}
    assert object_errors(dgd) == []
    for broken, word in [({"resources": {"limits": {"nvidia.com/gpu": "1"}}}, "resources"),  # v1alpha1's field
                         ({"labels": {"a": "b"}}, "labels"), ({"type": "gpu-worker"}, "type"),
                         ({"multinode": {"nodeCount": 1}}, "nodeCount"),
                         ({"podTemplate": {"spec": {"containers": [{**main, "name": "vllm"}]}}}, "main")]:
        bad = copy.deepcopy(dgd)
        bad["spec"]["components"][0].update(broken)
        assert any(word in e for e in object_errors(bad)), broken
    v1alpha1 = {**dgd, "apiVersion": "nvidia.com/v1alpha1"}  # deprecated in v1.5.0: not what the export writes
    assert any("no stored schema" in e for e in object_errors(v1alpha1))
    aw = {"apiVersion": "workload.codeflare.dev/v1beta2", "kind": "AppWrapper", "metadata": {"name": "x", "namespace": "a"},
          "spec": {"components": [{"template": {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "x", "namespace": "b"},
                                                "spec": {"template": {"spec": {"containers": [{"name": "m", "image": "i"}],
                                                                               "restartPolicy": "Never"}}}}}]}}
    assert any("namespace" in e for e in object_errors(aw))


def test_the_kueue_chart_ships_every_integration_the_framework_kinds_need():
    chart = set(yaml.safe_load(chart_defaults("kueue")["managerConfig"]["controllerManagerConfigYaml"])["integrations"]["frameworks"])
    for kind in KINDS:
        assert set(KUEUE_FRAMEWORKS[kind]) <= chart, kind
        assert set(KUEUE_FRAMEWORKS[kind]) <= set(kueue_frameworks([kind])), kind


def test_a_dynamo_worker_spanning_nodes_and_under_kueue_keeps_the_queue_on_its_pods_not_the_frontend():
    # v1.5.0 dynamo-component-deployment.md: multinode.nodeCount (>= 2, worker|prefill|decode; total GPUs = nodeCount x
    # the container's request); no per-component labels: a podTemplate's metadata reaches that component's pods,
    # spec.labels every child (dynamo-graph-deployment.md), so Kueue's queue labels go on the worker's pod template
    # (Kueue's pod integration reads them there) and the CPU-only Frontend takes no tenant quota.
    queue = {"kueue.x-k8s.io/queue-name": "team-a", "kueue.x-k8s.io/priority-class": "high"}
    meta = {"name": "w", "namespace": "team-a", "labels": {"app.kubernetes.io/name": "w", **queue}}
    template = {"metadata": {"labels": {"app.kubernetes.io/name": "w"}},
                "spec": {"schedulerName": "default-scheduler", "nodeSelector": {"placement-atlas.io/pool": "p"},
                         "containers": [{"name": "main", "image": "x", "resources": {
                             "requests": {"cpu": 8, "memory": "65536Mi", "nvidia.com/gpu": 8}, "limits": {"nvidia.com/gpu": 8}}}]}}
    dgd = frameworks.dynamo_graph(meta, template, replicas=3, pods_per_replica=2)
    assert object_errors(dgd) == []
    frontend, worker = dgd["spec"]["components"]
    assert (frontend["type"], worker["type"]) == ("frontend", "worker")
    assert worker["replicas"] == 3 and worker["multinode"] == {"nodeCount": 2}
    assert worker["podTemplate"]["metadata"]["labels"] == {"app.kubernetes.io/name": "w", **queue}
    assert worker["podTemplate"]["spec"]["containers"][0]["resources"] == template["spec"]["containers"][0]["resources"]
    assert "metadata" not in frontend["podTemplate"] and "labels" not in dgd["spec"]
    read = read_workload(dgd)
    assert read["pods"] == 1 + 3 * 2 and read["queues"] == ["team-a"]
    assert [r for r in read["requests"] if r] == [{"cpu": 8, "memory": "65536Mi", "nvidia.com/gpu": 8}]
