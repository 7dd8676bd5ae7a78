"""Compose: workload classes (or a profile preset) + SLO + pool + constraints -> ranked stacks
whose contracts hold. Every preference is data in fixtures/rules/; nothing here names a project.

The engine is three steps, one file each (DESIGN.md §4), driven from here:

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

The search: pool options x (scheduling, admission) pairs are scored from precomputed parts with
upper bounds (exhaustive on the real catalog, bounded on large ones); the best cores are evaluated
exactly, the optional slots (workload unit, platform lifecycle, observability) are filled where
they raise the score, and required capabilities and projects are checked last.
"""

from __future__ import annotations

import heapq
import itertools
from collections import Counter

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
    grouped_reasons,
    explain_score,
    stack_title,
    to_stack,
    why_not,
    why_rank,
)
from placement.rules.feasibility import (
    acceptable_units,
    cluster_candidates,
    diagnose_pool,
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
    Rejection,
    SlotFailure,
    Stack,
)
from placement.rules.scoring import (
    combine,
    evaluate,
    fill_peripherals,
    make_part,
    ranked_pool_combinations,
    secondary_only,
    unmet_demands,
)

__all__ = ["SLOT_ORDER", "SearchBudget", "admission_units", "compose", "unit_label"]


def order_key(ctx: Context, cand: Candidate) -> tuple:
    # best score; then fewer components to run; then fewer projects; then by name (deterministic)
    return (-cand.score, len(cand.charged), len(cand.members), stack_title(ctx, cand), ",".join(cand.members))


