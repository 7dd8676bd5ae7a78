"""Compose: workload classes (or a profile preset) + SLO + pool + constraints -> ranked stacks
whose contracts hold. Every preference is data in fixtures/rules/; nothing here names a project.

The rules live one concern per file (DESIGN.md §4):

- `context.py`      the request resolved: pools (from the workload classes or the profile's pool
                    templates, narrowed by the SLO's isolation), preference points, constraints.
- `feasibility.py`  hard rules: per pool the units one replica fits (memory, GPUs per process,
                    peer-to-peer), the device handoff and data-plane mechanism that deliver it, the
                    cluster candidates per slot; each removal is kept as a `why_not`.
- `contracts.py`    per pool and contract point the concrete interface (resource names, binder,
                    allocator, quota, workload integration); a failed check removes the stack.
- `scoring.py`      conflicts, requirements and the score of a combination (unit fit, native
                    handoff, default scheduler, capabilities counted once, component cost).
- `explain.py`      score items with their why, titles and why each stack ranks where it does.

`compose()` applies them as a pipeline of stages, each a function from one state to the next;
each state type below extends the one before with what its stage found:

    resolve_request       (graph, request, budget) -> Resolved   the request validated and resolved
    find_slot_candidates  Resolved -> SlotCandidates             candidates per cluster-wide slot
    find_pool_options     SlotCandidates -> PoolOptions          schedulers, each pool's options, admission
    check_requirements    PoolOptions -> Feasible                required capabilities and projects
    score_parts           Feasible -> SearchSpace                parts with upper bounds, pool combinations
    search_cores          SearchSpace -> Searched                the best cores by fast score (budgeted)
    evaluate_cores        Searched -> Cores                      the cores that hold when checked exactly
    fill_optional_slots   Cores -> Ranked                        optional slots filled, the stacks to return
    check_contracts       Ranked -> Contracted                   each stack's contract checks
    explain_stacks        Contracted -> Explained                score items, titles, ranks (or why none)
    attach_plans          Explained -> Explained                 each stack's plan (placement/plans)
    to_result             Resolved -> ComposeResult              the answer

The search: pool options x (scheduling, admission) pairs are scored from precomputed parts with
upper bounds (exhaustive on the real catalog, bounded on large ones); the best cores are evaluated
exactly, the optional slots (workload unit, platform lifecycle, observability) are filled where
they raise the score, and required capabilities and projects are checked last.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections import Counter
from dataclasses import dataclass, field, fields, replace

from placement.plans.build import PlanError, build_plan
from placement.rules.context import (
    CLUSTER_CORE,
    CORES_TO_FINISH,
    EXHAUSTIVE_LIMIT,
    PERIPHERAL,
    PERIPHERAL_OPTIONS,
    SECONDARY_ONLY,
    SLOT_ORDER,
    Candidate,
    Context,
    PoolOption,
    SearchBudget,
    admission_units,
    elastic_points,
    gang_api,
    gang_api_points,
    keeps_default_scheduler,
    local_score,
    resolve,
    unit_label,
    validated,
)
from placement.rules.contracts import (
    binder_conflict,
    contract_checks,
    failed_point,
    required_binder_conflicts,
)
from placement.rules.data import SlotName
from placement.rules.explain import (
    distinct_titles,
    explain_score,
    grouped_reasons,
    stack_title,
    to_stack,
    why_not,
    why_rank,
)
from placement.rules.feasibility import (
    acceptable_units,
    cluster_candidates,
    diagnose_pool,
    discount_whole_card_mig,
    placeable,
    rejections,
    slot_for_capability,
    top_cluster,
)
from placement.rules.feasibility import (
    pool_options as options_for_pool,
)
from placement.rules.graph import CatalogGraph
from placement.rules.models import (
    ComposeRequest,
    ComposeResult,
    ContractCheck,
    Rejection,
    SlotFailure,
    Stack,
)
from placement.rules.scoring import (
    Part,
    combine,
    evaluate,
    fill_peripherals,
    make_part,
    ranked_pool_combinations,
    secondary_only,
    unmet_demands,
)

__all__ = ["SLOT_ORDER", "SearchBudget", "admission_units", "compose", "unit_label"]

# A core the search keeps: (fast score, -order checked, scheduler, admission, one option per pool).
Core = tuple[float, int, str, str, tuple[PoolOption, ...]]


# --- the pipeline's state -------------------------------------------------------------------------


@dataclass(frozen=True)
class Tally:
    """What the search dropped: how many combinations it checked and why the others failed."""

    checked: int = 0
    excluded: Counter[str] = field(default_factory=Counter)  # reasons listed beside the stacks
    # reasons not worth listing beside a stack (a required project missing from one combination, a
    # project outside its primary role), but the answer when every combination fails for them alone
    quiet: Counter[str] = field(default_factory=Counter)
    lacking: Counter[frozenset[str]] = field(default_factory=Counter)  # required projects a combination lacks
    quiet_cores: tuple[Candidate, ...] = ()  # refused without a reason; worked out only if no stack holds


@dataclass(frozen=True, kw_only=True)
class Resolved:
    """resolve_request: the validated request and its search context, with what the answer is made
    of so far (every later stage returns these extended). `ctx` also collects, as the stages run,
    each candidate a rule removes and why (ctx.why_not: the answer's why_not)."""

    ctx: Context
    request: ComposeRequest
    budget: SearchBudget
    failures: tuple[SlotFailure, ...] = ()
    notes: tuple[str, ...] = ()
    tally: Tally = field(default_factory=Tally)
    stacks: tuple[Stack, ...] = ()


@dataclass(frozen=True, kw_only=True)
class SlotCandidates(Resolved):
    """find_slot_candidates: the candidates of each cluster-wide slot (scheduling, admission and the
    optional slots) under the constraints; a required slot none can fill is a failure."""

    cluster: dict[SlotName, list[str]]


@dataclass(frozen=True, kw_only=True)
class PoolOptions(SlotCandidates):
    """find_pool_options: the schedulers the search keeps, each pool's (unit, data plane, device
    handoff) options one of them can bind, and the admission projects that count their units; a
    pool left without options is a failure."""

    scheduling: list[str]
    pool_options: tuple[list[PoolOption], ...]
    pooled: frozenset[str]  # the handoffs and data planes of those options
    admission: list[str]


@dataclass(frozen=True, kw_only=True)
class Feasible(PoolOptions):
    """check_requirements: `failures` now also holds each required capability or project that no
    candidate left can supply; without failures the search starts."""


@dataclass(frozen=True, kw_only=True)
class SearchSpace(Feasible):
    """score_parts: the optional slots' shortlists and the core's parts with upper bounds on their
    score, best first: (bound, scheduler, admission, part) and the pools' combinations (bound,
    options, parts), a beam of them above the budget."""

    peripheral: dict[SlotName, list[str]]
    ranked_cluster: list[tuple[float, str, str, Part]]
    pool_combos: list[tuple[float, tuple[PoolOption, ...], tuple[Part, ...]]]
    core_required: frozenset[str]  # required projects no optional slot can take: the core holds them
    wanted: int  # how many cores the search keeps


@dataclass(frozen=True, kw_only=True)
class Searched(SearchSpace):
    """search_cores: the best cores by fast score, best first."""

    best: list[Core]


@dataclass(frozen=True, kw_only=True)
class Cores(Searched):
    """evaluate_cores: the kept cores that hold when checked exactly (contracts too), in rank order."""

    cores: tuple[Candidate, ...]


@dataclass(frozen=True, kw_only=True)
class Ranked(Cores):
    """fill_optional_slots: the stacks to return, in rank order: cores with their optional slots
    filled that meet the required projects and capabilities, at most `request.limit`."""

    chosen: tuple[Candidate, ...]


@dataclass(frozen=True, kw_only=True)
class Contracted(Ranked):
    """check_contracts: the contract checks of each chosen stack (all hold), in the same order."""

    contracts: tuple[list[ContractCheck], ...]


@dataclass(frozen=True, kw_only=True)
class Explained(Contracted):
    """explain_stacks: `stacks` holds the ranked stacks with their why, or `failures` why none holds."""


def _extend(cls, prev: Resolved, **found):
    """The next stage's state: `prev`'s fields, with what the stage `found` added or replaced."""
    return cls(**{**{f.name: getattr(prev, f.name) for f in fields(prev)}, **found})


# --- the pipeline ---------------------------------------------------------------------------------


def compose(graph: CatalogGraph, request: ComposeRequest | dict, budget: SearchBudget | None = None) -> ComposeResult:
    """Ranked stacks for a workload profile, SLO, pool and constraints (see the module docstring).
    `budget` bounds the search (a deployment setting, never the request's); when it cuts the search
    the answer is the best found and a note says so."""
    resolved = resolve_request(graph, request, budget or SearchBudget())
    slots = find_slot_candidates(resolved)
    pools = find_pool_options(slots)
    feasible = check_requirements(pools)
    if feasible.failures:  # a slot, pool or requirement no combination can meet: nothing to search
        return to_result(feasible)
    space = score_parts(feasible)
    searched = search_cores(space)
    cores = evaluate_cores(searched)
    ranked = fill_optional_slots(cores)
    contracted = check_contracts(ranked)
    explained = explain_stacks(contracted)
    return to_result(attach_plans(explained))


def order_key(ctx: Context, cand: Candidate) -> tuple:
    # best score; then fewer components to run; then fewer projects; then by name (deterministic)
    return (-cand.score, len(cand.charged), len(cand.members), stack_title(ctx, cand), ",".join(cand.members))


# --- the stages -----------------------------------------------------------------------------------


def resolve_request(graph: CatalogGraph, request: ComposeRequest | dict, budget: SearchBudget) -> Resolved:
    """The request validated (RulesInputError names each bad field) and resolved into the search
    context: pools, preference points, constraints (context.py)."""
    request = validated(request)
    ctx = resolve(graph, request)
    discount_whole_card_mig(ctx)
    return Resolved(ctx=ctx, request=request, budget=budget, notes=tuple(ctx.notes))


def find_slot_candidates(s: Resolved) -> SlotCandidates:
    """The candidates of each cluster-wide slot (feasibility.cluster_candidates), and a failure for
    each required slot left empty (naming the gang requirement when it emptied scheduling)."""
    ctx, graph = s.ctx, s.ctx.graph
    cluster: dict[SlotName, list[str]] = {}
    failures: list[SlotFailure] = []
    for slot in (*CLUSTER_CORE, *PERIPHERAL):
        cluster[slot] = cluster_candidates(ctx, slot)
        if not cluster[slot] and graph.rules.slot[slot].required:
            why = ""
            if slot == SlotName.SCHEDULING_POLICY and ctx.gang_classes:
                why = (f" {graph.capability_name(graph.rules.gang.capability)} is required: class "
                       f"{', '.join(ctx.gang_classes)} has gang: true.")
            failures.append(SlotFailure(
                slot=slot,
                reason=f"No catalog project can fill {graph.rules.slot[slot].name.lower()} under these constraints.{why}",
                rejected=rejections(ctx, slot),
            ))
    return _extend(SlotCandidates, s, cluster=cluster, failures=s.failures + tuple(failures))


def find_pool_options(s: SlotCandidates) -> PoolOptions:
    """The schedulers kept for the search, each pool's options (feasibility.pool_options: the units
    a replica fits, the handoffs and data planes that deliver them, pruned of those no kept scheduler
    can bind) and the admission projects kept for their units; a failure for each pool left empty."""
    ctx, graph = s.ctx, s.ctx.graph
    # The scheduler is chosen among those that can bind some acceptable unit; projects acting on a
    # secondary layer (Koordinator's device handoff, Volcano's queues) come along with their scheduler role.
    acceptable = {u for spec in ctx.pools for u in acceptable_units(ctx, spec)}
    scheduling = top_cluster(ctx, SlotName.SCHEDULING_POLICY, s.cluster[SlotName.SCHEDULING_POLICY], acceptable, set())
    sensitive = graph.rules.binder_sensitive

    def unusable(opt: PoolOption) -> str | None:
        if opt.handoff not in sensitive and opt.data_plane not in sensitive:
            return None
        reasons = [binder_conflict(ctx, sched, [opt.handoff, opt.data_plane], opt) for sched in scheduling]
        return None if not reasons or not all(reasons) else reasons[0]

    pool_options: list[list[PoolOption]] = []
    failures: list[SlotFailure] = []
    for spec in ctx.pools:
        options = options_for_pool(ctx, spec, set(scheduling), unusable)
        pool_options.append(options)
        if not options:
            failures.append(diagnose_pool(ctx, spec))
    units = {o.unit for options in pool_options for o in options}
    pooled = {x for options in pool_options for o in options for x in (o.handoff, o.data_plane) if x}
    admission = top_cluster(ctx, SlotName.ADMISSION_QUOTA, s.cluster[SlotName.ADMISSION_QUOTA], units, set(scheduling) | pooled)
    return _extend(PoolOptions, s, scheduling=scheduling, pool_options=tuple(pool_options), pooled=frozenset(pooled),
                   admission=admission, failures=s.failures + tuple(failures))


def check_requirements(s: PoolOptions) -> Feasible:
    """A failure for each required capability no candidate left provides, each required project that
    fits no slot, required projects that conflict, and required ones that put two binders on a pod."""
    failures = (*_missing_capabilities(s), *_unplaceable_projects(s), *_conflicting_requirements(s),
                *required_binder_conflicts(s.ctx))
    return _extend(Feasible, s, failures=s.failures + failures)


def _missing_capabilities(s: PoolOptions) -> list[SlotFailure]:
    """Required capabilities no remaining placeable candidate provides. A project reaching a slot
    only through a secondary layer counts only if its primary role is still open."""
    ctx, graph = s.ctx, s.ctx.graph
    pool_members = {
        SlotName.DEVICE_HANDOFF: {o.handoff for options in s.pool_options for o in options},
        SlotName.DATA_PLANE_UNIT: {o.data_plane for options in s.pool_options for o in options if o.data_plane},
    }
    open_slots = {**{slot: set(v) for slot, v in s.cluster.items()}, **pool_members}
    primary_open = {x for slot, slugs in open_slots.items() for x in slugs if x in graph.slot_primary[slot]}
    reachable = {x for slugs in open_slots.values() for x in slugs if x in primary_open}
    # a scheduler that places gangs through an API it serves provides gang scheduling with it
    reachable |= {api for x in s.cluster[SlotName.SCHEDULING_POLICY] if (api := gang_api(ctx, x))}
    failures = []
    for cap, why in ctx.required_caps:
        if any(cap in ctx.facts(x).capabilities for x in reachable):
            continue
        slot = slot_for_capability(ctx, cap)
        # each provider with the rule that removed it (from this slot, else from the slot of its primary role)
        rejected = [
            Rejection(project=x, reason=ctx.why_not.get((slot, x)) or next(
                (r for (_slot, y), r in ctx.why_not.items() if y == x),
                f"{x} fills no {graph.rules.slot[slot].name.lower() if slot else 'stack'} slot here."))
            for x in graph.providers.get(cap, ()) if cap not in ctx.facts(x).misuses
        ]
        failures.append(SlotFailure(
            slot=slot,
            reason=(f"{graph.capability_name(cap)} is required ({why.rstrip('.')}) but no remaining "
                    f"{graph.rules.slot[slot].name.lower() if slot else 'stack'} candidate provides it."),
            rejected=rejected,
        ))
    return failures


def _unplaceable_projects(s: PoolOptions) -> list[SlotFailure]:
    """Required projects that fit no slot here, each with the rules that removed it."""
    ctx, graph = s.ctx, s.ctx.graph
    failures = []
    for slug in ctx.required:
        if any(slug in (o.handoff, o.data_plane) for options in s.pool_options for o in options):
            continue
        if any(slug in v for v in s.cluster.values()):
            continue
        reasons = list(dict.fromkeys(reason for (_slot, x), reason in ctx.why_not.items() if x == slug))
        slots = graph.slots_of(slug)
        if not slots:
            reasons.append("Its placement matches no slot's layer, kind and contract role.")
        failures.append(SlotFailure(
            slot=slots[0] if slots else None,
            reason=f"{slug} is required but cannot take part: " + " ".join(reasons or ["no slot accepts it here."]),
            rejected=[Rejection(project=slug, reason=r) for r in reasons],
        ))
    return failures


def _conflicting_requirements(s: PoolOptions) -> list[SlotFailure]:
    """Required projects that conflict: they can only meet on different pools' nodes."""
    ctx, graph = s.ctx, s.ctx.graph
    failures = []
    for a, b in itertools.combinations(ctx.required, 2):
        if b not in ctx.facts(a).conflicts:
            continue
        per_pool = [x for x in (a, b) if any(x in (o.handoff, o.data_plane) for options in s.pool_options for o in options)]
        if len(ctx.pools) < 2 or len(per_pool) < 2:
            failures.append(SlotFailure(
                slot=next((slot for slot in graph.slots_of(b)), None),
                reason=(f"{a} and {b} are both required but conflict (catalog conflicts_with); they could only run on "
                        f"different node pools, and this stack has "
                        + (f"one pool ({ctx.pools[0].name})." if len(ctx.pools) < 2 else "no pool slot for both.")),
                rejected=[Rejection(project=b, reason=f"Conflicts with {a}.")],
            ))
    return failures


def score_parts(s: Feasible) -> SearchSpace:
    """The optional slots' shortlists, and each (scheduler, admission) pair and pool option summarised
    as a `Part` with an upper bound on its score: a part cannot score more than its base plus every
    positive capability it brings, minus components nothing in the stack could ship. The bounds let
    large searches stop early."""
    ctx, graph = s.ctx, s.ctx.graph
    peripheral = {}
    companions = set(s.scheduling) | set(s.admission) | s.pooled
    for slot in PERIPHERAL:
        ranked = sorted(placeable(ctx, slot, s.cluster[slot], companions), key=lambda x: (-local_score(ctx, x), x))
        peripheral[slot] = ranked[:PERIPHERAL_OPTIONS] + [x for x in ctx.required if x in ranked[PERIPHERAL_OPTIONS:]]
    dsp = ctx.profile.default_scheduler_points.points
    cluster_parts = []
    for sched in s.scheduling:
        for adm in s.admission:
            part = make_part(ctx, [(SlotName.SCHEDULING_POLICY, sched), (SlotName.ADMISSION_QUOTA, adm)],
                             (dsp if keeps_default_scheduler(ctx, sched) else 0.0) + elastic_points(ctx, sched, adm)
                             + gang_api_points(ctx, sched))
            cluster_parts.append((sched, adm, part))
    native = graph.rules.native_handoff.points
    pool_parts = [
        {o: make_part(ctx, [(SlotName.DEVICE_HANDOFF, o.handoff)] + ([(SlotName.DATA_PLANE_UNIT, o.data_plane)] if o.data_plane else []),
                      ctx.unit_total.get(o.unit, 0.0) + (native if ctx.facts(o.handoff).primary_unit == o.unit else 0.0))
         for o in options}
        for options in s.pool_options
    ]
    positive = {c: w for c, w in ctx.cap_weight.items() if w > 0}
    cost = graph.rules.component_cost.points
    all_pool_bundles = frozenset().union(*(p.bundled for parts in pool_parts for p in parts.values()))
    all_cluster_bundles = frozenset().union(*(c.bundled for _, _, c in cluster_parts))

    def bound(base: float, caps, costed, bundled) -> float:
        return base + math.fsum(positive.get(c, 0.0) for c in caps) + cost * len(costed - bundled)  # any set order

    ranked_cluster = sorted(
        ((bound(c.base, c.caps, c.costed, c.bundled | all_pool_bundles), sched, adm, c) for sched, adm, c in cluster_parts),
        key=lambda item: -item[0],
    )
    budget = s.budget.pool_combinations
    pool_combos, pool_total = ranked_pool_combinations(s.pool_options, pool_parts, budget, positive, cost, all_cluster_bundles)
    notes = s.notes
    if pool_total > budget:
        notes += ((f"Search budget: the pools' options make {pool_total:,} combinations, above the budget of "
                   f"{budget:,}; the best {len(pool_combos):,} by an upper bound on their score were "
                   f"searched (a beam over the pools), so a stack outside them could score higher."),)
    return _extend(
        SearchSpace, s, peripheral=peripheral, ranked_cluster=ranked_cluster, pool_combos=pool_combos, notes=notes,
        # required projects that no optional slot can take must be in the core
        core_required=frozenset(x for x in ctx.required if not any(x in s.cluster[slot] for slot in PERIPHERAL)),
        wanted=max(CORES_TO_FINISH, s.request.limit * 3) * 2,
    )


def search_cores(s: SearchSpace) -> Searched:
    """Pool combinations x (scheduler, admission) pairs, best bound first, scored fast from their
    parts; keeps the `wanted` best. Checks every combination up to EXHAUSTIVE_LIMIT; above it stops
    where no combination left can enter the kept cores, and always after `budget.combinations`."""
    ctx, wanted, core_required, ranked_cluster = s.ctx, s.wanted, s.core_required, s.ranked_cluster
    limit = s.budget.combinations
    excluded: Counter[str] = Counter()
    lacking: Counter[frozenset[str]] = Counter()
    quiet_cores: list[Candidate] = []
    checked = 0
    cut_at = None
    pair_checks: dict[tuple[int, int], str | None] = {}
    exhaustive = len(s.pool_combos) * len(ranked_cluster) <= EXHAUSTIVE_LIMIT
    top_cluster_bound = ranked_cluster[0][0] if ranked_cluster else 0.0
    heap: list[Core] = []
    for pool_bound, pools, parts in s.pool_combos:
        if not exhaustive and len(heap) >= wanted and pool_bound + top_cluster_bound < heap[0][0]:
            break
        if cut_at is not None:
            break
        broken = next((p.error for p in parts if p.error), None)
        members = frozenset().union(*(p.members for p in parts))
        for cluster_bound, sched, adm, cpart in ranked_cluster:
            if not exhaustive and len(heap) >= wanted and pool_bound + cluster_bound < heap[0][0]:
                break
            if checked >= limit:
                cut_at = checked
                break
            checked += 1
            error = broken or cpart.error
            if error:
                excluded[error] += 1
                continue
            missing = core_required - members - cpart.members
            if missing:
                lacking[frozenset(missing)] += 1
                continue
            score, reason = combine(ctx, cpart, sched, adm, parts, pools, pair_checks)
            if score is None:
                if reason:
                    excluded[reason] += 1
                elif len(quiet_cores) < 5:  # its reason is worked out only if no stack holds
                    quiet_cores.append(Candidate(
                        cluster={SlotName.ADMISSION_QUOTA: adm, SlotName.SCHEDULING_POLICY: sched}, pools=pools))
                continue
            item = (score, -checked, sched, adm, pools)
            if len(heap) < wanted:
                heapq.heappush(heap, item)
            elif item > heap[0]:
                heapq.heapreplace(heap, item)
    notes = s.notes
    if cut_at is not None:
        notes += ((f"Search budget: stopped after {cut_at:,} combinations (the budget), best bound first; "
                   f"the stacks below are the best of those checked."),)
    tally = Tally(checked=checked, excluded=excluded, lacking=lacking, quiet_cores=tuple(quiet_cores))
    return _extend(Searched, s, best=sorted(heap, reverse=True), notes=notes, tally=tally)


def evaluate_cores(s: Searched) -> Cores:
    """Each kept core built as a candidate and checked exactly (scoring.evaluate: primary roles,
    supporting components, conflicts, contracts), in rank order."""
    ctx = s.ctx
    excluded, quiet = Counter(s.tally.excluded), Counter(s.tally.quiet)
    cores: list[Candidate] = []
    for _score_fast, _n, sched, adm, pools in s.best:
        cand = Candidate(cluster={SlotName.ADMISSION_QUOTA: adm, SlotName.SCHEDULING_POLICY: sched}, pools=pools)
        reason = evaluate(ctx, cand)
        if reason:
            (quiet if reason.endswith(SECONDARY_ONLY) else excluded)[reason] += 1
            continue
        cores.append(cand)
    cores.sort(key=lambda c: order_key(ctx, c))
    return _extend(Cores, s, cores=tuple(cores), tally=replace(s.tally, excluded=excluded, quiet=quiet))


def fill_optional_slots(s: Cores) -> Ranked:
    """The best cores with workload unit, platform lifecycle and observability filled where they
    raise the score; those that then meet the required projects and capabilities, best first."""
    ctx = s.ctx
    excluded = Counter(s.tally.excluded)
    finished: list[Candidate] = []
    for core in s.cores[: max(CORES_TO_FINISH, s.request.limit * 3)]:
        cand = fill_peripherals(ctx, core, s.peripheral)
        reason = "a required project does not fit next to the rest" if cand is None else unmet_demands(ctx, cand)
        if reason:
            excluded[reason] += 1
            continue
        finished.append(cand)
    finished.sort(key=lambda c: order_key(ctx, c))
    return _extend(Ranked, s, chosen=tuple(finished[: s.request.limit]), tally=replace(s.tally, excluded=excluded))


def check_contracts(s: Ranked) -> Contracted:
    """The contract checks (advertise, bind, allocate, quota, workload admission) each stack states."""
    return _extend(Contracted, s, contracts=tuple(contract_checks(s.ctx, cand) for cand in s.chosen))


def explain_stacks(s: Contracted) -> Explained:
    """The ranked stacks with their score items, distinct titles and why each ranks where it does,
    and the admission projects' notes; with no stack, a failure that says why none holds."""
    ctx, chosen = s.ctx, s.chosen
    if not chosen:
        return _extend(Explained, s, failures=s.failures + (_why_no_stack(s),))
    items = [explain_score(ctx, cand) for cand in chosen]
    distinct_titles(ctx, chosen)
    stacks = []
    for i, cand in enumerate(chosen):
        why = why_rank(ctx, cand, items[i], i + 1, chosen[i - 1] if i else None, items[i - 1] if i else [])
        stacks.append(to_stack(ctx, cand, i + 1, why, items[i], s.contracts[i]))
    return _extend(Explained, s, stacks=tuple(stacks), notes=s.notes + _admission_notes(s))


def _admission_notes(s: Contracted) -> tuple[str, ...]:
    """The rules' notes on the chosen admission projects that apply to these workloads."""
    ctx, graph = s.ctx, s.ctx.graph
    admissions = {c.cluster.get(SlotName.ADMISSION_QUOTA) for c in s.chosen}
    interactive = any(w.kind.value == "interactive" for w in ctx.workloads)
    return tuple(
        f"With {graph.projects[n.admission].ref.name if n.admission in graph.projects else n.admission}: "
        f"{n.note} ({n.source})"
        for n in graph.rules.admission_notes
        if n.admission in admissions and (interactive if n.when == "interactive" else ctx.slo.multi_tenant)
    )


def _why_no_stack(s: Contracted) -> SlotFailure:
    """Every combination failed: the most frequent reasons, led by the contract a reader must change."""
    ctx, excluded = s.ctx, s.tally.excluded
    quiet = Counter(s.tally.quiet)
    for missing, n in s.tally.lacking.items():
        quiet[f"lacks required {', '.join(sorted(missing))}"] += n
    for cand in s.tally.quiet_cores:  # combine rejects these exactly when secondary_only does
        quiet[secondary_only(ctx, cand) or "no combination of them is possible"] += 1
    common = "; ".join(f"{reason} ({n}x)" for reason, n in (excluded or quiet).most_common(5))
    # the contract failure that names the most required projects, then the most frequent
    contract_reasons = [(sum(slug in r for slug in ctx.required), n, r) for r, n in excluded.items() if failed_point(r)]
    # (only one naming a required project: otherwise it is one exclusion among others)
    broken = max(contract_reasons)[2] if contract_reasons and max(contract_reasons)[0] > 0 else None
    reason = f"Every combination of the remaining candidates fails: {common}."
    if broken:  # lead with the contract that breaks: it is what a reader must change
        reason = f"{broken}. {reason}"
    return SlotFailure(slot=None, contract_point=failed_point(broken) if broken else None, reason=reason)


def attach_plans(s: Explained) -> Explained:
    """Each ranked stack's plan: what evidence simulates and export renders (placement/plans). The
    plan (or why none can be built) is set on the stack."""
    request = s.request
    pool_given = not request.workloads or ("pool" in request.model_fields_set and "gpu_count" in request.pool.model_fields_set)
    for st in s.stacks:
        try:
            st.plan = build_plan(st, s.ctx.workloads, s.ctx.pool, pool_given=pool_given)
        except PlanError as exc:
            st.plan_error = str(exc)
    return s


def to_result(s: Resolved) -> ComposeResult:
    """The answer from any stage's state; the why_not of every project left out is read last."""
    ctx = s.ctx
    return ComposeResult(
        catalog_version=ctx.graph.version,
        profile=ctx.profile.profile,
        slo=ctx.slo,
        pool=ctx.pool,
        constraints=ctx.constraints,
        feasible=bool(s.stacks),
        stacks=list(s.stacks),
        failures=list(s.failures),
        notes=list(s.notes),
        excluded=[f"{reason} ({n} combination{'s' if n != 1 else ''})" for reason, n in grouped_reasons(s.tally.excluded)[:10]],
        combinations_checked=s.tally.checked,
        workloads=ctx.workloads,
        why_not=why_not(ctx, list(s.stacks)),
    )
