"""Compose, step 1: feasibility. Hard rules remove units and projects that cannot serve a pool;
every removal is kept with its reason (`Context.why_not`) so a result can answer "why not X?".
"""

from __future__ import annotations

from placement.catalog.schemas import ContractPoint, ResourceUnit
from placement.plans.sizing import MIG_COMPUTE_SHARE_TOLERANCE as PLAN_TOLERANCE
from placement.plans.sizing import mig_profile as plan_mig_profile
from placement.rules.context import (
    TOP_CLUSTER,
    TOP_PER_UNIT,
    TOP_POOL_OPTIONS,
    Context,
    PoolOption,
    PoolSpec,
    admission_units,
    gang_api,
    keeps_default_scheduler,
    local_score,
    unit_label,
    unit_list,
    unit_score,
)
from placement.rules.data import EnforcementAddon, Isolation, SlotName
from placement.rules.models import Rejection, SlotFailure
from scheduler_core.hardware import UnknownGpuModel, gpu_spec


def not_excluded(ctx: Context, slot: SlotName, slugs) -> list[str]:
    """Drop projects the constraints exclude and those serving other workloads (excluded capabilities)."""
    kept = []
    for slug in slugs:
        if slug in ctx.excluded:
            ctx.reject(slot, slug, f"{slug} is excluded by the constraints.", "constraint")
            continue
        landscape = ctx.facts(slug).doc.placement.landscape
        if landscape is not None and landscape.archived and slug not in ctx.required:
            ctx.reject(slot, slug, f"{slug} is archived upstream (no longer maintained); require it to see its stack.", "constraint")
            continue
        other = next((c for c in ctx.graph.rules.excluded_capabilities if c.capability in ctx.facts(slug).capabilities), None)
        if other is not None:
            ctx.reject(slot, slug, f"{slug}: {other.why}")
            continue
        kept.append(slug)
    return kept


def serving_classes(ctx: Context) -> list[str]:
    """Classes that run long-lived services (online_inference)."""
    return [w.name for w in ctx.workloads if w.kind.value == "online_inference"]


def cluster_candidates(ctx: Context, slot: SlotName) -> list[str]:
    graph = ctx.graph
    slugs = not_excluded(ctx, slot, graph.slot_candidates[slot])
    batch_only = graph.rules.batch_only
    serving = serving_classes(ctx)
    if serving and batch_only.projects:
        kept = []
        for slug in slugs:
            if slug in batch_only.projects:
                ctx.reject(slot, slug, (f"{slug} is a batch system: it runs jobs to completion and never admits or "
                                        f"schedules long-running services, and class {', '.join(serving)} serves "
                                        f"online inference ({batch_only.source})."))
            else:
                kept.append(slug)
        slugs = kept
    if slot == SlotName.SCHEDULING_POLICY and ctx.gang_classes:
        gang, kept = graph.rules.gang, []
        for slug in slugs:
            served = ctx.graph.served_api(slug, gang.capability) if gang.served_api else None
            if gang.capability in ctx.facts(slug).capabilities or gang_api(ctx, slug):
                kept.append(slug)
            elif served is not None:  # it would place gangs through an API the constraints exclude
                ctx.reject(slot, slug, (f"{slug} places a gang all-or-nothing only through {served.ref.slug} "
                                        f"(Kubernetes >= {gang.served_api.kubernetes}), which the constraints exclude; "
                                        f"class {', '.join(ctx.gang_classes)} has gang: true."), "constraint")
            else:
                ctx.reject(slot, slug, (f"{slug} does not place a gang all-or-nothing, and class "
                                        f"{', '.join(ctx.gang_classes)} has gang: true ({gang.source})."))
        slugs = kept
    if slot == SlotName.SCHEDULING_POLICY and ctx.constraints.keep_default_scheduler:
        kept = []
        for slug in slugs:
            if keeps_default_scheduler(ctx, slug):
                kept.append(slug)
            else:
                ctx.reject(slot, slug, f"{slug} replaces the default scheduler ({graph.rules.default_scheduler}); the constraints keep it.", "constraint")
        slugs = kept
    return slugs