def compose(graph: CatalogGraph, request: ComposeRequest | dict, budget: SearchBudget | None = None) -> ComposeResult:
    """Ranked stacks for a workload profile, SLO, pool and constraints (see the module docstring).
    `budget` bounds the search (a deployment setting, never the request's); when it cuts the search
    the answer is the best found and a note says so."""
    budget = budget or SearchBudget()
    request = validated(request)
    ctx = resolve(graph, request)
    failures: list[SlotFailure] = []

    cluster: dict[SlotName, list[str]] = {}
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
    # The scheduler is chosen among those that can bind some acceptable unit; projects acting on a
    # secondary layer (Koordinator's device handoff, Volcano's queues) come along with their scheduler role.
    acceptable = {u for spec in ctx.pools for u in acceptable_units(ctx, spec)}
    scheduling = top_cluster(ctx, SlotName.SCHEDULING_POLICY, cluster[SlotName.SCHEDULING_POLICY], acceptable, set())
    sensitive = graph.rules.binder_sensitive

    def unusable(opt: PoolOption) -> str | None:
        if opt.handoff not in sensitive and opt.data_plane not in sensitive:
            return None
        reasons = [binder_conflict(ctx, sched, [opt.handoff, opt.data_plane], opt) for sched in scheduling]
        return None if not reasons or not all(reasons) else reasons[0]

    pool_options: list[list[PoolOption]] = []
    for spec in ctx.pools:
        options = options_for_pool(ctx, spec, set(scheduling), unusable)
        pool_options.append(options)
        if not options:
            failures.append(diagnose_pool(ctx, spec))
    units = {o.unit for options in pool_options for o in options}
    pooled = {s for options in pool_options for o in options for s in (o.handoff, o.data_plane) if s}
    admission = top_cluster(ctx, SlotName.ADMISSION_QUOTA, cluster[SlotName.ADMISSION_QUOTA], units, set(scheduling) | pooled)

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
        slot = slot_for_capability(ctx, cap)
        # each provider with the rule that removed it (from this slot, else from the slot of its primary role)
        rejected = [
            Rejection(project=s, reason=ctx.why_not.get((slot, s)) or next(
                (r for (_slot, x), r in ctx.why_not.items() if x == s),
                f"{s} fills no {graph.rules.slot[slot].name.lower() if slot else 'stack'} slot here."))
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
        reasons = list(dict.fromkeys(reason for (_slot, s), reason in ctx.why_not.items() if s == slug))
        slots = graph.slots_of(slug)
        if not slots:
            reasons.append("Its placement matches no slot's layer, kind and contract role.")
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

    # a required scheduler and a required project whose webhook hands the pods to another scheduler
    failures.extend(required_binder_conflicts(ctx))

    stacks: list[Stack] = []
    excluded: Counter[str] = Counter()
    # reasons not worth listing beside a stack (a required project missing from one combination, a project
    # outside its primary role), but the answer when every combination fails for them alone
    quiet: Counter[str] = Counter()
    lacking: Counter[frozenset[str]] = Counter()  # required projects a combination lacks (worded at the end)
    quiet_cores: list[Candidate] = []
    checked = 0
    if not failures:
        peripheral = {}
        companions = set(scheduling) | set(admission) | pooled
        for slot in PERIPHERAL:
            ranked = sorted(placeable(ctx, slot, cluster[slot], companions), key=lambda s: (-local_score(ctx, s), s))
            peripheral[slot] = ranked[:PERIPHERAL_OPTIONS] + [s for s in ctx.required if s in ranked[PERIPHERAL_OPTIONS:]]
        dsp = ctx.profile.default_scheduler_points.points
        cluster_parts = []
        for sched in scheduling:
            for adm in admission:
                part = make_part(ctx, [(SlotName.SCHEDULING_POLICY, sched), (SlotName.ADMISSION_QUOTA, adm)],
                             dsp if keeps_default_scheduler(ctx, sched) else 0.0)
                cluster_parts.append((sched, adm, part))
        native = graph.rules.native_handoff.points
        pool_parts = [
            {o: make_part(ctx, [(SlotName.DEVICE_HANDOFF, o.handoff)] + ([(SlotName.DATA_PLANE_UNIT, o.data_plane)] if o.data_plane else []),
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
        pool_combos, pool_total = ranked_pool_combinations(
            pool_options, pool_parts, budget.pool_combinations, positive, cost, all_cluster_bundles)
        if pool_total > budget.pool_combinations:
            ctx.notes.append(
                f"Search budget: the pools' options make {pool_total:,} combinations, above the budget of "
                f"{budget.pool_combinations:,}; the best {len(pool_combos):,} by an upper bound on their score were "
                f"searched (a beam over the pools), so a stack outside them could score higher.")
        cut_at = None
        pair_checks: dict[tuple[int, int], str | None] = {}
        exhaustive = len(pool_combos) * len(ranked_cluster) <= EXHAUSTIVE_LIMIT
        top_cluster_bound = ranked_cluster[0][0] if ranked_cluster else 0.0
        heap: list[tuple[float, int, str, str, tuple[PoolOption, ...]]] = []
        for pool_bound, pools, parts in pool_combos:
            if not exhaustive and len(heap) >= wanted and pool_bound + top_cluster_bound < heap[0][0]:
                break
            if cut_at is not None:
                break
            broken = next((p.error for p in parts if p.error), None)
            members = frozenset().union(*(p.members for p in parts))
            for cluster_bound, sched, adm, cpart in ranked_cluster:
                if not exhaustive and len(heap) >= wanted and pool_bound + cluster_bound < heap[0][0]:
                    break
                if checked >= budget.combinations:
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
        if cut_at is not None:
            ctx.notes.append(
                f"Search budget: stopped after {cut_at:,} combinations (the budget), best bound first; "
                f"the stacks below are the best of those checked.")
        best = sorted(heap, reverse=True)
        cores: list[Candidate] = []
        for _score_fast, _n, sched, adm, pools in best:
            cand = Candidate(cluster={SlotName.ADMISSION_QUOTA: adm, SlotName.SCHEDULING_POLICY: sched}, pools=pools)
            reason = evaluate(ctx, cand)
            if reason:
                (quiet if reason.endswith(SECONDARY_ONLY) else excluded)[reason] += 1
                continue
            cores.append(cand)
        cores.sort(key=lambda c: order_key(ctx, c))
        finished: list[Candidate] = []
        for core in cores[: max(CORES_TO_FINISH, request.limit * 3)]:
            cand = fill_peripherals(ctx, core, peripheral)
            reason = "a required project does not fit next to the rest" if cand is None else unmet_demands(ctx, cand)
            if reason:
                excluded[reason] += 1
                continue
            finished.append(cand)
        finished.sort(key=lambda c: order_key(ctx, c))
        chosen = finished[: request.limit]
        items = [explain_score(ctx, cand) for cand in chosen]
        contracts = [contract_checks(ctx, cand) for cand in chosen]
        distinct_titles(ctx, chosen)
        admissions = {c.cluster.get(SlotName.ADMISSION_QUOTA) for c in chosen}
        interactive = any(w.kind.value == "interactive" for w in ctx.workloads)
        for n in graph.rules.admission_notes:
            if n.admission in admissions and (interactive if n.when == "interactive" else ctx.slo.multi_tenant):
                ctx.notes.append(f"With {graph.projects[n.admission].ref.name if n.admission in graph.projects else n.admission}: "
                                 f"{n.note} ({n.source})")
        for i, cand in enumerate(chosen):
            why = why_rank(ctx, cand, items[i], i + 1, chosen[i - 1] if i else None, items[i - 1] if i else [])
            stacks.append(to_stack(ctx, cand, i + 1, why, items[i], contracts[i]))
        if not chosen:
            for missing, n in lacking.items():
                quiet[f"lacks required {', '.join(sorted(missing))}"] += n
            for cand in quiet_cores:  # combine rejects these exactly when secondary_only does
                quiet[secondary_only(ctx, cand) or "no combination of them is possible"] += 1
            common = "; ".join(f"{reason} ({n}x)" for reason, n in (excluded or quiet).most_common(5))
            # the contract failure that names the most required projects, then the most frequent
            contract_reasons = [(sum(slug in r for slug in ctx.required), n, r) for r, n in excluded.items() if failed_point(r)]
            # (only one naming a required project: otherwise it is one exclusion among others)
            broken = max(contract_reasons)[2] if contract_reasons and max(contract_reasons)[0] > 0 else None
            reason = f"Every combination of the remaining candidates fails: {common}."
            if broken:  # lead with the contract that breaks: it is what a reader must change
                reason = f"{broken}. {reason}"
            failures.append(SlotFailure(slot=None, contract_point=failed_point(broken) if broken else None, reason=reason))

    # The plan of each ranked stack: what evidence simulates and export renders (placement/plans).
    pool_given = not request.workloads or ("pool" in request.model_fields_set and "gpu_count" in request.pool.model_fields_set)
    for st in stacks:
        try:
            st.plan = build_plan(st, ctx.workloads, ctx.pool, pool_given=pool_given)
        except PlanError as exc:
            st.plan_error = str(exc)
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
        excluded=[f"{reason} ({n} combination{'s' if n != 1 else ''})" for reason, n in grouped_reasons(excluded)[:10]],
        combinations_checked=checked,
        workloads=ctx.workloads,
        why_not=why_not(ctx, stacks),
    )


