"""What the catalog graph holds (the node and edge types its module docstring documents), the facts
compare and compose read from each project, the lookups every answer uses (unknown-slug hints, layer
labels), slot eligibility, the shortest composition path, and the cache of built graphs."""

from __future__ import annotations

import pytest

from placement.catalog.schemas import ContractPoint, ResourceUnit
from placement.rules import SlotName, build_graph, builtin_rules, catalog_fingerprint, clear_graph_cache
from placement.rules.graph import composition_path
from placement.rules.synthetic import make_document

DOCUMENTS = [
    make_document("queue-x", layer="L1", units=["whole_gpu"], capabilities=["per-team-quota"]),
    make_document("sched-x", layer="L2", secondary=["L1", "L3"], units=["whole_gpu", "mig_instance"],
                  roles={"bind": ["mig_instance", "whole_gpu"]}, capabilities=["pod-binding", "job-queueing"],
                  requires=["base-x"]),
    make_document("base-x", layer="L3", units=["whole_gpu"], roles={"bind": ["whole_gpu"]}, capabilities=["pod-binding"],
                  requires=["root-x", "not-in-catalog"]),
    make_document("root-x", layer="L3", units=["whole_gpu"], capabilities=["pod-lifecycle"], requires=["base-x"]),
    make_document("plugin-x", layer="L4", units=["whole_gpu"], capabilities=["device-discovery", "device-allocation"],
                  roles={"advertise": ["whole_gpu"], "allocate": ["whole_gpu"]}, conflicts=["other-plugin", "gone-x"]),
    make_document("other-plugin", layer="L4", units=["whole_gpu"], capabilities=["device-allocation"],
                  roles={"advertise": ["whole_gpu"], "allocate": ["whole_gpu"]}),
    make_document("suite-x", kind="platform", layer="L4", plane="platform", units=["whole_gpu"],
                  capabilities=["driver-lifecycle"], bundles=["plugin-x"]),
    make_document("operator-x", layer="L4", plane="platform", units=["whole_gpu"], capabilities=["driver-lifecycle"],
                  bundles=["suite-x"]),
]


@pytest.fixture
def graph():
    # Built afresh for each test, not taken from the cache: mutmut credits a function only to the tests
    # during which it ran, so each test that reads the graph must build it to kill a mutant of `_build`.
    clear_graph_cache()
    return build_graph(DOCUMENTS)


def _edges(graph, relation):
    return {(u, v): data for u, v, key, data in graph.graph.edges(keys=True, data=True) if key == relation}


def test_the_graph_holds_the_documented_nodes_with_their_labels(graph):
    g = graph.graph
    assert g.nodes["project:sched-x"] == {"type": "project", "label": "Sched X", "kind": "component", "layer": "L2", "plane": "control"}
    assert g.nodes["layer:control-plane/L2"] == {"type": "layer", "map": "control-plane", "code": "L2", "label": "Scheduling policy"}
    assert g.nodes["unit:mig_instance"] == {"type": "unit", "label": "mig_instance"}
    assert g.nodes["contract:bind"] == {"type": "contract", "label": "Bind"}
    assert g.nodes["capability:pod-binding"] == {"type": "capability", "label": "Pod binding"}
    stats = graph.stats()
    assert stats["project"] == len(DOCUMENTS)
    assert stats["unit"] == len(ResourceUnit) and stats["contract"] == 3
    assert stats["layer"] == 5 + 3 + 4  # control-plane, planes and architecture maps
    assert stats["nodes"] == g.number_of_nodes() == sum(v for k, v in stats.items() if k not in ("nodes", "edges"))
    assert stats["edges"] == g.number_of_edges()


