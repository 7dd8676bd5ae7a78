"""Compose, step 3b: explanation. Score items with their why, titles, slot reasons and why each
stack ranks where it does, built only for the stacks that are returned.
"""

from __future__ import annotations

from placement.catalog.schemas import ResourceUnit
from placement.rules.context import (
    PERIPHERAL,
    POOL_SLOTS,
    SLOT_ORDER,
    Candidate,
    Context,
    PoolOption,
    costs_component,
    elastic_admit,
    gang_api,
    keeps_default_scheduler,
    unit_label,
)
from placement.rules.data import SlotName
from placement.rules.feasibility import enforced_by, unit_size
from placement.rules.models import (
    ContractCheck,
    PoolPlan,
    ScoreItem,
    SlotAssignment,
    Stack,
    SupportingComponent,
    WhyNot,
)


def _name(ctx: Context, slug: str | None) -> str:
    """A catalog project as pages name it: its name, not its slug."""
    return ctx.facts(slug).ref.name if slug in ctx.graph.projects else str(slug)


def item_label(ctx: Context, item: ScoreItem) -> str:
    """What a score item is about, in words: a unit's, a capability's or a project's name."""
    if item.factor == "unit_fit":
        try:
            return unit_label(ResourceUnit(item.subject))
        except ValueError:
            return item.subject
    if item.factor in ("capability", "missing_capability"):
        return ctx.graph.capability_name(item.subject)
    if item.factor == "empty_slot":
        return f"empty {item.subject.replace('_', ' ')}"
    if item.factor == "default_scheduler":
        return "keeping the default scheduler"
    return _name(ctx, item.subject)


def explain_score(ctx: Context, cand: Candidate) -> list[ScoreItem]:
    """The score items (each with its why) of a stack that will be returned: what `evaluate` added up."""
    rules = ctx.graph.rules
    items: list[ScoreItem] = []
    for opt in cand.pools:
        who = opt.data_plane or opt.handoff
        addon = enforced_by(ctx, opt.unit, opt.data_plane)
        enforced = f" With {addon.project}: {addon.note}" if addon else ""
        for points, why in ctx.unit_points.get(opt.unit, ()):
            items.append(ScoreItem(factor="unit_fit", points=points, slot=SlotName.DATA_PLANE_UNIT, project=who,
                                   subject=opt.unit.value, reason=f"{opt.pool.name} pool on {unit_label(opt.unit)}: {why}{enforced}"))
        if ctx.facts(opt.handoff).primary_unit == opt.unit and rules.native_handoff.points:
            items.append(ScoreItem(factor="native_handoff", points=rules.native_handoff.points, slot=SlotName.DEVICE_HANDOFF,
                                   project=opt.handoff, subject=opt.handoff,
                                   reason=f"{_name(ctx, opt.handoff)} for {unit_label(opt.unit)}: {rules.native_handoff.why}"))
    sched = cand.cluster.get(SlotName.SCHEDULING_POLICY)
    dsp = ctx.profile.default_scheduler_points
    if dsp.points and keeps_default_scheduler(ctx, sched):
        items.append(ScoreItem(factor="default_scheduler", points=dsp.points, slot=SlotName.SCHEDULING_POLICY, project=sched,
                               subject=rules.default_scheduler, reason=f"{_name(ctx, sched)} keeps the default scheduler: {dsp.why}"))
    items.extend(_elastic_items(ctx, cand))
    api = gang_api(ctx, sched)
    if api is not None:
        served = rules.gang.served_api
        items.append(ScoreItem(factor="gang_api", points=served.points, slot=SlotName.SCHEDULING_POLICY, project=api,
                               subject=api, reason=(f"{_name(ctx, sched)} places class {', '.join(ctx.gang_classes)} "
                                                    f"all-or-nothing through the {_name(ctx, api)}: {served.why}")))
    for cap, entries in ctx.cap_points.items():
        if cap in cand.covered:
            slot, slug = cand.covered[cap]
            for points, why in entries:
                items.append(ScoreItem(factor="capability", points=points, slot=slot, project=slug, subject=cap,
                                       reason=f"{ctx.graph.capability_name(cap)} from {_name(ctx, slug)}: {why}"))
        elif ctx.cap_weight[cap] > 0:
            items.append(ScoreItem(factor="missing_capability", points=0, subject=cap,
                                   reason=f"No project in the stack provides {ctx.graph.capability_name(cap).lower()} "
                                          f"(worth {ctx.cap_weight[cap]:g})."))
    for slug in cand.members:
        if not costs_component(ctx, slug):
            continue
        if slug not in cand.charged:
            shipper = next(m for m in cand.members if slug in ctx.facts(m).bundles_all)
            items.append(ScoreItem(factor="component_cost", points=0, project=slug, subject=slug,
                                   reason=f"{_name(ctx, slug)} ships with {_name(ctx, shipper)}; no extra component."))
            continue
        extra = f" (required by {_name(ctx, cand.supporting[slug])})" if slug in cand.supporting else ""
        items.append(ScoreItem(factor="component_cost", points=rules.component_cost.points, project=slug, subject=slug,
                               reason=f"{_name(ctx, slug)}{extra}: {rules.component_cost.why}"))
    for slot in PERIPHERAL:
        if cand.cluster.get(slot) is None:
            items.append(ScoreItem(factor="empty_slot", points=0, slot=slot, subject=slot.value,
                                   reason=rules.slot[slot].empty_reason))
    return items


