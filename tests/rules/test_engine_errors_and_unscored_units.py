"""The engine's own error text, and a stack whose unit its profile does not score (mutation audit gaps)."""

from __future__ import annotations

import pytest

from placement.rules import compose
from placement.rules.errors import RulesInputError


def test_a_rules_input_error_read_as_text_names_each_field_with_its_messages():
    err = RulesInputError({"slugs": ["Unknown project 'nope'.", "Name two."], "profile": ["Unknown profile."], "limit": []})
    assert err.errors == {"slugs": ["Unknown project 'nope'.", "Name two."], "profile": ["Unknown profile."]}
    assert str(err) == "slugs: Unknown project 'nope'. Name two.; profile: Unknown profile."


def test_compose_with_an_unknown_project_raises_an_error_whose_text_names_the_field(graph):
    with pytest.raises(RulesInputError) as caught:
        compose(graph, {"profile": "training", "constraints": {"require": ["no-such-project"]}})
    assert str(caught.value).startswith("constraints.require: ")
    assert "no-such-project" in str(caught.value)


def test_a_training_stack_on_a_unit_the_training_profile_does_not_score_is_explained(graph):
    # profiles.yaml gives the training profile no preference for memory_compute_share (HAMi-core),
    # yet quarter-GPU replicas with soft isolation make it a valid unit: its stack must still be
    # explained, with no unit-fit item and a breakdown that adds up to the score.
    result = compose(graph, {
        "profile": "training", "slo": {"isolation": "soft"}, "limit": 50,
        "workloads": [{"name": "dev", "kind": "training", "replicas": 4, "gpus_per_replica": 0.25, "gpu_memory_gib": 8}],
    })
    shared = [s for s in result.stacks if any(p.unit.value == "memory_compute_share" for p in s.pools)]
    assert shared, [s.title for s in result.stacks]
    for stack in shared:
        assert not [i for i in stack.score_breakdown if i.factor == "unit_fit"]
        assert sum(i.points for i in stack.score_breakdown) == pytest.approx(stack.score)
    whole = next(s for s in result.stacks if all(p.unit.value == "whole_gpu" for p in s.pools))
    assert [i for i in whole.score_breakdown if i.factor == "unit_fit"]


def test_an_unknown_profile_is_refused_listing_every_known_one(graph):
    with pytest.raises(RulesInputError) as caught:
        compose(graph, {"profile": "gaming"})
    assert caught.value.errors["profile"] == [
        "Unknown workload profile 'gaming'; known: training, online_inference, batch_inference, interactive, mixed."
    ]


@pytest.mark.parametrize(("tenants", "shared"), [((1,), False), ((1, 1), False), ((2,), True), ((1, 3), True)])
def test_without_an_slo_the_classes_tenants_decide_whether_the_pool_is_shared(graph, tenants, shared):
    workloads = [{"name": f"c{i}", "kind": "batch_inference", "replicas": 2, "gpus_per_replica": 1,
                  "gpu_memory_gib": 16, "tenants": n} for i, n in enumerate(tenants)]
    result = compose(graph, {"profile": "batch_inference", "workloads": workloads, "limit": 1})
    assert result.slo.multi_tenant is shared


def test_an_unknown_excluded_project_and_a_repeated_required_one_are_refused_on_their_own_fields(graph):
    with pytest.raises(RulesInputError) as caught:
        compose(graph, {"profile": "training", "constraints": {"require": ["kueue", "kueue"], "exclude": ["no-such-project"]}})
    assert caught.value.errors["constraints.require"] == ["Project slugs repeat."]
    assert list(caught.value.errors) == ["constraints.require", "constraints.exclude"]
    assert "no-such-project" in caught.value.errors["constraints.exclude"][0]


def test_an_unknown_project_is_reported_on_the_slug_field_unless_the_caller_names_one(graph):
    with pytest.raises(RulesInputError) as exc:
        graph.project("kueu")
    assert exc.value.errors == {"slug": ["Unknown project 'kueu'. Did you mean: kueue?"]}
    with pytest.raises(RulesInputError) as exc:
        graph.project("kueu", field_name="with")
    assert list(exc.value.errors) == ["with"]
