"""Compare: a verdict for every pair of projects (seeds/002: like with like, across layers only the contract).

Order of the rules (first that applies wins):
1. overlapping            one bundles the other (directly or through a bundle it ships)
2. platform_vs_mechanism  exactly one of them is a platform (kind platform or platform plane)
   cross_layer            one requires or delivers the other
   alternative_handoff    both advertise and allocate on L4, one per device (conflict or disjoint units)
   overlapping            different primary layers, but they own the same capabilities on a layer
                          both sit on (placement/rules/overlap.py)
3. cross_layer            not rivals: different layers (each one's primary control-plane layer is not
                          among the other's layers), or one requires the other, or one is a pure device
                          handoff delivering the unit the other (a mechanism) creates, or same layer
                          but no capability in common (they do different jobs)
4. comparable             same layer, same primary resource unit (the first unit of a placement)
5. unit_mismatch          same layer, different primary units
Valid axes per verdict come from fixtures/rules/comparison.yaml.
"""

from __future__ import annotations

from itertools import combinations
from typing import NamedTuple

from placement.catalog.schemas import ENFORCEMENT_POINT_LABELS, RESOURCE_UNIT_LABELS, ContractPoint, Kind, ResourceUnit
from placement.rules.data import IntegrationRule, RoleRule, Verdict
from placement.rules.errors import RulesInputError
from placement.rules.graph import (
    CONTROL_MAP,
    ROLE_RELATION,
    CatalogGraph,
    ProjectFacts,
    composition_path,
    project_node,
    unit_node,
)
from placement.rules.models import (
    AxisValue,
    CompareRequest,
    ComparisonAxis,
    ComparisonResult,
    ContractJoin,
    ContractRoleRef,
    GraphStep,
    PairVerdict,
)
from placement.rules.overlap import (
    admission_join,
    alternative_handoffs,
    binder_note,
    capability_axis_value,
    handed_units,
    is_control_plane,
    overlaps,
    unit_names,
)

PARTICIPLE = {ContractPoint.ADVERTISE: "advertised", ContractPoint.BIND: "bound", ContractPoint.ALLOCATE: "allocated"}


def _units(units) -> list[ResourceUnit]:
    order = list(ResourceUnit)
    return sorted(units, key=order.index)


def _unit_names(units) -> str:
    return ", ".join(RESOURCE_UNIT_LABELS[u] for u in _units(units)) or "none"


def _capability_names(graph: CatalogGraph, f: ProjectFacts) -> str:
    return ", ".join(graph.capability_name(c).lower() for c in sorted(f.capabilities))


def _name(f: ProjectFacts) -> str:
    return f.ref.name


def _layer_text(graph: CatalogGraph, f: ProjectFacts) -> str:
    return graph.layer_label(*f.compare_layer)


def same_layer(fa: ProjectFacts, fb: ProjectFacts) -> bool:
    """Same layer: both platforms, or each one's primary control-plane layer is among the other's
    layers (kube-scheduler L3+L2 and Volcano L2+L0/L1/L3 meet; HAMi L4+L2 and Volcano do not)."""
    if fa.is_platform or fb.is_platform:
        return fa.is_platform and fb.is_platform
    return fa.control_layer in fb.layers.get(CONTROL_MAP, ()) and fb.control_layer in fa.layers.get(CONTROL_MAP, ())


def depends(fa: ProjectFacts, fb: ProjectFacts) -> bool:
    return fb.slug in fa.requires_all or fa.slug in fb.requires_all


def delivers(graph: CatalogGraph, handoff: ProjectFacts, mechanism: ProjectFacts) -> bool:
    """`handoff` is a pure device handoff (its own unit needs no mechanism: whole GPU, DRA device)
    that advertises and allocates the unit `mechanism` creates (MIG instances, time slices, MPS)."""
    unit = mechanism.primary_unit
    return (
        mechanism.ref.kind == Kind.MECHANISM
        and graph.rules.unit[unit].needs_data_plane_project
        and not graph.rules.unit[handoff.primary_unit].needs_data_plane_project
        and unit in handoff.role_units(ContractPoint.ADVERTISE)
        and unit in handoff.role_units(ContractPoint.ALLOCATE)
    )


def bundled(fa: ProjectFacts, fb: ProjectFacts) -> bool:
    return fb.slug in fa.bundles_all or fa.slug in fb.bundles_all