def _elastic_items(ctx: Context, cand: Candidate) -> list[ScoreItem]:
    """The elastic classes' item: who starts them with fewer than all their replicas, and through which
    field (composition.yaml `elastic`), or that nothing in the stack does."""
    if not ctx.elastic_classes:
        return []
    rule = ctx.graph.rules.elastic
    which = ", ".join(f"{w.name} ({w.min_replicas} to {w.replicas} replicas)" for w in ctx.elastic_classes)
    adm, sched = cand.cluster.get(SlotName.ADMISSION_QUOTA), cand.cluster.get(SlotName.SCHEDULING_POLICY)
    found = elastic_admit(ctx, sched, adm)
    if found is None:
        return [ScoreItem(factor="elastic", points=0, subject="elastic",
                          reason=(f"Elastic class {which}: neither {adm or 'the admission layer'} nor {sched} starts a job with "
                                  f"fewer than all its replicas, so it waits until every replica fits (worth {rule.points:g})."))]
    slug, admit = found
    return [ScoreItem(factor="elastic", points=rule.points, slot=SlotName.ADMISSION_QUOTA if slug == adm else SlotName.SCHEDULING_POLICY,
                      project=slug, subject="elastic",
                      reason=f"Elastic class {which}: {slug} admits it partially - {admit.how} ({admit.source}). {rule.why}")]


# --- results --------------------------------------------------------------------------------------


def _unit_isolation(ctx: Context, opt: PoolOption) -> str:
    """The unit's isolation, or the isolation the pool's enforcement add-on gives it (composition.yaml)."""
    addon = enforced_by(ctx, opt.unit, opt.data_plane)
    return addon.isolation.value if addon else ctx.graph.rules.unit[opt.unit].isolation


def stack_title(ctx: Context, cand: Candidate) -> str:
    if cand._title is None:
        cand._title = make_title(ctx, cand)
    return cand._title


def make_title(ctx: Context, cand: Candidate) -> str:
    names: list[str] = []
    for opt in cand.pools:
        if opt.data_plane:
            names.append(ctx.facts(opt.data_plane).ref.name)
        else:
            names.append(f"{unit_label(opt.unit)} ({ctx.facts(opt.handoff).ref.name})")
    for slot in (SlotName.SCHEDULING_POLICY, SlotName.ADMISSION_QUOTA):
        slug = cand.cluster.get(slot)
        if slug:
            names.append(ctx.facts(slug).ref.name)
    return " + ".join(dict.fromkeys(names))


