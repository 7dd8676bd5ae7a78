"""Turn (saved stack, scenario) into the scheduler_core scenario that runs.

The scenario supplies the pool, tenants and workloads; the stack supplies the mechanisms: its
scheduling and admission slots and its pools' data planes, mapped by fixtures/rules/simulation.yaml.
Queue sections the stack needs but the scenario lacks (Kueue ClusterQueues, Volcano or KAI queues)
are derived from the scenario's tenants: one queue per tenant, nominal share by tenant weight.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from django.conf import settings

from placement.models import Stack
from placement.selectors.evidence import builtin_scenario_document, builtin_scenarios

MAPPING_FILE = Path(settings.BASE_DIR) / "fixtures" / "rules" / "simulation.yaml"


class ScenarioInvalid(Exception):
    def __init__(self, field_errors: dict[str, list[str]]):
        self.field_errors = field_errors
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in field_errors.items()))


@lru_cache(maxsize=1)
def simulation_mapping() -> dict[str, dict[str | None, str]]:
    data = yaml.safe_load(MAPPING_FILE.read_text(encoding="utf-8"))
    return {section: {(None if k in (None, "null") else k): v for k, v in table.items()} for section, table in data.items()}


def _scenario_source(scenario_name: str | None, document: Any) -> dict:
    if scenario_name and document is not None:
        raise ScenarioInvalid({"scenario": ["Give a built-in scenario name or a scenario document, not both."]})
    if document is not None:
        if not isinstance(document, dict):
            raise ScenarioInvalid({"scenario": ["A scenario document is a mapping (YAML or JSON object)."]})
        return document
    if not scenario_name:
        raise ScenarioInvalid({"scenario_name": ["Pick a built-in scenario or upload a scenario file."]})
    data = builtin_scenario_document(scenario_name)
    if data is None:
        known = ", ".join(s.name for s in builtin_scenarios())
        raise ScenarioInvalid({"scenario_name": [f"Unknown built-in scenario {scenario_name!r}. Known: {known}."]})
    return data


def _slot_slug(composition: dict, slot: str) -> str | None:
    for assignment in composition.get("slots", []):
        if assignment.get("slot") == slot and assignment.get("project"):
            return assignment["project"]["slug"]
    return None


def _mapped(section: str, slug: str | None, slot: str) -> str:
    table = simulation_mapping()[section]
    if slug not in table:
        raise ScenarioInvalid({"stack": [f"{slug} ({slot}) has no simulator model yet; see fixtures/rules/simulation.yaml."]})
    return table[slug]


def _tenant_shares(data: dict, total_gpus: int) -> list[tuple[str, float, int]]:
    weights: dict[str, float] = {t["name"]: float(t.get("weight", 1)) for t in data.get("tenants", []) or []}
    for workload in data.get("workloads", []) or []:
        weights.setdefault(workload.get("tenant", "default"), 1.0)
    if not weights:
        weights = {"default": 1.0}
    total = sum(weights.values())
    return [(name, w, max(1, round(total_gpus * w / total))) for name, w in weights.items()]


def _total_gpus(data: dict) -> int:
    return sum(int(g.get("count", 1)) * int(g.get("gpus_per_node", 8)) for g in data.get("pool", {}).get("node_groups", []))


def _apply_stack(data: dict, stack: Stack) -> dict:
    composition = stack.composition
    scheduler = _mapped("scheduler", _slot_slug(composition, "scheduling_policy") or "kube-scheduler", "scheduling_policy")
    admission = _mapped("admission", _slot_slug(composition, "admission_quota"), "admission_quota") if _slot_slug(
        composition, "admission_quota"
    ) else "none"
    pools = composition.get("pools", [])
    mechanisms = [_mapped("data_plane", pool.get("data_plane"), f"pool {pool.get('name')}") for pool in pools] or ["whole"]

    stack_section = dict(data.get("stack") or {})
    control = dict(stack_section.get("control_plane") or {})
    control["scheduler"] = scheduler
    control["admission"] = admission
    shares = _tenant_shares(data, _total_gpus(data))
    if admission == "kueue" and not control.get("kueue"):
        control["kueue"] = {
            "cluster_queues": [
                {
                    "name": f"cq-{name}",
                    "cohort": "atlas",
                    "flavors": [{"name": "default", "quotas": {"nvidia.com/gpu": {"nominal": gpus}}}],
                    "preemption": {"reclaim_within_cohort": "Any"},
                    "fair_sharing_weight": weight,
                }
                for name, weight, gpus in shares
            ],
            "local_queues": {name: f"cq-{name}" for name, _, _ in shares},
        }
    if scheduler == "volcano" and not (control.get("volcano") or {}).get("queues"):
        volcano = dict(control.get("volcano") or {})
        volcano["queues"] = [{"name": name, "weight": max(1, round(weight))} for name, weight, _ in shares]
        volcano.setdefault("actions", ["enqueue", "allocate", "backfill", "reclaim"])
        control["volcano"] = volcano
    if scheduler == "kai" and not control.get("kai"):
        control["kai"] = {"queues": [{"name": name, "quota": gpus} for name, _, gpus in shares]}
    stack_section["control_plane"] = control
    stack_section["name"] = stack.name[:200]

    # One data plane for the whole pool, or (mixed stacks) MIG on MIG-enabled groups, the other
    # mechanism elsewhere: pools by isolation level (seeds/002 form C).
    groups = data.get("pool", {}).get("node_groups", [])
    if len(set(mechanisms)) == 1:
        stack_section["data_plane"] = {**(stack_section.get("data_plane") or {}), "mechanism": mechanisms[0]}
        stack_section["node_group_data_plane"] = {}
    else:
        non_mig = next((m for m in mechanisms if m != "mig"), mechanisms[0])
        stack_section["data_plane"] = {"mechanism": non_mig}
        stack_section["node_group_data_plane"] = {
            g["name"]: {"mechanism": "mig"} for g in groups if g.get("mig") and "mig" in mechanisms
        }
    data = dict(data)
    data["stack"] = stack_section
    return data


def scenario_for_stack(stack: Stack | None, *, scenario_name: str | None, document: Any, seed: int | None):
    """The validated scheduler_core Scenario to run; ScenarioInvalid carries field errors."""
    from scheduler_core.scenario import ScenarioError, parse_scenario

    data = _scenario_source(scenario_name, document)
    if stack is not None:
        data = _apply_stack(data, stack)
    if seed is not None:
        if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**31:
            raise ScenarioInvalid({"seed": ["A seed is a whole number between 0 and 2147483647."]})
        data = {**data, "seed": seed}
    try:
        return parse_scenario(data, source=scenario_name or "uploaded scenario")
    except ScenarioError as exc:
        errors: dict[str, list[str]] = {}
        for loc, message in exc.errors:
            errors.setdefault(f"scenario.{loc}" if loc else "scenario", []).append(message)
        raise ScenarioInvalid(errors) from None
