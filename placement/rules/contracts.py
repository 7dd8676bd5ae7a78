"""Compose, step 2: contracts. Per pool and contract point, the concrete interface that must hold
between the stack's members (fixtures/rules/interfaces.yaml, each fact with its source):

- Advertise: the resource names the device handoff publishes for the pool's unit;
- Bind: exactly one scheduler binds the pool's pods (spec.schedulerName, and no member's webhook
  rewrites it to another scheduler), and it understands the advertised names;
- Allocate: exactly one device plugin or DRA driver per resource per node (an operator that ships
  another one must have it disabled on the pool's nodes);
- Quota: the admission layer counts the advertised names;
- Workload admission: the admission layer integrates the workload API (suspend/admit, PodGroups).

A failed check removes the combination; its reason names the field or resource and the source.
"""

from __future__ import annotations

from placement.catalog.schemas import ContractPoint, ResourceUnit
from placement.rules.context import (
    BIND_LAYERS,
    Candidate,
    Context,
    PoolOption,
    admission_units,
    unit_label,
)
from placement.rules.data import CarriedUnit, ProjectInterface, SlotName
from placement.rules.feasibility import mig_profile_name
from placement.rules.graph import CONTROL_MAP
from placement.rules.models import CheckPoint, ContractCheck, Rejection, SlotFailure

FAILS = {
    CheckPoint.ADVERTISE: "Advertise fails",
    CheckPoint.BIND: "Bind fails",
    CheckPoint.ALLOCATE: "Allocate fails",
    CheckPoint.QUOTA: "Quota fails",
    CheckPoint.WORKLOAD_ADMISSION: "Workload admission fails",
}


def failed_point(reason: str) -> CheckPoint | None:
    """The contract point a failure reason names (reasons start with FAILS' prefixes)."""
    return next((point for point, prefix in FAILS.items() if reason.startswith(prefix)), None)


def _iface(ctx: Context, slug: str | None) -> ProjectInterface | None:
    return ctx.graph.rules.interfaces.get(slug) if slug else None


def _carried(ctx: Context, opt: PoolOption, binders) -> tuple[str, CarriedUnit] | None:
    """(binder, how) when the pool's unit is handed out by one of `binders` on a device the handoff
    advertises and allocates as another unit (interfaces.yaml `carries`), and not by the handoff itself."""
    h = ctx.facts(opt.handoff)
    both = h.role_units(ContractPoint.ADVERTISE) & h.role_units(ContractPoint.ALLOCATE)
    if opt.unit in both:
        return None
    for slug in binders:
        iface = _iface(ctx, slug)
        carried = iface.carries.get(opt.unit) if iface else None
        if carried is not None and carried.carrier in both and opt.handoff in carried.handoffs:
            return slug, carried
    return None


def resource_names(ctx: Context, opt: PoolOption) -> list[str]:
    """The names the pool's handoff advertises for its unit, e.g. nvidia.com/mig-3g.40gb."""
    iface = _iface(ctx, opt.handoff)
    names = list(iface.advertises.get(opt.unit, ())) if iface else []
    carried = None if names else _carried(ctx, opt, sorted(ctx.graph.rules.interfaces))
    if carried is not None:  # the carrier's resource names, and what a pod asks with
        return [*(iface.advertises.get(carried[1].carrier, ()) if iface else ()), *carried[1].names]
    if not names:
        return [f"{unit_label(opt.unit)} via {opt.handoff}"]
    if not any("{mig}" in n for n in names):
        return names
    profile = mig_profile_name(ctx, opt.pool) or "<profile>"
    return [n.replace("{mig}", profile) for n in names]


def bind_units(ctx: Context, slug: str) -> frozenset:
    """Units a project binds: its own, and those of the binder it runs inside (a scheduler-plugins
    plugin is kube-scheduler with one more plugin, so it binds DRA claims through kube-scheduler's
    DynamicResources plugin; interfaces.yaml `binder` + `inside`)."""
    units = ctx.facts(slug).role_units(ContractPoint.BIND)
    iface = _iface(ctx, slug)
    if iface and iface.inside and iface.binder and iface.binder in ctx.graph.projects and iface.binder != slug:
        units = units | ctx.facts(iface.binder).role_units(ContractPoint.BIND)
    return units


