"""Turn (saved stack, scenario) into the scheduler_core scenario that runs.

Without a scenario the stack's plan is rendered (placement/plans/scenario.py): its node groups, GPU
model, data planes, tenants and quotas, nothing else. A built-in or uploaded scenario is a what-if:

The scenario supplies the pool, tenants and workloads; the stack supplies the mechanisms: its
scheduling and admission slots and its pools' data planes, mapped by fixtures/rules/simulation.yaml.
Queue sections the stack needs but the scenario lacks (Kueue ClusterQueues, Volcano or KAI queues)
are derived from the scenario's tenants: one queue per tenant, nominal share by tenant weight.
"""

from __future__ import annotations

from typing import Any

from placement.catalog.selectors.scenarios import builtin_scenario_document, builtin_scenarios
from placement.plans.build import simulation_mapping
from placement.plans.models import Plan
from placement.plans.scenario import scenario_document
from placement.stacks.models import Stack


class ScenarioInvalid(Exception):
    def __init__(self, field_errors: dict[str, list[str]]):
        self.field_errors = field_errors
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in field_errors.items()))


def stack_plan(stack: Stack | None) -> Plan | None:
    """The plan stored with a saved stack (None for stacks saved before plans, or without one)."""
    data = (stack.composition or {}).get("plan") if stack is not None else None
    return Plan.model_validate(data) if data else None


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


def _tenant_shares(data: dict) -> list[tuple[str, float]]:
    """(queue a tenant submits to, weight share) for declared tenants and tenants only named by workloads.

    Keyed by the tenant's queue (default: its name), so derived queues are the ones tenants name."""
    weights: dict[str, float] = {}
    declared = {t["name"] for t in data.get("tenants", []) or []}
    for t in data.get("tenants", []) or []:
        queue = t.get("queue") or t["name"]
        weights[queue] = weights.get(queue, 0.0) + float(t.get("weight", 1))
    for workload in data.get("workloads", []) or []:
        if workload.get("tenant", "default") not in declared:
            weights.setdefault(workload.get("tenant", "default"), 1.0)
    if not weights:
        weights = {"default": 1.0}
    total = sum(weights.values())
    return [(name, w / total) for name, w in weights.items()]


def _assign_by_pool_name(data: dict, pools: list[str], mechanisms: list[str]) -> dict | None:
    """A scenario whose node groups are named after the stack's pools (generated from workload
    classes) gets each pool's mechanism on its own group; MIG only where that pool uses it."""
    groups = [dict(g) for g in data.get("pool", {}).get("node_groups", [])]
    if len(pools) < 2 or not set(pools) <= {g.get("name") for g in groups}:
        return None
    by_pool = dict(zip(pools, mechanisms))
    for g in groups:
        if by_pool.get(g["name"]) != "mig" and g.get("mig"):
            g["mig"] = []
    data = {**data, "pool": {**data.get("pool", {}), "node_groups": groups}}
    return {"data": data, "default": {"mechanism": mechanisms[0]},
            "per_group": {name: {"mechanism": m} for name, m in by_pool.items()}}


