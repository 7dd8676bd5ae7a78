"""Compare: like with like on one layer and unit, across layers only the contract that joins them."""

from __future__ import annotations

from itertools import combinations

import pytest

from placement.catalog.schemas import ContractPoint
from placement.rules import RulesInputError, Verdict, build_graph, compare
from tests.rules.compare_helpers import pair_of

# --- each verdict on small synthetic documents -----------------------------------------------------


def test_same_layer_and_unit_with_a_shared_capability_is_comparable_on_the_seed_axes(small_catalog):
    pair = pair_of(build_graph(small_catalog), "sched-a", "sched-b")
    assert pair.verdict == Verdict.COMPARABLE
    # two schedulers: compared on the control-plane axes (comparison.yaml control_axes)
    assert [a.axis for a in pair.axes] == ["queues", "quota_model", "fairness", "preemption", "gang", "topology", "integrations"]
    assert all(len(a.values) == 2 for a in pair.axes)
    assert "like-for-like" in pair.explanation


def test_same_layer_different_primary_unit_is_a_unit_mismatch(small_catalog):
    pair = pair_of(build_graph(small_catalog), "sched-a", "sched-frac")
    assert pair.verdict == Verdict.UNIT_MISMATCH
    assert [a.axis for a in pair.axes] == ["workload_and_slo", "resource_unit"]
    assert "fix the workload and SLO first" in pair.explanation


def test_different_layers_are_cross_layer_joined_by_a_named_contract_and_path(small_catalog):
    pair = pair_of(build_graph(small_catalog), "plugin-a", "sched-a")
    assert pair.verdict == Verdict.CROSS_LAYER
    assert [a.axis for a in pair.axes] == ["interface_contract"]
    join = pair.contracts[0]
    assert join.points == [ContractPoint.ADVERTISE, ContractPoint.BIND]
    assert join.units and {r.slug for r in join.roles} == {"plugin-a", "sched-a"}
    assert [s.relation for s in pair.path] == ["advertises", "binds"]
    assert "Advertise" in pair.explanation and "not rivals" in pair.explanation


def test_a_platform_against_a_mechanism_is_decomposed(small_catalog):
    pair = pair_of(build_graph(small_catalog), "suite", "slicer")
    assert pair.verdict == Verdict.PLATFORM_VS_MECHANISM
    assert [a.axis for a in pair.axes] == ["decomposition"]
    assert "decompose" in pair.explanation


def test_a_project_bundling_the_other_is_overlapping(small_catalog):
    pair = pair_of(build_graph(small_catalog), "plugin-a", "suite")
    assert pair.verdict == Verdict.OVERLAPPING
    assert [s.relation for s in pair.path] == ["bundles"]
    assert "ships" in pair.explanation


def test_a_device_handoff_delivering_a_mechanisms_unit_is_not_its_rival(small_catalog):
    pair = pair_of(build_graph(small_catalog), "slicer", "plugin-a")
    assert pair.verdict == Verdict.CROSS_LAYER
    assert pair.contracts[0].points == [ContractPoint.ADVERTISE, ContractPoint.ALLOCATE]
    assert "creates" in pair.explanation


def test_a_project_built_on_another_is_not_its_rival(small_catalog):
    pair = pair_of(build_graph(small_catalog), "plugin-a", "runtime-hook")
    assert pair.verdict == Verdict.CROSS_LAYER
    assert "built on" in pair.explanation


def test_comparing_needs_two_distinct_known_projects(small_catalog):
    graph = build_graph(small_catalog)
    for bad in (["sched-a"], ["sched-a", "sched-a"], ["sched-a", "kueue-typo"]):
        with pytest.raises(RulesInputError) as exc:
            compare(graph, bad)
        assert list(exc.value.errors) == ["slugs"]


# --- the real catalog -------------------------------------------------------------------------------


def test_hami_vs_volcano_is_cross_layer_naming_the_bind_contract(graph):
    pair = pair_of(graph, "hami", "volcano")
    assert pair.verdict == Verdict.CROSS_LAYER
    assert any(j.points == [ContractPoint.BIND] and j.kind == "shared_point" for j in pair.contracts)
    assert "Bind" in pair.explanation
    assert pair.path[0].target == pair.path[1].source and pair.path[0].target.startswith("unit:")