def placeable(ctx: Context, slot: SlotName, slugs, companions: set[str]) -> list[str]:
    """Candidates that reach the slot by their primary layer, or whose primary role is among
    `companions` (the candidates of the slots where they are primary)."""
    primary = ctx.graph.slot_primary[slot]
    return [s for s in slugs if s in primary or s in companions]


def enforcers(ctx: Context, unit: ResourceUnit, spec: PoolSpec) -> list[str]:
    """Data-plane add-ons (composition.yaml enforcement_addons) that make `unit` isolate as the pool
    needs where its own isolation does not."""
    return [e.project for e in ctx.graph.rules.enforcement_addons
            if e.unit == unit and e.isolation in spec.accepts and e.project in ctx.graph.projects
            and e.project not in ctx.excluded]


def enforced_by(ctx: Context, unit: ResourceUnit, data_plane: str | None) -> EnforcementAddon | None:
    """The enforcement add-on rule when the pool's data plane is the add-on that enforces its unit."""
    return next((e for e in ctx.graph.rules.enforcement_addons if e.unit == unit and e.project == data_plane), None)


def carriers(ctx: Context, unit: ResourceUnit, binders) -> dict[str, ResourceUnit]:
    """device handoff -> the unit it delivers that one of `binders` hands `unit` out on
    (interfaces.yaml `carries`: KAI's fractions on a whole GPU its reservation pod holds)."""
    found = {}
    for slug in binders:
        iface = ctx.graph.rules.interfaces.get(slug)
        carried = iface.carries.get(unit) if iface else None
        if carried is not None:
            found.update({h: carried.carrier for h in carried.handoffs if h not in found})
    return found


def hands_out(ctx: Context, slug: str, unit: ResourceUnit, carried: dict | None = None) -> bool:
    """The device handoff advertises and allocates `unit`, or the unit a binder carries it on (`carried`)."""
    f = ctx.facts(slug)
    both = f.role_units(ContractPoint.ADVERTISE) & f.role_units(ContractPoint.ALLOCATE)
    return unit in both or (carried is not None and carried.get(slug) in both)


def acceptable_units(ctx: Context, spec: PoolSpec) -> list[ResourceUnit]:
    rules = ctx.graph.rules
    return [
        u for u in ResourceUnit
        if rules.unit[u].isolation != "not_applicable"
        and (Isolation(rules.unit[u].isolation) in spec.accepts or enforcers(ctx, u, spec))
        and (ctx.pool.mig_capable or not rules.unit[u].needs_mig_capable)
        and unit_misfit(ctx, spec, u) is None
    ]


# A slice counts as giving a replica its share of compute when it has at least this much of it:
# 3g (3/7 = 0.43) is the "half GPU" NVIDIA sizes it as, but 1g (0.14) is not a quarter (assumption).
MIG_COMPUTE_SHARE_TOLERANCE = PLAN_TOLERANCE  # one rule: placement/plans/sizing.py


def _slices(name: str) -> int:
    return int(name.split("g")[0])


def _mig_profile(ctx: Context, memory_gib: float, compute_share: float = 0.0) -> tuple[str, float] | None:
    """The smallest MIG profile of the pool's GPU model that holds `memory_gib` and gives at least
    `compute_share` of the GPU's SMs (a `g` slice gets g/7 of an A100's compute: a replica asking a
    quarter of a GPU needs 2g, not 1g; domain-facts §1.1), or None."""
    profiles = ctx.graph.rules.mig_profiles_for(ctx.pool.gpu_model)
    if not profiles:
        return None
    full = max(_slices(name) for name in profiles)
    fitting = sorted(
        ((gb, name) for name, gb in profiles.items() if gb >= memory_gib and _slices(name) / full >= compute_share * MIG_COMPUTE_SHARE_TOLERANCE),
        key=lambda p: (p[0], _slices(p[1])),
    )
    return (fitting[0][1], fitting[0][0]) if fitting else None


