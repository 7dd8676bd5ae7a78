"""A gang training class that keeps the default scheduler, composed as in tests/deploy/test_gang_end_to_end.py:
kube-scheduler + Kueue + the Workload API (Kubernetes 1.37), one MIG node of the plan's pool; each
tenant's Job of 3 pods is a PodGroup of minCount 3. ``gpus_per_node`` resizes the node, leaving the
plan's Kueue quotas (3 instances per tenant) as they are, so Kueue admits the gang either way and only
kube-scheduler decides whether it fits."""

from __future__ import annotations

from functools import lru_cache

from placement.catalog.files import read_catalog_dir
from placement.deploy import export_scenario
from placement.plans.scenario import scenario_document
from placement.rules import ComposeRequest, compose
from placement.rules.graph import build_graph
from scheduler_core.scenario import parse_scenario
from tests.rules.conftest import CATALOG_DIR

GANG = {"name": "pretrain", "kind": "training", "replicas": 6, "gpus_per_replica": 1, "gpu_memory_gib": 40,
        "gang": True, "tenants": 2}
REQUEST = {"workloads": [GANG], "pool": {"gpu_model": "A100-80GB", "gpu_count": 8},
           "constraints": {"keep_default_scheduler": True}}


@lru_cache(maxsize=1)
def gang_plan():
    stack = compose(build_graph(read_catalog_dir(CATALOG_DIR)), ComposeRequest.model_validate(REQUEST)).stacks[0]
    assert stack.plan is not None, stack.plan_error
    return stack.plan


def gang_stack(gpus_per_node: int = 8):
    """(scenario, export) of the gang stack on one node of ``gpus_per_node`` MIG 7g.80gb instances."""
    plan = gang_plan()
    doc = scenario_document(plan)
    (group,) = doc["pool"]["node_groups"]
    group["gpus_per_node"] = gpus_per_node
    scenario = parse_scenario(doc)
    return scenario, export_scenario(scenario, plan=plan)