def test_mig_vs_hami_is_a_unit_mismatch(graph):
    pair = pair_of(graph, "mig", "hami")
    assert pair.verdict == Verdict.UNIT_MISMATCH
    assert pair.primary_unit_a.value == "mig_instance" and pair.primary_unit_b.value == "memory_compute_share"
    assert "mig_instance" in pair.shared_units  # HAMi also hands out MIG instances, but that is not what it is for


def test_time_slicing_vs_mps_share_a_layer_but_not_a_unit(graph):
    # Both are device-level sharing modes on L4, but a time slice and an MPS share are different
    # units with different isolation ceilings (none vs soft): choose by SLO first.
    pair = pair_of(graph, "time-slicing", "cuda-mps")
    assert pair.layer_a == pair.layer_b
    assert pair.verdict == Verdict.UNIT_MISMATCH
    values = {v.slug: v.value for a in pair.axes if a.axis == "resource_unit" for v in a.values}
    assert set(values) == {"time-slicing", "cuda-mps"}


def test_like_for_like_pairs_of_the_catalog_are_comparable(graph):
    for a, b in (("volcano", "kai-scheduler"), ("kueue", "resource-quota"), ("jobset", "lws")):
        assert pair_of(graph, a, b).verdict == Verdict.COMPARABLE, (a, b)


def test_gpustack_vs_mig_is_platform_vs_mechanism(graph):
    assert pair_of(graph, "gpustack", "mig").verdict == Verdict.PLATFORM_VS_MECHANISM


def test_gpu_operator_vs_nvidia_device_plugin_is_overlapping(graph):
    pair = pair_of(graph, "gpu-operator", "nvidia-device-plugin")
    assert pair.verdict == Verdict.OVERLAPPING
    assert pair.path and pair.path[0].relation == "bundles"


def test_kueue_vs_volcano_overlap_on_queueing_quota_fair_sharing_and_preemption(graph):
    # Volcano's own entry lists its queues on L1; both own the same governance (seeds/000 paradigms)
    pair = pair_of(graph, "kueue", "volcano")
    assert pair.verdict == Verdict.OVERLAPPING
    assert pair.layer_a.code == "L1" and pair.layer_b.code == "L2"
    for capability in ("job queueing", "per-team quota", "fair sharing", "preemption"):
        assert capability in pair.explanation


def test_mig_and_the_device_plugin_that_advertises_it_are_upstream_and_downstream(graph):
    pair = pair_of(graph, "mig", "nvidia-device-plugin")
    assert pair.verdict == Verdict.CROSS_LAYER
    assert pair.contracts[0].points == [ContractPoint.ADVERTISE, ContractPoint.ALLOCATE]


def test_every_pair_of_the_catalog_gets_an_explained_verdict(graph):
    slugs = sorted(graph.projects)
    result = compare(graph, slugs)
    assert len(result.pairs) == len(slugs) * (len(slugs) - 1) // 2
    valid_axes = {v.verdict: (v.axes, v.control_axes) for v in graph.rules.verdicts}
    role_axes = [r.axes for r in graph.rules.roles]  # two projects of one role: that role's axes
    for pair in result.pairs:
        assert pair.explanation, (pair.a.slug, pair.b.slug)
        assert [a.axis for a in pair.axes] in (*valid_axes[pair.verdict], *role_axes)
        if pair.contracts:
            assert pair.verdict in (Verdict.CROSS_LAYER, Verdict.ALTERNATIVE_HANDOFF, Verdict.OVERLAPPING)
    assert {p.verdict for p in result.pairs} == set(Verdict)


def test_verdicts_do_not_depend_on_the_order_of_the_pair(graph):
    for a, b in combinations(["hami", "volcano", "mig", "gpu-operator", "kueue", "dcgm-exporter"], 2):
        assert pair_of(graph, a, b).verdict == pair_of(graph, b, a).verdict


def test_comparing_a_set_groups_the_projects_that_are_rivals(graph):
    result = compare(graph, ["volcano", "kai-scheduler", "kueue", "hami"])
    assert ["volcano", "kai-scheduler"] in result.comparable_groups
    assert len(result.pairs) == 6 and result.summary
