"""Evidence decided by the plan, not by artefacts (issue 29): fair shares in the unit allocation is
counted in, so a tenant whose demand is served is never 'starved'."""

from placement.plans.scenario import scenario_document
from placement.rules.compose import compose
from scheduler_core.api import simulate


def test_hami_tenants_whose_demand_is_served_are_not_starved(graph):
    request = {"workloads": [{"name": "nb", "kind": "interactive", "replicas": 8, "gpus_per_replica": 0.1,
                              "gpu_memory_gib": 4, "tenants": 4}],
               "pool": {"gpu_model": "A100-80GB", "gpu_count": 8}}
    stack = next(s for s in compose(graph, request).stacks
                 if s.plan and s.plan.node_groups[0].data_plane.mechanism == "hami")
    result = simulate(scenario_document(stack.plan))
    tenants = result.fairness.tenants
    assert tenants and all(t.share_ratio is None or t.share_ratio >= 0.5 for t in tenants), \
        [(t.name, t.share_ratio, t.gpu_hours, t.fair_gpu_hours) for t in tenants]