def distinct_titles(ctx: Context, chosen: list[Candidate]) -> None:
    """Ranked stacks that would share a title get what differs between them appended: the members
    only they have ('with JobSet') or, for the smaller one, what it leaves out ('without DCGM')."""
    groups: dict[str, list[Candidate]] = {}
    for cand in chosen:
        groups.setdefault(stack_title(ctx, cand), []).append(cand)
    for title, group in groups.items():
        if len(group) < 2:
            continue
        everyone = set().union(*(set(c.members) for c in group))
        for cand in group:
            others = set().union(*(set(o.members) for o in group if o is not cand))
            extra = [m for m in cand.members if m not in others]
            missing = sorted(everyone - set(cand.members))
            if extra:
                cand._title = f"{title} with {', '.join(ctx.facts(m).ref.name for m in extra)}"
            elif missing:
                cand._title = f"{title} without {', '.join(ctx.facts(m).ref.name for m in missing)}"
    seen: dict[str, int] = {}
    for cand in chosen:  # members identical but slots differ (the same project in another role)
        title = stack_title(ctx, cand)
        seen[title] = seen.get(title, 0) + 1
        if seen[title] > 1:
            roles = ", ".join(f"{ctx.facts(slug).ref.name} as {slot.value.replace('_', ' ')}"
                              for slot, _pool, slug in cand.assignments() if slot in PERIPHERAL)
            cand._title = f"{title} ({roles or f'variant {seen[title]}'})"


def slot_why(ctx: Context, cand: Candidate, slot: SlotName, slug: str, opt: PoolOption | None) -> tuple[str, list[str]]:
    f = ctx.facts(slug)
    contributes = sorted(cap for cap, (s, who) in cand.covered.items() if who == slug and s == slot)
    weighted = [c for c in contributes if ctx.cap_weight.get(c)]
    rule = ctx.graph.rules.slot[slot]
    if slot == SlotName.DATA_PLANE_UNIT and opt is not None:
        u = ctx.graph.rules.unit[opt.unit]
        why = f"Creates {unit_label(opt.unit)} for the {opt.pool.name} pool ({u.isolation} isolation: {u.note})"
    elif slot == SlotName.DEVICE_HANDOFF and opt is not None:
        why = f"Advertises and allocates {unit_label(opt.unit)} on the {opt.pool.name} pool's nodes"
    else:
        why = f"{rule.name}: {f.doc.placement.promise}"
    if weighted:
        why += f" Adds: {', '.join(ctx.graph.capability_name(c).lower() for c in weighted)}."
    return why.rstrip(".") + ".", contributes


