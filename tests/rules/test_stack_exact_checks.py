"""The exact check of one combination (`scoring.evaluate`), which decides every returned stack after
the fast pre-scoring: it refuses members that conflict on shared nodes and a project placed only
through a secondary layer, and it scores what it accepts. Hand-built candidates on the small catalog."""

from __future__ import annotations

import pytest

from placement.catalog.schemas import ResourceUnit
from placement.rules import ComposeRequest, Pool, SlotName, build_graph, clear_graph_cache
from placement.rules.context import Candidate, PoolOption, resolve
from placement.rules.scoring import evaluate
from placement.rules.synthetic import make_document

A100 = Pool(gpu_model="A100-80GB", gpu_count=8)
QUEUE_C = make_document("queue-c", layer="L1", units=["whole_gpu"], roles={"bind": ["whole_gpu"]},
                        capabilities=["per-team-quota", "admission-control"], conflicts=["sched-b"])
# a scheduler that also queues from its L1 side: an admission candidate only alongside its scheduling role
SCHED_Q = make_document("sched-q", layer="L2", secondary=["L1"], units=["whole_gpu"], roles={"bind": ["whole_gpu"]},
                        capabilities=["pod-binding", "job-queueing"])


@pytest.fixture
def ctx(small_catalog):
    clear_graph_cache()
    graph = build_graph([*small_catalog, QUEUE_C, SCHED_Q])
    return resolve(graph, ComposeRequest(profile="batch_inference", pool=A100))


def _candidate(ctx, admission, scheduler, handoff="plugin-a"):
    option = PoolOption(pool=ctx.pools[0], unit=ResourceUnit.WHOLE_GPU, data_plane=None, handoff=handoff, local=0.0)
    return Candidate(cluster={SlotName.ADMISSION_QUOTA: admission, SlotName.SCHEDULING_POLICY: scheduler}, pools=(option,))


def test_a_queue_and_a_scheduler_that_conflict_are_refused_naming_the_pair(ctx):
    cand = _candidate(ctx, "queue-c", "sched-b")
    assert evaluate(ctx, cand) == "queue-c conflicts with sched-b"
    assert cand.members == [] and cand.score == 0  # refused: not scored


def test_a_scheduler_that_conflicts_with_the_queue_named_first_is_refused_too(ctx):
    cand = Candidate(cluster={SlotName.SCHEDULING_POLICY: "sched-b", SlotName.ADMISSION_QUOTA: "queue-c"},
                     pools=_candidate(ctx, None, None).pools)
    assert evaluate(ctx, cand) == "sched-b conflicts with queue-c"


def test_a_project_placed_only_through_its_secondary_layer_is_refused(ctx):
    assert evaluate(ctx, _candidate(ctx, "sched-q", "sched-a")) == (
        "sched-q can fill admission_quota only alongside its primary role")


def test_a_project_in_its_primary_slot_may_fill_its_secondary_one_too(ctx):
    cand = _candidate(ctx, "sched-q", "sched-q")
    assert evaluate(ctx, cand) is None
    assert cand.members == ["sched-q", "plugin-a", "runtime-hook"]
    assert cand.charged == ["sched-q", "plugin-a", "runtime-hook"]  # sched-q runs once for both slots
    # whole_gpu 1 + native handoff 1 + job-queueing 1, three components at -1.5
    assert cand.score == -1.5


def test_an_accepted_combination_is_scored_with_its_supporting_components(ctx):
    cand = _candidate(ctx, "queue-a", "sched-b")
    assert evaluate(ctx, cand) is None
    assert cand.supporting == {"runtime-hook": "plugin-a"}
    assert cand.members == ["queue-a", "sched-b", "plugin-a", "runtime-hook"]
    # whole_gpu 1 + native handoff 1 + admission-control 3 (multi-tenant) + bin-packing 1, four components at -1.5
    assert cand.score == 0


def test_a_core_is_checked_against_the_contract_points_by_default(ctx):
    # sharer hands out memory/compute shares, not whole GPUs
    assert evaluate(ctx, _candidate(ctx, "queue-a", "sched-b", handoff="sharer")) == (
        "Advertise fails: sharer does not advertise Whole GPU")