def binders_of(ctx: Context, cand: Candidate, opt: PoolOption) -> list[str]:
    """Stack members on L2/L3 that bind the pool's unit (the scheduler, or an extender such as HAMi's)."""
    scope = [cand.cluster.get(SlotName.SCHEDULING_POLICY), *cand.cluster.values(), *cand.supporting, opt.handoff, opt.data_plane]
    return [
        s for s in dict.fromkeys(x for x in scope if x)
        if opt.unit in bind_units(ctx, s) and ctx.facts(s).on(CONTROL_MAP, BIND_LAYERS)
    ]


def _scheduler_binder(ctx: Context, sched: str | None) -> str | None:
    iface = _iface(ctx, sched)
    return (iface.binder if iface and iface.binder else sched) if sched else None


def binder_conflict(ctx: Context, sched: str | None, members, opt: PoolOption) -> str | None:
    """Two binders for the pool's pods, or a binder that cannot bind the handoff's resources."""
    sensitive = ctx.graph.rules.binder_sensitive
    involved = [m for m in members if m in sensitive]
    if not involved:
        return None
    binder = _scheduler_binder(ctx, sched)
    for slug in dict.fromkeys(involved):
        iface = _iface(ctx, slug)
        if iface and iface.rewrites_scheduler_name and sched not in iface.keeps:
            return (f"Bind fails on the {opt.pool.name} pool: two binders - {slug}'s mutating webhook rewrites "
                    f"spec.schedulerName of GPU pods to {iface.rewrites_scheduler_name}, so {sched}'s policy never sees "
                    f"them ({iface.source})")
    iface = _iface(ctx, opt.handoff)
    if iface and iface.bound_by and binder not in iface.bound_by and sched not in iface.bound_by:
        return (f"Bind fails on the {opt.pool.name} pool: {', '.join(resource_names(ctx, opt))} from {opt.handoff} are "
                f"bound only by {', '.join(iface.bound_by)}, not by {sched} ({iface.source})")
    return None


def _stack_members(cand: Candidate, opt: PoolOption) -> list[str]:
    """Members that run on the pool's nodes or cluster-wide."""
    return [*cand.cluster.values(), *cand.supporting, opt.handoff, opt.data_plane]


def required_binder_conflicts(ctx: Context) -> list[SlotFailure]:
    """Required projects that put two binders on the pods: a scheduler that can only be in a stack as
    its scheduler, and a project whose webhook rewrites spec.schedulerName to another one."""
    graph, failures = ctx.graph, []
    schedulers = [r for r in ctx.required
                  if {s for s in graph.slots_of(r) if r in graph.slot_primary[s]} == {SlotName.SCHEDULING_POLICY}]
    # two required schedulers: a pod names one spec.schedulerName, so only one of them binds it; a
    # plugin or extender running inside the other's binary is not a second scheduler
    for i, a in enumerate(schedulers):
        for b in schedulers[i + 1:]:
            if a in ctx.facts(b).requires_all or b in ctx.facts(a).requires_all:
                continue
            failures.append(SlotFailure(
                slot=SlotName.SCHEDULING_POLICY, contract_point=CheckPoint.BIND,
                reason=(f"Bind fails: {a} and {b} are both required as the scheduler, but a pod has one "
                        f"spec.schedulerName, so only one of them can bind the pool's pods (one binder per pod; "
                        f"https://kubernetes.io/docs/tasks/extend-kubernetes/configure-multiple-schedulers/). Run them "
                        f"on different node pools with different pods, or require one."),
                rejected=[Rejection(project=b, reason=f"A second scheduler next to {a}: one spec.schedulerName per pod.")],
            ))
    for sched in schedulers:
        for other in ctx.required:
            iface = _iface(ctx, other)
            if other != sched and iface and iface.rewrites_scheduler_name and sched not in iface.keeps:
                failures.append(SlotFailure(
                    slot=SlotName.SCHEDULING_POLICY, contract_point=CheckPoint.BIND,
                    reason=(f"Bind fails: {sched} and {other} are both required, and {other}'s mutating webhook rewrites "
                            f"spec.schedulerName of GPU pods to {iface.rewrites_scheduler_name}: two binders claim the "
                            f"pool's pods ({iface.source})."),
                    rejected=[Rejection(project=other, reason=f"Its webhook sets spec.schedulerName: {iface.rewrites_scheduler_name}.")],
                ))
    return failures


