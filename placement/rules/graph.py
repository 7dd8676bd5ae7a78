"""The catalog as a networkx graph, built from documents (data, not code) and cached by version.

Nodes (id prefix = node type):
    project:<slug>        a catalog project          unit:<resource unit>     a resource unit
    capability:<slug>     a capability               contract:<point>         advertise / bind / allocate
    layer:<map>/<code>    a layer of one of the maps

Edges (MultiDiGraph, key = relation):
    project -placed_on-> layer (primary: bool)       project -provides-> capability
    capability -owned_by-> layer                     project -uses_unit-> unit
    project -advertises/binds/allocates-> unit       project -takes_part_in-> contract
    contract -between-> layer                        project -depends_on-> project
    project -bundles-> project                       project -conflicts_with-> project (both ways)
    project -misused_for-> capability (a known misuse from the catalog)

`CatalogGraph` also keeps per-project facts and indices precomputed from the same documents, so
compare and compose read dictionaries rather than walking the graph on every request.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

import networkx as nx

from placement.catalog.schemas import (
    CatalogVocabulary,
    ContractPoint,
    Kind,
    ProjectDocument,
    ResourceUnit,
    builtin_vocabulary,
)
from placement.rules.data import RulesData, SlotName, SlotRule, builtin_rules
from placement.rules.errors import RulesInputError
from placement.rules.models import GraphStep, LayerRef, ProjectRef

CONTROL_MAP = "control-plane"
PLANES_MAP = "planes"
PLATFORM_PLANE = "platform"

ROLE_RELATION = {
    ContractPoint.ADVERTISE: "advertises",
    ContractPoint.BIND: "binds",
    ContractPoint.ALLOCATE: "allocates",
}
# Relations along which two projects can be joined in a composition (used for path search).
COMPOSITION_RELATIONS = ("advertises", "binds", "allocates", "depends_on", "bundles")


def project_node(slug: str) -> str:
    return f"project:{slug}"


UNIT_ORDER = list(ResourceUnit)


def unit_node(unit: ResourceUnit | str) -> str:
    return f"unit:{ResourceUnit(unit).value}"


def capability_node(slug: str) -> str:
    return f"capability:{slug}"


def contract_node(point: ContractPoint | str) -> str:
    return f"contract:{ContractPoint(point).value}"


def layer_node(map_slug: str, code: str) -> str:
    return f"layer:{map_slug}/{code}"


@dataclass(frozen=True, slots=True)
class ProjectFacts:
    """What the rules need to know about one project, read once from its document."""

    slug: str
    doc: ProjectDocument
    ref: ProjectRef
    layers: MappingProxyType  # map slug -> (primary, *secondary)
    control_layer: str
    plane: str
    is_platform: bool
    compare_layer: tuple[str, str]  # (map, code): the layer that decides same-layer comparisons
    units: frozenset[ResourceUnit]
    primary_unit: ResourceUnit  # the first unit of the placement: what it hands out
    roles: MappingProxyType  # ContractPoint -> frozenset[ResourceUnit]
    role_how: MappingProxyType  # ContractPoint -> str
    capabilities: frozenset[str]
    requires: frozenset[str]
    requires_all: frozenset[str]  # transitive closure
    bundles: frozenset[str]
    bundles_all: frozenset[str]  # transitive closure
    conflicts: frozenset[str]  # symmetric closure over the catalog
    misuses: MappingProxyType  # capability -> Misuse

    def on(self, map_slug: str, codes: Iterable[str], secondary_ok: bool = True) -> bool:
        placed = self.layers.get(map_slug, ())
        if not placed:
            return False
        wanted = set(codes)
        return placed[0] in wanted or (secondary_ok and any(code in wanted for code in placed[1:]))

    def role_units(self, point: ContractPoint) -> frozenset[ResourceUnit]:
        return self.roles.get(point, frozenset())


@dataclass(eq=False)
class CatalogGraph:
    """The built graph plus precomputed facts and indices. Treat as read-only; it is shared."""

    version: str
    graph: nx.MultiDiGraph
    composition: nx.Graph  # undirected, project and unit nodes, COMPOSITION_RELATIONS edges only
    projects: dict[str, ProjectFacts]
    vocabulary: CatalogVocabulary
    rules: RulesData
    layer_names: dict[tuple[str, str], str]
    layer_order: dict[str, int]  # control-plane code -> position (L0 first)
    providers: dict[str, tuple[str, ...]]  # capability -> slugs providing it
    slot_candidates: dict[SlotName, tuple[str, ...]]  # static eligibility per slot
    slot_primary: dict[SlotName, frozenset[str]]  # candidates that reach the slot by their primary layer
    _memo: dict = field(default_factory=dict, repr=False)

    # --- lookups -----------------------------------------------------------------------------
    def project(self, slug: str, field_name: str = "slug") -> ProjectFacts:
        facts = self.projects.get(slug)
        if facts is None:
            raise RulesInputError({field_name: [self.unknown_slug_message(slug)]})
        return facts

    def unknown_slug_message(self, slug: str) -> str:
        close = [s for s in self.projects if slug and (slug in s or s in slug)][:5]
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        return f"Unknown project {slug!r}.{hint}"

    def layer_ref(self, map_slug: str, code: str) -> LayerRef:
        return LayerRef(map=map_slug, code=code, name=self.layer_names.get((map_slug, code), code))

    def layer_label(self, map_slug: str, code: str) -> str:
        name = self.layer_names.get((map_slug, code), code)
        return f"{code} {name}" if map_slug == CONTROL_MAP else f"the {name.lower()}"

    def capability(self, slug: str):
        for cap in self.vocabulary.capabilities:
            if cap.slug == slug:
                return cap
        return None

    def capability_name(self, slug: str) -> str:
        cap = self.capability(slug)
        return cap.name if cap else slug

    def served_api(self, slug: str, capability: str) -> ProjectFacts | None:
        """A Kubernetes API that requires project `slug` and provides `capability`: the project provides
        it through the API it serves (kube-scheduler places PodGroups all-or-nothing through the Workload
        API, beta in 1.37). A component that merely requires it (a plugin) does not count."""
        memo = self._memo.setdefault("served_api", {})
        key = (slug, capability)
        if key not in memo:
            memo[key] = next((f for s, f in sorted(self.projects.items()) if f.ref.kind == Kind.API and slug in f.requires
                              and capability in f.capabilities and capability not in f.misuses), None)
        return memo[key]

    def eligible(self, slug: str, slot: SlotName) -> bool:
        return slug in self._slot_sets[slot]

    @property
    def _slot_sets(self) -> dict[SlotName, frozenset[str]]:
        sets = self._memo.get("slot_sets")
        if sets is None:
            sets = {slot: frozenset(slugs) for slot, slugs in self.slot_candidates.items()}
            self._memo["slot_sets"] = sets
        return sets

    def slots_of(self, slug: str) -> list[SlotName]:
        memo = self._memo.setdefault("slots_of", {})
        found = memo.get(slug)
        if found is None:
            found = memo[slug] = tuple(slot for slot in SlotName if self.eligible(slug, slot))
        return list(found)

    def stats(self) -> dict[str, int]:
        kinds: dict[str, int] = {}
        for _, data in self.graph.nodes(data=True):
            kinds[data["type"]] = kinds.get(data["type"], 0) + 1
        return {"nodes": self.graph.number_of_nodes(), "edges": self.graph.number_of_edges(), **kinds}


# --- building -------------------------------------------------------------------------------------


def catalog_fingerprint(documents: Sequence[ProjectDocument]) -> str:
    """A stable hash of the documents' content (order-independent)."""
    digest = hashlib.sha256()
    for doc in sorted(documents, key=lambda d: d.slug):
        digest.update(doc.model_dump_json().encode())
        digest.update(b"\x00")
    return digest.hexdigest()[:16]


