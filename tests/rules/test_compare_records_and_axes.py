"""What a compare result carries besides its explanation: the verdict's name and each side's layer
and units as a reviewer reads them in the pair's header, each axis with its name and question, and
axis values that list every entry of a project's own placement (all its enforcement points, all its
observability signals, every project a platform requires, the first two of its own sentences on a
control-plane axis). Hand-built projects (placement/rules/synthetic.py), with the placement fields
the rules quote filled in where the placeholder has only one entry."""

from __future__ import annotations

import pytest

from placement.catalog.schemas import ProjectDocument, ResourceUnit
from placement.rules import Verdict, build_graph, compare
from placement.rules.synthetic import make_document
from tests.rules.compare_helpers import axis_values, pair_of

L1 = "L1 Admission and quota"
L4 = "L4 Node allocation and device handoff"
MIG = ("MIG instance: hard isolation (Hardware partition with dedicated SMs, L2, memory and bandwidth; faults stay in "
       "their instance.)")


def _edit(doc: ProjectDocument, **placement) -> ProjectDocument:
    data = doc.model_dump(mode="json")
    data["placement"].update(placement)
    return ProjectDocument.model_validate(data)


DOCUMENTS = [
    # enforced at two points, observed through two signals
    _edit(make_document("part-x", kind="mechanism", layer="L4", units=["mig_instance"], capabilities=["hardware-partitioning"]),
          enforcement_points=["driver_hardware", "node_agent"], observability=["DCGM metrics.", "Per-instance events."]),
    make_document("part-y", kind="mechanism", layer="L4", units=["mig_instance"], capabilities=["hardware-partitioning"]),
    # platforms that ship nothing, and one that only requires two projects
    make_document("bare-platform", kind="platform", layer="L4", plane="platform", units=["whole_gpu"],
                  capabilities=["driver-lifecycle"]),
    make_document("req-platform", kind="platform", layer="L4", plane="platform", units=["whole_gpu"],
                  capabilities=["driver-lifecycle"], requires=["part-y", "part-x"]),
    # a scheduler that ships a scheduler of its own layer
    make_document("sched-suite", layer="L2", units=["whole_gpu"], capabilities=["pod-binding", "gang-scheduling"],
                  bundles=["sched-plug"]),
    make_document("sched-plug", layer="L2", units=["whole_gpu"], capabilities=["pod-binding"]),
    # a quota layer whose promise, non-promise and compatibility all speak about quota or admission
    _edit(make_document("quota-q", layer="L1", units=["whole_gpu"], capabilities=["per-team-quota", "admission-control"]),
          promise="Admits jobs when team quota is free.", non_promise=["No quota borrowing.", "Nothing else."],
          costs={"overhead": "Low.", "reconfiguration": "Live.", "intrusiveness": "Low.", "compatibility": "Admission webhook."}),
    make_document("quota-r", layer="L1", units=["whole_gpu"], capabilities=["per-team-quota"]),
]


@pytest.fixture(scope="module")
def graph():
    return build_graph(DOCUMENTS)


def test_a_pair_names_its_verdict_and_each_sides_layer_and_units(graph):
    pair = pair_of(graph, "bare-platform", "part-y")
    assert (pair.verdict, pair.verdict_name) == (Verdict.PLATFORM_VS_MECHANISM, "Platform versus mechanism")
    assert (pair.a.slug, pair.b.slug) == ("bare-platform", "part-y")
    # a platform is placed on the platform plane, the other on its control-plane layer
    assert (pair.layer_a.map, pair.layer_a.code, pair.layer_a.name) == ("planes", "platform", "Platform layer")
    assert (pair.layer_b.map, pair.layer_b.code, pair.layer_b.name) == ("control-plane", "L4", "Node allocation and device handoff")
    assert (pair.primary_unit_a, pair.primary_unit_b) == (ResourceUnit.WHOLE_GPU, ResourceUnit.MIG_INSTANCE)
    assert (pair.units_a, pair.units_b, pair.shared_units) == ([ResourceUnit.WHOLE_GPU], [ResourceUnit.MIG_INSTANCE], [])

    rivals = pair_of(graph, "quota-q", "quota-r")
    assert (rivals.verdict, rivals.verdict_name) == (Verdict.COMPARABLE, "Comparable (like with like)")
    assert rivals.layer_a == rivals.layer_b and rivals.layer_a.code == "L1"
    assert rivals.shared_units == [ResourceUnit.WHOLE_GPU]


def test_each_axis_carries_its_name_and_the_question_it_asks(graph):
    pair = pair_of(graph, "part-x", "part-y")
    assert [(x.axis, x.name) for x in pair.axes] == [
        ("isolation", "Isolation strength"), ("overhead", "Performance overhead"),
        ("observability", "Observability and metering"), ("reconfiguration_cost", "Reconfiguration cost"),
    ]
    assert pair.axes[0].question == "What stops one tenant's memory use, compute use or fault from reaching another?"
    assert [v.slug for v in pair.axes[0].values] == ["part-x", "part-y"]


def test_isolation_names_every_enforcement_point_and_observability_every_signal(graph):
    pair = pair_of(graph, "part-x", "part-y")
    assert axis_values(pair, "isolation") == {
        "part-x": f"{MIG} Enforced at: Driver / hardware, Node agent (kubelet, device plugin, DRA driver).",
        "part-y": f"{MIG} Enforced at: Node agent (kubelet, device plugin, DRA driver).",
    }
    assert axis_values(pair, "observability") == {"part-x": "DCGM metrics.; Per-instance events.", "part-y": "Metrics."}


