"""Which contract joins a cross-layer pair and in which order they are told: two projects on one
layer doing different jobs are named in the order asked (neither is upstream of the other), and a
point both take part in does not hide the hand-offs from or to the other points they use.
Hand-built projects."""

from __future__ import annotations

import pytest

from placement.catalog.schemas import ContractPoint
from placement.rules import Verdict, build_graph
from placement.rules.synthetic import make_document
from tests.rules.compare_helpers import pair_of

L2 = "L2 Scheduling policy"
L4 = "L4 Node allocation and device handoff"
W = ["whole_gpu"]
DOCUMENTS = [
    make_document("sched-x", layer="L2", units=W, roles={"bind": W}, capabilities=["gang-scheduling"]),
    make_document("sched-y", layer="L2", units=W, roles={"bind": W}, capabilities=["bin-packing"]),
    # a device plugin with a scheduler extender: it advertises, binds and allocates
    make_document("share-plugin", layer="L4", units=W, roles={"advertise": W, "bind": W, "allocate": W},
                  capabilities=["device-allocation"]),
]


@pytest.fixture(scope="module")
def graph():
    return build_graph(DOCUMENTS)


def test_two_projects_on_one_layer_joined_by_a_point_are_told_in_the_order_asked(graph):
    for first, second in (("sched-x", "sched-y"), ("sched-y", "sched-x")):
        pair = pair_of(graph, first, second)
        assert pair.verdict == Verdict.CROSS_LAYER
        a, b = (graph.projects[s].ref.name for s in (first, second))
        summary = (f"Both take part in Bind for Whole GPU: compare whether {a} and {b} agree on how that unit is bound "
                   "there, not the projects as a whole.")
        assert pair.explanation.endswith(f"they complement each other, not rivals. Compare only the contract that joins "
                                         f"them (Bind). {summary}")
        [join] = pair.contracts
        assert [r.slug for r in join.roles] == [first, second]
        assert [(s.source, s.target) for s in pair.path] == [(f"project:{first}", "unit:whole_gpu"),
                                                              ("unit:whole_gpu", f"project:{second}")]


def test_a_shared_point_does_not_hide_the_handoffs_to_and_from_the_other_points(graph):
    pair = pair_of(graph, "sched-x", "share-plugin")
    assert pair.explanation == (
        f"Sched X sits on {L2} and Share Plugin on {L4}: they are upstream and downstream, not rivals. Compare only the "
        "contract that joins them (Advertise, Bind, Allocate). Both take part in Bind for Whole GPU: compare whether "
        "Sched X and Share Plugin agree on how that unit is bound there, not the projects as a whole. Share Plugin takes "
        "part in Advertise and Sched X in Bind for Whole GPU: the contract holds if what Share Plugin does at Advertise "
        "is what Sched X expects at Bind for that unit. Sched X takes part in Bind and Share Plugin in Allocate for Whole "
        "GPU: the contract holds if what Sched X does at Bind is what Share Plugin expects at Allocate for that unit."
    )
    assert [(j.kind, j.points) for j in pair.contracts] == [
        ("shared_point", [ContractPoint.BIND]),
        ("handoff", [ContractPoint.ADVERTISE, ContractPoint.BIND]),
        ("handoff", [ContractPoint.BIND, ContractPoint.ALLOCATE]),
    ]


def test_two_platforms_doing_different_jobs_are_told_in_the_order_asked_whatever_their_layers():
    # a platform is governance-first against any layer, so between two platforms neither goes first
    graph = build_graph([
        make_document("node-suite", kind="platform", layer="L4", plane="platform", units=W,
                      capabilities=["driver-lifecycle"], bundles=["shared-plugin"]),
        make_document("queue-suite", kind="platform", layer="L1", plane="platform", units=W,
                      capabilities=["self-service"], bundles=["shared-plugin"]),
        make_document("shared-plugin", layer="L4", units=W, roles={"advertise": W, "allocate": W},
                      capabilities=["device-allocation"]),
    ])
    for first, second in (("node-suite", "queue-suite"), ("queue-suite", "node-suite")):
        pair = pair_of(graph, first, second)
        assert pair.verdict == Verdict.CROSS_LAYER
        assert pair.explanation.endswith(
            f"In the catalog graph they meet via: project:{first} -bundles-> project:shared-plugin; "
            f"project:shared-plugin <-bundles- project:{second}."
        )