def _vocabulary_fingerprint(vocabulary: CatalogVocabulary) -> str:
    return hashlib.sha256(vocabulary.model_dump_json().encode()).hexdigest()[:16]


def _closure(start: str, edges: dict[str, Iterable[str]]) -> frozenset[str]:
    seen: set[str] = set()
    stack = list(edges.get(start, ()))
    while stack:
        slug = stack.pop()
        if slug in seen or slug == start:
            continue
        seen.add(slug)
        stack.extend(edges.get(slug, ()))
    return frozenset(seen)


def _static_slot_candidates(rule: SlotRule, facts: ProjectFacts) -> bool:
    """Request-independent eligibility: layer, kind, capability, contract role."""
    if not facts.on(rule.map, rule.layers, rule.secondary_ok):
        return False
    if rule.kinds and facts.ref.kind.value not in rule.kinds:
        return False
    if rule.any_capability and not facts.capabilities.intersection(rule.any_capability):
        return False
    for point in rule.contract_roles:
        if not facts.role_units(point):
            return False
    if rule.slot == SlotName.DATA_PLANE_UNIT and not (facts.units - {ResourceUnit.NODE}):
        return False
    return True


def _build(documents: Sequence[ProjectDocument], vocabulary: CatalogVocabulary, rules: RulesData, version: str) -> CatalogGraph:
    by_slug = {doc.slug: doc for doc in documents}
    if len(by_slug) != len(documents):
        seen: set[str] = set()
        dupes = sorted({d.slug for d in documents if d.slug in seen or seen.add(d.slug)})
        raise RulesInputError({"documents": [f"duplicate slugs: {', '.join(dupes)}"]})

    g = nx.MultiDiGraph(version=version)
    layer_names: dict[tuple[str, str], str] = {}
    for map_def in vocabulary.maps:
        for layer in map_def.layers:
            layer_names[(map_def.slug, layer.code)] = layer.name
            g.add_node(layer_node(map_def.slug, layer.code), type="layer", map=map_def.slug, code=layer.code, label=layer.name)
    layer_order = {code: i for i, code in enumerate(vocabulary.layer_codes.get(CONTROL_MAP, []))}
    for unit in ResourceUnit:
        g.add_node(unit_node(unit), type="unit", label=unit.value)
    for point_rule in rules.contract_points:
        node = contract_node(point_rule.point)
        g.add_node(node, type="contract", label=point_rule.name)
        for code in point_rule.sides:
            g.add_edge(node, layer_node(CONTROL_MAP, code), key="between", relation="between")
    for cap in vocabulary.capabilities:
        node = capability_node(cap.slug)
        g.add_node(node, type="capability", label=cap.name)
        for code in cap.owner_layers:
            g.add_edge(node, layer_node(cap.owner_map, code), key="owned_by", relation="owned_by")

    bundles_edges = {doc.slug: doc.placement.bundles for doc in documents}
    requires_edges = {doc.slug: doc.placement.dependencies.requires for doc in documents}
    conflicts: dict[str, set[str]] = {doc.slug: set() for doc in documents}
    for doc in documents:
        for other in doc.placement.conflicts_with:
            conflicts[doc.slug].add(other)
            if other in conflicts:
                conflicts[other].add(doc.slug)

    projects: dict[str, ProjectFacts] = {}
    providers: dict[str, list[str]] = {}
    for doc in sorted(documents, key=lambda d: d.slug):
        p = doc.placement
        layers = {m: tuple(p.layers_on(m)) for m in p.maps}
        control_layer = layers.get(CONTROL_MAP, ("",))[0]
        plane = p.plane
        is_platform = doc.kind == Kind.PLATFORM or plane == PLATFORM_PLANE
        roles: dict[ContractPoint, set[ResourceUnit]] = {}
        role_how: dict[ContractPoint, list[str]] = {}
        for role in p.contract_points:
            roles.setdefault(role.point, set()).update(role.units)
            role_how.setdefault(role.point, []).append(role.how)
        facts = ProjectFacts(
            slug=doc.slug,
            doc=doc,
            ref=ProjectRef(slug=doc.slug, name=doc.name, kind=doc.kind, layer=control_layer, plane=plane),
            layers=MappingProxyType(layers),
            control_layer=control_layer,
            plane=plane,
            is_platform=is_platform,
            compare_layer=(PLANES_MAP, PLATFORM_PLANE) if is_platform else (CONTROL_MAP, control_layer),
            units=frozenset(p.resource_units),
            primary_unit=p.resource_units[0],
            roles=MappingProxyType({k: frozenset(v) for k, v in roles.items()}),
            role_how=MappingProxyType({k: " ".join(v) for k, v in role_how.items()}),
            capabilities=frozenset(p.capabilities),
            requires=frozenset(p.dependencies.requires),
            requires_all=_closure(doc.slug, requires_edges),
            bundles=frozenset(p.bundles),
            bundles_all=_closure(doc.slug, bundles_edges),
            conflicts=frozenset(conflicts[doc.slug]),
            misuses=MappingProxyType({m.capability: m for m in p.misuses}),
        )
        projects[doc.slug] = facts

        node = project_node(doc.slug)
        g.add_node(node, type="project", label=doc.name, kind=doc.kind.value, layer=control_layer, plane=plane)
        for map_slug, placed in layers.items():
            for i, code in enumerate(placed):
                g.add_edge(node, layer_node(map_slug, code), key="placed_on", relation="placed_on", map=map_slug, primary=i == 0)
        for cap in p.capabilities:
            g.add_edge(node, capability_node(cap), key="provides", relation="provides")
            providers.setdefault(cap, []).append(doc.slug)
        for unit in p.resource_units:
            g.add_edge(node, unit_node(unit), key="uses_unit", relation="uses_unit")
        for point, units in roles.items():
            g.add_edge(node, contract_node(point), key="takes_part_in", relation="takes_part_in", units=sorted(units))
            for unit in sorted(units, key=UNIT_ORDER.index):  # edge order decides ties between shortest paths
                g.add_edge(node, unit_node(unit), key=ROLE_RELATION[point], relation=ROLE_RELATION[point], how=facts.role_how[point])
        for misuse in p.misuses:
            g.add_edge(node, capability_node(misuse.capability), key="misused_for", relation="misused_for",
                       expectation=misuse.expectation, why=misuse.why)
    for doc in documents:
        node = project_node(doc.slug)
        p = doc.placement
        for other in p.dependencies.requires:
            if other in by_slug:
                g.add_edge(node, project_node(other), key="depends_on", relation="depends_on")
        for other in p.bundles:
            if other in by_slug:
                g.add_edge(node, project_node(other), key="bundles", relation="bundles")
        for other in sorted(conflicts[doc.slug]):
            if other in by_slug:
                g.add_edge(node, project_node(other), key="conflicts_with", relation="conflicts_with")

    composition = nx.Graph()
    for source, target, relation in g.edges(keys=True):
        if relation in COMPOSITION_RELATIONS:
            composition.add_edge(source, target, relation=relation, source=source)

    slot_candidates = {
        rule.slot: tuple(slug for slug, facts in projects.items() if _static_slot_candidates(rule, facts))
        for rule in rules.slots
    }
    slot_primary = {
        rule.slot: frozenset(
            slug for slug in slot_candidates[rule.slot] if projects[slug].on(rule.map, rule.layers, secondary_ok=False)
        )
        for rule in rules.slots
    }
    return CatalogGraph(
        version=version,
        graph=g,
        composition=composition,
        projects=projects,
        vocabulary=vocabulary,
        rules=rules,
        layer_names=layer_names,
        layer_order=layer_order,
        providers={cap: tuple(slugs) for cap, slugs in providers.items()},
        slot_candidates=slot_candidates,
        slot_primary=slot_primary,
    )