def test_a_platform_that_ships_nothing_is_decomposed_into_what_it_depends_on_only(graph):
    pair = pair_of(graph, "bare-platform", "part-y")
    assert pair.explanation == (
        f"Bare Platform is a platform that packages lower layers; Part Y sits on {L4}. Do not weigh the platform's "
        "experience against a mechanism's boundary: decompose Bare Platform into what it depends on and ask which of "
        "those provides what Part Y does."
    )
    assert axis_values(pair, "decomposition")["bare-platform"] == "Platform: depends on: Something above.; Something below.."


def test_a_platform_is_decomposed_into_the_projects_it_requires(graph):
    pair = pair_of(graph, "quota-q", "req-platform")
    assert pair.verdict == Verdict.PLATFORM_VS_MECHANISM
    assert pair.explanation == (
        f"Req Platform is a platform that packages lower layers; Quota Q sits on {L1}. Do not weigh the platform's "
        "experience against a mechanism's boundary: decompose Req Platform into what it depends on (part-x, part-y) and "
        "ask which of those provides what Quota Q does."
    )
    assert axis_values(pair, "decomposition") == {
        "req-platform": "Platform: requires part-x, part-y; depends on: Something above.; Something below..",
        "quota-q": f"{L1} (control plane), units Whole GPU; promise: Admits jobs when team quota is free.",
    }


def test_a_control_plane_project_shipping_another_is_weighed_on_the_bundle_not_on_control_plane_axes(graph):
    for a, b in (("sched-suite", "sched-plug"), ("sched-plug", "sched-suite")):
        pair = pair_of(graph, a, b)
        assert pair.verdict == Verdict.OVERLAPPING
        assert [x.axis for x in pair.axes] == ["bundled_scope"]
        assert axis_values(pair, "bundled_scope") == {
            "sched-suite": "Ships sched-plug. Costs: Low.",
            "sched-plug": "Shipped inside Sched Suite; alone it promises: sched-plug does its job.",
        }


def test_a_control_plane_axis_lists_what_each_provides_and_quotes_at_most_two_of_its_own_sentences(graph):
    pair = pair_of(graph, "quota-q", "quota-r")
    # promise, non-promise and compatibility all mention quota or admission: the first two are quoted
    assert axis_values(pair, "quota_model") == {
        "quota-q": "Provides Per-team quota, Admission control. Admits jobs when team quota is free. No quota borrowing.",
        "quota-r": "Provides Per-team quota. quota-r does its job.",
    }
    # a sentence is quoted when it names any one of the axis's keywords ("borrow" for fair sharing)
    assert axis_values(pair, "fairness") == {
        "quota-q": "Does not provide fair sharing across tenants. No quota borrowing.",
        "quota-r": "Does not provide fair sharing across tenants.",
    }


def test_an_axis_a_review_board_adds_is_asked_with_no_value_the_catalog_cannot_give():
    # comparison.yaml may gain an axis the engine reads nothing for: it is listed, with empty values, not invented
    from placement.rules import builtin_rules

    data = builtin_rules().model_dump(mode="json")
    data["axes"].append({"axis": "support_contract", "name": "Support contract", "question": "Who answers at 3 a.m.?"})
    for rule in data["verdicts"]:
        if rule["verdict"] == "comparable":
            rule["axes"].append("support_contract")
    graph = build_graph(DOCUMENTS, rules=type(builtin_rules()).model_validate(data))
    pair = pair_of(graph, "part-x", "part-y")
    [axis] = [x for x in pair.axes if x.axis == "support_contract"]
    assert (axis.name, axis.question) == ("Support contract", "Who answers at 3 a.m.?")
    assert {v.slug: v.value for v in axis.values} == {"part-x": "", "part-y": ""}


def test_the_summary_separates_each_head_to_head_group(graph):
    result = compare(graph, ["part-x", "part-y", "quota-q", "quota-r"])
    assert result.comparable_groups == [["part-x", "part-y"], ["quota-q", "quota-r"]]
    assert result.summary.endswith(" Head-to-head comparison is valid within: part-x, part-y | quota-q, quota-r.")


def test_a_missing_slug_in_a_list_is_bad_input_not_a_crash(graph):
    from placement.rules import RulesInputError

    with pytest.raises(RulesInputError) as exc:
        compare(graph, ["part-x", None])
    assert exc.value.errors == {"slugs": ["Unknown project None."]}


def test_a_scheduler_and_a_node_agent_each_on_the_others_layer_are_weighed_on_the_node_axes():
    # same layer both ways (L2 + L4 and L4 + L2), but only one of them is decided on the control plane
    graph = build_graph([
        make_document("sched-node", layer="L2", secondary=["L4"], units=["whole_gpu"], capabilities=["device-health"]),
        make_document("node-sched", layer="L4", secondary=["L2"], units=["whole_gpu"], capabilities=["device-health"]),
    ])
    pair = pair_of(graph, "sched-node", "node-sched")
    assert pair.verdict == Verdict.COMPARABLE
    assert pair.explanation == (
        "Both sit on L2 Scheduling policy and hand out Whole GPU: a like-for-like comparison. Compare isolation, "
        "overhead, observability and reconfiguration cost for that unit."
    )
    assert [x.axis for x in pair.axes] == ["isolation", "overhead", "observability", "reconfiguration_cost"]
