"""Compose, step 3a: scoring. A combination (`Candidate`) is checked for conflicts and
requirements and scored from the preference points (data in fixtures/rules/); `Part` summaries
let large catalogs be searched by set operations before the exact evaluation.
"""

from __future__ import annotations

import heapq
import itertools
import math
from dataclasses import dataclass

from placement.catalog.schemas import ResourceUnit
from placement.rules.context import (
    BIND_LAYERS,
    PERIPHERAL,
    REQUIRED_FIRST,
    SECONDARY_ONLY,
    Candidate,
    Context,
    PoolOption,
    admission_units,
    costs_component,
    elastic_points,
    gang_api,
    gang_api_points,
    keeps_default_scheduler,
    unit_label,
)
from placement.rules.contracts import (
    bind_units,
    binder_conflict,
    contract_failure,
    peripheral_failure,
)
from placement.rules.data import SlotName
from placement.rules.graph import CONTROL_MAP

# --- one combination ------------------------------------------------------------------------------


def support(ctx: Context, cand: Candidate) -> str | None:
    """Add what members `require` as supporting components; fail if the constraints exclude it."""
    present = cand.slot_members()
    supporting: dict[str, str] = {}
    scheduler = cand.cluster.get(SlotName.SCHEDULING_POLICY)
    # The scheduler binary the stack's pods go to: its own, and what it runs inside (a scheduler-plugins
    # plugin such as coscheduling requires kube-scheduler).
    binder = {scheduler, *ctx.facts(scheduler).requires} if scheduler else set()
    queue = sorted(present)
    api = gang_api(ctx, scheduler)
    if api is not None and api not in present:  # the scheduler places the gang classes through the API it serves
        supporting[api] = scheduler
        queue.append(api)
    while queue:
        slug = queue.pop(0)
        for needed in sorted(ctx.facts(slug).requires):
            if needed in present or needed in supporting:
                continue
            if scheduler and needed not in binder and needed in ctx.graph.slot_candidates[SlotName.SCHEDULING_POLICY]:
                # A required scheduler cannot ride along beside another one: two schedulers would each
                # claim the pool's pods (one binder per pod, DESIGN.md §4 contracts), and a plugin of one
                # does nothing for pods the other binds - also when the required one is the baseline's.
                return f"{slug} requires the scheduler {needed}, but this stack's scheduler is {scheduler}"
            if needed in ctx.baseline:
                continue
            if needed in ctx.excluded:
                return f"{slug} requires {needed}, which the constraints exclude"
            supporting[needed] = slug
            queue.append(needed)
    cand.supporting = supporting
    return None


def conflict(ctx: Context, cand: Candidate) -> str | None:
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


def secondary_only(ctx: Context, cand: Candidate) -> str | None:
    """A slot reached through a secondary layer needs the project in a slot of its primary layer too."""
    assigned = cand.assignments()
    primary_filled = {slug for slot, _, slug in assigned if slug in ctx.graph.slot_primary[slot]}
    for slot, _, slug in assigned:
        if slug not in ctx.graph.slot_primary[slot] and slug not in primary_filled:
            return f"{slug} can fill {slot.value} {SECONDARY_ONLY}"
    return None



def evaluate(ctx: Context, cand: Candidate, contracts: bool = True) -> str | None:
    """Why the combination is impossible, or None after scoring it (numbers only). Optional slots do
    not take part in contract points, so adding one re-checks everything but the contracts."""
    reason = (secondary_only(ctx, cand) or support(ctx, cand) or conflict(ctx, cand)
              or (contract_failure(ctx, cand) if contracts else peripheral_failure(ctx, cand)))
    if reason:
        return reason
    rules = ctx.graph.rules
    score = 0.0
    for opt in cand.pools:
        score += ctx.unit_total.get(opt.unit, 0.0)
        if ctx.facts(opt.handoff).primary_unit == opt.unit:
            score += rules.native_handoff.points
    if keeps_default_scheduler(ctx, cand.cluster.get(SlotName.SCHEDULING_POLICY)):
        score += ctx.profile.default_scheduler_points.points
    score += elastic_points(ctx, cand.cluster.get(SlotName.SCHEDULING_POLICY), cand.cluster.get(SlotName.ADMISSION_QUOTA))
    score += gang_api_points(ctx, cand.cluster.get(SlotName.SCHEDULING_POLICY))
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
    charged = [s for s in members if costs_component(ctx, s) and s not in bundled]
    score += rules.component_cost.points * len(charged)
    cand.covered, cand.members, cand.charged = covered, members, charged
    cand.score = round(score, 3)
    return None


def slot_fit(ctx: Context, slot: SlotName, slug: str) -> int:
    return len(ctx.facts(slug).capabilities.intersection(ctx.graph.rules.slot[slot].any_capability))


