"""Compose: workload profile + SLO + pool + constraints -> ranked stacks whose contracts hold.

How a stack is found (every preference is data in fixtures/rules/; nothing here names a project):

1. Pools. The profile's pool templates (profiles.yaml) are narrowed by the SLO's isolation
   (composition.yaml `isolation`); the mixed profile keeps one pool per isolation level.
2. Pool options. For each pool: a unit whose isolation the pool accepts (units.yaml) and whose
   hardware the pool has (MIG needs MIG-capable GPUs); a device handoff that advertises and
   allocates that unit; the data-plane mechanism whose primary unit it is (none for whole GPUs or
   DRA devices).
3. Cluster slots. Admission and scheduling candidates by layer, kind and contract role. A slot
   reached only through a secondary layer counts only if the project also fills a slot of its
   primary layer. Projects that members `require` join as supporting components.
4. Checks per combination: conflicts (within the nodes that share them: projects of different
   pools may conflict), requirements not excluded, the three contract points for every pool
   (Advertise by the handoff; Bind by a scheduler or extender on L2/L3, with admission able to
   count the unit; Allocate by the handoff).
5. Score = unit fit (profile + SLO goal) + native handoff + default-scheduler points + capability
   points, each capability counted once (profile + goal + tenancy) + a component cost for each
   deployable project outside the cluster baseline that no other member ships. Workload unit,
   platform lifecycle and observability are then added where they raise the score. Required
   capabilities and required projects are checked last. Every item is in the score breakdown.
"""

from __future__ import annotations

import heapq
import itertools
from collections import Counter
from dataclasses import dataclass, field

from pydantic import ValidationError

from placement.rules.data import Isolation, ProfileRule, SlotName
from placement.rules.errors import RulesInputError
from placement.rules.graph import CONTROL_MAP, CatalogGraph, ProjectFacts
from placement.rules.models import (
    CompatibleProject,
    CompatibleResult,
    ComposeRequest,
    ComposeResult,
    Constraints,
    ContractCheck,
    Pool,
    PoolPlan,
    Rejection,
    ScoreItem,
    Slo,
    SlotAssignment,
    SlotFailure,
    Stack,
    SupportingComponent,
)
from placement.schemas import RESOURCE_UNIT_LABELS, ContractPoint, ResourceUnit, format_error_location

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


def _label(unit: ResourceUnit) -> str:
    return RESOURCE_UNIT_LABELS[unit]


def _unit_list(units) -> str:
    order = list(ResourceUnit)
    return ", ".join(_label(u) for u in sorted(units, key=order.index))


@dataclass(frozen=True)
class PoolSpec:
    name: str
    accepts: tuple[Isolation, ...]
    gpus: int
    serves: str


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
    _local: dict[str, float] = field(default_factory=dict)
    _costs: dict[str, bool] = field(default_factory=dict)
    cap_slot: dict[str, SlotName] = field(default_factory=dict)  # capability -> slot of its owning layer

    @property
    def required_cap_set(self) -> set[str]:
        return {cap for cap, _ in self.required_caps}

    def reject(self, slot: SlotName, slug: str, reason: str) -> None:
        self.why_not.setdefault((slot, slug), reason)

    def facts(self, slug: str) -> ProjectFacts:
        return self.graph.projects[slug]


# --- request validation and context ---------------------------------------------------------------


def _validated(request: ComposeRequest | dict) -> ComposeRequest:
    if isinstance(request, ComposeRequest):
        return request
    try:
        return ComposeRequest.model_validate(request)
    except ValidationError as exc:
        errors: dict[str, list[str]] = {}
        for e in exc.errors():
            errors.setdefault(format_error_location(tuple(e["loc"])), []).append(e["msg"])
        raise RulesInputError(errors) from None


def _resolve(graph: CatalogGraph, request: ComposeRequest) -> Context:
    rules = graph.rules
    errors: dict[str, list[str]] = {}
    profile = rules.profile.get(request.profile)
    if profile is None:
        errors["profile"] = [f"Unknown workload profile {request.profile!r}; known: {', '.join(rules.profile)}."]
    slo = request.slo
    if slo is None and profile is not None:
        slo = Slo(**profile.default_slo.model_dump())
    if slo is not None and slo.goal not in rules.goal:
        errors["slo.goal"] = [f"Unknown SLO goal {slo.goal!r}; known: {', '.join(rules.goal)}."]
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

    # pools by isolation level
    slo_accepts = rules.isolation_accepts[slo.isolation]
    templates = []
    for t in profile.pools:
        accepts = tuple(slo_accepts) if t.accepts == "from_slo" else tuple(a for a in t.accepts if a in slo_accepts)
        if not accepts:
            notes.append(
                f"Pool {t.name!r} ({'/'.join(t.accepts)} isolation) dropped: the SLO asks for {slo.isolation.value} "
                f"isolation, so its work ({t.serves[0].lower()}{t.serves[1:]}) goes to the remaining pools."
            )
            continue
        templates.append((t, accepts))
    if not templates:
        templates = [(profile.pools[0], tuple(slo_accepts))]
    if len(templates) > pool.gpu_count:
        for t, _ in templates[pool.gpu_count :]:
            notes.append(f"Pool {t.name!r} dropped: {pool.gpu_count} GPU(s) cannot be split into {len(templates)} pools.")
        templates = templates[: pool.gpu_count]
    total_share = sum(t.share for t, _ in templates)
    counts = [max(1, int(pool.gpu_count * t.share / total_share)) for t, _ in templates]
    counts[0] += pool.gpu_count - sum(counts)
    pools = [PoolSpec(t.name, accepts, n, t.serves) for (t, accepts), n in zip(templates, counts)]
    if len(pools) > 1:
        notes.append(
            "Pools split by isolation level: "
            + "; ".join(f"{p.name} ({'/'.join(a.value for a in p.accepts)}, {p.gpus} GPUs): {p.serves}" for p in pools)
            + ". Per-pool components run only on their pool's nodes."
        )

    goal = rules.goal[slo.goal]
    tenancy = rules.tenancy_for(slo.multi_tenant)
    unit_points: dict[ResourceUnit, list[tuple[float, str]]] = {}
    for pref in [*profile.unit_preferences, *goal.unit_preferences]:
        unit_points.setdefault(pref.unit, []).append((pref.points, pref.why))
    cap_points: dict[str, list[tuple[float, str]]] = {}
    for pref in [*profile.capability_preferences, *goal.capability_preferences, *tenancy.capability_preferences]:
        cap_points.setdefault(pref.capability, []).append((pref.points, pref.why))
    required_caps = [(r.capability, r.why) for r in [*profile.required_capabilities, *tenancy.required_capabilities]]
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
        cap_slot=_capability_slots(graph),
    )


def _capability_slots(graph: CatalogGraph) -> dict[str, SlotName]:
    slots: dict[str, SlotName] = {}
    for cap in graph.vocabulary.capabilities:
        for rule in graph.rules.slots:
            if rule.map == cap.owner_map and set(rule.layers) & set(cap.owner_layers):
                slots[cap.slug] = rule.slot
                break
    return slots


# --- candidates -----------------------------------------------------------------------------------


def _costs_component(ctx: Context, slug: str) -> bool:
    cached = ctx._costs.get(slug)
    if cached is None:
        kind = ctx.facts(slug).ref.kind.value
        cached = ctx._costs[slug] = slug not in ctx.baseline and kind in ctx.graph.rules.component_cost.kinds
    return cached