_CACHE: OrderedDict[tuple, CatalogGraph] = OrderedDict()
_CACHE_SIZE = 8
_LOCK = threading.Lock()


def build_graph(
    documents: Sequence[ProjectDocument],
    vocabulary: CatalogVocabulary | None = None,
    *,
    rules: RulesData | None = None,
    version: str | None = None,
) -> CatalogGraph:
    """Build the catalog graph, or return the cached one for the same catalog version.

    `version`: the caller's catalog version (e.g. the Django side's revision counter). When given,
    the cache key is (version, slugs, vocabulary, rules) and no hashing of documents happens; when
    omitted, a content fingerprint of the documents is computed and used as the version. Either
    way a changed catalog gets a new graph and an unchanged one reuses the built graph.
    """
    vocabulary = vocabulary or builtin_vocabulary()
    rules = rules or builtin_rules()
    documents = list(documents)
    if version is None:
        # the very same document objects as a cached graph: skip hashing (documents are not mutated)
        with _LOCK:
            for graph in reversed(_CACHE.values()):
                if graph.vocabulary is vocabulary and graph.rules is rules and _same_objects(graph, documents):
                    return graph
        version = catalog_fingerprint(documents)
        key: tuple = (version, _vocabulary_fingerprint(vocabulary), rules.fingerprint)
    else:
        key = (version, tuple(sorted(d.slug for d in documents)), _vocabulary_fingerprint(vocabulary), rules.fingerprint)
    with _LOCK:
        cached = _CACHE.get(key)
        if cached is not None:
            _CACHE.move_to_end(key)
            return cached
    built = _build(documents, vocabulary, rules, version)
    with _LOCK:
        _CACHE[key] = built
        _CACHE.move_to_end(key)
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return built


def _same_objects(graph: CatalogGraph, documents: list[ProjectDocument]) -> bool:
    if len(documents) != len(graph.projects):
        return False
    projects = graph.projects
    for doc in documents:
        facts = projects.get(doc.slug)
        if facts is None or facts.doc is not doc:
            return False
    return True


def clear_graph_cache() -> None:
    with _LOCK:
        _CACHE.clear()


def composition_path(graph: CatalogGraph, a: str, b: str) -> list[GraphStep]:
    """Shortest path between two projects over composition edges (advertises, binds, allocates,
    depends_on, bundles), as graph steps; empty if they do not meet."""
    start, end = project_node(a), project_node(b)
    if start not in graph.composition or end not in graph.composition:
        return []
    try:
        nodes = nx.bidirectional_shortest_path(graph.composition, start, end)
    except nx.NetworkXNoPath:
        return []
    steps = []
    for u, v in zip(nodes, nodes[1:]):
        data = graph.composition.edges[u, v]
        forward = data["source"] == u
        steps.append(GraphStep(source=u, relation=data["relation"], target=v, forward=forward))
    return steps