def fill_peripherals(ctx: Context, cand: Candidate, peripheral: dict[SlotName, list[str]]) -> Candidate | None:
    """Add workload unit, platform lifecycle and observability where they raise the score (or keep it
    equal at no cost because the project is already in the stack or shipped by a member). A required
    project eligible for the slot is always placed. None if a required one cannot be placed."""
    for slot in PERIPHERAL:
        forced = [s for s in ctx.required if s in peripheral[slot] and s not in cand.slot_members()]
        ranked = []
        for slug in forced or peripheral[slot]:
            gain = peripheral_gain(ctx, cand, slot, slug)
            if gain is None:
                continue
            free = slug in cand.members or any(slug in ctx.facts(m).bundles_all for m in cand.members)
            ranked.append(((round(gain, 6), free, slot_fit(ctx, slot, slug)), slug))
        ranked.sort(key=lambda item: item[0], reverse=True)
        placed = False
        for key, slug in ranked:  # best first; the exact check confirms it
            if not (forced or key[0] > 0 or (key[0] == 0 and key[1])):
                break
            trial = cand.with_slot(slot, slug)
            if evaluate(ctx, trial, contracts=False) is None:
                cand, placed = trial, True
                break
        if forced and not placed:
            return None
    return cand


def peripheral_gain(ctx: Context, cand: Candidate, slot: SlotName, slug: str) -> float | None:
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
    for n in sorted(new):  # float sums in one order in every process
        for cap in sorted(ctx.facts(n).capabilities):
            if cap not in cand.covered and cap in ctx.cap_weight:
                gain += ctx.cap_weight[cap]
            if cap not in cand.covered and cap in ctx.required_cap_set:
                gain += REQUIRED_FIRST  # choosing only: a required capability beats any preference
    everyone = members | new
    bundled = set()
    for m in everyone:
        bundled |= ctx.facts(m).bundles_all
    cost = ctx.graph.rules.component_cost.points
    charged_after = sum(1 for m in everyone if costs_component(ctx, m) and m not in bundled)
    gain += cost * (charged_after - len(cand.charged))
    # capabilities are counted once, so duplicates among `new` are removed by re-counting
    if len(new) > 1:
        caps = set()
        for n in new:
            caps |= ctx.facts(n).capabilities
        gain_caps = sum(ctx.cap_weight[c] for c in sorted(caps) if c not in cand.covered and c in ctx.cap_weight)
        gain_caps += REQUIRED_FIRST * len({c for c in caps if c not in cand.covered and c in ctx.required_cap_set})
        gain = gain_caps + cost * (charged_after - len(cand.charged))
    return gain


def unmet_demands(ctx: Context, cand: Candidate) -> str | None:
    """Required projects and capabilities, checked once the optional slots are filled."""
    members = set(cand.members)
    missing = [s for s in ctx.required if s not in members]
    if missing:
        return f"lacks required {', '.join(missing)}"
    for cap, why in ctx.required_caps:
        if cap not in cand.covered:  # the requirement may be the profile's, the tenancy's or a gang class's
            return f"no project provides {cap}, which this request requires ({why.rstrip('.')})"
    return None


# --- fast pre-scoring of cores -------------------------------------------------------------------
# The exact evaluation above builds every combination from scratch. To search large catalogs, the
# cluster pair (scheduling, admission) and each pool option are summarised once as a `Part`, and
# combinations are scored by combining parts with set operations. Only the best cores are then
# evaluated exactly (the exact result is what is returned).


@dataclass(frozen=True)
class Part:
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


def make_part(ctx: Context, placed: list[tuple[SlotName, str]], base: float) -> Part:
    graph = ctx.graph
    members = frozenset(slug for _, slug in placed)
    primary_filled = frozenset(slug for slot, slug in placed if slug in graph.slot_primary[slot])
    needs = frozenset(slug for slot, slug in placed if slug not in graph.slot_primary[slot]) - primary_filled
    error = None
    supporting: set[str] = set()
    for slot, slug in placed:  # a scheduler that places the gang classes through an API it serves brings it
        api = gang_api(ctx, slug) if slot == SlotName.SCHEDULING_POLICY else None
        if api is not None and api not in members:
            supporting.add(api)
    for m in sorted(members | supporting):  # the error names the first member by name, not by hash order
        for needed in sorted(ctx.facts(m).requires_all):
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
            binds |= bind_units(ctx, slug)
    clash = everyone & conflicts
    if clash and error is None:
        a = sorted(clash)[0]
        b = next(x for x in sorted(everyone) if a in ctx.facts(x).conflicts)
        error = f"{b} conflicts with {a}"
    return Part(
        members=members, primary_filled=primary_filled, needs_primary=needs, everyone=frozenset(everyone),
        conflicts=frozenset(conflicts), caps=frozenset(caps), bundled=frozenset(bundled),
        costed=frozenset(s for s in everyone if costs_component(ctx, s)), binds=frozenset(binds), base=base, error=error,
    )


