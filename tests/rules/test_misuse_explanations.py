"""What a misuse check tells the person who asked: which of the four answers it is (declared misuse,
provided, wrong layer, not provided), the sentence that says why, the owning layer, and whom to ask
instead. Hand-built projects, so each expected sentence is the one a reviewer checks for that answer."""

from __future__ import annotations

import pytest

from placement.rules import MisuseStatus, RulesInputError, build_graph, check_misuse, known_misuses
from placement.rules.synthetic import make_document

L1 = "L1 Admission and quota"
L2 = "L2 Scheduling policy"
L4 = "L4 Node allocation and device handoff"

EXTRA = [
    # sits on the layer that owns quota, yet the catalog records asking it for quota as a misuse
    make_document("quota-shy", layer="L1", units=["whole_gpu"], capabilities=["admission-control"],
                  misuses={"per-team-quota": "Expect it to split team quotas"}),
    # provides a node-layer capability from the scheduling layer
    make_document("meter-sched", layer="L2", units=["whole_gpu"], capabilities=["pod-binding", "metering"],
                  misuses={"gang-scheduling": "Expect it to gang-schedule"}),
]


@pytest.fixture
def graph(small_catalog):
    return build_graph([*small_catalog, *EXTRA])


def _providers(verdict):
    return [p.slug for p in verdict.providers]


def test_a_declared_misuse_off_the_owning_layer_quotes_the_expectation_and_sends_to_the_owner(graph):
    verdict = check_misuse(graph, "sched-a", "per-team-quota")
    assert (verdict.status, verdict.is_misuse, verdict.layer_owns) == (MisuseStatus.DECLARED_MISUSE, True, False)
    assert verdict.reason == (
        f"Misuse: expect it to enforce team quotas asks Sched A ({L2}) for per-team quota, which {L1} owns. Another "
        f"layer owns it. Ask {L1} instead: queue-a."
    )
    assert verdict.expectation == "Expect it to enforce team quotas"
    assert (verdict.capability, verdict.capability_name, verdict.owner_plane) == ("per-team-quota", "Per-team quota", "control")
    assert [(x.map, x.code, x.name) for x in verdict.project_layers] == [("control-plane", "L2", "Scheduling policy")]
    assert [(x.map, x.code, x.name) for x in verdict.owner_layers] == [("control-plane", "L1", "Admission and quota")]
    assert verdict.project.slug == "sched-a" and _providers(verdict) == ["queue-a"]


def test_a_declared_misuse_on_the_owning_layer_says_the_project_does_not_provide_it(graph):
    verdict = check_misuse(graph, "quota-shy", "per-team-quota")
    assert (verdict.status, verdict.layer_owns) == (MisuseStatus.DECLARED_MISUSE, True)
    assert verdict.reason == (
        f"Misuse: expect it to split team quotas; Quota Shy does not provide per-team quota although it sits on {L1}. "
        f"Another layer owns it. Ask {L1} instead: queue-a."
    )


def test_a_capability_provided_on_its_own_layer_is_no_misuse(graph):
    verdict = check_misuse(graph, "sched-a", "gang-scheduling")
    assert (verdict.status, verdict.is_misuse, verdict.layer_owns) == (MisuseStatus.PROVIDED, False, True)
    assert verdict.reason == f"Sched A provides gang scheduling on {L2}, a layer that owns it."
    assert verdict.expectation == ""
    assert [x.code for x in verdict.project_layers] == ["L2"]


def test_a_capability_provided_from_another_layer_is_no_misuse_but_asks_to_check_the_placement(graph):
    verdict = check_misuse(graph, "meter-sched", "metering")
    assert (verdict.status, verdict.is_misuse, verdict.layer_owns) == (MisuseStatus.PROVIDED, False, False)
    assert verdict.reason == f"Meter Sched provides metering per tenant, although {L4} owns it; check the placement."
    assert verdict.owner_plane == "data"


def test_asking_the_wrong_layer_names_the_owner_what_it_does_and_who_provides_it(graph):
    verdict = check_misuse(graph, "exporter", "gang-scheduling")
    assert (verdict.status, verdict.is_misuse, verdict.layer_owns) == (MisuseStatus.WRONG_LAYER, True, False)
    assert verdict.reason == (
        f"Misuse: Exporter sits on {L4}, but gang scheduling belongs to {L2} (All-or-nothing placement of a group of "
        f"pods so that partial starts do not hold GPUs.) Ask {L2} instead: sched-a."
    )
    nobody = check_misuse(graph, "sched-a", "device-health")
    assert nobody.reason.endswith(f"Ask {L4} instead: no catalog project yet.") and nobody.providers == []