def same_role(graph: CatalogGraph, fa: ProjectFacts, fb: ProjectFacts):
    """The role both do (comparison.yaml `roles`: serving frameworks, node provisioners, ...), or None."""
    role = graph.rules.role_of(fa.slug)
    return role if role and fb.slug in role.members else None


def verdict_of(graph: CatalogGraph, fa: ProjectFacts, fb: ProjectFacts) -> Verdict:
    if bundled(fa, fb):
        return Verdict.OVERLAPPING
    if graph.rules.integration(fa.slug, fb.slug):
        return Verdict.CROSS_LAYER  # one implements an interface for the other: they complement each other
    if fa.is_platform != fb.is_platform:
        return Verdict.PLATFORM_VS_MECHANISM
    if depends(fa, fb) or delivers(graph, fa, fb) or delivers(graph, fb, fa):
        return Verdict.CROSS_LAYER
    if same_role(graph, fa, fb):
        return Verdict.COMPARABLE  # one job, whatever their layers and units: compared on that job's axes
    if alternative_handoffs(fa, fb):
        return Verdict.ALTERNATIVE_HANDOFF
    if admission_join(graph, fa, fb):
        return Verdict.CROSS_LAYER  # an admission layer and a workload API it admits: joined, not rivals
    if not same_layer(fa, fb) and overlaps(graph, fa, fb):
        return Verdict.OVERLAPPING  # different primary layers, same capabilities on a layer both sit on
    if not same_layer(fa, fb) or not complementary_free(fa, fb):
        # different layers, one built on or delivering the other, or same layer but different jobs
        # (no capability in common): not rivals
        return Verdict.CROSS_LAYER
    if fa.primary_unit == fb.primary_unit:
        return Verdict.COMPARABLE
    return Verdict.UNIT_MISMATCH


def complementary_free(fa: ProjectFacts, fb: ProjectFacts) -> bool:
    """Rivals promise at least one thing in common; with no capability in common they complement each other."""
    return bool(fa.capabilities & fb.capabilities)


# --- contract joins for cross-layer pairs ---------------------------------------------------------


def _upstream_first(graph: CatalogGraph, fa: ProjectFacts, fb: ProjectFacts) -> tuple[ProjectFacts, ProjectFacts]:
    """Order a pair governance-first: platform, then L0 .. L4."""

    def depth(f: ProjectFacts) -> int:
        return -1 if f.is_platform else graph.layer_order.get(f.control_layer, 99)

    return (fa, fb) if depth(fa) <= depth(fb) else (fb, fa)


def _role(f: ProjectFacts, point: ContractPoint, units) -> ContractRoleRef:
    return ContractRoleRef(slug=f.slug, point=point, units=_units(units), how=f.role_how.get(point, ""))


def contract_joins(graph: CatalogGraph, fa: ProjectFacts, fb: ProjectFacts) -> list[ContractJoin]:
    """Contract points where the two meet: both take part in one point for a common unit, or one
    side's point feeds the other's (advertise -> bind -> allocate) for a common unit."""
    order = {c.point: c.order for c in graph.rules.contract_points}
    points = sorted(ContractPoint, key=lambda p: order.get(p, 0))
    names = {c.point: c.name for c in graph.rules.contract_points}
    joins: list[ContractJoin] = []
    for point in points:
        shared = fa.role_units(point) & fb.role_units(point)
        if shared:
            joins.append(
                ContractJoin(
                    points=[point],
                    units=_units(shared),
                    kind="shared_point",
                    roles=[_role(fa, point, shared), _role(fb, point, shared)],
                    summary=(
                        f"Both take part in {names[point]} for {_unit_names(shared)}: compare whether "
                        f"{_name(fa)} and {_name(fb)} agree on how that unit is {PARTICIPLE[point]} "
                        f"there, not the projects as a whole."
                    ),
                )
            )
    covered = {p for j in joins for p in j.points}
    for i, first in enumerate(points):
        for second in points[i + 1 :]:
            for up, down in ((fa, fb), (fb, fa)):
                shared = up.role_units(first) & down.role_units(second)
                if not shared or (first in covered and second in covered):
                    continue
                joins.append(
                    ContractJoin(
                        points=[first, second],
                        units=_units(shared),
                        kind="handoff",
                        roles=[_role(up, first, shared), _role(down, second, shared)],
                        summary=(
                            f"{_name(up)} takes part in {names[first]} and {_name(down)} in {names[second]} for "
                            f"{_unit_names(shared)}: the contract holds if what {_name(up)} does at {names[first]} "
                            f"is what {_name(down)} expects at {names[second]} for that unit."
                        ),
                    )
                )
    return joins