def integration_conflict(ctx: Context, adm: str | None, workload: str | None) -> str | None:
    """The workload API runs past the admission layer when the admission layer does not integrate it."""
    iface = _iface(ctx, adm)
    if not workload or not iface or not iface.integrations or workload == adm or workload in iface.integrations:
        return None
    return (f"Workload admission fails: {adm} has no integration for {ctx.facts(workload).ref.name} workloads "
            f"(it admits {', '.join(iface.integrations)}), so they would run without being admitted ({iface.source})")


def contract_failure(ctx: Context, cand: Candidate) -> str | None:
    adm = cand.cluster.get(SlotName.ADMISSION_QUOTA)
    sched = cand.cluster.get(SlotName.SCHEDULING_POLICY)
    for opt in cand.pools:
        h, label = ctx.facts(opt.handoff), unit_label(opt.unit)
        binders = binders_of(ctx, cand, opt)
        # a binder may hand the unit out on a device the handoff delivers as another unit
        carried = _carried(ctx, opt, binders)
        if opt.unit not in h.role_units(ContractPoint.ADVERTISE) and carried is None:
            return f"Advertise fails: {h.slug} does not advertise {label}"
        if not binders:
            return f"Bind fails: {sched} cannot bind {label}"
        conflict = binder_conflict(ctx, sched, _stack_members(cand, opt), opt)
        if conflict:
            return conflict
        if adm is not None and opt.unit not in admission_units(ctx.facts(adm)):
            return f"Quota fails: {adm} cannot count {label} ({', '.join(resource_names(ctx, opt))}) in quota"
        if opt.unit not in h.role_units(ContractPoint.ALLOCATE) and carried is None:
            return f"Allocate fails: {h.slug} does not allocate {label}"
        extra = _extra_allocator(ctx, cand, opt)
        if extra and not extra[1]:
            return f"Allocate fails on the {opt.pool.name} pool: {extra[0]} deploys a second device plugin that cannot be disabled"
    return integration_conflict(ctx, adm, cand.cluster.get(SlotName.WORKLOAD_UNIT))


def peripheral_failure(ctx: Context, cand: Candidate) -> str | None:
    """The checks an optional slot can break: a member whose webhook adds a binder, an unintegrated workload API."""
    sched = cand.cluster.get(SlotName.SCHEDULING_POLICY)
    for opt in cand.pools:
        conflict = binder_conflict(ctx, sched, _stack_members(cand, opt), opt)
        if conflict:
            return conflict
    return integration_conflict(ctx, cand.cluster.get(SlotName.ADMISSION_QUOTA), cand.cluster.get(SlotName.WORKLOAD_UNIT))


def _extra_allocator(ctx: Context, cand: Candidate, opt: PoolOption) -> tuple[str, str | None] | None:
    """(operator, how to disable) for a member that ships a device plugin other than the pool's handoff."""
    for slug in dict.fromkeys(m for m in _stack_members(cand, opt) if m):
        iface = _iface(ctx, slug)
        if iface and iface.ships_allocator and iface.ships_allocator not in (opt.handoff, opt.data_plane):
            return slug, iface.disable_with
    return None


def _check(point, opt, by, reason, names=(), source="") -> ContractCheck:
    return ContractCheck(point=point, pool=opt.pool.name, unit=opt.unit, holds=True, by=[b for b in by if b],
                         reason=reason, interface=list(names), source=source)


