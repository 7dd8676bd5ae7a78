"""Compatible stacks: what fits next to one project, and what conflicts with it."""

from __future__ import annotations

from placement.catalog.schemas import ContractPoint, ResourceUnit
from placement.rules.compose import SLOT_ORDER, admission_units, compose, unit_label
from placement.rules.data import SlotName
from placement.rules.errors import RulesInputError
from placement.rules.graph import CatalogGraph, ProjectFacts
from placement.rules.models import (
    CompatibleProject,
    CompatibleResult,
    ComposeRequest,
    Constraints,
    Pool,
    Rejection,
    Slo,
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
        return f"Binds {', '.join(unit_label(u) for u in sorted(shared, key=list(ResourceUnit).index))}, which {w.ref.name} hands out."
    if slot in pool_slots and SlotName.SCHEDULING_POLICY in w_slots:
        shared = handed_units(p, [slot]) & w.role_units(ContractPoint.BIND)
        if not shared:
            return None
        return f"Hands out {', '.join(unit_label(u) for u in sorted(shared, key=list(ResourceUnit).index))}, which {w.ref.name} binds."
    if slot == SlotName.ADMISSION_QUOTA and set(w_slots) & pool_slots:
        shared = handed_units(w, w_slots) & admission_units(p)
        if not shared:
            return None
        return f"Counts {', '.join(unit_label(u) for u in sorted(shared, key=list(ResourceUnit).index))} in quota."
    if slot in pool_slots and SlotName.ADMISSION_QUOTA in w_slots:
        shared = handed_units(p, [slot]) & admission_units(w)
        if not shared:
            return None
        return f"Hands out {', '.join(unit_label(u) for u in sorted(shared, key=list(ResourceUnit).index))}, which {w.ref.name} counts in quota."
    if slot == SlotName.DEVICE_HANDOFF and SlotName.DATA_PLANE_UNIT in w_slots:
        shared = handed_units(p, [slot]) & w.units
        return f"Advertises and allocates {', '.join(unit_label(u) for u in sorted(shared, key=list(ResourceUnit).index))} that {w.ref.name} creates." if shared else None
    if slot == SlotName.DATA_PLANE_UNIT and SlotName.DEVICE_HANDOFF in w_slots:
        shared = handed_units(w, w_slots) & p.units
        return f"Creates {', '.join(unit_label(u) for u in sorted(shared, key=list(ResourceUnit).index))} that {w.ref.name} advertises and allocates." if shared else None
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
                continue  # listed above as a conflict
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