def _replica_mig_profile(ctx: Context, w) -> tuple[str, float] | None:
    # GPU models of the hardware model are sized as the plan sizes them (usable MiB, g/7 compute;
    # placement/plans/sizing.py); others by the nominal table below.
    try:
        spec = gpu_spec(ctx.pool.gpu_model)
    except UnknownGpuModel:
        return _mig_profile(ctx, w.gpu_memory_gib, w.gpus_per_replica if w.gpus_per_replica < 1 else 0.0)
    if spec.mig_family is None:
        return None
    found = plan_mig_profile(spec, w.gpu_memory_gib, w.gpus_per_replica)
    return (found.name, round(found.memory_mib / 1024, 2)) if found else None


PARTITIONING_CAPABILITY = "hardware-partitioning"


def discount_whole_card_mig(ctx: Context) -> None:
    """When every class's replica takes a MIG profile that fills a card (one instance per GPU, e.g. a
    1-GPU replica gets 7g.80gb), MIG partitions nothing: its unit preference ("slices for small and
    medium jobs") and hardware partitioning's points are not counted, as a capability the pools do not
    use is not (composition.yaml capability_conditions). Its isolation equals a whole GPU's, with
    reconfiguration on top; a request with any sliced class keeps the points."""
    classes = [p.workload for p in ctx.pools if p.workload is not None]
    if not classes or len(classes) != len(ctx.pools):
        return
    try:
        spec = gpu_spec(ctx.pool.gpu_model)
    except UnknownGpuModel:
        return  # sized by the nominal table: whether a profile fills the card is not known here
    if spec.mig_family is None:
        return
    choices = [(w.name, plan_mig_profile(spec, w.gpu_memory_gib, w.gpus_per_replica)) for w in classes]
    fitting = [(name, c) for name, c in choices if c is not None]
    if not fitting or any(c.per_gpu > 1 for _, c in fitting):
        return
    said = "; ".join(f"{name}: {c.name}" for name, c in fitting)
    why = (f"not counted: each replica takes a MIG profile that fills a {ctx.pool.gpu_model} ({said}; one instance "
           f"per GPU), so MIG partitions nothing here and isolates no better than a whole GPU")
    if ctx.unit_points.get(ResourceUnit.MIG_INSTANCE):
        ctx.unit_points[ResourceUnit.MIG_INSTANCE] = [(0.0, why)]
        ctx.unit_total[ResourceUnit.MIG_INSTANCE] = 0.0
    if ctx.cap_points.get(PARTITIONING_CAPABILITY):
        ctx.cap_points[PARTITIONING_CAPABILITY] = [(0.0, why)]
        ctx.cap_weight[PARTITIONING_CAPABILITY] = 0.0


def mig_profile_name(ctx: Context, spec: PoolSpec) -> str | None:
    """The MIG profile one replica of the pool's class gets (None without a class or a profile table)."""
    found = _replica_mig_profile(ctx, spec.workload) if spec.workload else None
    return found[0] if found else None


def unit_misfit(ctx: Context, spec: PoolSpec, unit: ResourceUnit) -> str | None:
    """Why one replica of the pool's workload class cannot run on `unit` (feasibility.yaml), or None."""
    w = spec.workload
    rules = ctx.graph.rules
    fit = rules.fit.get(unit)
    if w is None or fit is None:
        return None
    label = unit_label(unit)
    where = f"class {w.name!r}"
    if w.gpus_per_replica > fit.max_gpus_per_replica:
        return (f"{label} cannot serve {where}: a replica needs {w.gpus_per_replica:g} GPUs in one process, and one "
                f"process can use at most {fit.max_gpus_per_replica} {label.lower()} ({fit.source})")
    if w.peer_to_peer and w.gpus_per_replica > 1 and not fit.peer_to_peer:
        return (f"{label} cannot serve {where}: its {w.whole_gpus} GPUs per replica talk peer-to-peer (NVLink/P2P), "
                f"which only whole GPUs or exclusive devices give ({fit.source})")
    model = rules.gpu_model(ctx.pool.gpu_model)
    if fit.memory == "mig_profile":
        profiles = rules.mig_profiles_for(ctx.pool.gpu_model)
        if profiles and _replica_mig_profile(ctx, w) is None:
            name, gb = max(profiles.items(), key=lambda p: p[1])
            return (f"{label} cannot serve {where}: no MIG profile of {ctx.pool.gpu_model} holds {w.gpu_memory_gib:g} GiB "
                    f"with {min(1.0, w.gpus_per_replica):g} of a GPU's compute; the largest is {name} ({gb:g} GB) "
                    f"({rules.mig_profiles_source})")
    elif model is not None:
        cap = model.memory_gb * (min(1.0, w.gpus_per_replica) if fit.memory == "share" else 1.0)
        if w.gpu_memory_gib > cap:
            how = (f"an equal {w.gpus_per_replica:g} share of the {model.memory_gb} GB card is {cap:g} GB"
                   if fit.memory == "share" else f"the card has {model.memory_gb} GB")
            return f"{label} cannot serve {where}: {w.gpu_memory_gib:g} GiB per replica, and {how} ({fit.source})"
    return None