def _join_path(join: ContractJoin) -> list[GraphStep]:
    unit = join.units[0]
    first, second = join.roles[0], join.roles[1]
    return [
        GraphStep(source=project_node(first.slug), relation=ROLE_RELATION[first.point], target=unit_node(unit)),
        GraphStep(source=unit_node(unit), relation=ROLE_RELATION[second.point], target=project_node(second.slug), forward=False),
    ]


def _path_text(steps: list[GraphStep]) -> str:
    parts = []
    for step in steps:
        arrow = f"-{step.relation}->" if step.forward else f"<-{step.relation}-"
        parts.append(f"{step.source} {arrow} {step.target}")
    return "; ".join(parts)


# --- axes -----------------------------------------------------------------------------------------


def _isolation_value(graph: CatalogGraph, f: ProjectFacts, units) -> str:
    parts = []
    for unit in _units(units):
        rule = graph.rules.unit[unit]
        parts.append(f"{RESOURCE_UNIT_LABELS[unit]}: {rule.isolation} isolation ({rule.note})")
    enforced = ", ".join(ENFORCEMENT_POINT_LABELS[e] for e in f.doc.placement.enforcement_points)
    return f"{' '.join(parts)} Enforced at: {enforced}."


def _axis_value(graph: CatalogGraph, axis: str, f: ProjectFacts, other: ProjectFacts, shared) -> str:
    p = f.doc.placement
    if axis == "isolation":
        return _isolation_value(graph, f, shared or f.units)
    if axis == "overhead":
        return p.costs.overhead
    if axis == "observability":
        return "; ".join(p.observability)
    if axis == "reconfiguration_cost":
        return p.costs.reconfiguration
    if axis == "workload_and_slo":
        isolation = ", ".join(
            f"{RESOURCE_UNIT_LABELS[u]} ({graph.rules.unit[u].isolation} isolation)" for u in _units(f.units)
        )
        return f"Promise: {p.promise} Units: {isolation}."
    if axis == "resource_unit":
        return " ".join(f"{RESOURCE_UNIT_LABELS[u]}: {graph.rules.unit[u].granularity}" for u in _units(f.units))
    if axis == "interface_contract":
        roles = [f"{point.value} ({_unit_names(units)}): {f.role_how.get(point, '')}" for point, units in f.roles.items()]
        return "; ".join(roles) or "Takes part in no contract point."
    if axis == "decomposition":
        if f.is_platform:
            parts = []
            if f.bundles:
                parts.append(f"ships {', '.join(sorted(f.bundles))}")
            if f.requires:
                parts.append(f"requires {', '.join(sorted(f.requires))}")
            parts.append("depends on: " + "; ".join(p.dependencies.upstream + p.dependencies.downstream))
            return "Platform: " + "; ".join(parts) + "."
        return (
            f"{graph.layer_label('control-plane', f.control_layer)} ({f.plane} plane), units {_unit_names(f.units)}; "
            f"promise: {p.promise}"
        )
    if axis == "bundled_scope":
        if other.slug in f.bundles_all:
            return f"Ships {', '.join(sorted(f.bundles_all))}. Costs: {p.costs.intrusiveness}"
        return f"Shipped inside {other.ref.name}; alone it promises: {p.promise}"
    return ""


def _role_axis_value(graph: CatalogGraph, f: ProjectFacts, capabilities: list[str], keywords: list[str]) -> str:
    """What a project's catalog entry says on a role axis, in its own words."""
    p = f.doc.placement
    texts = [f.doc.summary, p.promise, *p.non_promise, p.costs.overhead, p.costs.compatibility, *p.observability]
    said = [t.strip() for t in texts if t and any(k in t.lower() for k in keywords)]
    head = [f"Provides {', '.join(graph.capability_name(c) for c in capabilities if c in f.capabilities)}."] \
        if any(c in f.capabilities for c in capabilities) else []
    return " ".join([*head, *said[:2]]) or "Its catalog entry says nothing on this."


