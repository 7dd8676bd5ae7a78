"""Verdict facts beyond layers and units: capability overlap on a shared layer, alternative device
hand-offs, workload-admission joins, and comparison axes chosen by layer.

- Overlap: two projects on different primary layers still rival each other where both own the same
  capabilities on a layer they both sit on (Kueue and Volcano both own queueing, quota, fair
  sharing and preemption on L1). `comparison.yaml: overlap.min_shared` says how many make a rivalry.
- Alternative hand-offs: two device handoffs that advertise and allocate at the same contract points
  but exclude each other per device (catalog conflicts, or disjoint units: device plugin API vs DRA).
- Workload admission: an admission layer that suspends and admits a workload API (interfaces.yaml
  `integrations`) is joined to it by that contract, not by Advertise/Bind/Allocate.
"""

from __future__ import annotations

from placement.catalog.schemas import RESOURCE_UNIT_LABELS, ContractPoint, ResourceUnit
from placement.rules.graph import CONTROL_MAP, CatalogGraph, ProjectFacts
from placement.rules.models import ContractJoin

HANDOFF_LAYER = "L4"


def shared_owned_capabilities(graph: CatalogGraph, fa: ProjectFacts, fb: ProjectFacts) -> list[str]:
    """Capabilities both provide whose owning control-plane layer both projects sit on."""
    a_layers = set(fa.layers.get(CONTROL_MAP, ()))
    b_layers = set(fb.layers.get(CONTROL_MAP, ()))
    shared = []
    for slug in sorted(fa.capabilities & fb.capabilities):
        cap = graph.capability(slug)
        if cap is None or cap.owner_map != CONTROL_MAP:
            continue
        if set(cap.owner_layers) & a_layers & b_layers:
            shared.append(slug)
    return shared


def overlaps(graph: CatalogGraph, fa: ProjectFacts, fb: ProjectFacts) -> list[str]:
    shared = shared_owned_capabilities(graph, fa, fb)
    return shared if len(shared) >= graph.rules.overlap.min_shared else []


def handed_units(f: ProjectFacts) -> frozenset[ResourceUnit]:
    return f.role_units(ContractPoint.ADVERTISE) & f.role_units(ContractPoint.ALLOCATE)


def alternative_handoffs(fa: ProjectFacts, fb: ProjectFacts) -> bool:
    """Both hand devices over at Advertise and Allocate on L4, and a device can go through only one."""
    if fa.control_layer != HANDOFF_LAYER or fb.control_layer != HANDOFF_LAYER:
        return False
    ua, ub = handed_units(fa), handed_units(fb)
    if not ua or not ub:
        return False
    return fb.slug in fa.conflicts or not (ua & ub)


def admission_join(graph: CatalogGraph, fa: ProjectFacts, fb: ProjectFacts) -> ContractJoin | None:
    """The suspend/admit (or PodGroup) contract between an admission layer and a workload API."""
    for adm, wl in ((fa, fb), (fb, fa)):
        iface = graph.rules.interfaces.get(adm.slug)
        if iface and wl.slug in iface.integrations:
            how = iface.suspend or f"{adm.ref.name} groups {wl.ref.name}'s pods into PodGroups in its queues"
            return ContractJoin(
                points=[], units=[], kind="workload_admission", roles=[],
                summary=(f"{adm.ref.name} admits {wl.ref.name} workloads: {how}. Compare only whether that "
                         f"integration covers the workload kinds you run ({iface.source})."),
            )
    return None


def unit_names(units) -> str:
    order = list(ResourceUnit)
    return ", ".join(RESOURCE_UNIT_LABELS[u] for u in sorted(units, key=order.index)) or "none"


def is_control_plane(f: ProjectFacts) -> bool:
    """Decided on the control plane (L0-L3) rather than on the node (L4) or as a platform."""
    return not f.is_platform and f.control_layer != HANDOFF_LAYER


def capability_axis_value(graph: CatalogGraph, f: ProjectFacts, capabilities: list[str], keywords: list[str]) -> str:
    """What a project says on a control-plane axis: the capabilities it provides and its own words."""
    have = [graph.capability_name(c) for c in capabilities if c in f.capabilities]
    for c in capabilities:  # provided through a Kubernetes API the project serves (kube-scheduler's Workload API)
        api = None if c in f.capabilities else graph.served_api(f.slug, c)
        if api is not None:
            have.append(f"{graph.capability_name(c)} through the {api.ref.name} it serves "
                        f"({api.doc.placement.costs.compatibility.rstrip('.')})")
    p = f.doc.placement
    said = [t for t in [p.promise, *p.non_promise, p.costs.compatibility] if any(k in t.lower() for k in keywords)]
    head = ("Provides " + ", ".join(have) + ".") if have else "Does not provide " + ", ".join(
        graph.capability_name(c).lower() for c in capabilities) + "."
    return " ".join([head, *said[:2]])


def binder_note(graph: CatalogGraph, fa: ProjectFacts, fb: ProjectFacts) -> str:
    """When one's webhook hands pods to another scheduler, their Bind contract fails as shipped: say so
    and name the hand-off that the scheduler does bind (interfaces.yaml `bound_by`)."""
    interfaces = graph.rules.interfaces
    for webhook, sched in ((fa, fb), (fb, fa)):
        iface = interfaces.get(webhook.slug)
        if not iface or not iface.rewrites_scheduler_name or sched.slug in iface.keeps or not interfaces.get(sched.slug, None):
            continue
        if not interfaces[sched.slug].binder:
            continue
        repair = sorted(slug for slug, i in interfaces.items() if sched.slug in i.bound_by and slug in graph.projects)
        return (f" As shipped their Bind contract fails: {webhook.ref.name}'s mutating webhook sets spec.schedulerName "
                f"to {iface.rewrites_scheduler_name}, so {sched.ref.name} never binds those pods (two binders)"
                + (f"; under {sched.ref.name} the same unit comes from {', '.join(repair)}." if repair else ".")
                + f" ({iface.source})")
    return ""
