"""Bundles of composed stacks (catalog -> compose -> plan -> scenario -> export), for tests that need what only
a plan carries: the components it names (the kai-resource-isolator, Volcano's vGPU device plugin) and their settings."""

from __future__ import annotations

from functools import lru_cache

from placement.catalog.files import read_catalog_dir
from placement.deploy import export_scenario
from placement.plans.scenario import scenario_document
from placement.rules import ComposeRequest, compose
from placement.rules.graph import build_graph
from scheduler_core.scenario import parse_scenario
from tests.rules.conftest import CATALOG_DIR

# KAI fractions whose memory the kai-resource-isolator caps (issue 32 Build 3; issue 30).
ISOLATED_NOTEBOOKS = {"workloads": [{"name": "nb", "kind": "interactive", "replicas": 8, "gpus_per_replica": 0.5,
                                     "gpu_memory_gib": 20, "tenants": 2}],
                      "slo": {"isolation": "soft"}, "constraints": {"require": ["kai-resource-isolator"]}}
# Quarter GPUs through Volcano's vGPU device plugin (form C; tests/plans/test_plan_sizing.py).
VOLCANO_VGPU_SERVING = {"workloads": [{"name": "inf", "kind": "online_inference", "replicas": 6, "gpus_per_replica": 0.25,
                                       "gpu_memory_gib": 18}],
                        "constraints": {"require": ["volcano-vgpu-device-plugin"]}}
PLAN_BUNDLES = {"plan-kai-isolator": (ISOLATED_NOTEBOOKS, "kai-resource-isolator"),
                "plan-volcano-vgpu": (VOLCANO_VGPU_SERVING, "volcano-vgpu-device-plugin")}


@lru_cache(maxsize=1)
def graph():
    return build_graph(read_catalog_dir(CATALOG_DIR))


@lru_cache(maxsize=None)
def _stack(name: str):
    body, slug = PLAN_BUNDLES[name]
    stacks = compose(graph(), ComposeRequest.model_validate(body)).stacks
    return next(s for s in stacks if slug in {c.project.slug for c in s.slots if c.project})


def plan_of(name: str):
    return _stack(name).plan


def scenario_of(name: str):
    return parse_scenario(scenario_document(plan_of(name)))


def plan_bundle(name: str):
    """(plan, export) of the named composed stack."""
    plan = plan_of(name)
    return plan, export_scenario(scenario_of(name), plan=plan)