def test_the_edges_carry_what_the_placement_says(graph):
    placed = _edges(graph, "placed_on")
    assert placed[("project:sched-x", "layer:control-plane/L2")] == {"relation": "placed_on", "map": "control-plane", "primary": True}
    assert placed[("project:sched-x", "layer:control-plane/L3")]["primary"] is False
    assert placed[("project:sched-x", "layer:planes/control")]["map"] == "planes"
    assert _edges(graph, "takes_part_in")[("project:sched-x", "contract:bind")]["units"] == ["mig_instance", "whole_gpu"]
    assert _edges(graph, "binds")[("project:sched-x", "unit:mig_instance")]["how"] == "sched-x binds mig_instance, whole_gpu."
    assert ("project:plugin-x", "unit:whole_gpu") in _edges(graph, "uses_unit")
    assert _edges(graph, "misused_for")[("project:sched-x", "capability:per-team-quota")] == {
        "relation": "misused_for", "expectation": "Expect it to enforce team quotas", "why": "Another layer owns it."}
    assert {v for (u, v) in _edges(graph, "between") if u == "contract:bind"} == {"layer:control-plane/L2", "layer:control-plane/L3"}
    assert ("capability:job-queueing", "layer:control-plane/L1") in _edges(graph, "owned_by")
    # relations to projects outside the catalog stay in the facts but draw no edge
    assert ("project:base-x", "project:root-x") in _edges(graph, "depends_on")
    assert not any(v == "project:not-in-catalog" for _, v in _edges(graph, "depends_on"))
    assert graph.projects["base-x"].requires == {"root-x", "not-in-catalog"}


def test_every_edge_names_its_relation_in_its_data_and_the_graph_its_catalog_version(graph):
    # node-link JSON and GraphML exports keep edge data but not always the multigraph key: the relation
    # travels in the data too, and the graph says which catalog version it was built from
    edges = list(graph.graph.edges(keys=True, data=True))
    assert {key for _, _, key, _ in edges} == {
        "placed_on", "provides", "uses_unit", "takes_part_in", "advertises", "binds", "allocates", "misused_for",
        "between", "owned_by", "depends_on", "bundles", "conflicts_with"}
    assert [(u, v, key) for u, v, key, data in edges if data.get("relation") != key] == []
    assert graph.graph.graph["version"] == graph.version == catalog_fingerprint(DOCUMENTS)


def test_a_conflict_declared_by_one_side_holds_both_ways(graph):
    conflicts = set(_edges(graph, "conflicts_with"))
    assert {("project:plugin-x", "project:other-plugin"), ("project:other-plugin", "project:plugin-x")} <= conflicts
    assert graph.projects["other-plugin"].conflicts == {"plugin-x"}
    assert graph.projects["plugin-x"].conflicts == {"other-plugin", "gone-x"}  # the catalog may name a project not loaded
    assert not any("gone-x" in v for _, v in conflicts)


def test_project_facts_follow_requirements_and_bundles_transitively(graph):
    sched = graph.projects["sched-x"]
    assert sched.requires == {"base-x"}
    assert sched.requires_all == {"base-x", "root-x", "not-in-catalog"}
    assert graph.projects["root-x"].requires_all == {"base-x", "not-in-catalog"}  # a cycle back to itself is not itself
    assert graph.projects["operator-x"].bundles_all == {"suite-x", "plugin-x"}
    assert (sched.control_layer, sched.plane, sched.primary_unit) == ("L2", "control", ResourceUnit.WHOLE_GPU)
    assert sched.layers["control-plane"] == ("L2", "L1", "L3")
    assert sched.roles[ContractPoint.BIND] == {ResourceUnit.MIG_INSTANCE, ResourceUnit.WHOLE_GPU}
    assert sched.role_units(ContractPoint.ADVERTISE) == frozenset()
    assert (sched.is_platform, sched.compare_layer) == (False, ("control-plane", "L2"))
    # a platform by kind or by plane compares on the platform layer
    for slug in ("suite-x", "operator-x"):
        assert (graph.projects[slug].is_platform, graph.projects[slug].compare_layer) == (True, ("planes", "platform"))
    assert graph.projects["sched-x"].on("control-plane", ["L3"]) and not graph.projects["sched-x"].on("control-plane", ["L3"], False)
    assert not graph.projects["sched-x"].on("no-such-map", ["L2"])


def test_lookups_give_hints_and_labels(graph):
    assert graph.unknown_slug_message("x") == "Unknown project 'x'. Did you mean: base-x, operator-x, plugin-x, queue-x, root-x?"
    assert graph.unknown_slug_message("plugin") == "Unknown project 'plugin'. Did you mean: other-plugin, plugin-x?"
    assert graph.unknown_slug_message("") == "Unknown project ''."
    assert graph.layer_label("control-plane", "L4") == "L4 Node allocation and device handoff"
    assert graph.layer_label("planes", "platform") == "the platform layer"
    assert graph.layer_label("planes", "nowhere") == "the nowhere"
    ref = graph.layer_ref("control-plane", "L9")
    assert (ref.map, ref.code, ref.name) == ("control-plane", "L9", "L9")
    assert graph.capability_name("gang-scheduling") == "Gang scheduling"
    assert graph.capability_name("not-a-capability") == "not-a-capability"
    assert graph.capability("not-a-capability") is None
    assert graph.providers["pod-binding"] == ("base-x", "sched-x")
    assert graph.layer_order == {"L0": 0, "L1": 1, "L2": 2, "L3": 3, "L4": 4}