def contract_checks(ctx: Context, cand: Candidate) -> list[ContractCheck]:
    """The contract checks of a stack that will be returned (all hold: failing stacks were removed)."""
    checks: list[ContractCheck] = []
    adm = cand.cluster.get(SlotName.ADMISSION_QUOTA)
    sched = cand.cluster.get(SlotName.SCHEDULING_POLICY)
    for opt in cand.pools:
        h, names = ctx.facts(opt.handoff), resource_names(ctx, opt)
        h_iface = _iface(ctx, opt.handoff)
        binders = binders_of(ctx, cand, opt)
        carried = _carried(ctx, opt, binders)
        # a carried unit: the handoff advertises the carrier device, the binder hands the unit out on it
        shown = [n for n in names if n not in carried[1].names] if carried else names
        advertise = f"{h.ref.name} advertises {', '.join(shown)} on the {opt.pool.name} pool's nodes: {h.role_how.get(ContractPoint.ADVERTISE, '')}"
        if carried:
            advertise += (f" {ctx.facts(carried[0]).ref.name} hands out {unit_label(opt.unit)} on it; pods ask with "
                          f"the {' or '.join(carried[1].names)}.")
        checks.append(_check(CheckPoint.ADVERTISE, opt, [h.slug, carried[0] if carried else None], advertise,
                             names, h_iface.source if h_iface else "catalog contract_points"))
        s_iface = _iface(ctx, sched)
        field = f"spec.schedulerName: {s_iface.scheduler_name}" if s_iface and s_iface.scheduler_name else f"spec.schedulerName: {sched}"
        rewrites = [m for m in dict.fromkeys(x for x in _stack_members(cand, opt) if x)
                    if (_iface(ctx, m) and _iface(ctx, m).rewrites_scheduler_name)]
        note = ""
        for m in rewrites[:1]:  # binder_conflict allows one rewrite, and only onto a kept scheduler
            field = f"spec.schedulerName: {_iface(ctx, m).rewrites_scheduler_name} (set by {m}'s mutating webhook)"
            note = (f" {_iface(ctx, m).rewrites_scheduler_name} is a {_scheduler_binder(ctx, sched)} with {m}'s extender, "
                    f"so the pool's pods still have one binder.")
        checks.append(_check(
            CheckPoint.BIND, opt, binders,
            f"One binder ({field}): " + " ".join(
                f"{ctx.facts(s).ref.name} binds {', '.join(names)}: {ctx.facts(s).role_how.get(ContractPoint.BIND, '')}"
                for s in binders) + note,
            [field], s_iface.source if s_iface else "catalog contract_points"))
        extra = _extra_allocator(ctx, cand, opt)
        allocate = f"{h.ref.name} allocates {', '.join(shown)} to the container: {h.role_how.get(ContractPoint.ALLOCATE, '')}"
        if extra:
            allocate += f" One allocator per resource: {extra[0]}'s own device plugin is disabled on these nodes ({extra[1]})."
        if carried:
            allocate += f" {ctx.facts(carried[0]).ref.name}: {carried[1].how}."
        checks.append(_check(CheckPoint.ALLOCATE, opt, [h.slug, carried[0] if carried else None], allocate, names,
                             carried[1].source if carried else (h_iface.source if h_iface else "catalog contract_points")))
        if adm:
            a_iface = _iface(ctx, adm)
            if a_iface and opt.unit == ResourceUnit.DRA_DEVICE and a_iface.dra_quota:
                how = a_iface.dra_quota
            elif a_iface and a_iface.quota:
                how = a_iface.quota.replace("{names}", ", ".join(names))
            else:
                how = f"{ctx.facts(adm).ref.name} counts {', '.join(names)} in quota"
            checks.append(_check(CheckPoint.QUOTA, opt, [adm], f"{ctx.facts(adm).ref.name} counts the advertised names: {how}.",
                                 names, a_iface.source if a_iface else "catalog contract_points"))
    if adm and cand.pools:
        opt = cand.pools[0]
        a_iface = _iface(ctx, adm)
        wl = cand.cluster.get(SlotName.WORKLOAD_UNIT)
        if a_iface and a_iface.suspend:
            what = ctx.facts(wl).ref.name if wl else "batch/Job and plain Pods/Deployments"
            reason = f"{ctx.facts(adm).ref.name} admits {what}: {a_iface.suspend}."
        elif a_iface and a_iface.integrations:
            what = ("its own Jobs" if wl == adm else ctx.facts(wl).ref.name) if wl else "pods with its schedulerName (a PodGroup per pod)"
            reason = f"{ctx.facts(adm).ref.name} admits {what} through PodGroups in its queues."
        else:
            reason = f"{ctx.facts(adm).ref.name} counts pods at creation; no suspend/admit step is needed."
        checks.append(ContractCheck(point=CheckPoint.WORKLOAD_ADMISSION, pool="all", unit=opt.unit, holds=True,
                                    by=list(dict.fromkeys(x for x in (wl, adm) if x)), reason=reason, interface=[],
                                    source=a_iface.source if a_iface else "catalog"))
    return checks