def _pair_failure(ctx: Context, cluster: Part, sched: str, adm: str, p: Part, opt: PoolOption) -> str | None:
    """Why a (scheduler, admission) part and one pool's option cannot meet, or None."""
    clash = cluster.everyone & p.conflicts
    if clash:
        a = sorted(clash)[0]
        b = next(x for x in sorted(p.everyone) if a in ctx.facts(x).conflicts)
        return f"{a} conflicts with {b}"
    if opt.unit not in cluster.binds and opt.unit not in p.binds:
        return f"Bind fails: {sched} cannot bind {unit_label(opt.unit)}"
    if opt.unit not in admission_units(ctx.facts(adm)):
        return f"Quota fails: {adm} cannot count {unit_label(opt.unit)} in quota"
    return binder_conflict(ctx, sched, sorted(cluster.everyone | p.everyone), opt)


def combine(ctx: Context, cluster: Part, sched: str, adm: str, pools: tuple[Part, ...], options: tuple[PoolOption, ...],
            checks: dict[tuple[int, int], str | None] | None = None) -> tuple[float | None, str | None]:
    """(fast score, None) for a possible core, or (None, reason); reason None = not worth reporting.
    `checks` remembers each (cluster part, pool part) verdict: a search meets the same pair in many
    combinations."""
    checks = {} if checks is None else checks
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
    for p, opt in zip(pools, options):
        key = (id(cluster), id(p))  # the caller keeps both parts alive while `checks` lives
        if key not in checks:
            checks[key] = _pair_failure(ctx, cluster, sched, adm, p, opt)
        if checks[key]:
            return None, checks[key]
        caps = caps | p.caps
        costed = costed | p.costed
        bundled = bundled | p.bundled
        base += p.base
    weight = ctx.cap_weight
    score = base + math.fsum(weight[c] for c in caps if c in weight)  # exact: the same in any set order
    score += ctx.graph.rules.component_cost.points * len(costed - bundled)
    return round(score, 3), None


def ranked_pool_combinations(pool_options, pool_parts, limit: int, positive: dict[str, float], cost: float,
                       bundled_elsewhere: frozenset[str]) -> tuple[list, int]:
    """(bound, pools, parts) for the combinations of pool options, best bound first, and how many
    combinations there are. A combination's bound is its parts' base plus every positive capability
    they bring, minus the components nothing in the stack could ship (`bundled_elsewhere`: what the
    cluster parts may bundle). Up to `limit` every combination is scored; above it a beam over the
    pools (in request order) keeps the best partial combinations by that bound, so the work grows with
    pools x options x limit instead of options^pools. Sets are bit masks here: the beam unions them
    tens of thousands of times."""
    total = 1
    for options in pool_options:
        total *= len(options)
    bit: dict[str, int] = {}

    def mask(names) -> int:
        m = 0
        for name in names:
            m |= 1 << bit.setdefault(name, len(bit))
        return m

    # bits by name, so that a bound sums its weights in the same order in every process
    rows = [[(o, p, p.base, mask(sorted(p.caps)), mask(sorted(p.costed)), mask(sorted(p.bundled)))
             for o in options for p in (pool_parts[i][o],)]
            for i, options in enumerate(pool_options)]
    elsewhere = mask(sorted(bundled_elsewhere))
    weight = {1 << i: positive.get(name, 0.0) for name, i in bit.items()}
    cap_sums: dict[int, float] = {}

    def bound(base: float, caps: int, costed: int, bundled: int) -> float:
        gain = cap_sums.get(caps)
        if gain is None:
            gain, rest = 0.0, caps
            while rest:
                low = rest & -rest
                gain += weight[low]
                rest ^= low
            cap_sums[caps] = gain
        return base + gain + cost * (costed & ~(bundled | elsewhere)).bit_count()

    if total <= limit:
        beam = []
        for combo in itertools.product(*rows):
            caps = costed = bundled = 0
            for row in combo:
                caps |= row[3]
                costed |= row[4]
                bundled |= row[5]
            beam.append((tuple(r[0] for r in combo), tuple(r[1] for r in combo),
                         sum(r[2] for r in combo), caps, costed, bundled))
    else:
        width = max(1, limit // max(len(row) for row in rows))
        beam = [((), (), 0.0, 0, 0, 0)]
        for i, row in enumerate(rows):
            grown = [
                (pools + (o,), parts + (p,), base + b, caps | c, costed | k, bundled | u)
                for pools, parts, base, caps, costed, bundled in beam
                for o, p, b, c, k, u in row
            ]
            keep = limit if i == len(rows) - 1 else width
            # nlargest keeps the first of equal bounds, as the exhaustive walk would
            beam = heapq.nlargest(keep, grown, key=lambda g: bound(g[2], g[3], g[4], g[5]))
    combos = [(bound(base, caps, costed, bundled), pools, parts) for pools, parts, base, caps, costed, bundled in beam]
    combos.sort(key=lambda item: -item[0])
    return combos, total