def unit_size(ctx: Context, spec: PoolSpec, unit: ResourceUnit) -> str:
    """What one replica of the pool's class gets of `unit`, e.g. 'MIG 3g.40gb' or '8 whole GPUs'."""
    w = spec.workload
    if w is None:
        return ""
    if unit == ResourceUnit.MIG_INSTANCE:
        found = _replica_mig_profile(ctx, w)
        return f"MIG {found[0]} per replica" if found else "a MIG instance per replica"
    if unit in (ResourceUnit.WHOLE_GPU, ResourceUnit.DRA_DEVICE):
        n = w.whole_gpus
        return f"{n} {'whole GPU' if unit == ResourceUnit.WHOLE_GPU else 'exclusive device'}{'s' if n > 1 else ''} per replica"
    if unit == ResourceUnit.MEMORY_COMPUTE_SHARE:
        cores = round(100 * min(1.0, w.gpus_per_replica))
        return f"{w.gpu_memory_gib:g} GiB memory cap + {cores}% cores on {w.whole_gpus} GPU{'s' if w.whole_gpus > 1 else ''} per replica"
    return f"{min(1.0, w.gpus_per_replica):g} GPU as {unit_label(unit)} per replica"


def best_few(ctx: Context, ranked: list[str], keep: set) -> list[str]:
    """The first TOP_POOL_OPTIONS of a ranked list, plus required projects and those in `keep`."""
    head = ranked[:TOP_POOL_OPTIONS]
    return head + [s for s in ranked[TOP_POOL_OPTIONS:] if s in keep or s in ctx.required]