def test_the_owning_layer_not_providing_it_points_to_its_neighbours_that_do(graph):
    verdict = check_misuse(graph, "sched-b", "gang-scheduling")
    assert (verdict.status, verdict.is_misuse, verdict.layer_owns) == (MisuseStatus.NOT_PROVIDED, True, True)
    assert verdict.reason == (
        f"Misuse: gang scheduling belongs to {L2}, where Sched B sits, but Sched B does not provide it. Other projects "
        "on that layer do: sched-a."
    )
    assert [x.code for x in verdict.project_layers] == ["L2", "L3"]  # a secondary layer is listed too


def test_when_nobody_on_the_owning_layer_provides_it_the_answer_says_where_it_comes_from(graph):
    # only meter-sched provides metering, and from L2: it is not "another project on that layer"
    verdict = check_misuse(graph, "exporter", "metering")
    assert verdict.status == MisuseStatus.NOT_PROVIDED
    assert verdict.reason == (
        f"Misuse: metering per tenant belongs to {L4}, where Exporter sits, but Exporter does not provide it, and no "
        "other project on that layer does: provided from another layer by meter-sched."
    )
    assert _providers(verdict) == ["meter-sched"]
    wrong = check_misuse(graph, "sched-a", "metering")
    assert wrong.reason.endswith(
        f"Ask {L4} instead: no catalog project on that layer yet (provided from another layer by meter-sched)."
    )
    nobody = check_misuse(graph, "exporter", "device-health")
    assert nobody.reason.endswith("but Exporter does not provide it, and no other project on that layer does: no "
                                  "catalog project yet.")


def test_providers_are_those_on_the_owning_layer_that_do_not_declare_it_a_misuse(graph):
    # four schedulers bind pods, but only sched-b sits on L3, the layer that owns binding
    assert _providers(check_misuse(graph, "exporter", "pod-binding")) == ["sched-b"]
    documents = [
        make_document("on-owner", layer="L4", units=["node"], capabilities=["metering"]),
        make_document("off-owner", layer="L2", units=["whole_gpu"], capabilities=["pod-binding", "metering"]),
        make_document("disowned", layer="L4", units=["node"], capabilities=["metering", "gpu-telemetry"],
                      misuses={"metering": "Expect it to meter tenants"}),
        make_document("asker", layer="L1", units=["whole_gpu"], capabilities=["per-team-quota"]),
    ]
    g = build_graph(documents)
    # the project on the owning layer is named first-hand; the off-layer one and the disowning one are not
    assert _providers(check_misuse(g, "asker", "metering")) == ["on-owner"]
    # with nobody on the owning layer, any project that provides it (still not the disowning one)
    assert _providers(check_misuse(g, "on-owner", "metering")) == ["off-owner"]


def test_known_misuses_checks_every_misuse_each_project_records(graph):
    verdicts = known_misuses(graph)
    recorded = [(slug, cap) for slug, f in sorted(graph.projects.items()) for cap in f.misuses]
    assert sorted((v.project.slug, v.capability) for v in verdicts) == sorted(recorded)
    assert {v.status for v in verdicts} == {MisuseStatus.DECLARED_MISUSE}


def test_an_unknown_project_or_capability_is_bad_input_with_a_hint(graph):
    with pytest.raises(RulesInputError) as exc:
        check_misuse(graph, "sched", "quota")
    assert exc.value.errors == {
        "slug": ["Unknown project 'sched'. Did you mean: meter-sched, sched-a, sched-b, sched-frac?"],
        "capability": ["Unknown capability 'quota'. Did you mean: per-team-quota?"],
    }
    with pytest.raises(RulesInputError) as exc:
        check_misuse(graph, "sched-a", "mind-reading")  # nothing close: every known capability is listed
    [message] = exc.value.errors["capability"]
    assert message.startswith("Unknown capability 'mind-reading'. Known: admission-control, backfill, bin-packing, ")
    assert message.endswith(", workload-definition.")
    with pytest.raises(RulesInputError) as exc:
        check_misuse(graph, "sched-a", "")
    assert exc.value.errors["capability"][0].startswith("Unknown capability ''. Known: admission-control, ")
