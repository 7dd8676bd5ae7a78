"""Issue 33 end to end: a gang training class that keeps the default scheduler is composed as kube-scheduler
+ the Workload API (Kubernetes >= 1.37), its plan names the PodGroup of each tenant's job, the scenario
rendered from the plan gangs kube-scheduler, and the bundle writes the Workload, the PodGroup and the pods
that name it - with the same minCount and replica counts at every step. Last time a compose-only fix was
reverted because plan, bundle and simulator did not follow it."""

from __future__ import annotations

import pytest

from placement.catalog.files import read_catalog_dir
from placement.deploy import export_scenario
from placement.plans.scenario import scenario_document
from placement.rules import ComposeRequest, compose
from placement.rules.graph import build_graph
from scheduler_core import simulate
from scheduler_core.scenario import parse_scenario
from tests.rules.conftest import CATALOG_DIR

GANG = {"name": "pretrain", "kind": "training", "replicas": 6, "gpus_per_replica": 1, "gpu_memory_gib": 40,
        "gang": True, "tenants": 2}
REQUEST = {"workloads": [GANG], "pool": {"gpu_model": "A100-80GB", "gpu_count": 8},
           "constraints": {"keep_default_scheduler": True}}


@pytest.fixture(scope="module")
def graph():
    return build_graph(read_catalog_dir(CATALOG_DIR))


def _slot(stack, slot):
    return next((a.project.slug for a in stack.slots if a.slot.value == slot and a.project), None)


def test_a_gang_class_keeping_the_default_scheduler_holds_from_compose_to_bundle(graph):
    # compose: kube-scheduler with the Workload API it serves, ranked first
    stack = compose(graph, ComposeRequest.model_validate(REQUEST)).stacks[0]
    assert _slot(stack, "scheduling_policy") == "kube-scheduler"
    assert {s.project.slug: s.required_by for s in stack.supporting}["kubernetes-workload-api"] == "kube-scheduler"
    # plan: the API as a component, the class's PodGroup per tenant's job
    plan = stack.plan
    assert plan is not None, stack.plan_error
    assert "kubernetes-workload-api" in {c.project for c in plan.components}
    (w,) = plan.workloads
    minimum = w.pod_group.min_count
    assert minimum == w.replicas_per_tenant == {"pretrain-team-1": 3, "pretrain-team-2": 3}
    # scenario: kube-scheduler's gang on, each job's minMember the plan's minCount; no partial start
    scenario = parse_scenario(scenario_document(plan))
    assert scenario.stack.control_plane.scheduler == "kube-default"
    assert scenario.stack.control_plane.kube.workload_gang
    jobs = {j.name: j for j in scenario.workloads}
    assert {n: (j.workers, j.min_available) for n, j in jobs.items()} == {
        t: (w.replicas_per_tenant[t], minimum[t]) for t in minimum}
    assert simulate(scenario).gangs.partial_start_gpu_hours == 0
    # bundle: Workload + PodGroup + a Job whose pods name the PodGroup, with the same numbers
    bundle = export_scenario(scenario, plan=plan)
    rendered = [f for f in bundle.files if f.path.startswith("workloads/")]
    assert rendered
    for f in rendered:
        kinds = {o["kind"]: o for o in f.objects}
        workload, group, job = kinds["Workload"], kinds["PodGroup"], kinds["Job"]
        tenant = job["metadata"]["name"]
        assert workload["spec"]["podGroupTemplates"][0]["schedulingPolicy"]["gang"]["minCount"] == minimum[tenant]
        assert group["spec"]["schedulingPolicy"]["gang"]["minCount"] == minimum[tenant]
        assert group["spec"]["workloadRef"]["workloadName"] == workload["metadata"]["name"]
        assert job["spec"]["parallelism"] == job["spec"]["completions"] == w.replicas_per_tenant[tenant]
        assert job["spec"]["template"]["spec"]["schedulingGroup"] == {"podGroupName": group["metadata"]["name"]}
    readme = next(f for f in bundle.files if f.path == "README.md").body
    assert "--feature-gates=GenericWorkload=true --runtime-config=scheduling.k8s.io/v1beta1=true" in readme


@pytest.mark.django_db
def test_a_saved_stack_laid_onto_a_built_in_scenario_gangs_kube_scheduler_too(graph):
    from placement.stacks.models import Stack
    from placement.stacks.services.scenario import scenario_for_stack

    top = compose(graph, ComposeRequest.model_validate(REQUEST)).stacks[0]
    stack = Stack(name=top.title, profile="training", composition=top.model_dump(mode="json"))
    scenario = scenario_for_stack(stack, scenario_name="partial-gang-default", document=None, seed=None)
    assert scenario.stack.control_plane.scheduler == "kube-default" and scenario.stack.control_plane.kube.workload_gang
    assert simulate(scenario).gangs.partial_start_gpu_hours == 0  # failure story 1 no longer starts partially