def pool_options(ctx: Context, spec: PoolSpec, companions: set[str], unusable=None) -> list[PoolOption]:
    """The pool's (unit, data plane, handoff) options, best first. `unusable(option)` gives why no
    remaining scheduler can bind an option (contracts), so pruning never keeps only dead options."""
    graph, rules = ctx.graph, ctx.graph.rules
    primary_only = rules.slot[SlotName.DATA_PLANE_UNIT].unit_must_be_primary
    handoffs_all = placeable(ctx, SlotName.DEVICE_HANDOFF, not_excluded(
        ctx, SlotName.DEVICE_HANDOFF, graph.slot_candidates[SlotName.DEVICE_HANDOFF]), companions)
    planes_all = placeable(ctx, SlotName.DATA_PLANE_UNIT, not_excluded(
        ctx, SlotName.DATA_PLANE_UNIT, graph.slot_candidates[SlotName.DATA_PLANE_UNIT]), companions)
    options: list[PoolOption] = []
    for unit in ResourceUnit:
        rule = rules.unit[unit]
        if rule.isolation == "not_applicable":
            continue
        # the workload's shape first: no SLO or hardware choice makes a replica fit a unit it cannot use
        reason = unit_misfit(ctx, spec, unit)
        if reason and len(ctx.pools) > 1:
            reason = f"{spec.name} pool: {reason}"
        elif reason:
            pass
        elif Isolation(rule.isolation) not in spec.accepts and not enforcers(ctx, unit, spec):
            reason = (f"{unit_label(unit)} gives {rule.isolation} isolation; the {spec.name} pool needs "
                      f"{'/'.join(a.value for a in spec.accepts)}.")
        elif rule.needs_mig_capable and not ctx.pool.mig_capable:
            reason = f"{unit_label(unit)} needs MIG-capable GPUs; the pool's {ctx.pool.gpu_model} is not MIG-capable."
        if reason:
            for slug in planes_all:
                if ctx.facts(slug).primary_unit == unit:
                    ctx.reject(SlotName.DATA_PLANE_UNIT, slug, reason)
            for slug in handoffs_all:
                if ctx.facts(slug).primary_unit == unit:
                    ctx.reject(SlotName.DEVICE_HANDOFF, slug, reason)
            continue
        # a kept scheduler's binder may hand the unit out on a device another unit's handoff delivers
        carried = carriers(ctx, unit, sorted(companions))
        handoffs = [s for s in handoffs_all if hands_out(ctx, s, unit, carried)]
        if rule.needs_data_plane_project:
            planes: list[str | None] = [
                s for s in planes_all
                if (ctx.facts(s).primary_unit == unit if primary_only else unit in ctx.facts(s).units)
            ]
        else:
            planes = [None]
        if Isolation(rule.isolation) not in spec.accepts:  # only with the add-on that enforces it
            enforced = enforcers(ctx, unit, spec)
            for dp in planes:
                if dp and dp not in enforced:
                    ctx.reject(SlotName.DATA_PLANE_UNIT, dp, (
                        f"{unit_label(unit)} gives {rule.isolation} isolation without an enforcing add-on "
                        f"({', '.join(enforced)}); the {spec.name} pool needs {'/'.join(a.value for a in spec.accepts)}."))
            planes = [dp for dp in planes if dp in enforced]
        if not handoffs:  # a mechanism creates the unit, but nothing hands it to a container
            reason = f"No remaining device handoff advertises and allocates {unit_label(unit)} to a container."
            for dp in planes:
                if dp:
                    ctx.reject(SlotName.DATA_PLANE_UNIT, dp, f"{spec.name} pool: {reason}" if len(ctx.pools) > 1 else reason)
            continue
        # keep the most promising few of each before pairing them (large catalogs)
        native_of = {h: rules.native_handoff.points if ctx.facts(h).primary_unit == unit else 0.0 for h in handoffs}
        handoffs = best_few(ctx, sorted(handoffs, key=lambda h: (-(native_of[h] + local_score(ctx, h)), h)), keep=set(planes))
        if planes != [None]:
            planes = best_few(ctx, sorted(planes, key=lambda d: (-local_score(ctx, d), d)), keep=set(handoffs))
        base = unit_score(ctx, unit)
        for dp in planes:
            for h in handoffs:
                if dp is not None and h in ctx.facts(dp).conflicts:
                    ctx.reject(SlotName.DEVICE_HANDOFF, h, f"{h} conflicts with {dp}.", "conflict")
                    continue
                if dp is not None and dp != h and dp in ctx.facts(h).bundles_all and h in planes:
                    # the handoff ships this mechanism and creates the unit itself: one project, not two
                    continue
                native = rules.native_handoff.points if ctx.facts(h).primary_unit == unit else 0.0
                local = base + native + local_score(ctx, h) + (0.0 if dp in (None, h) else local_score(ctx, dp))
                option = PoolOption(spec, unit, dp, h, local)
                why = unusable(option) if unusable else None
                if why:
                    # the pair failed: each side is told which partner it failed with
                    paired = dp is not None and dp != h
                    ctx.reject(SlotName.DEVICE_HANDOFF, h, f"Paired with {dp} as the data plane: {why}" if paired
                               else why, "contract")
                    if paired:
                        ctx.reject(SlotName.DATA_PLANE_UNIT, dp, f"Paired with {h} as the device handoff: {why}",
                                   "contract")
                    continue
                options.append(option)
    options.sort(key=lambda o: (-o.local, o.unit.value, o.data_plane or "", o.handoff))
    keep = options[:TOP_POOL_OPTIONS]
    for slug in ctx.required:  # a required project stays in the search
        if not any(slug in (o.data_plane, o.handoff) for o in keep):
            keep.extend([o for o in options if slug in (o.data_plane, o.handoff)][:2])
    return keep