def _local(ctx: Context, slug: str) -> float:
    """Optimistic score of one project alone: positive capability points minus its component cost."""
    cached = ctx._local.get(slug)
    if cached is None:
        caps = ctx.facts(slug).capabilities
        points = sum(w for cap, w in ctx.cap_weight.items() if w > 0 and cap in caps)
        cached = ctx._local[slug] = points + (ctx.graph.rules.component_cost.points if _costs_component(ctx, slug) else 0.0)
    return cached


def _unit_score(ctx: Context, unit: ResourceUnit) -> float:
    return ctx.unit_total.get(unit, 0.0)


def _keeps_default_scheduler(ctx: Context, slug: str | None) -> bool:
    default = ctx.graph.rules.default_scheduler
    return slug is not None and (slug == default or default in ctx.facts(slug).requires)


def _not_excluded(ctx: Context, slot: SlotName, slugs) -> list[str]:
    """Drop projects the constraints exclude and those serving other workloads (excluded capabilities)."""
    kept = []
    for slug in slugs:
        if slug in ctx.excluded:
            ctx.reject(slot, slug, f"{slug} is excluded by the constraints.")
            continue
        other = next((c for c in ctx.graph.rules.excluded_capabilities if c.capability in ctx.facts(slug).capabilities), None)
        if other is not None:
            ctx.reject(slot, slug, f"{slug}: {other.why}")
            continue
        kept.append(slug)
    return kept


def _cluster_candidates(ctx: Context, slot: SlotName) -> list[str]:
    graph = ctx.graph
    slugs = _not_excluded(ctx, slot, graph.slot_candidates[slot])
    if slot == SlotName.SCHEDULING_POLICY and ctx.constraints.keep_default_scheduler:
        kept = []
        for slug in slugs:
            if _keeps_default_scheduler(ctx, slug):
                kept.append(slug)
            else:
                ctx.reject(slot, slug, f"{slug} replaces the default scheduler ({graph.rules.default_scheduler}); the constraints keep it.")
        slugs = kept
    return slugs


def _admission_units(f: ProjectFacts) -> frozenset[ResourceUnit]:
    """Units an admission project can count in quota: the units it gates Bind for, else its units."""
    return f.role_units(ContractPoint.BIND) or f.units


def _placeable(ctx: Context, slot: SlotName, slugs, companions: set[str]) -> list[str]:
    """Candidates that reach the slot by their primary layer, or whose primary role is among
    `companions` (the candidates of the slots where they are primary)."""
    primary = ctx.graph.slot_primary[slot]
    return [s for s in slugs if s in primary or s in companions]


def _acceptable_units(ctx: Context, spec: PoolSpec) -> list[ResourceUnit]:
    rules = ctx.graph.rules
    return [
        u for u in ResourceUnit
        if rules.unit[u].isolation != "not_applicable"
        and Isolation(rules.unit[u].isolation) in spec.accepts
        and (ctx.pool.mig_capable or not rules.unit[u].needs_mig_capable)
    ]


def _best(ctx: Context, ranked: list[str], keep: set) -> list[str]:
    """The first TOP_POOL_OPTIONS of a ranked list, plus required projects and those in `keep`."""
    head = ranked[:TOP_POOL_OPTIONS]
    return head + [s for s in ranked[TOP_POOL_OPTIONS:] if s in keep or s in ctx.required]


def _pool_options(ctx: Context, spec: PoolSpec, companions: set[str]) -> list[PoolOption]:
    graph, rules = ctx.graph, ctx.graph.rules
    primary_only = rules.slot[SlotName.DATA_PLANE_UNIT].unit_must_be_primary
    handoffs_all = _placeable(ctx, SlotName.DEVICE_HANDOFF, _not_excluded(
        ctx, SlotName.DEVICE_HANDOFF, graph.slot_candidates[SlotName.DEVICE_HANDOFF]), companions)
    planes_all = _placeable(ctx, SlotName.DATA_PLANE_UNIT, _not_excluded(
        ctx, SlotName.DATA_PLANE_UNIT, graph.slot_candidates[SlotName.DATA_PLANE_UNIT]), companions)
    options: list[PoolOption] = []
    for unit in ResourceUnit:
        rule = rules.unit[unit]
        if rule.isolation == "not_applicable":
            continue
        reason = None
        if Isolation(rule.isolation) not in spec.accepts:
            reason = (f"{_label(unit)} gives {rule.isolation} isolation; the {spec.name} pool needs "
                      f"{'/'.join(a.value for a in spec.accepts)}.")
        elif rule.needs_mig_capable and not ctx.pool.mig_capable:
            reason = f"{_label(unit)} needs MIG-capable GPUs; the pool's {ctx.pool.gpu_model} is not MIG-capable."
        if reason:
            for slug in planes_all:
                if ctx.facts(slug).primary_unit == unit:
                    ctx.reject(SlotName.DATA_PLANE_UNIT, slug, reason)
            for slug in handoffs_all:
                if ctx.facts(slug).primary_unit == unit:
                    ctx.reject(SlotName.DEVICE_HANDOFF, slug, reason)
            continue
        handoffs = [
            s for s in handoffs_all
            if unit in ctx.facts(s).role_units(ContractPoint.ADVERTISE) and unit in ctx.facts(s).role_units(ContractPoint.ALLOCATE)
        ]
        if rule.needs_data_plane_project:
            planes: list[str | None] = [
                s for s in planes_all
                if (ctx.facts(s).primary_unit == unit if primary_only else unit in ctx.facts(s).units)
            ]
        else:
            planes = [None]
        # keep the most promising few of each before pairing them (large catalogs)
        native_of = {h: rules.native_handoff.points if ctx.facts(h).primary_unit == unit else 0.0 for h in handoffs}
        handoffs = _best(ctx, sorted(handoffs, key=lambda h: (-(native_of[h] + _local(ctx, h)), h)), keep=set(planes))
        if planes != [None]:
            planes = _best(ctx, sorted(planes, key=lambda d: (-_local(ctx, d), d)), keep=set(handoffs))
        base = _unit_score(ctx, unit)
        for dp in planes:
            for h in handoffs:
                if dp is not None and h in ctx.facts(dp).conflicts:
                    ctx.reject(SlotName.DEVICE_HANDOFF, h, f"{h} conflicts with {dp}.")
                    continue
                if dp is not None and dp != h and dp in ctx.facts(h).bundles_all and h in planes:
                    # the handoff ships this mechanism and creates the unit itself: one project, not two
                    continue
                native = rules.native_handoff.points if ctx.facts(h).primary_unit == unit else 0.0
                local = base + native + _local(ctx, h) + (0.0 if dp in (None, h) else _local(ctx, dp))
                options.append(PoolOption(spec, unit, dp, h, local))
    options.sort(key=lambda o: (-o.local, o.unit.value, o.data_plane or "", o.handoff))
    keep = options[:TOP_POOL_OPTIONS]
    for slug in ctx.required:  # a required project stays in the search
        if not any(slug in (o.data_plane, o.handoff) for o in keep):
            keep.extend([o for o in options if slug in (o.data_plane, o.handoff)][:2])
    return keep


