"""Compose, step 0: the request resolved into a search context (pools, points, constraints).

Shared by the three steps of composition (feasibility, contracts, scoring/explanation): the
`Context` carries the resolved profile, SLO, pools and the preference points from the rules data,
and collects every candidate a rule removes (`why_not`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import ValidationError

from placement.catalog.schemas import RESOURCE_UNIT_LABELS, ContractPoint, ResourceUnit, format_error_location
from placement.rules.data import ElasticAdmit, ProfileRule, SlotName
from placement.rules.errors import RulesInputError
from placement.rules.graph import CatalogGraph, ProjectFacts
from placement.rules.models import (
    ComposeRequest,
    Constraints,
    Pool,
    Slo,
)
from placement.rules.pools import (
    PoolSpec,
    check_workloads,
    class_pools,
    profile_for,
    template_pools,
)
from placement.rules.workloads import WorkloadClass, several_teams

SLOT_ORDER = list(SlotName)
POOL_SLOTS = (SlotName.DEVICE_HANDOFF, SlotName.DATA_PLANE_UNIT)
CLUSTER_CORE = (SlotName.ADMISSION_QUOTA, SlotName.SCHEDULING_POLICY)
PERIPHERAL = (SlotName.WORKLOAD_UNIT, SlotName.PLATFORM_LIFECYCLE, SlotName.OBSERVABILITY)
BIND_LAYERS = ("L2", "L3")

# Search breadth. The real catalog has a handful of candidates per slot, so the search is
# exhaustive there; on large catalogs it keeps the best candidates by an optimistic local score.
TOP_POOL_OPTIONS = 6
TOP_CLUSTER = 6
TOP_PER_UNIT = 3
PERIPHERAL_OPTIONS = 8
CORES_TO_FINISH = 25
REQUIRED_FIRST = 1000.0  # ranks optional-slot candidates that supply a required capability first
EXHAUSTIVE_LIMIT = 3000  # combinations checked one by one; above it, bounds stop the search early
SECONDARY_ONLY = "only alongside its primary role"  # valid cores (best first) that get their optional slots filled


@dataclass(frozen=True)
class SearchBudget:
    """The work one compose request may do (issue 37: eight shared-GPU classes made the product of
    pool options 6^8 combinations and ran past 30 s). Both bounds are counts, not times, so an answer
    does not depend on the machine's load; the defaults keep the worst request (8 classes) near half
    a second on one core while every request of up to five classes is searched as before.

    pool_combinations: combinations of pool options scored; above it a beam over the pools keeps
        the best by their upper bound (each pool's options extended from the best partial ones).
    combinations: (pool options x scheduler x admission) combinations checked one by one.
    """

    pool_combinations: int = 8000
    combinations: int = 100000

    def __post_init__(self) -> None:
        if self.pool_combinations < 1 or self.combinations < 1:
            raise ValueError("search budgets are positive counts")


def unit_label(unit: ResourceUnit) -> str:
    return RESOURCE_UNIT_LABELS[unit]


def unit_list(units) -> str:
    order = list(ResourceUnit)
    return ", ".join(unit_label(u) for u in sorted(units, key=order.index))


@dataclass(frozen=True)
class PoolOption:
    pool: PoolSpec
    unit: ResourceUnit
    data_plane: str | None
    handoff: str
    local: float


@dataclass
class Context:
    graph: CatalogGraph
    profile: ProfileRule
    slo: Slo
    pool: Pool
    constraints: Constraints
    pools: list[PoolSpec]
    unit_points: dict[ResourceUnit, list[tuple[float, str]]]
    cap_points: dict[str, list[tuple[float, str]]]
    cap_weight: dict[str, float]
    unit_total: dict[ResourceUnit, float]
    required_caps: list[tuple[str, str]]
    excluded: frozenset[str]
    required: tuple[str, ...]
    baseline: frozenset[str]
    notes: list[str] = field(default_factory=list)
    why_not: dict[tuple[SlotName, str], str] = field(default_factory=dict)
    why_not_rule: dict[tuple[SlotName, str], str] = field(default_factory=dict)  # feasibility, constraint, conflict
    _local: dict[str, float] = field(default_factory=dict)
    _costs: dict[str, bool] = field(default_factory=dict)
    cap_slot: dict[str, SlotName] = field(default_factory=dict)  # capability -> slot of its owning layer
    workloads: list[WorkloadClass] = field(default_factory=list)
    gang_classes: list[str] = field(default_factory=list)  # classes that need all-or-nothing placement
    elastic_classes: list[WorkloadClass] = field(default_factory=list)  # min_replicas below replicas
    elastic_by: dict[str, ElasticAdmit] = field(default_factory=dict)  # who admits them partially (when any)

    @property
    def required_cap_set(self) -> set[str]:
        return {cap for cap, _ in self.required_caps}

    def reject(self, slot: SlotName, slug: str, reason: str, rule: str = "feasibility") -> None:
        if (slot, slug) not in self.why_not:
            self.why_not[(slot, slug)] = reason
            self.why_not_rule[(slot, slug)] = rule

    def facts(self, slug: str) -> ProjectFacts:
        return self.graph.projects[slug]


@dataclass
class Candidate:
    """One combination under evaluation. The search works on plain numbers; the score items
    (explain_score) and contract checks (contract_checks) are built only for the stacks that are
    returned, and passed to `to_stack` beside the candidate."""

    cluster: dict[SlotName, str | None]
    pools: tuple[PoolOption, ...]
    supporting: dict[str, str] = field(default_factory=dict)  # slug -> required by
    score: float = 0.0
    covered: dict[str, tuple[SlotName | None, str]] = field(default_factory=dict)  # capability -> first provider
    members: list[str] = field(default_factory=list)
    charged: list[str] = field(default_factory=list)
    _assigned: list | None = None
    _title: str | None = None

    def with_slot(self, slot: SlotName, slug: str) -> Candidate:
        return Candidate(cluster={**self.cluster, slot: slug}, pools=self.pools)

    def assignments(self) -> list[tuple[SlotName, str | None, str]]:
        """(slot, pool name or None, slug) in slot order."""
        if self._assigned is not None:
            return self._assigned
        out = []
        for slot in SLOT_ORDER:
            if slot in POOL_SLOTS:
                for opt in self.pools:
                    slug = opt.handoff if slot == SlotName.DEVICE_HANDOFF else opt.data_plane
                    if slug:
                        out.append((slot, opt.pool.name, slug))
            elif self.cluster.get(slot):
                out.append((slot, None, self.cluster[slot]))
        self._assigned = out
        return out

    def slot_members(self) -> set[str]:
        return {slug for _, _, slug in self.assignments()}


# --- request validation and context ---------------------------------------------------------------


def validated(request: ComposeRequest | dict) -> ComposeRequest:
    if isinstance(request, ComposeRequest):
        return request
    try:
        return ComposeRequest.model_validate(request)
    except ValidationError as exc:
        errors: dict[str, list[str]] = {}
        for e in exc.errors():
            errors.setdefault(format_error_location(tuple(e["loc"])), []).append(e["msg"])
        raise RulesInputError(errors) from None


def resolve(graph: CatalogGraph, request: ComposeRequest) -> Context:
    rules = graph.rules
    errors: dict[str, list[str]] = {}
    profile_name = profile_for(request)
    profile = rules.profile.get(profile_name)
    if profile is None:
        errors["profile"] = [
            f"Unknown workload profile {profile_name!r}; known: {', '.join(rules.profile)}."
            if profile_name else "Give a workload profile or at least one workload class."
        ]
    slo = request.slo
    if slo is None and profile is not None:
        slo = Slo(**profile.default_slo.model_dump())
        if request.workloads:
            slo = slo.model_copy(update={"multi_tenant": several_teams(request.workloads)})
        elif request.tenants is not None:
            slo = slo.model_copy(update={"multi_tenant": len(request.shared_tenants() or []) > 1})
    if slo is not None and slo.goal not in rules.goal:
        errors["slo.goal"] = [f"Unknown SLO goal {slo.goal!r}; known: {', '.join(rules.goal)}."]
    errors.update(check_workloads(rules, request.workloads, request.pool))
    c = request.constraints
    for field_name, slugs in (("constraints.require", c.require), ("constraints.exclude", c.exclude)):
        msgs = [graph.unknown_slug_message(s) for s in slugs if s not in graph.projects]
        if len(set(slugs)) != len(slugs):
            msgs.append("Project slugs repeat.")
        if msgs:
            errors[field_name] = msgs
    both = sorted(set(c.require) & set(c.exclude))
    if both:
        errors.setdefault("constraints.require", []).append(f"Both required and excluded: {', '.join(both)}.")
    if errors:
        raise RulesInputError(errors)

    notes: list[str] = []
    pool = request.pool
    if pool.mig_capable is None:
        model = rules.gpu_model(pool.gpu_model)
        if model is None:
            notes.append(
                f"GPU model {pool.gpu_model!r} is not in the model table (fixtures/rules/units.yaml); assumed not "
                f"MIG-capable. Set pool.mig_capable to say otherwise."
            )
        pool = pool.model_copy(update={"mig_capable": bool(model and model.mig_capable)})
    if request.workloads:
        pools, pool = class_pools(request, pool, slo, rules, notes)
    else:
        pools = template_pools(profile, slo, pool, rules, notes, request.shared_tenants())
    if len(pools) > 1:
        notes.append(
            "Pools: "
            + "; ".join(f"{p.name} ({'/'.join(a.value for a in p.accepts)}, {p.gpus} GPUs): {p.serves}" for p in pools)
            + ". Per-pool components run only on their pool's nodes."
        )
    workloads = [p.workload for p in pools if p.workload is not None]

    goal = rules.goal[slo.goal]
    tenancy = rules.tenancy_for(slo.multi_tenant)
    unit_points: dict[ResourceUnit, list[tuple[float, str]]] = {}
    for pref in [*profile.unit_preferences, *goal.unit_preferences]:
        unit_points.setdefault(pref.unit, []).append((pref.points, pref.why))
    cap_points: dict[str, list[tuple[float, str]]] = {}
    for pref in [*profile.capability_preferences, *goal.capability_preferences, *tenancy.capability_preferences]:
        cap_points.setdefault(pref.capability, []).append((pref.points, pref.why))
    required_caps = [(r.capability, r.why) for r in [*profile.required_capabilities, *tenancy.required_capabilities]]
    gang = rules.gang
    if request.workloads:  # the classes say whether a gang is needed, not the profile
        required_caps = [(cap, why) for cap, why in required_caps if cap != gang.capability]
    gangs = [w.name for w in workloads if w.gang]
    if gangs:
        required_caps.append((gang.capability, f"class {', '.join(gangs)} has gang: true. {gang.why}"))
    # a capability scores only where the pools use it (composition.yaml capability_conditions)
    sharing = any(w is None or w.shares_a_gpu for w in (p.workload for p in pools))
    uses = {"multi_tenant": slo.multi_tenant, "sharing": sharing}
    for cond in rules.capability_conditions:
        if uses[cond.needs]:
            continue
        for cap in cond.capabilities:
            if cap_points.get(cap):
                cap_points[cap] = [(0.0, f"not counted: {cond.why}")]
    latency = [w.name for w in workloads if w.kind.value == "online_inference" and w.p99_ms]
    if latency and rules.latency_routing:
        rr = rules.latency_routing
        cap_points.setdefault(rr.capability, []).append((rr.points, f"class {', '.join(latency)}: {rr.why}"))
    excluded = frozenset(c.exclude)
    return Context(
        graph=graph,
        profile=profile,
        slo=slo,
        pool=pool,
        constraints=c,
        pools=pools,
        unit_points=unit_points,
        cap_points=cap_points,
        cap_weight={cap: sum(p for p, _ in items) for cap, items in cap_points.items()},
        unit_total={unit: sum(p for p, _ in items) for unit, items in unit_points.items()},
        required_caps=list(dict.fromkeys(required_caps)),
        excluded=excluded,
        required=tuple(c.require),
        baseline=frozenset(rules.cluster_baseline) - excluded,
        notes=notes,
        cap_slot=capability_slots(graph),
        workloads=workloads,
        gang_classes=gangs,
        elastic_classes=[w for w in workloads if w.elastic],
        elastic_by={a.project: a for a in rules.elastic.admits} if any(w.elastic for w in workloads) else {},
    )


def capability_slots(graph: CatalogGraph) -> dict[str, SlotName]:
    slots: dict[str, SlotName] = {}
    for cap in graph.vocabulary.capabilities:
        for rule in graph.rules.slots:
            if rule.map == cap.owner_map and set(rule.layers) & set(cap.owner_layers):
                slots[cap.slug] = rule.slot
                break
    return slots


# --- candidates -----------------------------------------------------------------------------------


def costs_component(ctx: Context, slug: str) -> bool:
    cached = ctx._costs.get(slug)
    if cached is None:
        kind = ctx.facts(slug).ref.kind.value
        cached = ctx._costs[slug] = slug not in ctx.baseline and kind in ctx.graph.rules.component_cost.kinds
    return cached


def local_score(ctx: Context, slug: str) -> float:
    """Optimistic score of one project alone: positive capability points minus its component cost."""
    cached = ctx._local.get(slug)
    if cached is None:
        caps = ctx.facts(slug).capabilities
        points = sum(w for cap, w in ctx.cap_weight.items() if w > 0 and cap in caps)
        cached = ctx._local[slug] = points + (ctx.graph.rules.component_cost.points if costs_component(ctx, slug) else 0.0)
    return cached


def unit_score(ctx: Context, unit: ResourceUnit) -> float:
    return ctx.unit_total.get(unit, 0.0)


def keeps_default_scheduler(ctx: Context, slug: str | None) -> bool:
    default = ctx.graph.rules.default_scheduler
    return slug is not None and (slug == default or default in ctx.facts(slug).requires)


def gang_api(ctx: Context, sched: str | None) -> str | None:
    """The Kubernetes API through which `sched` places the request's gang classes all-or-nothing when it
    has no gang capability of its own (feasibility.yaml gang.served_api: kube-scheduler and the Workload
    API, Kubernetes >= 1.37); None without gang classes, when it has its own, or none it serves is allowed."""
    gang = ctx.graph.rules.gang
    if not ctx.gang_classes or sched is None or gang.served_api is None or gang.capability in ctx.facts(sched).capabilities:
        return None
    api = ctx.graph.served_api(sched, gang.capability)
    return api.ref.slug if api is not None and api.ref.slug not in ctx.excluded else None


def gang_api_points(ctx: Context, sched: str | None) -> float:
    """What depending on the served gang API's Kubernetes version and feature gate costs (0 without one)."""
    return ctx.graph.rules.gang.served_api.points if gang_api(ctx, sched) else 0.0


def elastic_admit(ctx: Context, sched: str | None, adm: str | None) -> tuple[str, ElasticAdmit] | None:
    """(project, how) of the stack's admission layer, else its scheduler, when it starts the request's
    elastic classes with fewer than all their replicas (composition.yaml `elastic`); None without any."""
    for slug in (adm, sched):
        if slug in ctx.elastic_by:
            return slug, ctx.elastic_by[slug]
    return None


def elastic_points(ctx: Context, sched: str | None, adm: str | None) -> float:
    return ctx.graph.rules.elastic.points if ctx.elastic_by and elastic_admit(ctx, sched, adm) else 0.0


def admission_units(f: ProjectFacts) -> frozenset[ResourceUnit]:
    """Units an admission project can count in quota: the units it gates Bind for, else its units."""
    return f.role_units(ContractPoint.BIND) or f.units

