"""What a reader learns about the combinations that did not make a stack (`excluded`, counted per
reason): the contract point that fails (Bind, Quota), the two projects that conflict on the same
nodes; and that the search looks at every core of a small catalog (`combinations_checked`)."""

from __future__ import annotations

from placement.rules import ComposeRequest, Pool, build_graph, clear_graph_cache, compose
from placement.rules.synthetic import make_document

A100 = Pool(gpu_model="A100-80GB", gpu_count=8)


def _compose(documents, profile, **kwargs):
    clear_graph_cache()
    return compose(build_graph(documents), ComposeRequest(profile=profile, pool=A100, **kwargs))


def test_each_core_that_breaks_a_contract_point_is_counted_under_the_point_and_the_unit(small_catalog):
    result = _compose(small_catalog, "batch_inference", limit=5)
    assert [s.title for s in result.stacks] == ["Whole GPU (Plugin A) + Sched B + Queue A", "Whole GPU (Plugin A) + Sched A + Queue A"]
    assert result.combinations_checked == 9  # 3 schedulers x 1 queue x 3 pool options
    assert sorted(result.excluded) == sorted([
        "Bind fails: sched-a cannot bind Memory quota + compute share (1 combination)",
        "Bind fails: sched-b cannot bind Memory quota + compute share (1 combination)",
        "Bind fails: sched-frac cannot bind Memory quota + compute share (1 combination)",
        "Bind fails: sched-b cannot bind MIG instance (1 combination)",
        "Bind fails: sched-frac cannot bind MIG instance (1 combination)",
        "Bind fails: sched-frac cannot bind Whole GPU (1 combination)",
        "Quota fails: queue-a cannot count MIG instance in quota (1 combination)",
    ])


def test_projects_that_conflict_never_share_nodes_and_each_clash_is_named(small_catalog):
    # queue-c conflicts with a scheduler (cluster-wide: every node) and with a pool's device plugin
    queue_c = make_document("queue-c", layer="L1", units=["whole_gpu"], roles={"bind": ["whole_gpu"]},
                            capabilities=["per-team-quota", "admission-control"], conflicts=["sched-b", "plugin-a"])
    result = _compose([*small_catalog, queue_c], "batch_inference", limit=5)
    assert all("queue-c" not in s.components for s in result.stacks)
    assert [s.title for s in result.stacks] == ["Whole GPU (Plugin A) + Sched B + Queue A", "Whole GPU (Plugin A) + Sched A + Queue A"]
    assert result.combinations_checked == 18
    excluded = dict(e.rsplit(" (", 1) for e in result.excluded)
    assert excluded["queue-c conflicts with plugin-a"] == "4 combinations)"  # under sched-a or sched-frac, two pools each
    assert excluded["sched-b conflicts with queue-c"] == "3 combinations)"  # every pool option under sched-b
    assert result.excluded[:2] == ["queue-c conflicts with plugin-a (4 combinations)", "sched-b conflicts with queue-c (3 combinations)"]


def test_a_requirement_the_constraints_exclude_names_both_projects(small_catalog):
    result = _compose(small_catalog, "batch_inference", limit=5, constraints={"exclude": ["runtime-hook"]})
    # plugin-a needs runtime-hook; the sharer pool is the only one left, and no scheduler binds its unit
    assert not result.feasible
    assert "plugin-a requires runtime-hook, which the constraints exclude (6 combinations)" in result.excluded