def _top_cluster(ctx: Context, slot: SlotName, slugs: list[str], units: set[ResourceUnit], companions: set[str]) -> list[str]:
    """The best candidates by local score, plus the best few per pool unit and per required
    capability, so that pruning never drops the only candidates that make a stack possible."""
    ranked = sorted(_placeable(ctx, slot, slugs, companions), key=lambda s: (-_local(ctx, s), s))
    keep = list(ranked[:TOP_CLUSTER])
    if slot == SlotName.SCHEDULING_POLICY:
        keep.extend(s for s in ranked if _keeps_default_scheduler(ctx, s) and s not in keep)
    for unit in sorted(units, key=lambda u: u.value):
        if slot == SlotName.SCHEDULING_POLICY:
            fit = [s for s in ranked if unit in ctx.facts(s).role_units(ContractPoint.BIND)]
        else:
            fit = [s for s in ranked if unit in _admission_units(ctx.facts(s))]
        keep.extend(s for s in fit[:TOP_PER_UNIT] if s not in keep)
    for cap, _why in ctx.required_caps:
        fit = [s for s in ranked if cap in ctx.facts(s).capabilities]
        keep.extend(s for s in fit[:TOP_PER_UNIT] if s not in keep)
    keep.extend(s for s in ctx.required if s in slugs and s not in keep)
    return keep


# --- one combination ------------------------------------------------------------------------------


@dataclass
class Candidate:
    """One combination under evaluation. The search works on plain numbers; `explain` builds the
    pydantic score items and contract checks only for the stacks that are returned."""

    cluster: dict[SlotName, str | None]
    pools: tuple[PoolOption, ...]
    supporting: dict[str, str] = field(default_factory=dict)  # slug -> required by
    score: float = 0.0
    covered: dict[str, tuple[SlotName | None, str]] = field(default_factory=dict)  # capability -> first provider
    members: list[str] = field(default_factory=list)
    charged: list[str] = field(default_factory=list)
    items: list[ScoreItem] = field(default_factory=list)
    contracts: list[ContractCheck] = field(default_factory=list)
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


def _support(ctx: Context, cand: Candidate) -> str | None:
    """Add what members `require` as supporting components; fail if the constraints exclude it."""
    present = cand.slot_members()
    supporting: dict[str, str] = {}
    queue = sorted(present)
    while queue:
        slug = queue.pop(0)
        for needed in sorted(ctx.facts(slug).requires):
            if needed in present or needed in ctx.baseline or needed in supporting:
                continue
            if needed in ctx.excluded:
                return f"{slug} requires {needed}, which the constraints exclude"
            supporting[needed] = slug
            queue.append(needed)
    cand.supporting = supporting
    return None


def _conflict(ctx: Context, cand: Candidate) -> str | None:
    """Conflicts matter only between projects on the same nodes: cluster-wide ones and one pool's."""
    shared = [s for s in cand.cluster.values() if s] + list(cand.supporting)
    scopes = [shared + [s for s in (o.handoff, o.data_plane) if s] for o in cand.pools] or [shared]
    for scope in scopes:
        distinct = list(dict.fromkeys(scope))
        for i, a in enumerate(distinct):
            conflicts = ctx.facts(a).conflicts
            for b in distinct[i + 1 :]:
                if b in conflicts:
                    return f"{a} conflicts with {b}"
    return None


def _secondary_only(ctx: Context, cand: Candidate) -> str | None:
    """A slot reached through a secondary layer needs the project in a slot of its primary layer too."""
    assigned = cand.assignments()
    primary_filled = {slug for slot, _, slug in assigned if slug in ctx.graph.slot_primary[slot]}
    for slot, _, slug in assigned:
        if slug not in ctx.graph.slot_primary[slot] and slug not in primary_filled:
            return f"{slug} can fill {slot.value} {SECONDARY_ONLY}"
    return None


def _binders(ctx: Context, cand: Candidate, opt: PoolOption) -> list[str]:
    """Stack members on L2/L3 that bind the pool's unit (the scheduler, or an extender such as HAMi's)."""
    scope = [cand.cluster.get(SlotName.SCHEDULING_POLICY), *cand.cluster.values(), *cand.supporting, opt.handoff, opt.data_plane]
    return [
        s for s in dict.fromkeys(x for x in scope if x)
        if opt.unit in ctx.facts(s).role_units(ContractPoint.BIND) and ctx.facts(s).on(CONTROL_MAP, BIND_LAYERS)
    ]


def _contract_failure(ctx: Context, cand: Candidate) -> str | None:
    adm = cand.cluster.get(SlotName.ADMISSION_QUOTA)
    sched = cand.cluster.get(SlotName.SCHEDULING_POLICY)
    for opt in cand.pools:
        h, label = ctx.facts(opt.handoff), _label(opt.unit)
        if opt.unit not in h.role_units(ContractPoint.ADVERTISE):
            return f"Advertise fails: {h.slug} does not advertise {label}"
        if not _binders(ctx, cand, opt):
            return f"Bind fails: {sched} cannot bind {label}"
        if adm is not None and opt.unit not in _admission_units(ctx.facts(adm)):
            return f"Bind fails: {adm} cannot count {label} in quota"
        if opt.unit not in h.role_units(ContractPoint.ALLOCATE):
            return f"Allocate fails: {h.slug} does not allocate {label}"
    return None


def _evaluate(ctx: Context, cand: Candidate, contracts: bool = True) -> str | None:
    """Why the combination is impossible, or None after scoring it (numbers only). Optional slots do
    not take part in contract points, so adding one re-checks everything but the contracts."""
    reason = (_secondary_only(ctx, cand) or _support(ctx, cand) or _conflict(ctx, cand)
              or (_contract_failure(ctx, cand) if contracts else None))
    if reason:
        return reason
    rules = ctx.graph.rules
    score = 0.0
    for opt in cand.pools:
        score += ctx.unit_total.get(opt.unit, 0.0)
        if ctx.facts(opt.handoff).primary_unit == opt.unit:
            score += rules.native_handoff.points
    if _keeps_default_scheduler(ctx, cand.cluster.get(SlotName.SCHEDULING_POLICY)):
        score += ctx.profile.default_scheduler_points.points
    covered: dict[str, tuple[SlotName | None, str]] = {}
    assigned = cand.assignments()
    owner_slot = ctx.cap_slot
    for slot, _pool, slug in assigned:
        for cap in ctx.facts(slug).capabilities:
            # credit a capability to the slot that owns it when its filler provides it (Volcano's gang
            # scheduling counts for scheduling_policy, not for the workload unit it also fills)
            if cap not in covered or (slot == owner_slot.get(cap) and covered[cap][0] != slot):
                covered[cap] = (slot, slug)
    for slug in cand.supporting:
        for cap in ctx.facts(slug).capabilities:
            covered.setdefault(cap, (None, slug))
    score += sum(ctx.cap_weight[c] for c in covered if c in ctx.cap_weight)
    members = list(dict.fromkeys([slug for _, _, slug in assigned] + list(cand.supporting)))
    bundled: set[str] = set()
    for slug in members:
        bundled |= ctx.facts(slug).bundles_all
    charged = [s for s in members if _costs_component(ctx, s) and s not in bundled]
    score += rules.component_cost.points * len(charged)
    cand.covered, cand.members, cand.charged = covered, members, charged
    cand.score = round(score, 3)
    return None