def test_slot_eligibility_reads_layer_kind_capability_and_contract_role(graph):
    assert graph.slots_of("sched-x") == [SlotName.ADMISSION_QUOTA, SlotName.SCHEDULING_POLICY]  # queueing from its L1 side
    assert graph.slots_of("sched-x") == [SlotName.ADMISSION_QUOTA, SlotName.SCHEDULING_POLICY]  # asked again: the same
    assert "sched-x" not in graph.slot_primary[SlotName.ADMISSION_QUOTA]  # only through a secondary layer
    assert "queue-x" in graph.slot_primary[SlotName.ADMISSION_QUOTA]
    assert graph.slots_of("root-x") == []  # binds nothing: not a scheduling policy
    assert graph.slots_of("plugin-x") == [SlotName.DEVICE_HANDOFF]
    assert graph.eligible("base-x", SlotName.SCHEDULING_POLICY) and not graph.eligible("queue-x", SlotName.SCHEDULING_POLICY)
    assert graph.slot_candidates[SlotName.PLATFORM_LIFECYCLE] == ("operator-x", "suite-x")


def test_the_shortest_composition_path_follows_bundles_requirements_and_roles(graph):
    steps = composition_path(graph, "operator-x", "other-plugin")
    assert [(s.source, s.relation, s.target, s.forward) for s in steps] == [
        ("project:operator-x", "bundles", "project:suite-x", True),
        ("project:suite-x", "bundles", "project:plugin-x", True),
        ("project:plugin-x", "allocates", "unit:whole_gpu", True),
        ("unit:whole_gpu", "allocates", "project:other-plugin", False),
    ]
    assert composition_path(graph, "queue-x", "sched-x") == []  # queue-x takes part in no contract point
    assert composition_path(graph, "sched-x", "not-in-catalog") == []
    # placed_on, provides and conflicts do not join a composition
    assert {d["relation"] for _, _, d in graph.composition.edges(data=True)} <= {"advertises", "binds", "allocates", "depends_on", "bundles"}


def test_built_graphs_are_cached_per_catalog_and_the_oldest_is_dropped_first():
    clear_graph_cache()
    first = build_graph(DOCUMENTS)
    assert first.version == catalog_fingerprint(DOCUMENTS)
    assert build_graph(DOCUMENTS) is first and build_graph(list(DOCUMENTS)) is first  # the same document objects
    copies = [d.model_copy(deep=True) for d in DOCUMENTS]
    assert build_graph(copies) is first  # equal documents: the same fingerprint
    assert build_graph(DOCUMENTS[:-1]) is not first  # one fewer project
    rules = builtin_rules()
    other_rules = type(rules).model_validate({**rules.model_dump(mode="json"), "overlap": {"min_shared": 3, "why": "test"}})
    assert build_graph(DOCUMENTS, rules=other_rules).rules is other_rules  # other rules: another graph

    clear_graph_cache()
    first = build_graph(DOCUMENTS)
    versions = [build_graph(DOCUMENTS, version=f"v{i}") for i in range(7)]  # a caller's version keys its own entry
    assert versions[0] is not first and versions[0].version == "v0"
    assert build_graph(copies) is first  # eight cached; using the first makes it the newest
    build_graph(DOCUMENTS, version="v7")  # a ninth: the oldest (v0) goes, the other eight stay
    assert build_graph(DOCUMENTS, version="v1") is versions[1]
    assert build_graph(copies) is first
    assert build_graph(DOCUMENTS, version="v0") is not versions[0]
    clear_graph_cache()
    assert build_graph(copies) is not first


def test_duplicate_slugs_are_named(small_catalog):
    with pytest.raises(Exception) as exc:
        build_graph([*small_catalog, small_catalog[1], small_catalog[0]], version="dupes")
    assert exc.value.errors == {"documents": ["duplicate slugs: queue-a, sched-a"]}