def top_cluster(ctx: Context, slot: SlotName, slugs: list[str], units: set[ResourceUnit], companions: set[str]) -> list[str]:
    """The best candidates by local score, plus the best few per pool unit and per required
    capability (and the best few of those that fill the slot by their primary layer), so that
    pruning never drops the only candidates that make a stack possible."""
    ranked = sorted(placeable(ctx, slot, slugs, companions), key=lambda s: (-local_score(ctx, s), s))
    keep = list(ranked[:TOP_CLUSTER])
    if slot == SlotName.SCHEDULING_POLICY:
        keep.extend(s for s in ranked if keeps_default_scheduler(ctx, s) and s not in keep)
    primary = ctx.graph.slot_primary[slot]

    def best(fit: list[str]) -> list[str]:
        # the best few, and the best few that fill the slot by their primary layer: a companion fills
        # it only beside its primary role, which the rest of a stack may rule out
        return fit[:TOP_PER_UNIT] + [s for s in fit if s in primary][:TOP_PER_UNIT]

    for unit in sorted(units, key=lambda u: u.value):
        if slot == SlotName.SCHEDULING_POLICY:
            fit = [s for s in ranked if unit in ctx.facts(s).role_units(ContractPoint.BIND)]
        else:
            fit = [s for s in ranked if unit in admission_units(ctx.facts(s))]
        keep.extend(s for s in best(fit) if s not in keep)
    for cap, _why in ctx.required_caps:
        fit = [s for s in ranked if cap in ctx.facts(s).capabilities]
        keep.extend(s for s in best(fit) if s not in keep)
    keep.extend(s for s in ctx.required if s in slugs and s not in keep)
    return keep



def slot_for_capability(ctx: Context, cap_slug: str) -> SlotName | None:
    cap = ctx.graph.capability(cap_slug)
    if cap is None:
        return None
    for rule in ctx.graph.rules.slots:
        if rule.map == cap.owner_map and set(rule.layers) & set(cap.owner_layers):
            return rule.slot
    return None


def rejections(ctx: Context, slot: SlotName, limit: int = 12) -> list[Rejection]:
    return [Rejection(project=slug, reason=reason) for (s, slug), reason in ctx.why_not.items() if s == slot][:limit]


def diagnose_pool(ctx: Context, spec: PoolSpec) -> SlotFailure:
    graph = ctx.graph
    acceptable = acceptable_units(ctx, spec)
    if not acceptable:
        return SlotFailure(
            slot=SlotName.DATA_PLANE_UNIT, pool=spec.name,
            reason=(f"No resource unit gives {'/'.join(a.value for a in spec.accepts)} isolation on the pool's "
                    f"{ctx.pool.gpu_model} GPUs."),
            rejected=rejections(ctx, SlotName.DATA_PLANE_UNIT),
        )
    schedulers = [s for s in graph.slot_candidates[SlotName.SCHEDULING_POLICY] if s not in ctx.excluded]
    handoff_units = {
        u for s in graph.slot_candidates[SlotName.DEVICE_HANDOFF] if s not in ctx.excluded
        for u in ResourceUnit if hands_out(ctx, s, u, carriers(ctx, u, schedulers))
    }
    if not handoff_units & set(acceptable):
        return SlotFailure(
            slot=SlotName.DEVICE_HANDOFF, pool=spec.name,
            reason=(f"No remaining device handoff advertises and allocates a unit the {spec.name} pool accepts "
                    f"({unit_list(acceptable)})."),
            rejected=rejections(ctx, SlotName.DEVICE_HANDOFF),
        )
    return SlotFailure(
        slot=SlotName.DATA_PLANE_UNIT, pool=spec.name,
        reason=(f"No remaining data-plane mechanism creates a unit the {spec.name} pool accepts "
                f"({unit_list(acceptable)}) together with a device handoff that delivers it."),
        rejected=rejections(ctx, SlotName.DATA_PLANE_UNIT) + rejections(ctx, SlotName.DEVICE_HANDOFF),
    )