def _axes(graph: CatalogGraph, verdict: Verdict, fa: ProjectFacts, fb: ProjectFacts, shared) -> list[ComparisonAxis]:
    rule_v = graph.rules.verdict[verdict]
    role = same_role(graph, fa, fb) if verdict == Verdict.COMPARABLE else None
    if role:
        return [
            ComparisonAxis(axis=axis, name=rule.name, question=rule.question, values=[
                AxisValue(slug=f.slug, value=_role_axis_value(graph, f, rule.capabilities, rule.keywords)) for f in (fa, fb)])
            for axis in role.axes for rule in (graph.rules.axis[axis],)
        ]
    control = rule_v.control_axes and is_control_plane(fa) and is_control_plane(fb) and not bundled(fa, fb)
    axes = []
    for axis in (rule_v.control_axes if control else rule_v.axes):
        rule = graph.rules.axis[axis]
        if rule.capabilities:  # control-plane axes: what each provides, in its own words
            values = [AxisValue(slug=f.slug, value=capability_axis_value(graph, f, rule.capabilities, rule.keywords))
                      for f in (fa, fb)]
        else:
            values = [
                AxisValue(slug=fa.slug, value=_axis_value(graph, axis, fa, fb, shared)),
                AxisValue(slug=fb.slug, value=_axis_value(graph, axis, fb, fa, shared)),
            ]
        axes.append(ComparisonAxis(axis=axis, name=rule.name, question=rule.question, values=values))
    return axes


# --- one pair -------------------------------------------------------------------------------------


class _Reading(NamedTuple):
    """What a verdict says about one pair: the explanation, the contracts that join them, the graph path."""

    explanation: str
    joins: list[ContractJoin]
    path: list[GraphStep]


def _duplicate_owners(graph: CatalogGraph, fa: ProjectFacts, fb: ProjectFacts) -> _Reading:
    """overlapping, neither ships the other: they own the same capabilities on a layer they share."""
    caps = overlaps(graph, fa, fb)
    names = ", ".join(graph.capability_name(c).lower() for c in caps)
    explanation = (
        f"{fa.ref.name} ({_layer_text(graph, fa)}) and {fb.ref.name} ({_layer_text(graph, fb)}) both own "
        f"{names} on a layer they share, so running both duplicates that governance: two sets of queues and "
        f"quotas that do not see each other. Choose one owner per capability. {fa.ref.name}: "
        f"{fa.doc.placement.costs.compatibility} {fb.ref.name}: {fb.doc.placement.costs.compatibility}"
    )
    join = admission_join(graph, fa, fb)
    return _Reading(explanation, [join] if join else [], [])


def _alternative_handoff(graph: CatalogGraph, fa: ProjectFacts, fb: ProjectFacts) -> _Reading:
    """alternative_handoff: both advertise and allocate devices, and a GPU goes through only one."""
    ua, ub = handed_units(fa), handed_units(fb)
    conflict = fb.slug in fa.conflicts
    explanation = (
        f"Alternative hand-offs: {fa.ref.name} and {fb.ref.name} both take part in Advertise and Allocate on "
        f"{_layer_text(graph, fa)} ({fa.ref.name}: {unit_names(ua)}; {fb.ref.name}: {unit_names(ub)}), and a "
        f"GPU can be advertised and handed over by only one of them"
        + (" (catalog conflicts_with)" if conflict else "")
        + f". Choose per device or per node pool, never both for one GPU. {fa.ref.name}: "
        f"{fa.doc.placement.costs.compatibility} {fb.ref.name}: {fb.doc.placement.costs.compatibility}"
    )
    joins = [ContractJoin(
        points=[ContractPoint.ADVERTISE, ContractPoint.ALLOCATE], units=_units(ua | ub), kind="alternative",
        roles=[_role(fa, ContractPoint.ADVERTISE, ua), _role(fb, ContractPoint.ADVERTISE, ub)],
        summary=f"Same contract points (Advertise, Allocate), one per device: {fa.ref.name} or {fb.ref.name}.",
    )]
    return _Reading(explanation, joins, [])