def to_stack(ctx: Context, cand: Candidate, rank: int, why_rank: str, items: list[ScoreItem],
             contracts: list[ContractCheck]) -> Stack:
    """The returned stack: `items` from explain_score, `contracts` from contract_checks."""
    graph = ctx.graph
    slots: list[SlotAssignment] = []
    for slot in SLOT_ORDER:
        if slot in POOL_SLOTS:
            for opt in cand.pools:
                slug = opt.handoff if slot == SlotName.DEVICE_HANDOFF else opt.data_plane
                if slug:
                    why, contributes = slot_why(ctx, cand, slot, slug, opt)
                    slots.append(SlotAssignment(slot=slot, pool=opt.pool.name, project=graph.projects[slug].ref, why=why, contributes=contributes))
                else:
                    slots.append(SlotAssignment(slot=slot, pool=opt.pool.name, project=None,
                                                why=f"{graph.rules.slot[slot].empty_reason.rstrip('.')} ({unit_label(opt.unit)} via {opt.handoff}).",
                                                contributes=[]))
        else:
            slug = cand.cluster.get(slot)
            if slug:
                why, contributes = slot_why(ctx, cand, slot, slug, None)
                slots.append(SlotAssignment(slot=slot, project=graph.projects[slug].ref, why=why, contributes=contributes))
            else:
                slots.append(SlotAssignment(slot=slot, project=None, why=graph.rules.slot[slot].empty_reason))
    pools = [
        PoolPlan(
            name=o.pool.name, isolation=list(o.pool.accepts), unit=o.unit, unit_isolation=_unit_isolation(ctx, o),
            gpus=o.pool.gpus, data_plane=o.data_plane, device_handoff=o.handoff, serves=o.pool.serves,
            workload=o.pool.workload.name if o.pool.workload else None, unit_size=unit_size(ctx, o.pool, o.unit),
        )
        for o in cand.pools
    ]
    api = gang_api(ctx, cand.cluster.get(SlotName.SCHEDULING_POLICY))
    supporting = [
        SupportingComponent(
            project=graph.projects[slug].ref, required_by=by,
            why=(f"{by} places class {', '.join(ctx.gang_classes)} all-or-nothing only through it (Kubernetes >= "
                 f"{graph.rules.gang.served_api.kubernetes}). {graph.projects[slug].doc.placement.promise}" if slug == api
                 else f"{by} requires it. {graph.projects[slug].doc.placement.promise}"),
        )
        for slug, by in cand.supporting.items()
    ]
    return Stack(
        rank=rank,
        score=cand.score,
        title=stack_title(ctx, cand),
        slots=slots,
        supporting=supporting,
        pools=pools,
        contracts=contracts,
        score_breakdown=items,
        capabilities=sorted(cand.covered),
        components=cand.members,
        why_rank=why_rank,
    )


def _summed(items: list[ScoreItem], ctx: Context) -> list[str]:
    """Items about the same thing said once, with their total (two pools on one unit: `Whole GPU +6`)."""
    totals: dict[str, float] = {}
    for i in items:
        label = item_label(ctx, i)
        totals[label] = totals.get(label, 0) + i.points
    # heaviest first; equal weights keep the order the items were scored in
    return [f"{label} {points:+g}" for label, points in sorted(totals.items(), key=lambda kv: -abs(kv[1]))]


def item_key(item: ScoreItem) -> tuple[str, str]:
    return (item.factor, item.subject)


def why_rank(ctx: Context, cand: Candidate, items: list[ScoreItem], rank: int, above: Candidate | None,
             above_items: list[ScoreItem]) -> str:
    """Why `cand` (score `items`) ranks `rank`: its main points, or what it loses to the stack `above`."""
    top = sorted((i for i in items if i.points), key=lambda i: -abs(i.points))
    if rank == 1 or above is None:
        plus = _summed([i for i in top if i.points > 0], ctx)[:4]
        minus = _summed([i for i in top if i.points < 0], ctx)[:3]
        text = f"Ranks first with {cand.score:g} point{'s' if cand.score != 1 else ''}"
        if plus:
            text += f"; most from {', '.join(plus)}"
        if minus:
            text += f"; costs {', '.join(minus)}"
        return text + "."
    mine: dict[tuple[str, str], float] = {}
    labels: dict[tuple[str, str], str] = {}
    for i in items:
        mine[item_key(i)] = mine.get(item_key(i), 0) + i.points
        labels[item_key(i)] = item_label(ctx, i)
    theirs: dict[tuple[str, str], float] = {}
    for i in above_items:
        theirs[item_key(i)] = theirs.get(item_key(i), 0) + i.points
        labels.setdefault(item_key(i), item_label(ctx, i))
    diffs = []
    for key in set(mine) | set(theirs):
        delta = mine.get(key, 0) - theirs.get(key, 0)
        if abs(delta) > 1e-9:
            diffs.append((delta, key))
    diffs.sort(key=lambda d: (d[0], d[1]))
    parts = []
    for delta, key in diffs[:4]:
        what = {"unit_fit": "unit ", "capability": "capability ", "component_cost": "component ",
                "native_handoff": "native handoff by "}.get(key[0], "")
        parts.append(f"{what}{labels[key]} {delta:+g}")
    gap = round(above.score - cand.score, 3)
    text = f"{gap:g} point{'s' if gap != 1 else ''} below #{rank - 1} ({cand.score:g} vs {above.score:g})"
    if parts:
        text += ": " + ", ".join(parts)
    if gap == 0:
        # a tie goes to the stack with fewer components: adding one never wins a tie (issue 32)
        if len(cand.charged) != len(above.charged):
            text += (f"; a tie, and ties go to fewer components: this one runs {len(cand.charged)} instead of "
                     f"{len(above.charged)}")
        elif len(cand.members) != len(above.members):
            extra = sorted(set(cand.members) - set(above.members))
            text += (f"; a tie, and ties go to fewer projects: this one adds "
                     f"{', '.join(_name(ctx, e) for e in extra) or len(cand.members) - len(above.members)}")
        else:
            text += "; same score and size, ordered by name"
    return text + "."




