"""Compare verdicts that a reader relies on, asserted as verdicts (not only that explanations exist),
and two invariants: a verdict does not depend on the order of the pair, nor on what projects are
called."""

from __future__ import annotations

from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from placement.catalog.schemas import ProjectDocument
from placement.rules import Verdict, build_graph, builtin_rules, compare
from placement.rules.synthetic import make_document


def _verdict(graph, a: str, b: str) -> Verdict:
    return compare(graph, [a, b]).pairs[0].verdict


# --- same layer, no capability in common: not rivals ----------------------------------------------


def test_same_layer_and_unit_with_no_capability_in_common_are_not_rivals():
    telemetry = make_document("telemetry-a", layer="L4", units=["node"], capabilities=["gpu-telemetry"])
    labeller = make_document("labeller-a", layer="L4", units=["node"], capabilities=["node-labelling"])
    rival = make_document("telemetry-b", layer="L4", units=["node"], capabilities=["gpu-telemetry", "metering"])
    graph = build_graph([telemetry, labeller, rival])
    assert _verdict(graph, "telemetry-a", "labeller-a") == Verdict.CROSS_LAYER
    assert _verdict(graph, "telemetry-a", "telemetry-b") == Verdict.COMPARABLE  # one job in common: rivals


@pytest.mark.parametrize(
    "a, b",
    [
        ("dcgm-exporter", "nvidia-device-plugin"),  # telemetry vs device advertisement on one node layer
        ("node-feature-discovery", "nvidia-device-plugin"),  # node labels vs device allocation
        ("dcgm-exporter", "mig"),  # an exporter does not partition a GPU
        ("gpu-feature-discovery", "time-slicing"),
    ],
)
def test_catalog_projects_doing_different_jobs_on_one_layer_are_not_rivals(graph, a, b):
    assert graph.project(a).capabilities.isdisjoint(graph.project(b).capabilities), "the premise of this test"
    assert _verdict(graph, a, b) == Verdict.CROSS_LAYER


# --- invariants -----------------------------------------------------------------------------------


def test_every_catalog_verdict_is_the_same_in_both_orders(graph):
    asymmetric = [
        (a, b) for a, b in combinations(sorted(graph.projects), 2) if _verdict(graph, a, b) != _verdict(graph, b, a)
    ]
    assert asymmetric == []


def _renamed(documents: list[ProjectDocument], new_slug: dict[str, str]) -> list[ProjectDocument]:
    def ref(slugs):
        return [new_slug.get(s, s) for s in slugs]

    renamed = []
    for doc in documents:
        data = doc.model_dump(mode="json")
        data["slug"] = new_slug[doc.slug]
        placement = data["placement"]
        placement["dependencies"]["requires"] = ref(placement["dependencies"]["requires"])
        placement["bundles"] = ref(placement["bundles"])
        placement["conflicts_with"] = ref(placement["conflicts_with"])
        renamed.append(ProjectDocument.model_validate(data))
    return renamed


def _renamed_everywhere(value, new_slug: dict[str, str]):
    """Rule tables name projects by slug (interfaces, integrations): rename them there too."""
    if isinstance(value, dict):
        return {new_slug.get(k, k): _renamed_everywhere(v, new_slug) for k, v in value.items()}
    if isinstance(value, list):
        return [_renamed_everywhere(v, new_slug) for v in value]
    return new_slug.get(value, value) if isinstance(value, str) else value


@settings(max_examples=8, deadline=None)
@given(st.randoms(use_true_random=False))
def test_verdicts_do_not_change_when_projects_are_renamed(catalog_documents, graph, rng):
    slugs = sorted(d.slug for d in catalog_documents)
    tokens = rng.sample(range(10_000, 99_999), len(slugs))  # new names sort in a different order
    new_slug = {s: f"p{t}" for s, t in zip(slugs, tokens)}
    rules = builtin_rules()
    renamed_rules = type(rules).model_validate(_renamed_everywhere(rules.model_dump(mode="json"), new_slug))
    renamed_graph = build_graph(_renamed(catalog_documents, new_slug), rules=renamed_rules)
    before = {(p.a.slug, p.b.slug): p.verdict for p in compare(graph, slugs).pairs}
    after = compare(renamed_graph, [new_slug[s] for s in slugs]).pairs
    back = {v: k for k, v in new_slug.items()}
    assert {frozenset((back[p.a.slug], back[p.b.slug])): p.verdict for p in after} == {
        frozenset(k): v for k, v in before.items()
    }