def _explain(ctx: Context, cand: Candidate) -> None:
    """Score items (each with its why) and the contract checks of a stack that will be returned."""
    rules = ctx.graph.rules
    items: list[ScoreItem] = []
    for opt in cand.pools:
        who = opt.data_plane or opt.handoff
        for points, why in ctx.unit_points.get(opt.unit, ()):
            items.append(ScoreItem(factor="unit_fit", points=points, slot=SlotName.DATA_PLANE_UNIT, project=who,
                                   subject=opt.unit.value, reason=f"{opt.pool.name} pool on {_label(opt.unit)}: {why}"))
        if ctx.facts(opt.handoff).primary_unit == opt.unit and rules.native_handoff.points:
            items.append(ScoreItem(factor="native_handoff", points=rules.native_handoff.points, slot=SlotName.DEVICE_HANDOFF,
                                   project=opt.handoff, subject=opt.handoff,
                                   reason=f"{opt.handoff} for {_label(opt.unit)}: {rules.native_handoff.why}"))
    sched = cand.cluster.get(SlotName.SCHEDULING_POLICY)
    dsp = ctx.profile.default_scheduler_points
    if dsp.points and _keeps_default_scheduler(ctx, sched):
        items.append(ScoreItem(factor="default_scheduler", points=dsp.points, slot=SlotName.SCHEDULING_POLICY, project=sched,
                               subject=rules.default_scheduler, reason=f"{sched} keeps the default scheduler: {dsp.why}"))
    for cap, entries in ctx.cap_points.items():
        if cap in cand.covered:
            slot, slug = cand.covered[cap]
            for points, why in entries:
                items.append(ScoreItem(factor="capability", points=points, slot=slot, project=slug, subject=cap,
                                       reason=f"{ctx.graph.capability_name(cap)} from {slug}: {why}"))
        elif ctx.cap_weight[cap] > 0:
            items.append(ScoreItem(factor="missing_capability", points=0, subject=cap,
                                   reason=f"No project in the stack provides {ctx.graph.capability_name(cap).lower()} "
                                          f"(worth {ctx.cap_weight[cap]:g})."))
    for slug in cand.members:
        if not _costs_component(ctx, slug):
            continue
        if slug not in cand.charged:
            shipper = next(m for m in cand.members if slug in ctx.facts(m).bundles_all)
            items.append(ScoreItem(factor="component_cost", points=0, project=slug, subject=slug,
                                   reason=f"{slug} ships with {shipper}; no extra component."))
            continue
        extra = f" (required by {cand.supporting[slug]})" if slug in cand.supporting else ""
        items.append(ScoreItem(factor="component_cost", points=rules.component_cost.points, project=slug, subject=slug,
                               reason=f"{slug}{extra}: {rules.component_cost.why}"))
    for slot in PERIPHERAL:
        if cand.cluster.get(slot) is None:
            items.append(ScoreItem(factor="empty_slot", points=0, slot=slot, subject=slot.value,
                                   reason=rules.slot[slot].empty_reason))
    cand.items = items

    checks: list[ContractCheck] = []
    adm = cand.cluster.get(SlotName.ADMISSION_QUOTA)
    for opt in cand.pools:
        unit, h = opt.unit, ctx.facts(opt.handoff)
        label, pool = _label(unit), opt.pool.name
        checks.append(ContractCheck(
            point=ContractPoint.ADVERTISE, pool=pool, unit=unit, holds=True, by=[h.slug],
            reason=f"{h.ref.name} advertises {label} on the {pool} pool's nodes: {h.role_how.get(ContractPoint.ADVERTISE, '')}",
        ))
        binders = _binders(ctx, cand, opt)
        reason = " ".join(
            f"{ctx.facts(s).ref.name} binds {label}: {ctx.facts(s).role_how.get(ContractPoint.BIND, '')}" for s in binders
        )
        if adm is not None:
            reason += f" {ctx.facts(adm).ref.name} counts {label} in quota before pods are created."
        checks.append(ContractCheck(point=ContractPoint.BIND, pool=pool, unit=unit, holds=True,
                                    by=binders + ([adm] if adm and adm not in binders else []), reason=reason))
        checks.append(ContractCheck(
            point=ContractPoint.ALLOCATE, pool=pool, unit=unit, holds=True, by=[h.slug],
            reason=f"{h.ref.name} allocates {label} to the container: {h.role_how.get(ContractPoint.ALLOCATE, '')}",
        ))
    cand.contracts = checks


def _slot_fit(ctx: Context, slot: SlotName, slug: str) -> int:
    return len(ctx.facts(slug).capabilities.intersection(ctx.graph.rules.slot[slot].any_capability))


def _fill_peripherals(ctx: Context, cand: Candidate, peripheral: dict[SlotName, list[str]]) -> Candidate | None:
    """Add workload unit, platform lifecycle and observability where they raise the score (or keep it
    equal at no cost because the project is already in the stack or shipped by a member). A required
    project eligible for the slot is always placed. None if a required one cannot be placed."""
    for slot in PERIPHERAL:
        forced = [s for s in ctx.required if s in peripheral[slot] and s not in cand.slot_members()]
        ranked = []
        for slug in forced or peripheral[slot]:
            gain = _peripheral_gain(ctx, cand, slot, slug)
            if gain is None:
                continue
            free = slug in cand.members or any(slug in ctx.facts(m).bundles_all for m in cand.members)
            ranked.append(((round(gain, 6), free, _slot_fit(ctx, slot, slug)), slug))
        ranked.sort(key=lambda item: item[0], reverse=True)
        placed = False
        for key, slug in ranked:  # best first; the exact check confirms it
            if not (forced or key[0] > 0 or (key[0] == 0 and key[1])):
                break
            trial = cand.with_slot(slot, slug)
            if _evaluate(ctx, trial, contracts=False) is None:
                trial.contracts = cand.contracts
                cand, placed = trial, True
                break
        if forced and not placed:
            return None
    return cand


def _peripheral_gain(ctx: Context, cand: Candidate, slot: SlotName, slug: str) -> float | None:
    """Score change of adding `slug` to an optional slot, from sets (None if it cannot join)."""
    f = ctx.facts(slug)
    members = set(cand.members)
    if slug not in ctx.graph.slot_primary[slot] and slug not in members:
        return None  # acts on this slot's layer only alongside its primary role
    new = {slug} | {r for r in f.requires_all if r not in ctx.baseline} - members
    if new & ctx.excluded:
        return None
    for n in new:
        if ctx.facts(n).conflicts & (members | new):
            return None
    gain = 0.0
    for n in new:
        for cap in ctx.facts(n).capabilities:
            if cap not in cand.covered and cap in ctx.cap_weight:
                gain += ctx.cap_weight[cap]
            if cap not in cand.covered and cap in ctx.required_cap_set:
                gain += REQUIRED_FIRST  # choosing only: a required capability beats any preference
    everyone = members | new
    bundled = set()
    for m in everyone:
        bundled |= ctx.facts(m).bundles_all
    cost = ctx.graph.rules.component_cost.points
    charged_after = sum(1 for m in everyone if _costs_component(ctx, m) and m not in bundled)
    gain += cost * (charged_after - len(cand.charged))
    # capabilities are counted once, so duplicates among `new` are removed by re-counting
    if len(new) > 1:
        caps = set()
        for n in new:
            caps |= ctx.facts(n).capabilities
        gain_caps = sum(ctx.cap_weight[c] for c in caps if c not in cand.covered and c in ctx.cap_weight)
        gain_caps += REQUIRED_FIRST * len({c for c in caps if c not in cand.covered and c in ctx.required_cap_set})
        gain = gain_caps + cost * (charged_after - len(cand.charged))
    return gain


