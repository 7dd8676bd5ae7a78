"""Compose, step 2: contracts. Per pool and contract point, the interface that must hold between
the stack's members; a failed check removes the combination.
"""

from __future__ import annotations

from placement.rules.context import (
    BIND_LAYERS,
    Candidate,
    Context,
    PoolOption,
    admission_units,
    unit_label,
)
from placement.rules.data import SlotName
from placement.rules.graph import CONTROL_MAP
from placement.rules.models import ContractCheck
from placement.schemas import ContractPoint


def binders_of(ctx: Context, cand: Candidate, opt: PoolOption) -> list[str]:
    """Stack members on L2/L3 that bind the pool's unit (the scheduler, or an extender such as HAMi's)."""
    scope = [cand.cluster.get(SlotName.SCHEDULING_POLICY), *cand.cluster.values(), *cand.supporting, opt.handoff, opt.data_plane]
    return [
        s for s in dict.fromkeys(x for x in scope if x)
        if opt.unit in ctx.facts(s).role_units(ContractPoint.BIND) and ctx.facts(s).on(CONTROL_MAP, BIND_LAYERS)
    ]


def contract_failure(ctx: Context, cand: Candidate) -> str | None:
    adm = cand.cluster.get(SlotName.ADMISSION_QUOTA)
    sched = cand.cluster.get(SlotName.SCHEDULING_POLICY)
    for opt in cand.pools:
        h, label = ctx.facts(opt.handoff), unit_label(opt.unit)
        if opt.unit not in h.role_units(ContractPoint.ADVERTISE):
            return f"Advertise fails: {h.slug} does not advertise {label}"
        if not binders_of(ctx, cand, opt):
            return f"Bind fails: {sched} cannot bind {label}"
        if adm is not None and opt.unit not in admission_units(ctx.facts(adm)):
            return f"Bind fails: {adm} cannot count {label} in quota"
        if opt.unit not in h.role_units(ContractPoint.ALLOCATE):
            return f"Allocate fails: {h.slug} does not allocate {label}"
    return None




def contract_checks(ctx: Context, cand: Candidate) -> list[ContractCheck]:
    """The contract checks of a stack that will be returned, each with its reason."""
    checks: list[ContractCheck] = []
    adm = cand.cluster.get(SlotName.ADMISSION_QUOTA)
    for opt in cand.pools:
        unit, h = opt.unit, ctx.facts(opt.handoff)
        label, pool = unit_label(unit), opt.pool.name
        checks.append(ContractCheck(
            point=ContractPoint.ADVERTISE, pool=pool, unit=unit, holds=True, by=[h.slug],
            reason=f"{h.ref.name} advertises {label} on the {pool} pool's nodes: {h.role_how.get(ContractPoint.ADVERTISE, '')}",
        ))
        binders = binders_of(ctx, cand, opt)
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
    return checks

