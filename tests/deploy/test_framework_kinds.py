"""The serving-framework and batch-wrapper kinds the plan names validate as their upstream APIs: the
RayService against KubeRay v1.7.0's CRD in ../shared/schemas; InferenceService, DynamoGraphDeployment and
AppWrapper (no CRD in ../shared) against the fields read upstream (tests/deploy/schemas.py names the
files) with every embedded pod spec validated as core Kubernetes. Failed on main: the bundle held a
NOT-RENDERED note for each. Kueue's chart (../shared/charts/kueue v0.19.2) ships every integration they need."""

from __future__ import annotations

import pytest
import yaml

from placement.catalog.files import read_catalog_dir
from placement.deploy import export_scenario
from placement.deploy.control_plane import KUEUE_FRAMEWORKS, kueue_frameworks
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
    dgd = {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment", "metadata": {"name": "x"},
           "spec": {"services": {"worker": {"replicas": 1, "resources": {"requests": {"gpus": "1"}}}}}}
    assert any("gpus" in e for e in object_errors(dgd))
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