def _unmet_demands(ctx: Context, cand: Candidate) -> str | None:
    """Required projects and capabilities, checked once the optional slots are filled."""
    members = set(cand.members)
    missing = [s for s in ctx.required if s not in members]
    if missing:
        return f"lacks required {', '.join(missing)}"
    for cap, _why in ctx.required_caps:
        if cap not in cand.covered:
            return f"no project provides {cap}, which the {ctx.profile.profile} profile requires"
    return None


# --- fast pre-scoring of cores -------------------------------------------------------------------
# The exact evaluation above builds every combination from scratch. To search large catalogs, the
# cluster pair (scheduling, admission) and each pool option are summarised once as a `_Part`, and
# combinations are scored by combining parts with set operations. Only the best cores are then
# evaluated exactly (the exact result is what is returned).


@dataclass(frozen=True)
class _Part:
    members: frozenset[str]
    primary_filled: frozenset[str]
    needs_primary: frozenset[str]
    everyone: frozenset[str]  # members and their supporting components
    conflicts: frozenset[str]
    caps: frozenset[str]
    bundled: frozenset[str]
    costed: frozenset[str]
    binds: frozenset[ResourceUnit]
    base: float
    error: str | None = None


def _part(ctx: Context, placed: list[tuple[SlotName, str]], base: float) -> _Part:
    graph = ctx.graph
    members = frozenset(slug for _, slug in placed)
    primary_filled = frozenset(slug for slot, slug in placed if slug in graph.slot_primary[slot])
    needs = frozenset(slug for slot, slug in placed if slug not in graph.slot_primary[slot]) - primary_filled
    error = None
    supporting: set[str] = set()
    for m in members:
        for needed in ctx.facts(m).requires_all:
            if needed in members or needed in ctx.baseline:
                continue
            if needed in ctx.excluded:
                error = error or f"{m} requires {needed}, which the constraints exclude"
            supporting.add(needed)
    everyone = members | supporting
    conflicts: set[str] = set()
    caps: set[str] = set()
    bundled: set[str] = set()
    binds: set[ResourceUnit] = set()
    for slug in everyone:
        f = ctx.facts(slug)
        conflicts |= f.conflicts
        caps |= f.capabilities
        bundled |= f.bundles_all
        if slug in members and f.on(CONTROL_MAP, BIND_LAYERS):
            binds |= f.role_units(ContractPoint.BIND)
    clash = everyone & conflicts
    if clash and error is None:
        a = sorted(clash)[0]
        b = next(x for x in sorted(everyone) if a in ctx.facts(x).conflicts)
        error = f"{b} conflicts with {a}"
    return _Part(
        members=members, primary_filled=primary_filled, needs_primary=needs, everyone=frozenset(everyone),
        conflicts=frozenset(conflicts), caps=frozenset(caps), bundled=frozenset(bundled),
        costed=frozenset(s for s in everyone if _costs_component(ctx, s)), binds=frozenset(binds), base=base, error=error,
    )


def _combine(ctx: Context, cluster: _Part, sched: str, adm: str, pools: tuple[_Part, ...], options: tuple[PoolOption, ...]) -> tuple[float | None, str | None]:
    """(fast score, None) for a possible core, or (None, reason); reason None = not worth reporting."""
    needs = cluster.needs_primary
    primary = cluster.primary_filled
    for p in pools:
        needs = needs | p.needs_primary
        primary = primary | p.primary_filled
    if not needs <= primary:
        return None, None
    caps = cluster.caps
    costed = cluster.costed
    bundled = cluster.bundled
    base = cluster.base
    counted = _admission_units(ctx.facts(adm))
    for p, opt in zip(pools, options):
        clash = cluster.everyone & p.conflicts
        if clash:
            a = sorted(clash)[0]
            b = next(x for x in sorted(p.everyone) if a in ctx.facts(x).conflicts)
            return None, f"{a} conflicts with {b}"
        if opt.unit not in cluster.binds and opt.unit not in p.binds:
            return None, f"Bind fails: {sched} cannot bind {_label(opt.unit)}"
        if opt.unit not in counted:
            return None, f"Bind fails: {adm} cannot count {_label(opt.unit)} in quota"
        caps = caps | p.caps
        costed = costed | p.costed
        bundled = bundled | p.bundled
        base += p.base
    weight = ctx.cap_weight
    score = base + sum(weight[c] for c in caps if c in weight)
    score += ctx.graph.rules.component_cost.points * len(costed - bundled)
    return round(score, 3), None


# --- results --------------------------------------------------------------------------------------


def _title(ctx: Context, cand: Candidate) -> str:
    if cand._title is None:
        cand._title = _make_title(ctx, cand)
    return cand._title


def _make_title(ctx: Context, cand: Candidate) -> str:
    names: list[str] = []
    for opt in cand.pools:
        if opt.data_plane:
            names.append(ctx.facts(opt.data_plane).ref.name)
        else:
            names.append(f"{_label(opt.unit)} ({ctx.facts(opt.handoff).ref.name})")
    for slot in (SlotName.SCHEDULING_POLICY, SlotName.ADMISSION_QUOTA):
        slug = cand.cluster.get(slot)
        if slug:
            names.append(ctx.facts(slug).ref.name)
    return " + ".join(dict.fromkeys(names))


def _slot_why(ctx: Context, cand: Candidate, slot: SlotName, slug: str, opt: PoolOption | None) -> tuple[str, list[str]]:
    f = ctx.facts(slug)
    contributes = sorted(cap for cap, (s, who) in cand.covered.items() if who == slug and s == slot)
    weighted = [c for c in contributes if ctx.cap_weight.get(c)]
    rule = ctx.graph.rules.slot[slot]
    if slot == SlotName.DATA_PLANE_UNIT and opt is not None:
        u = ctx.graph.rules.unit[opt.unit]
        why = f"Creates {_label(opt.unit)} for the {opt.pool.name} pool ({u.isolation} isolation: {u.note})"
    elif slot == SlotName.DEVICE_HANDOFF and opt is not None:
        why = f"Advertises and allocates {_label(opt.unit)} on the {opt.pool.name} pool's nodes"
    else:
        why = f"{rule.name}: {f.doc.placement.promise}"
    if weighted:
        why += f" Adds: {', '.join(ctx.graph.capability_name(c).lower() for c in weighted)}."
    return why.rstrip(".") + ".", contributes


def _to_stack(ctx: Context, cand: Candidate, rank: int, why_rank: str) -> Stack:
    graph = ctx.graph
    slots: list[SlotAssignment] = []
    for slot in SLOT_ORDER:
        if slot in POOL_SLOTS:
            for opt in cand.pools:
                slug = opt.handoff if slot == SlotName.DEVICE_HANDOFF else opt.data_plane
                if slug:
                    why, contributes = _slot_why(ctx, cand, slot, slug, opt)
                    slots.append(SlotAssignment(slot=slot, pool=opt.pool.name, project=graph.projects[slug].ref, why=why, contributes=contributes))
                else:
                    slots.append(SlotAssignment(slot=slot, pool=opt.pool.name, project=None,
                                                why=f"{graph.rules.slot[slot].empty_reason.rstrip('.')} ({_label(opt.unit)} via {opt.handoff}).",
                                                contributes=[]))
        else:
            slug = cand.cluster.get(slot)
            if slug:
                why, contributes = _slot_why(ctx, cand, slot, slug, None)
                slots.append(SlotAssignment(slot=slot, project=graph.projects[slug].ref, why=why, contributes=contributes))
            else:
                slots.append(SlotAssignment(slot=slot, project=None, why=graph.rules.slot[slot].empty_reason))
    pools = [
        PoolPlan(
            name=o.pool.name, isolation=list(o.pool.accepts), unit=o.unit, unit_isolation=graph.rules.unit[o.unit].isolation,
            gpus=o.pool.gpus, data_plane=o.data_plane, device_handoff=o.handoff, serves=o.pool.serves,
        )
        for o in cand.pools
    ]
    supporting = [
        SupportingComponent(
            project=graph.projects[slug].ref, required_by=by,
            why=f"{by} requires it. {graph.projects[slug].doc.placement.promise}",
        )
        for slug, by in cand.supporting.items()
    ]
    return Stack(
        rank=rank,
        score=cand.score,
        title=_title(ctx, cand),
        slots=slots,
        supporting=supporting,
        pools=pools,
        contracts=cand.contracts,
        score_breakdown=cand.items,
        capabilities=sorted(cand.covered),
        components=cand.members,
        why_rank=why_rank,
    )