def _bundle(graph: CatalogGraph, fa: ProjectFacts, fb: ProjectFacts) -> _Reading:
    """overlapping because one ships the other: compare the bundle's extras with the part alone."""
    outer, inner = (fa, fb) if fb.slug in fa.bundles_all else (fb, fa)
    explanation = (
        f"{outer.ref.name} ships {inner.ref.name} (bundles), so they are not alternatives: choosing "
        f"{outer.ref.name} already includes {inner.ref.name}. Compare what the bundle adds around it "
        f"(lifecycle, upgrades, other operands) against installing {inner.ref.name} alone."
    )
    return _Reading(explanation, [], composition_path(graph, outer.slug, inner.slug))


def _platform_and_mechanism(graph: CatalogGraph, fa: ProjectFacts, fb: ProjectFacts) -> _Reading:
    """platform_vs_mechanism: decompose the platform into what it depends on."""
    platform, other = (fa, fb) if fa.is_platform else (fb, fa)
    path = composition_path(graph, platform.slug, other.slug)
    relies = sorted(platform.bundles_all | platform.requires)
    rivals = [
        graph.projects[s].ref.name
        for s in relies
        if s in graph.projects and graph.projects[s].compare_layer == other.compare_layer
    ]
    explanation = (
        f"{platform.ref.name} is a platform that packages lower layers; {other.ref.name} sits on "
        f"{_layer_text(graph, other)}. Do not weigh the platform's experience against a mechanism's "
        f"boundary: decompose {platform.ref.name} into what it depends on"
        + (f" ({', '.join(relies)})" if relies else "")
        + (
            f" and compare {other.ref.name} with the piece on its own layer ({', '.join(rivals)})."
            if rivals
            else f" and ask which of those provides what {other.ref.name} does."
        )
    )
    return _Reading(explanation, [], path)


def _integrated(graph: CatalogGraph, rule: IntegrationRule) -> _Reading:
    """cross_layer with an integration rule (integrations.yaml): the interface that joins them."""
    one, other = (graph.project(s) for s in rule.between)
    joins = [ContractJoin(points=[], units=[], kind=rule.kind, roles=[],
                          summary=f"{rule.name}: {rule.interface} ({rule.source}).")]
    explanation = (
        f"{one.ref.name} and {other.ref.name} complement each other, joined by {rule.name} "
        f"({rule.kind.replace('_', ' ')}): {rule.interface}. They are not rivals; compare only whether that "
        f"interface covers what you run ({rule.source})."
    )
    return _Reading(explanation, joins, [])


def _cross_layer(graph: CatalogGraph, fa: ProjectFacts, fb: ProjectFacts) -> _Reading:
    """cross_layer: a handoff delivering a mechanism's unit on their shared layer, or upstream and downstream."""
    delivery = (fa, fb) if delivers(graph, fa, fb) else (fb, fa) if delivers(graph, fb, fa) else None
    if delivery and same_layer(fa, fb):
        return _delivery(graph, fa, *delivery)
    return _upstream_downstream(graph, fa, fb)


def _delivery(graph: CatalogGraph, fa: ProjectFacts, handoff: ProjectFacts, mechanism: ProjectFacts) -> _Reading:
    """The mechanism creates the unit and the handoff delivers it: the Advertise/Allocate contract joins them."""
    unit = mechanism.primary_unit
    label = RESOURCE_UNIT_LABELS[unit]
    roles = [_role(handoff, p, {unit}) for p in (ContractPoint.ADVERTISE, ContractPoint.ALLOCATE)]
    joins = [ContractJoin(
        points=[ContractPoint.ADVERTISE, ContractPoint.ALLOCATE], units=[unit], kind="handoff", roles=roles,
        summary=(f"{mechanism.ref.name} creates {label}; {handoff.ref.name} advertises and allocates it. Compare "
                 f"only whether {handoff.ref.name} advertises and hands over {label} the way "
                 f"{mechanism.ref.name} defines it (profiles, health, naming)."),
    )]
    path = [
        GraphStep(source=project_node(mechanism.slug), relation="uses_unit", target=unit_node(unit)),
        GraphStep(source=unit_node(unit), relation="advertises", target=project_node(handoff.slug), forward=False),
    ]
    explanation = (
        f"Both sit on {_layer_text(graph, fa)}, but {mechanism.ref.name} creates {label} and "
        f"{handoff.ref.name} delivers it: upstream and downstream, not rivals. Compare only the contract "
        f"that joins them (Advertise, Allocate). {joins[0].summary}"
    )
    return _Reading(explanation, joins, path)


