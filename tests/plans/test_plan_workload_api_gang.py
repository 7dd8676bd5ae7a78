"""Issue 33: a stack whose gang is the Workload API's (kube-scheduler, Kubernetes >= 1.37) carries the API
as a component with the flags the cluster needs, each gang class says its PodGroup (minCount per tenant's
job, elastic minimum honoured as for the other gang schedulers) and that the pods reference it, and the
rendered scenario turns kube-scheduler's gang model on. Plans of other stacks are unchanged (no new key
in their dump, so their digests stay).

Sources: k8s.io/api v0.37.2 scheduling/v1beta1/types.go (Workload, PodGroup, GangSchedulingPolicy.minCount);
k8s.io/kubernetes v1.37.2 pkg/features/kube_features.go (GenericWorkload beta, off by default; WorkloadWithJob
alpha) and pkg/scheduler/apis/config/v1/default_plugins.go (GangScheduling with the gate)."""

from __future__ import annotations

from placement.plans.scenario import scenario_document
from placement.rules import ComposeRequest, compose
from scheduler_core.scenario import parse_scenario

GANG = {"name": "pretrain", "kind": "training", "replicas": 6, "gpus_per_replica": 1, "gpu_memory_gib": 40,
        "gang": True, "tenants": 2}
POOL = {"gpu_model": "A100-80GB", "gpu_count": 8}


def _stack(graph, classes, **constraints):
    result = compose(graph, ComposeRequest.model_validate({"workloads": classes, "pool": POOL, "constraints": constraints}))
    stack = next(s for s in result.stacks if any(a.project and a.project.slug == "kube-scheduler" for a in s.slots))
    assert stack.plan is not None, stack.plan_error
    return stack


def test_the_workload_api_is_a_component_with_the_flags_it_needs(graph):
    plan = _stack(graph, [GANG], keep_default_scheduler=True).plan
    api = next(c for c in plan.components if c.project == "kubernetes-workload-api")
    assert api.role == "required by kube-scheduler"
    assert api.settings == {
        "apiVersion": "scheduling.k8s.io/v1beta1", "kubernetes": ">= 1.37",
        "kube-apiserver": "--feature-gates=GenericWorkload=true --runtime-config=scheduling.k8s.io/v1beta1=true",
        "kube-scheduler": "--feature-gates=GenericWorkload=true",
        "kube-controller-manager": "--feature-gates=GenericWorkload=true"}


def test_each_gang_class_says_its_pod_group_and_the_scenario_gangs_it(graph):
    single = {"name": "eval", "kind": "training", "replicas": 2, "gpus_per_replica": 1, "gpu_memory_gib": 40,
              "gang": False, "tenants": 1}
    plan = _stack(graph, [GANG, single], keep_default_scheduler=True).plan
    w = {x.name: x for x in plan.workloads}
    group = w["pretrain"].pod_group
    assert group is not None and w["eval"].pod_group is None
    assert (group.api, group.api_version, group.pod_reference) == (
        "kubernetes-workload-api", "scheduling.k8s.io/v1beta1", "spec.schedulingGroup.podGroupName")
    assert group.min_count == w["pretrain"].replicas_per_tenant == {"pretrain-team-1": 3, "pretrain-team-2": 3}
    assert any("Class pretrain is a gang through the kubernetes-workload-api" in a and "Kubernetes >= 1.37" in a
               for a in plan.assumptions), plan.assumptions
    document = scenario_document(plan)
    assert document["stack"]["control_plane"]["kube"] == {"workload_gang": True}
    jobs = {j["name"]: j for j in document["workloads"] if j["kind"] == "training"}
    assert {n: j["min_available"] for n, j in jobs.items()} == {"pretrain-team-1": 3, "pretrain-team-2": 3, "eval-team-1": 0}
    assert parse_scenario(document).stack.control_plane.kube.workload_gang


def test_an_elastic_gang_class_gets_its_minimum_as_min_count(graph):
    elastic = {**GANG, "min_replicas": 2}
    plan = _stack(graph, [elastic], keep_default_scheduler=True).plan
    (w,) = plan.workloads
    assert w.pod_group.min_count == {t: w.min_for(t) for t in w.replicas_per_tenant} == {
        "pretrain-team-1": 1, "pretrain-team-2": 1}
    assert any("binds the minimum all-or-nothing (the PodGroup's minCount)" in a for a in plan.assumptions)
    jobs = scenario_document(plan)["workloads"]
    assert [j["min_available"] for j in jobs] == [1, 1]


def test_other_stacks_keep_their_plans_as_before(graph):
    result = compose(graph, ComposeRequest.model_validate({"workloads": [GANG], "pool": POOL, "limit": 10}))
    for stack in result.stacks:
        if stack.plan is None or "kubernetes-workload-api" in stack.components:
            continue
        assert all(w.pod_group is None for w in stack.plan.workloads)
        assert all("pod_group" not in w for w in stack.plan.model_dump()["workloads"])  # digests unchanged
        assert "kube" not in scenario_document(stack.plan)["stack"]["control_plane"]