def _item_key(item: ScoreItem) -> tuple[str, str]:
    return (item.factor, item.subject)


def _why_rank(ctx: Context, cand: Candidate, rank: int, above: Candidate | None) -> str:
    top = sorted((i for i in cand.items if i.points), key=lambda i: -abs(i.points))
    if rank == 1 or above is None:
        plus = [f"{i.subject} {i.points:+g}" for i in top if i.points > 0][:4]
        minus = [f"{i.subject} {i.points:+g}" for i in top if i.points < 0][:3]
        text = f"Ranks first with {cand.score:g} points"
        if plus:
            text += f"; most from {', '.join(plus)}"
        if minus:
            text += f"; costs {', '.join(minus)}"
        return text + "."
    mine: dict[tuple[str, str], float] = {}
    for i in cand.items:
        mine[_item_key(i)] = mine.get(_item_key(i), 0) + i.points
    theirs: dict[tuple[str, str], float] = {}
    for i in above.items:
        theirs[_item_key(i)] = theirs.get(_item_key(i), 0) + i.points
    diffs = []
    for key in set(mine) | set(theirs):
        delta = mine.get(key, 0) - theirs.get(key, 0)
        if abs(delta) > 1e-9:
            diffs.append((delta, key))
    diffs.sort(key=lambda d: (d[0], d[1]))
    parts = []
    for delta, (factor, subject) in diffs[:4]:
        what = {"unit_fit": "unit", "capability": "capability", "component_cost": "component"}.get(factor, factor)
        parts.append(f"{what} {subject} {delta:+g}")
    gap = round(above.score - cand.score, 3)
    text = f"{gap:g} point{'s' if gap != 1 else ''} below #{rank - 1} ({cand.score:g} vs {above.score:g})"
    if parts:
        text += ": " + ", ".join(parts)
    if gap == 0:
        if len(cand.charged) != len(above.charged):
            text += f"; same score with {len(cand.charged)} components to run instead of {len(above.charged)}"
        elif len(cand.members) != len(above.members):
            extra = sorted(set(cand.members) - set(above.members))
            text += f"; same score with more projects in the stack ({', '.join(extra) or len(cand.members)})"
        else:
            text += "; same score and size, ordered by name"
    return text + "."


def _slot_for_capability(ctx: Context, cap_slug: str) -> SlotName | None:
    cap = ctx.graph.capability(cap_slug)
    if cap is None:
        return None
    for rule in ctx.graph.rules.slots:
        if rule.map == cap.owner_map and set(rule.layers) & set(cap.owner_layers):
            return rule.slot
    return None


def _rejections(ctx: Context, slot: SlotName, limit: int = 12) -> list[Rejection]:
    return [Rejection(project=slug, reason=reason) for (s, slug), reason in ctx.why_not.items() if s == slot][:limit]


def _diagnose_pool(ctx: Context, spec: PoolSpec) -> SlotFailure:
    graph = ctx.graph
    acceptable = _acceptable_units(ctx, spec)
    if not acceptable:
        return SlotFailure(
            slot=SlotName.DATA_PLANE_UNIT, pool=spec.name,
            reason=(f"No resource unit gives {'/'.join(a.value for a in spec.accepts)} isolation on the pool's "
                    f"{ctx.pool.gpu_model} GPUs."),
            rejected=_rejections(ctx, SlotName.DATA_PLANE_UNIT),
        )
    handoff_units = {
        u for s in graph.slot_candidates[SlotName.DEVICE_HANDOFF] if s not in ctx.excluded
        for u in ctx.facts(s).role_units(ContractPoint.ADVERTISE) & ctx.facts(s).role_units(ContractPoint.ALLOCATE)
    }
    if not handoff_units & set(acceptable):
        return SlotFailure(
            slot=SlotName.DEVICE_HANDOFF, pool=spec.name,
            reason=(f"No remaining device handoff advertises and allocates a unit the {spec.name} pool accepts "
                    f"({_unit_list(acceptable)})."),
            rejected=_rejections(ctx, SlotName.DEVICE_HANDOFF),
        )
    return SlotFailure(
        slot=SlotName.DATA_PLANE_UNIT, pool=spec.name,
        reason=(f"No remaining data-plane mechanism creates a unit the {spec.name} pool accepts "
                f"({_unit_list(acceptable)}) together with a device handoff that delivers it."),
        rejected=_rejections(ctx, SlotName.DATA_PLANE_UNIT) + _rejections(ctx, SlotName.DEVICE_HANDOFF),
    )


def _order_key(ctx: Context, cand: Candidate) -> tuple:
    # best score; then fewer components to run; then fewer projects; then by name (deterministic)
    return (-cand.score, len(cand.charged), len(cand.members), _title(ctx, cand), ",".join(cand.members))