def _assign_data_planes(data: dict, mechanisms: list[str]) -> dict:
    """Give every node group of the scenario one of the stack's mechanisms.

    One mechanism: every group gets it; MIG is switched on (`all-balanced`, mig-parted's shipped
    mixed layout) where the stack needs MIG and the scenario has none, and switched off where the
    stack does not use MIG. Several (a mixed stack: pools by isolation level): groups with MIG
    keep it for the MIG pool, the others get the shared mechanism; a scenario with no MIG group
    cannot host the MIG pool and is refused with that reason.
    """
    groups = [dict(g) for g in data.get("pool", {}).get("node_groups", [])]
    per_group: dict[str, dict] = {}
    distinct = list(dict.fromkeys(mechanisms))
    if len(distinct) == 1:
        mechanism = distinct[0]
        for g in groups:
            if mechanism == "mig" and not g.get("mig"):
                g["mig"] = [{"devices": "all", "layout": "all-balanced"}]
            elif mechanism != "mig" and g.get("mig"):
                g["mig"] = []
        default = {"mechanism": mechanism}
    else:
        shared = next((m for m in distinct if m != "mig"), distinct[0])
        mig_groups = [g["name"] for g in groups if g.get("mig")]
        if "mig" in distinct and not mig_groups:
            raise ScenarioInvalid({"scenario_name": [
                "This stack keeps a MIG pool and a shared pool, but the scenario's pool has no MIG-enabled "
                "node group to host the MIG pool; pick a scenario with one (e.g. form-c-mig-hami-volcano)."
            ]})
        per_group = {name: {"mechanism": "mig"} for name in mig_groups}
        default = {"mechanism": shared}
    data = dict(data)
    data["pool"] = {**data.get("pool", {}), "node_groups": groups}
    return {"data": data, "default": default, "per_group": per_group}


def _kueue_for(data: dict, shares: list[tuple[str, float]]) -> dict:
    """One ClusterQueue per tenant in one cohort, nominal quota of every advertised resource by
    tenant weight, reclaim within the cohort (seeds/000 paradigm C)."""
    from scheduler_core.capacity import advertised_capacity
    from scheduler_core.scenario import ScenarioError, parse_scenario

    # Probe the pool as the stack's data planes expose it (admission does not change what nodes advertise).
    probe = {**data, "stack": {**data["stack"], "control_plane": {**data["stack"].get("control_plane", {}), "admission": "none", "kueue": None}}}
    try:
        capacity = advertised_capacity(parse_scenario(probe))
    except ScenarioError:
        capacity = {}  # the full validation below reports what is wrong
    return {
        "cluster_queues": [
            {
                "name": name,
                "cohort": "atlas",
                "flavors": [{"name": "default", "quotas": {r: {"nominal": round(total * share, 3)} for r, total in capacity.items()}}],
                "preemption": {"reclaim_within_cohort": "Any"},
                "fair_sharing_weight": share,
            }
            for name, share in shares
        ],
    }


def _keep_as_found(original: dict, planes: dict, only: list[str]) -> dict:
    """A what-if on an uploaded cluster: the stack's data planes on the chosen node groups only;
    every other group keeps the data plane and MIG layout it was found with."""
    groups = {g.get("name"): g for g in (original.get("pool") or {}).get("node_groups", [])}
    unknown = [g for g in only if g not in groups]
    if unknown or not only:
        raise ScenarioInvalid({"node_groups": [
            f"unknown node group(s) {', '.join(map(repr, unknown)) or '(none given)'}; the snapshot has "
            f"{', '.join(sorted(map(str, groups)))}"]})
    found = original.get("stack") or {}
    found_default = found.get("data_plane") or {"mechanism": "whole"}
    found_planes = found.get("node_group_data_plane") or {}
    data = planes["data"]
    per_group = {}
    node_groups = []
    for g in data["pool"]["node_groups"]:
        name = g.get("name")
        if name in only:
            per_group[name] = planes["per_group"].get(name, planes["default"])
            node_groups.append(g)
        else:
            per_group[name] = found_planes.get(name, found_default)
            node_groups.append(groups[name])
    data = {**data, "pool": {**data["pool"], "node_groups": node_groups}}
    return {"data": data, "default": planes["default"], "per_group": per_group}


