"""Issue 33: since Kubernetes 1.37 kube-scheduler places a PodGroup with a gang policy all-or-nothing
(scheduling.k8s.io/v1beta1 Workload and PodGroup, GenericWorkload feature gate; its GangScheduling plugin
is enabled with the gate: k8s.io/kubernetes v1.37.2 pkg/scheduler/apis/config/v1/default_plugins.go).
Compose treats kube-scheduler + the Workload API as a gang-capable choice (feasibility.yaml
gang.served_api), brings the API into the stack, and charges the version and feature gate it needs;
dedicated gang schedulers keep their place where their queues and fair sharing count."""

from __future__ import annotations

from placement.rules import ComposeRequest, SlotName, compose
from placement.rules.misuse import check_misuse

GANG = {"name": "pretrain", "kind": "training", "replicas": 4, "gpus_per_replica": 1, "gpu_memory_gib": 40,
        "gang": True, "tenants": 2}
POOL = {"gpu_model": "A100-80GB", "gpu_count": 8}
API = "kubernetes-workload-api"


def _slot(stack, slot):
    return next((a.project.slug for a in stack.slots if a.slot == slot and a.project), None)


def test_a_gang_class_keeping_the_default_scheduler_gets_kube_scheduler_with_the_workload_api(graph):
    result = compose(graph, ComposeRequest(workloads=[GANG], pool=POOL,
                                           constraints={"keep_default_scheduler": True, "exclude": ["coscheduling"]}))
    assert result.feasible, result.failures
    top = result.stacks[0]
    assert _slot(top, SlotName.SCHEDULING_POLICY) == "kube-scheduler"
    (api,) = [s for s in top.supporting if s.project.slug == API]
    assert api.required_by == "kube-scheduler"
    assert api.why.startswith("kube-scheduler places class pretrain all-or-nothing only through it (Kubernetes >= 1.37).")
    assert "gang-scheduling" in top.capabilities
    credit = next(i for i in top.score_breakdown if i.factor == "capability" and i.subject == "gang-scheduling")
    assert credit.project == API and credit.points > 0
    (cost,) = [i for i in top.score_breakdown if i.factor == "gang_api"]
    assert cost.points == -1 and cost.project == API
    assert "Kubernetes >= 1.37" in cost.reason and "GenericWorkload" in cost.reason and "--runtime-config" in cost.reason


def test_the_coscheduling_plugin_still_ranks_beside_it(graph):
    result = compose(graph, ComposeRequest(workloads=[GANG], pool=POOL, constraints={"keep_default_scheduler": True}))
    schedulers = [_slot(s, SlotName.SCHEDULING_POLICY) for s in result.stacks]
    assert schedulers[0] == "kube-scheduler" and "coscheduling" in schedulers
    plugin = next(s for s in result.stacks if _slot(s, SlotName.SCHEDULING_POLICY) == "coscheduling")
    assert API not in plugin.components and not [i for i in plugin.score_breakdown if i.factor == "gang_api"]


def test_dedicated_gang_schedulers_with_queues_still_rank_first_for_several_teams(graph):
    # The Workload API has no queueing or quota: for teams it needs an admission layer, and Volcano (queues,
    # fair sharing, gang in one component) keeps ranking above it.
    result = compose(graph, ComposeRequest(workloads=[GANG], pool=POOL, limit=10))
    top = result.stacks[0]
    assert _slot(top, SlotName.SCHEDULING_POLICY) in {"volcano", "kai-scheduler"}
    native = [s for s in result.stacks if _slot(s, SlotName.SCHEDULING_POLICY) == "kube-scheduler"]
    assert native and all(s.score < top.score for s in native)
    for stack in native:
        assert API in stack.components
        assert "per-team-quota" in stack.capabilities  # from its admission layer, never from the Workload API
        assert _slot(stack, SlotName.ADMISSION_QUOTA) != API


def test_without_a_gang_class_the_workload_api_is_not_added(graph):
    single = {**GANG, "gang": False}
    result = compose(graph, ComposeRequest(workloads=[single], pool=POOL, constraints={"keep_default_scheduler": True}))
    assert result.feasible
    assert all(API not in s.components for s in result.stacks)
    assert all(i.factor != "gang_api" for s in result.stacks for i in s.score_breakdown)


def test_compose_and_misuse_say_the_same_thing_about_kube_scheduler_and_gangs(graph):
    verdict = check_misuse(graph, "kube-scheduler", "gang-scheduling")
    assert not verdict.is_misuse and "Workload API" in verdict.reason and "1.37" in verdict.reason
    assert graph.served_api("kube-scheduler", "gang-scheduling").ref.slug == API
    # a plugin that runs inside kube-scheduler does not serve the API: it is no gang scheduler
    assert graph.served_api("node-resource-topology", "gang-scheduling") is None