def compose(graph: CatalogGraph, request: ComposeRequest | dict) -> ComposeResult:
    """Ranked stacks for a workload profile, SLO, pool and constraints (see the module docstring)."""
    request = _validated(request)
    ctx = _resolve(graph, request)
    failures: list[SlotFailure] = []

    cluster: dict[SlotName, list[str]] = {}
    for slot in (*CLUSTER_CORE, *PERIPHERAL):
        cluster[slot] = _cluster_candidates(ctx, slot)
        if not cluster[slot] and graph.rules.slot[slot].required:
            failures.append(SlotFailure(
                slot=slot,
                reason=f"No catalog project can fill {graph.rules.slot[slot].name.lower()} under these constraints.",
                rejected=_rejections(ctx, slot),
            ))
    # The scheduler is chosen among those that can bind some acceptable unit; projects acting on a
    # secondary layer (Koordinator's device handoff, Volcano's queues) come along with their scheduler role.
    acceptable = {u for spec in ctx.pools for u in _acceptable_units(ctx, spec)}
    scheduling = _top_cluster(ctx, SlotName.SCHEDULING_POLICY, cluster[SlotName.SCHEDULING_POLICY], acceptable, set())
    pool_options: list[list[PoolOption]] = []
    for spec in ctx.pools:
        options = _pool_options(ctx, spec, set(scheduling))
        pool_options.append(options)
        if not options:
            failures.append(_diagnose_pool(ctx, spec))
    units = {o.unit for options in pool_options for o in options}
    pooled = {s for options in pool_options for o in options for s in (o.handoff, o.data_plane) if s}
    admission = _top_cluster(ctx, SlotName.ADMISSION_QUOTA, cluster[SlotName.ADMISSION_QUOTA], units, set(scheduling) | pooled)

    # required capabilities: can any remaining candidate that is placeable provide them? A project
    # reaching a slot only through a secondary layer counts only if its primary role is still open.
    pool_members = {
        SlotName.DEVICE_HANDOFF: {o.handoff for options in pool_options for o in options},
        SlotName.DATA_PLANE_UNIT: {o.data_plane for options in pool_options for o in options if o.data_plane},
    }
    open_slots = {**{slot: set(v) for slot, v in cluster.items()}, **pool_members}
    primary_open = {s for slot, slugs in open_slots.items() for s in slugs if s in graph.slot_primary[slot]}
    reachable = {s for slugs in open_slots.values() for s in slugs if s in primary_open}
    for cap, why in ctx.required_caps:
        if any(cap in ctx.facts(s).capabilities for s in reachable):
            continue
        slot = _slot_for_capability(ctx, cap)
        rejected = [
            Rejection(project=s, reason=ctx.why_not.get((slot, s), f"{s} cannot fill the {slot.value if slot else ''} slot here."))
            for s in graph.providers.get(cap, ()) if cap not in ctx.facts(s).misuses
        ]
        failures.append(SlotFailure(
            slot=slot,
            reason=(f"{graph.capability_name(cap)} is required ({why.rstrip('.')}) but no remaining "
                    f"{graph.rules.slot[slot].name.lower() if slot else 'stack'} candidate provides it."),
            rejected=rejected,
        ))
    # required projects: do they fit a slot here at all?
    for slug in ctx.required:
        if any(slug in (o.handoff, o.data_plane) for options in pool_options for o in options):
            continue
        if any(slug in v for v in cluster.values()):
            continue
        reasons = [reason for (_slot, s), reason in ctx.why_not.items() if s == slug]
        slots = graph.slots_of(slug)
        if not slots:
            reasons.append(f"Its placement matches no slot's layer, kind and contract role.")
        failures.append(SlotFailure(
            slot=slots[0] if slots else None,
            reason=f"{slug} is required but cannot take part: " + " ".join(reasons or ["no slot accepts it here."]),
            rejected=[Rejection(project=slug, reason=r) for r in reasons],
        ))

    # required projects that conflict can only meet on different pools' nodes
    for a, b in itertools.combinations(ctx.required, 2):
        if b not in ctx.facts(a).conflicts:
            continue
        per_pool = [x for x in (a, b) if any(x in (o.handoff, o.data_plane) for options in pool_options for o in options)]
        if len(ctx.pools) < 2 or len(per_pool) < 2:
            failures.append(SlotFailure(
                slot=next((slot for slot in graph.slots_of(b)), None),
                reason=(f"{a} and {b} are both required but conflict (catalog conflicts_with); they could only run on "
                        f"different node pools, and this stack has "
                        + (f"one pool ({ctx.pools[0].name})." if len(ctx.pools) < 2 else "no pool slot for both.")),
                rejected=[Rejection(project=b, reason=f"Conflicts with {a}.")],
            ))

    stacks: list[Stack] = []
    excluded: Counter[str] = Counter()
    checked = 0
    if not failures:
        peripheral = {}
        companions = set(scheduling) | set(admission) | pooled
        for slot in PERIPHERAL:
            ranked = sorted(_placeable(ctx, slot, cluster[slot], companions), key=lambda s: (-_local(ctx, s), s))
            peripheral[slot] = ranked[:PERIPHERAL_OPTIONS] + [s for s in ctx.required if s in ranked[PERIPHERAL_OPTIONS:]]
        dsp = ctx.profile.default_scheduler_points.points
        cluster_parts = []
        for sched in scheduling:
            for adm in admission:
                part = _part(ctx, [(SlotName.SCHEDULING_POLICY, sched), (SlotName.ADMISSION_QUOTA, adm)],
                             dsp if _keeps_default_scheduler(ctx, sched) else 0.0)
                cluster_parts.append((sched, adm, part))
        native = graph.rules.native_handoff.points
        pool_parts = [
            {o: _part(ctx, [(SlotName.DEVICE_HANDOFF, o.handoff)] + ([(SlotName.DATA_PLANE_UNIT, o.data_plane)] if o.data_plane else []),
                      ctx.unit_total.get(o.unit, 0.0) + (native if ctx.facts(o.handoff).primary_unit == o.unit else 0.0))
             for o in options}
            for options in pool_options
        ]
        wanted = max(CORES_TO_FINISH, request.limit * 3) * 2
        # Required projects that no optional slot can take must be in the core.
        core_required = {s for s in ctx.required if not any(s in cluster[slot] for slot in PERIPHERAL)}
        # Upper bounds let large searches stop early: a part cannot score more than its base plus
        # every positive capability it brings, minus components nothing in the stack could ship.
        positive = {c: w for c, w in ctx.cap_weight.items() if w > 0}
        cost = graph.rules.component_cost.points
        all_pool_bundles = frozenset().union(*(p.bundled for parts in pool_parts for p in parts.values()))
        all_cluster_bundles = frozenset().union(*(c.bundled for _, _, c in cluster_parts))

        def bound(base: float, caps, costed, bundled) -> float:
            return base + sum(positive.get(c, 0.0) for c in caps) + cost * len(costed - bundled)

        ranked_cluster = sorted(
            ((bound(c.base, c.caps, c.costed, c.bundled | all_pool_bundles), sched, adm, c) for sched, adm, c in cluster_parts),
            key=lambda item: -item[0],
        )
        pool_combos = []
        for pools in itertools.product(*pool_options):
            parts = tuple(pool_parts[i][o] for i, o in enumerate(pools))
            caps = frozenset().union(*(p.caps for p in parts))
            costed = frozenset().union(*(p.costed for p in parts))
            bundled = frozenset().union(*(p.bundled for p in parts)) | all_cluster_bundles
            pool_combos.append((bound(sum(p.base for p in parts), caps, costed, bundled), pools, parts))
        pool_combos.sort(key=lambda item: -item[0])
        exhaustive = len(pool_combos) * len(ranked_cluster) <= EXHAUSTIVE_LIMIT
        top_cluster_bound = ranked_cluster[0][0] if ranked_cluster else 0.0
        heap: list[tuple[float, int, str, str, tuple[PoolOption, ...]]] = []
        for pool_bound, pools, parts in pool_combos:
            if not exhaustive and len(heap) >= wanted and pool_bound + top_cluster_bound < heap[0][0]:
                break
            broken = next((p.error for p in parts if p.error), None)
            members = frozenset().union(*(p.members for p in parts))
            for cluster_bound, sched, adm, cpart in ranked_cluster:
                if not exhaustive and len(heap) >= wanted and pool_bound + cluster_bound < heap[0][0]:
                    break
                checked += 1
                error = broken or cpart.error
                if error:
                    excluded[error] += 1
                    continue
                if not core_required <= (members | cpart.members):
                    continue
                score, reason = _combine(ctx, cpart, sched, adm, parts, pools)
                if score is None:
                    if reason:
                        excluded[reason] += 1
                    continue
                item = (score, -checked, sched, adm, pools)
                if len(heap) < wanted:
                    heapq.heappush(heap, item)
                elif item > heap[0]:
                    heapq.heapreplace(heap, item)
        best = sorted(heap, reverse=True)
        cores: list[Candidate] = []
        for _score_fast, _n, sched, adm, pools in best:
            cand = Candidate(cluster={SlotName.ADMISSION_QUOTA: adm, SlotName.SCHEDULING_POLICY: sched}, pools=pools)
            reason = _evaluate(ctx, cand)
            if reason:
                if not reason.endswith(SECONDARY_ONLY):
                    excluded[reason] += 1
                continue
            cores.append(cand)
        cores.sort(key=lambda c: _order_key(ctx, c))
        finished: list[Candidate] = []
        for core in cores[: max(CORES_TO_FINISH, request.limit * 3)]:
            cand = _fill_peripherals(ctx, core, peripheral)
            reason = "a required project does not fit next to the rest" if cand is None else _unmet_demands(ctx, cand)
            if reason:
                excluded[reason] += 1
                continue
            finished.append(cand)
        finished.sort(key=lambda c: _order_key(ctx, c))
        chosen = finished[: request.limit]
        for cand in chosen:
            _explain(ctx, cand)
        for i, cand in enumerate(chosen):
            stacks.append(_to_stack(ctx, cand, i + 1, _why_rank(ctx, cand, i + 1, chosen[i - 1] if i else None)))
        if not chosen:
            common = "; ".join(f"{reason} ({n}x)" for reason, n in excluded.most_common(5)) or "no combination of them is possible"
            failures.append(SlotFailure(slot=None, reason=f"Every combination of the remaining candidates fails: {common}."))

    return ComposeResult(
        catalog_version=graph.version,
        profile=ctx.profile.profile,
        slo=ctx.slo,
        pool=ctx.pool,
        constraints=ctx.constraints,
        feasible=bool(stacks),
        stacks=stacks,
        failures=failures,
        notes=ctx.notes,
        excluded=[f"{reason} ({n} combination{'s' if n != 1 else ''})" for reason, n in excluded.most_common(10)],
        combinations_checked=checked,
    )