def why_not(ctx: Context, stacks: list[Stack]) -> list[WhyNot]:
    """For every catalog project in none of the returned stacks: the rule that kept it out."""
    graph = ctx.graph
    shown = {slug for stack in stacks for slug in stack.components}
    first: dict[str, tuple[SlotName, str]] = {}
    # the workload's shape first: it holds whatever else is chosen; then constraints, conflicts, contracts
    order = {"feasibility": 0, "constraint": 1, "conflict": 2, "contract": 3}
    for (slot, slug), reason in sorted(ctx.why_not.items(), key=lambda kv: order.get(ctx.why_not_rule.get(kv[0]), 4)):
        first.setdefault(slug, (slot, reason))
    out: list[WhyNot] = []
    for slug in sorted(graph.projects):
        if slug in shown:
            continue
        if slug in first:
            slot, reason = first[slug]
            out.append(WhyNot(project=slug, slot=slot, rule=ctx.why_not_rule.get((slot, slug), "feasibility"), reason=reason))
            continue
        slots = graph.slots_of(slug)
        f = ctx.facts(slug)
        if not slots:
            out.append(WhyNot(project=slug, rule="no_slot", reason=(
                f"{f.ref.name} ({f.ref.kind.value} on {f.control_layer}) fills no stack slot: no slot takes its layer, "
                f"kind and contract role; it enters a stack only when a member requires or bundles it.")))
            continue
        possible = f"Possible as {', '.join(s.value.replace('_', ' ') for s in slots)}, but "
        out.append(WhyNot(project=slug, slot=slots[0], rule="ranked_lower", reason=(
            f"{possible}every stack with it scores below the {len(stacks)} returned (require {f.ref.name} "
            f"to see its best stack)." if stacks else
            f"{possible}no stack holds under this request (see the failures).")))
    return out


def grouped_reasons(counts) -> list[tuple[str, int]]:
    """(reason, combinations), most frequent first, with one reason said once for all the schedulers
    it names: "... so volcano, yunikorn and kai-scheduler's policy never sees them" instead of one line
    per scheduler (issue 32: `excluded` repeated one reason per scheduler six times). Reasons group
    when they differ only in one possessive name (X's); other reasons keep their own counts."""
    groups: dict[tuple, list[str]] = {}
    for reason in counts:
        words = reason.split(" ")
        for i, word in enumerate(words):
            if word.endswith("'s") and len(word) > 2:
                groups.setdefault((i, tuple(words[:i]), tuple(words[i + 1:])), []).append(reason)
    used: set[str] = set()
    out: list[tuple[str, int]] = []
    for (i, head, tail), members in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        members = sorted((m for m in members if m not in used), key=lambda m: (-counts[m], m))
        if len(members) < 2:
            continue
        names = [m.split(" ")[i][:-2] for m in members]
        word = ", ".join(names[:-1]) + " and " + names[-1] + "'s"
        out.append((" ".join([*head, word, *tail]), sum(counts[m] for m in members)))
        used.update(members)
    out.extend((r, n) for r, n in counts.items() if r not in used)
    out.sort(key=lambda item: -item[1])  # stable: equal counts keep the search's order
    return out
