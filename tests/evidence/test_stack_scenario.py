"""How a saved stack is laid onto a scenario before it is simulated."""

import pytest

from placement.stacks.models import Stack
from placement.stacks.services.scenario import ScenarioInvalid, scenario_for_stack
from placement.stacks.services.stacks import compose_stacks
from scheduler_core import simulate

pytestmark = pytest.mark.django_db

INFERENCE = {"profile": "online_inference", "slo": {"isolation": "soft", "goal": "latency_sensitive", "multi_tenant": True},
             "pool": {"gpu_model": "A100-80GB", "gpu_count": 32}}


def top_stack(request: dict) -> Stack:
    result = compose_stacks(request)
    return Stack(name=result.stacks[0].title, profile=request["profile"], composition=result.stacks[0].model_dump(mode="json"))


def test_hami_kueue_stack_gets_hami_everywhere_and_a_clusterqueue_per_tenant_covering_every_resource():
    stack = top_stack(INFERENCE)
    scenario = scenario_for_stack(stack, scenario_name="starved-tenant-default", document=None, seed=None)
    assert scenario.stack.data_plane.mechanism == "hami"
    assert scenario.stack.control_plane.admission == "kueue"
    queues = {cq.name: cq for cq in scenario.stack.control_plane.kueue.cluster_queues}
    assert set(queues) == {"team-a", "team-b"}
    quotas = queues["team-a"].flavors[0].quotas
    assert set(quotas) == {"nvidia.com/gpu", "nvidia.com/gpumem"}
    assert simulate(scenario).jobs.completed > 0


def test_mig_stack_switches_mig_on_where_the_scenario_has_none():
    # Small slice-sized training gangs (seeds/002 form A); the training preset's 8-GPU workers get whole GPUs.
    stack = top_stack({"profile": "training", "pool": {"gpu_model": "A100-80GB", "gpu_count": 32},
                       "workloads": [{"name": "training", "kind": "training", "replicas": 4, "gpus_per_replica": 0.25,
                                      "gpu_memory_gib": 16, "gang": True, "tenants": 3}]})
    assert "mig" in [p["data_plane"] for p in stack.composition["pools"]]
    scenario = scenario_for_stack(stack, scenario_name="partial-gang-default", document=None, seed=None)
    assert scenario.stack.data_plane.mechanism == "mig"
    assert all(g.mig for g in scenario.pool.node_groups)
    assert scenario.stack.control_plane.scheduler == "volcano"


def test_mixed_stack_needs_a_mig_node_group_and_says_so():
    stack = top_stack({"profile": "mixed", "pool": {"gpu_model": "A100-80GB", "gpu_count": 32}})
    with pytest.raises(ScenarioInvalid) as exc:
        scenario_for_stack(stack, scenario_name="starved-tenant-default", document=None, seed=None)
    assert "no MIG-enabled node group" in exc.value.field_errors["scenario_name"][0]
    scenario = scenario_for_stack(stack, scenario_name="form-c-mig-hami-volcano", document=None, seed=None)
    assert "mig" in {dp.mechanism for dp in scenario.stack.node_group_data_plane.values()}
    assert scenario.stack.data_plane.mechanism == "hami"


def test_a_project_without_a_simulator_model_is_refused_not_silently_replaced():
    stack = top_stack(INFERENCE)
    for slot in stack.composition["slots"]:
        if slot["slot"] == "scheduling_policy":
            slot["project"] = {**slot["project"], "slug": "yunikorn", "name": "Apache YuniKorn"}
    with pytest.raises(ScenarioInvalid) as exc:
        scenario_for_stack(stack, scenario_name="starved-tenant-default", document=None, seed=None)
    assert "yunikorn (scheduling_policy) has no simulator model yet" in exc.value.field_errors["stack"][0]


def test_scenario_name_and_document_are_exclusive():
    with pytest.raises(ScenarioInvalid) as exc:
        scenario_for_stack(None, scenario_name="lab1-mig", document={"name": "x"}, seed=None)
    assert "scenario" in exc.value.field_errors


def test_derived_queues_are_the_queues_tenants_submit_to_not_their_names():
    """An imported cluster's tenants (namespaces) name their queues; a Volcano stack's derived
    queues must carry those names or every tenant is refused."""
    stack = top_stack({"profile": "training", "pool": {"gpu_model": "A100-80GB", "gpu_count": 32}})
    document = {"name": "q", "horizon": "1h", "pool": {"node_groups": [{"name": "dgx", "count": 1}]},
                "tenants": [{"name": "team-a", "queue": "research", "weight": 3}, {"name": "team-b", "weight": 1}],
                "workloads": [{"kind": "batch", "name": "j", "tenant": "team-a", "duration": "10m"}]}
    scenario = scenario_for_stack(stack, scenario_name=None, document=document, seed=None)
    queues = {q.name: q.weight for q in scenario.stack.control_plane.volcano.queues}
    assert queues == {"research": 75, "team-b": 25}