def _upstream_downstream(graph: CatalogGraph, fa: ProjectFacts, fb: ProjectFacts) -> _Reading:
    """Upstream and downstream (or different jobs on one layer): compare only the contract that joins
    them, if one does; else say where they meet in the catalog graph."""
    up, down = _upstream_first(graph, fa, fb)
    if depends(fa, fb) and same_layer(fa, fb):
        user, base = (fa, fb) if fb.slug in fa.requires_all else (fb, fa)
        relation = (
            f"Both sit on {_layer_text(graph, fa)}, but {user.ref.name} is built on {base.ref.name} "
            f"(it requires it): they are upstream and downstream, not rivals."
        )
        up, down = base, user
    elif same_layer(fa, fb):
        relation = (
            f"Both sit on {_layer_text(graph, fa)} but do different jobs ({fa.ref.name}: "
            f"{_capability_names(graph, fa)}; {fb.ref.name}: {_capability_names(graph, fb)}), with no "
            f"capability in common: they complement each other, not rivals."
        )
    else:
        relation = (
            f"{up.ref.name} sits on {_layer_text(graph, up)} and {down.ref.name} on {_layer_text(graph, down)}: "
            f"they are upstream and downstream, not rivals."
        )
    joins = contract_joins(graph, up, down)
    if joins:
        named = " ".join(j.summary for j in joins)
        order = {c.point: c.order for c in graph.rules.contract_points}
        points = sorted({p for j in joins for p in j.points}, key=lambda p: order.get(p, 0))
        names = ", ".join(graph.rules.contract_point[p].name for p in points)
        explanation = f"{relation} Compare only the contract that joins them ({names}). {named}"
        return _Reading(explanation + binder_note(graph, up, down), joins, _join_path(joins[0]))
    admission = admission_join(graph, up, down)
    if admission:
        explanation = f"{relation} Compare only the contract that joins them (workload admission). {admission.summary}"
        return _Reading(explanation, [admission], [])
    path = composition_path(graph, up.slug, down.slug)
    via = f" In the catalog graph they meet via: {_path_text(path)}." if path else " They do not meet in the catalog graph."
    explanation = (
        f"{relation} No contract point joins them directly, so there is nothing to compare between "
        f"them; compare each with its own rivals.{via}"
    )
    return _Reading(explanation, [], path)


def _same_role_reading(graph: CatalogGraph, fa: ProjectFacts, fb: ProjectFacts, role: RoleRule) -> _Reading:
    """comparable as the same role (comparison.yaml `roles`): compare on what that role decides."""
    names = ", ".join(graph.rules.axis[a].name.lower() for a in role.axes)
    explanation = (
        f"Both are a {role.name} ({fa.ref.name}: {_layer_text(graph, fa)}; {fb.ref.name}: "
        f"{_layer_text(graph, fb)}): a like-for-like comparison on what a {role.name} decides. "
        f"Compare {names}."
    )
    return _Reading(explanation, [], [])


def _like_for_like(graph: CatalogGraph, fa: ProjectFacts, fb: ProjectFacts, shared) -> _Reading:
    """comparable: same layer, same primary unit."""
    also = _units(shared - {fa.primary_unit})
    explanation = (
        f"Both sit on {_layer_text(graph, fa)} and hand out {RESOURCE_UNIT_LABELS[fa.primary_unit]}"
        + (f" (and also share {_unit_names(also)})" if also else "")
        + ": a like-for-like comparison. "
        + ("Compare queues, quota model, fair sharing, preemption, gang, topology and workload integrations."
           if is_control_plane(fa) and is_control_plane(fb)
           else "Compare isolation, overhead, observability and reconfiguration cost for that unit.")
    )
    return _Reading(explanation, [], [])


def _unit_mismatch(graph: CatalogGraph, fa: ProjectFacts, fb: ProjectFacts, shared) -> _Reading:
    """unit_mismatch: same layer, different primary units; choose the unit first."""
    explanation = (
        f"Both sit on {_layer_text(graph, fa)}, but {fa.ref.name} hands out "
        f"{RESOURCE_UNIT_LABELS[fa.primary_unit]} and {fb.ref.name} hands out "
        f"{RESOURCE_UNIT_LABELS[fb.primary_unit]}"
        + (f" (both also handle {_unit_names(shared)})" if shared else "")
        + ". The unit sets the isolation ceiling and granularity, so fix the workload and SLO first, choose "
        "the unit, and only then the project."
    )
    return _Reading(explanation, [], [])


