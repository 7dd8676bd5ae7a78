"""What a misuse answer tells someone who mistyped a capability or asked a crowded layer: the
suggestions for an unknown capability (every close one, at most five), the layers named when a
capability is owned by two layers or a project sits on two, and whom to ask instead (every provider
in `providers`, the first eight named in the sentence). Hand-built projects."""

from __future__ import annotations

import pytest

from placement.rules import MisuseStatus, RulesInputError, build_graph, check_misuse
from placement.rules.synthetic import make_document

L1 = "L1 Admission and quota"
L2 = "L2 Scheduling policy"
L3 = "L3 Pod orchestration"
L4 = "L4 Node allocation and device handoff"

GANG = [f"gang-{i}" for i in range(1, 10)]  # nine schedulers that all gang-schedule
DOCUMENTS = [
    *(make_document(slug, layer="L2", units=["whole_gpu"], capabilities=["pod-binding", "gang-scheduling"]) for slug in GANG),
    make_document("two-layers", layer="L2", secondary=["L3"], units=["whole_gpu"], capabilities=["pod-binding"]),
    make_document("exporter", layer="L4", units=["node"], capabilities=["gpu-telemetry"]),
]


@pytest.fixture(scope="module")
def graph():
    return build_graph(DOCUMENTS)


def _capability_error(graph, capability):
    with pytest.raises(RulesInputError) as exc:
        check_misuse(graph, "exporter", capability)
    [message] = exc.value.errors["capability"]
    return message


def test_an_unknown_capability_lists_every_close_known_one(graph):
    assert _capability_error(graph, "isolation") == (
        "Unknown capability 'isolation'. Did you mean: compute-isolation, fault-isolation, gpu-memory-isolation?"
    )
    # a longer slug that contains a known one suggests it too
    assert _capability_error(graph, "gang-scheduling-v2") == (
        "Unknown capability 'gang-scheduling-v2'. Did you mean: gang-scheduling?"
    )


def test_an_unknown_capability_suggests_at_most_five(graph):
    # eight known capabilities contain "tion": the first five in order are offered
    assert _capability_error(graph, "tion") == (
        "Unknown capability 'tion'. Did you mean: compute-isolation, container-runtime-injection, device-allocation, "
        "fault-isolation, gpu-memory-isolation?"
    )


def test_the_answer_names_both_layers_that_own_a_capability_and_both_a_project_sits_on(graph):
    verdict = check_misuse(graph, "exporter", "fair-sharing")
    assert verdict.status == MisuseStatus.WRONG_LAYER
    assert verdict.reason.startswith(
        f"Misuse: Exporter sits on {L4}, but fair sharing across tenants belongs to {L1} / {L2} ("
    )
    assert [x.code for x in verdict.owner_layers] == ["L1", "L2"]

    # a project on L2 and L3 asked for something L4 owns: both its layers are named
    wrong = check_misuse(graph, "two-layers", "gpu-telemetry")
    assert wrong.reason.startswith(f"Misuse: Two Layers sits on {L2} / {L3}, but gpu telemetry belongs to {L4} (")


def test_a_crowded_owning_layer_names_eight_providers_and_returns_them_all(graph):
    verdict = check_misuse(graph, "exporter", "gang-scheduling")
    assert verdict.status == MisuseStatus.WRONG_LAYER
    assert [p.slug for p in verdict.providers] == GANG
    assert verdict.reason.endswith(f"Ask {L2} instead: {', '.join(GANG[:8])}.")