# --- compatible -----------------------------------------------------------------------------------


def _pair_reason(graph: CatalogGraph, w: ProjectFacts, w_slots: list[SlotName], p: ProjectFacts, slot: SlotName) -> str | None:
    """Why `p` in `slot` fits next to `w`, or None if a contract between them cannot hold."""
    pool_slots = {SlotName.DEVICE_HANDOFF, SlotName.DATA_PLANE_UNIT}

    def handed_units(f: ProjectFacts, slots) -> frozenset[ResourceUnit]:
        if SlotName.DEVICE_HANDOFF in slots:
            return f.role_units(ContractPoint.ADVERTISE) & f.role_units(ContractPoint.ALLOCATE)
        if SlotName.DATA_PLANE_UNIT in slots:
            return f.units - {ResourceUnit.NODE}
        return frozenset()

    if slot == SlotName.SCHEDULING_POLICY and set(w_slots) & pool_slots:
        shared = handed_units(w, w_slots) & p.role_units(ContractPoint.BIND)
        if not shared:
            return None
        return f"Binds {', '.join(_label(u) for u in sorted(shared, key=list(ResourceUnit).index))}, which {w.ref.name} hands out."
    if slot in pool_slots and SlotName.SCHEDULING_POLICY in w_slots:
        shared = handed_units(p, [slot]) & w.role_units(ContractPoint.BIND)
        if not shared:
            return None
        return f"Hands out {', '.join(_label(u) for u in sorted(shared, key=list(ResourceUnit).index))}, which {w.ref.name} binds."
    if slot == SlotName.ADMISSION_QUOTA and set(w_slots) & pool_slots:
        shared = handed_units(w, w_slots) & _admission_units(p)
        if not shared:
            return None
        return f"Counts {', '.join(_label(u) for u in sorted(shared, key=list(ResourceUnit).index))} in quota."
    if slot in pool_slots and SlotName.ADMISSION_QUOTA in w_slots:
        shared = handed_units(p, [slot]) & _admission_units(w)
        if not shared:
            return None
        return f"Hands out {', '.join(_label(u) for u in sorted(shared, key=list(ResourceUnit).index))}, which {w.ref.name} counts in quota."
    if slot == SlotName.DEVICE_HANDOFF and SlotName.DATA_PLANE_UNIT in w_slots:
        shared = handed_units(p, [slot]) & w.units
        return f"Advertises and allocates {', '.join(_label(u) for u in shared)} that {w.ref.name} creates." if shared else None
    if slot == SlotName.DATA_PLANE_UNIT and SlotName.DEVICE_HANDOFF in w_slots:
        shared = handed_units(w, w_slots) & p.units
        return f"Creates {', '.join(_label(u) for u in shared)} that {w.ref.name} advertises and allocates." if shared else None
    return f"{graph.rules.slot[slot].name}: no contract point between them to break; they do not conflict."


def compatible(graph: CatalogGraph, with_slug: str, profile: str, *, slo: Slo | None = None,
               pool: Pool | None = None) -> CompatibleResult:
    """Stacks and projects that work together with `with_slug` for a workload profile (its default
    SLO and a default pool unless given)."""
    errors: dict[str, list[str]] = {}
    if with_slug not in graph.projects:
        errors["with"] = [graph.unknown_slug_message(with_slug)]
    if profile not in graph.rules.profile:
        errors["profile"] = [f"Unknown workload profile {profile!r}; known: {', '.join(graph.rules.profile)}."]
    if errors:
        raise RulesInputError(errors)
    w = graph.projects[with_slug]
    w_slots = graph.slots_of(with_slug)
    result = compose(graph, ComposeRequest(profile=profile, slo=slo, pool=pool or Pool(),
                                           constraints=Constraints(require=[with_slug]), limit=5))

    compatible_projects: list[CompatibleProject] = []
    incompatible: list = [
        (slug, f"Conflicts with {w.ref.name} (catalog conflicts_with); they cannot share nodes.")
        for slug in sorted(w.conflicts) if slug in graph.projects
    ]
    for slot in SLOT_ORDER:
        if slot in w_slots:
            continue
        for slug in graph.slot_candidates[slot]:
            if slug == with_slug:
                continue
            p = graph.projects[slug]
            other = next((c for c in graph.rules.excluded_capabilities if c.capability in p.capabilities), None)
            if other is not None:
                incompatible.append((slug, other.why))
                continue
            if slug in w.conflicts:
                incompatible.append((slug, f"Conflicts with {w.ref.name} (catalog conflicts_with)."))
                continue
            reason = _pair_reason(graph, w, w_slots, p, slot)
            if reason is None:
                incompatible.append((slug, f"As {graph.rules.slot[slot].name.lower()}: no unit in common with {w.ref.name}, so a contract point cannot hold."))
                continue
            if slug not in graph.slot_primary[slot]:
                primary = [x.value for x in graph.slots_of(slug) if slug in graph.slot_primary[x]]
                reason += f" Only alongside its primary role ({', '.join(primary) or 'none'})."
            compatible_projects.append(CompatibleProject(project=p.ref, slot=slot, reason=reason))
    seen: set[str] = set()
    incompatible_out = []
    for slug, reason in incompatible:
        if slug in seen or any(c.project.slug == slug for c in compatible_projects):
            continue
        seen.add(slug)
        incompatible_out.append(Rejection(project=slug, reason=reason))
    return CompatibleResult(
        catalog_version=graph.version,
        with_project=w.ref,
        profile=profile,
        slots_of_project=w_slots,
        stacks=result.stacks,
        compatible=compatible_projects,
        incompatible=incompatible_out,
        failures=result.failures,
    )
