"""MIG is credited for slicing cards, not for a replica that fills one: a 1-GPU replica is sized to the
card's full profile (7g.80gb on A100-80GB, one instance per GPU), isolates no better than a whole GPU and
adds reconfiguration, so compose does not rank it first for that reason (it did: "MIG instance +3,
hardware partitioning +1" put "MIG 7g.80gb per replica" above whole GPUs for every 1-GPU class)."""

from __future__ import annotations

import pytest

from placement.rules import ComposeRequest, compose


def _request(gpus, memory, model="A100-80GB"):
    return ComposeRequest.model_validate({
        "workloads": [{"name": "train", "kind": "training", "replicas": 6, "gpus_per_replica": gpus,
                       "gpu_memory_gib": memory, "gang": True, "tenants": 2}],
        "pool": {"gpu_model": model, "gpu_count": 8}})


@pytest.mark.parametrize("memory", [20, 40, 70])
def test_a_replica_that_fills_a_card_ranks_whole_gpus_above_a_full_card_mig_profile(graph, memory):
    result = compose(graph, _request(1, memory))
    first = result.stacks[0]
    assert first.pools[0].unit.value != "mig_instance", (first.title, first.pools[0].unit_size)
    mig = [s for s in result.stacks if s.pools[0].unit.value == "mig_instance"]
    for s in mig:  # still offered, without the slicing credit, and saying why
        assert s.pools[0].unit_size == "MIG 7g.80gb per replica"
        assert s.score < first.score
        items = [i for i in s.score_breakdown if "MIG partitions nothing" in i.reason]
        assert items and all(i.points == 0 for i in items)


def test_a_replica_that_takes_a_slice_keeps_migs_credit(graph):
    first = compose(graph, _request(0.25, 18)).stacks[0]
    assert (first.pools[0].unit.value, first.pools[0].unit_size) == ("mig_instance", "MIG 2g.20gb per replica")
    assert any(i.points == 3 and "slices" in i.reason.lower() for i in first.score_breakdown)