def _read_verdict(graph: CatalogGraph, verdict: Verdict, fa: ProjectFacts, fb: ProjectFacts, shared) -> _Reading:
    """The explanation, joining contracts and graph path that go with the pair's verdict."""
    if verdict == Verdict.OVERLAPPING:
        return _bundle(graph, fa, fb) if bundled(fa, fb) else _duplicate_owners(graph, fa, fb)
    if verdict == Verdict.ALTERNATIVE_HANDOFF:
        return _alternative_handoff(graph, fa, fb)
    if verdict == Verdict.PLATFORM_VS_MECHANISM:
        return _platform_and_mechanism(graph, fa, fb)
    if verdict == Verdict.CROSS_LAYER:
        rule = graph.rules.integration(fa.slug, fb.slug)
        return _integrated(graph, rule) if rule else _cross_layer(graph, fa, fb)
    if verdict == Verdict.COMPARABLE:
        role = same_role(graph, fa, fb)
        return _same_role_reading(graph, fa, fb, role) if role else _like_for_like(graph, fa, fb, shared)
    return _unit_mismatch(graph, fa, fb, shared)


def compare_pair(graph: CatalogGraph, a: str, b: str) -> PairVerdict:
    fa, fb = graph.project(a), graph.project(b)
    verdict = verdict_of(graph, fa, fb)
    shared = fa.units & fb.units
    explanation, joins, path = _read_verdict(graph, verdict, fa, fb, shared)
    return PairVerdict(
        a=fa.ref,
        b=fb.ref,
        verdict=verdict,
        verdict_name=graph.rules.verdict[verdict].name,
        layer_a=graph.layer_ref(*fa.compare_layer),
        layer_b=graph.layer_ref(*fb.compare_layer),
        primary_unit_a=fa.primary_unit,
        primary_unit_b=fb.primary_unit,
        units_a=_units(fa.units),
        units_b=_units(fb.units),
        shared_units=_units(shared),
        axes=_axes(graph, verdict, fa, fb, {fa.primary_unit} if verdict == Verdict.COMPARABLE else shared),
        contracts=joins,
        path=path,
        explanation=explanation,
    )


def compare(graph: CatalogGraph, slugs: list[str] | CompareRequest) -> ComparisonResult:
    """Verdict for every pair of two or more catalog projects."""
    if isinstance(slugs, CompareRequest):
        slugs = slugs.slugs
    errors: list[str] = []
    slugs = [s.strip() if isinstance(s, str) else s for s in (slugs or [])]
    if len(slugs) < 2:
        errors.append("Give at least two project slugs to compare.")
    if len(set(slugs)) != len(slugs):
        errors.append("Project slugs repeat.")
    errors.extend(graph.unknown_slug_message(s) for s in slugs if s not in graph.projects)
    if errors:
        raise RulesInputError({"slugs": errors})

    pairs = [compare_pair(graph, a, b) for a, b in combinations(slugs, 2)]

    # groups of projects that can be compared head to head (connected by comparable verdicts)
    parent = {s: s for s in slugs}

    def find(s: str) -> str:
        while parent[s] != s:
            parent[s] = parent[parent[s]]
            s = parent[s]
        return s

    for pair in pairs:
        if pair.verdict == Verdict.COMPARABLE:
            parent[find(pair.a.slug)] = find(pair.b.slug)
    groups: dict[str, list[str]] = {}
    for s in slugs:
        groups.setdefault(find(s), []).append(s)
    comparable_groups = [g for g in groups.values() if len(g) > 1]

    counts: dict[Verdict, int] = {}
    for pair in pairs:
        counts[pair.verdict] = counts.get(pair.verdict, 0) + 1
    parts = [f"{n} {graph.rules.verdict[v].name.lower()}" for v, n in counts.items()]
    summary = f"{len(pairs)} pair{'s' if len(pairs) != 1 else ''}: " + "; ".join(parts) + "."
    if comparable_groups:
        summary += " Head-to-head comparison is valid within: " + " | ".join(", ".join(g) for g in comparable_groups) + "."
    else:
        summary += " No two of them are rivals on the same layer and unit."

    return ComparisonResult(
        catalog_version=graph.version,
        projects=[graph.projects[s].ref for s in slugs],
        pairs=pairs,
        comparable_groups=comparable_groups,
        summary=summary,
    )
