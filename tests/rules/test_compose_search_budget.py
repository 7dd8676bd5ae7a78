"""Compose's search budget (issue 37, item 1): eight shared-GPU classes used to make 6^8 combinations
of pool options and run past gunicorn's 30 s timeout. The search is now bounded by counts (a beam
over the pools, a cap on checked combinations), answers with the best stacks it found and says in
a note when the budget cut it. Requests of up to five classes are searched as before (no note).
Time is measured by benchmarks/compose_budget_bench.py, never here."""

from __future__ import annotations

import pytest

from placement.rules import ComposeRequest, SearchBudget, compose


def _shared_classes(n: int) -> list[dict]:
    return [{"name": f"svc{i}", "kind": "online_inference", "replicas": 2, "gpus_per_replica": 0.5,
             "gpu_memory_gib": 10} for i in range(n)]


def _budget_notes(result) -> list[str]:
    return [n for n in result.notes if n.startswith("Search budget")]


def test_eight_shared_gpu_inference_classes_answer_with_stacks_and_a_budget_note(graph):
    result = compose(graph, ComposeRequest(workloads=_shared_classes(8)))
    assert result.feasible and len(result.stacks) == 5
    notes = _budget_notes(result)
    assert notes and "1,679,616 combinations" in notes[0]  # 6 options on each of 8 pools
    assert result.combinations_checked <= SearchBudget().combinations
    for stack in result.stacks:  # every pool gets a device handoff in every stack
        handoffs = {a.pool for a in stack.slots if a.slot.value == "device_handoff"}
        assert handoffs == {f"svc{i}" for i in range(8)}


@pytest.mark.parametrize("n", [1, 3, 5])
def test_requests_the_budget_does_not_cut_carry_no_budget_note(graph, n):
    assert _budget_notes(compose(graph, ComposeRequest(workloads=_shared_classes(n)))) == []


def test_a_smaller_budget_cuts_sooner_and_still_answers(graph):
    request = ComposeRequest(workloads=_shared_classes(3))
    full = compose(graph, request)
    small = compose(graph, request, SearchBudget(pool_combinations=20, combinations=500))
    assert small.feasible and small.stacks
    assert small.combinations_checked <= 500 < full.combinations_checked
    notes = _budget_notes(small)
    assert len(notes) == 2 and "above the budget of 20" in notes[0] and "stopped after 500" in notes[1]


def test_a_beam_that_drops_only_the_weakest_partial_combinations_returns_the_exhaustive_answer(graph):
    # the beam keeps the best partial combinations by an upper bound on their score: one below the
    # product (3 pools x 6 options) it drops the weakest, and the stacks stay those of the product
    request = ComposeRequest(workloads=_shared_classes(3))
    product = compose(graph, request)
    beam = compose(graph, request, SearchBudget(pool_combinations=6**3 - 1, combinations=10**6))
    assert [s.title for s in beam.stacks] == [s.title for s in product.stacks]
    assert [s.score for s in beam.stacks] == [s.score for s in product.stacks]


def test_a_budget_is_a_positive_count():
    with pytest.raises(ValueError):
        SearchBudget(pool_combinations=0)