def _apply_stack(data: dict, stack: Stack, only_groups: list[str] | None = None) -> dict:
    composition = stack.composition
    scheduler_slug = _slot_slug(composition, "scheduling_policy") or "kube-scheduler"
    admission_slug = _slot_slug(composition, "admission_quota")
    scheduler = _mapped("scheduler", scheduler_slug, "scheduling_policy")
    admission = _mapped("admission", admission_slug, "admission_quota") if admission_slug else "none"
    pools = composition.get("pools", [])
    mechanisms = [_mapped("data_plane", pool.get("data_plane"), f"pool {pool.get('name')}") for pool in pools] or ["whole"]

    original = data
    planes = _assign_by_pool_name(data, [p.get("name") for p in pools], mechanisms) or _assign_data_planes(data, mechanisms)
    if only_groups is not None:
        planes = _keep_as_found(original, planes, only_groups)
    data = planes["data"]
    stack_section = dict(data.get("stack") or {})
    stack_section["name"] = stack.name[:200]
    stack_section["data_plane"] = planes["default"]
    stack_section["node_group_data_plane"] = planes["per_group"]
    data["stack"] = stack_section

    control = dict(stack_section.get("control_plane") or {})
    control["scheduler"] = scheduler
    control["admission"] = admission
    shares = _tenant_shares(data)
    # Queue sections the scenario already has are kept: they are the scenario's organisation.
    if scheduler == "volcano" and not (control.get("volcano") or {}).get("queues"):
        volcano = dict(control.get("volcano") or {})
        volcano["queues"] = [{"name": name, "weight": max(1, round(share * 100))} for name, share in shares]
        volcano.setdefault("actions", ["enqueue", "allocate", "backfill", "reclaim"])
        control["volcano"] = volcano
    if scheduler == "kai" and not control.get("kai"):
        total = sum(int(g.get("count", 1)) * int(g.get("gpus_per_node", 8)) for g in data["pool"].get("node_groups", []))
        control["kai"] = {"queues": [{"name": name, "quota": round(total * share, 3)} for name, share in shares]}
    if scheduler == "kube-default" and set(composition.get("components") or ()) & set(simulation_mapping().get("gang_api", {})):
        # kube-scheduler gangs through the Workload API in this stack: its GangScheduling plugin is on
        control["kube"] = {**(control.get("kube") or {}), "workload_gang": True}
    stack_section["control_plane"] = control
    if admission == "kueue" and not control.get("kueue"):
        control["kueue"] = _kueue_for(data, shares)
    return data


def scenario_for_stack(stack: Stack | None, *, scenario_name: str | None, document: Any, seed: int | None,
                       node_groups: list[str] | None = None):
    """The validated scheduler_core Scenario to run; ScenarioInvalid carries field errors.

    With neither a scenario name nor a document, the stack's own plan runs (no overlay: it already
    is this stack). ``node_groups``: apply the stack's data planes to these node groups only (a
    what-if on an uploaded cluster); the others keep the data plane they were found with."""
    plan = stack_plan(stack) if scenario_name is None and document is None else None
    if plan is not None:
        data = scenario_document(plan)
    else:
        data = _scenario_source(scenario_name, document)
    if stack is not None and plan is None:
        try:
            data = _apply_stack(data, stack, node_groups)
        except ScenarioInvalid:
            raise
        except (AttributeError, KeyError, TypeError, ValueError):
            # A section of the wrong type (`pool: []`, `tenants: ["x"]`, ...) breaks the overlay
            # before validation could name it: validate the document as written instead.
            _raise_field_errors(data, scenario_name)
            raise ScenarioInvalid({"scenario": ["The scenario document cannot be combined with this stack."]}) from None
    if seed is not None:
        if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**31:
            raise ScenarioInvalid({"seed": ["A seed is a whole number between 0 and 2147483647."]})
        data = {**data, "seed": seed}
    return _raise_field_errors(data, scenario_name)


def _raise_field_errors(data: Any, scenario_name: str | None):
    """The parsed scenario, or ScenarioInvalid with `scenario.<field>` errors."""
    from scheduler_core.scenario import ScenarioError, parse_scenario

    try:
        return parse_scenario(data, source=scenario_name or "uploaded scenario")
    except ScenarioError as exc:
        errors: dict[str, list[str]] = {}
        for loc, message in exc.errors:
            errors.setdefault(f"scenario.{loc}" if loc else "scenario", []).append(message)
        raise ScenarioInvalid(errors) from None
