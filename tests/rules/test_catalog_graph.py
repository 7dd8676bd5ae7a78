"""The graph is built from catalog documents (data, not code) and reused per catalog version."""

from __future__ import annotations

import pytest

from placement.rules import RulesInputError, SlotName, build_graph, catalog_fingerprint, clear_graph_cache
from placement.rules.synthetic import make_document


def _edges(graph, relation):
    return {(u, v) for u, v, key in graph.graph.edges(keys=True) if key == relation}


def test_nodes_are_projects_units_capabilities_contract_points_and_layers(small_catalog):
    g = build_graph(small_catalog).graph
    types = {data["type"] for _, data in g.nodes(data=True)}
    assert types == {"project", "unit", "capability", "contract", "layer"}
    assert g.nodes["project:sched-a"]["layer"] == "L2"
    assert "contract:bind" in g and "unit:mig_instance" in g and "layer:control-plane/L4" in g


def test_edges_come_from_the_placements(small_catalog):
    graph = build_graph(small_catalog)
    assert ("project:plugin-a", "unit:mig_instance") in _edges(graph, "advertises")
    assert ("project:plugin-a", "unit:whole_gpu") in _edges(graph, "allocates")
    assert ("project:sched-a", "unit:whole_gpu") in _edges(graph, "binds")
    assert ("project:plugin-a", "project:runtime-hook") in _edges(graph, "depends_on")
    assert ("project:suite", "project:plugin-a") in _edges(graph, "bundles")
    conflicts = _edges(graph, "conflicts_with")
    assert ("project:sharer", "project:plugin-a") in conflicts and ("project:plugin-a", "project:sharer") in conflicts
    assert ("project:sched-b", "layer:control-plane/L3") in _edges(graph, "placed_on")
    assert ("project:slicer", "capability:hardware-partitioning") in _edges(graph, "provides")
    assert ("capability:gang-scheduling", "layer:control-plane/L2") in _edges(graph, "owned_by")
    assert ("project:plugin-a", "contract:advertise") in _edges(graph, "takes_part_in")


def test_the_same_catalog_reuses_the_built_graph(small_catalog):
    clear_graph_cache()
    first = build_graph(small_catalog)
    again = build_graph([d.model_copy(deep=True) for d in reversed(small_catalog)])
    assert again is first
    assert first.version == catalog_fingerprint(small_catalog)


def test_a_changed_catalog_gets_a_new_graph(small_catalog):
    first = build_graph(small_catalog)
    changed = small_catalog[:-1] + [make_document("suite", kind="platform", layer="L4", plane="platform",
                                                  capabilities=["driver-lifecycle"], bundles=["plugin-a"])]
    second = build_graph(changed)
    assert second is not first and second.version != first.version
    assert ("project:suite", "project:exporter") not in _edges(second, "bundles")


def test_a_caller_version_string_keys_the_cache(small_catalog):
    clear_graph_cache()
    v1 = build_graph(small_catalog, version="rev-41")
    assert build_graph(small_catalog, version="rev-41") is v1
    assert v1.version == "rev-41"
    assert build_graph(small_catalog, version="rev-42") is not v1


def test_duplicate_slugs_are_bad_input(small_catalog):
    with pytest.raises(RulesInputError) as exc:
        build_graph(small_catalog + [small_catalog[0]], version="dupes")
    assert "documents" in exc.value.errors


def test_the_real_catalog_builds_a_connected_composition_graph(graph):
    assert graph.stats()["project"] == len(graph.projects) >= 30
    assert graph.slot_candidates  # every slot has static candidates
    for slot, slugs in graph.slot_candidates.items():
        assert slugs, slot


def test_a_secondary_layer_does_not_make_a_scheduler_but_does_make_a_queue(small_catalog):
    # The scheduling slot takes only projects whose primary layer is L2/L3; admission takes L1 as a
    # secondary layer too. A queue (L1) that also binds pods from a secondary L2 is no scheduler.
    queue = make_document("queue-binder", layer="L1", secondary=["L2"], units=["whole_gpu"],
                          roles={"bind": ["whole_gpu"]}, capabilities=["per-team-quota", "pod-binding"])
    graph = build_graph([*small_catalog, queue])
    assert "queue-binder" in graph.slot_candidates[SlotName.ADMISSION_QUOTA]
    assert "queue-binder" not in graph.slot_candidates[SlotName.SCHEDULING_POLICY]
