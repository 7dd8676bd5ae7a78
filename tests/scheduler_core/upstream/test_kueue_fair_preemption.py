"""Kueue's fair-sharing preemption table, ported: kubernetes-sigs/kueue
pkg/scheduler/preemption/preemption_fair_test.go, TestFairPreemptions (read at ff69552).  Each case cites
its upstream name.  ``BASE`` is upstream's baseCQs: a, b and c with 3 CPUs nominal each in cohort "all"
(withinClusterQueue LowerPriority, reclaimWithinCohort Any, borrowWithinCohort LowerPriority at most -3)
and "preemptible" with 0; requests are CPUs stated as GPUs x2 (see kueue_harness.run_fair_case).
Cases that need Cohort objects (hierarchical cohorts) are in test_kueue_hierarchical_cohorts.py."""

import pytest

from tests.scheduler_core.upstream.kueue_harness import cq, run_fair_case

SRC = "kueue pkg/scheduler/preemption/preemption_fair_test.go TestFairPreemptions"

_PRE = {"within": "LowerPriority", "reclaim": "Any", "borrow": "LowerPriority", "threshold": -3}
BASE = [cq("a", 3, "all", **_PRE), cq("b", 3, "all", **_PRE), cq("c", 3, "all", **_PRE),
        cq("preemptible", 0, "all")]
NO_BWC = [cq(n, 3, "all", within="LowerPriority", reclaim="Any") for n in "abc"]
IN_CQ, RECLAIM, FAIR = "InClusterQueue", "InCohortReclamation", "InCohortFairSharing"


def units(prefix, queue, n, prio=0, start=1):
    return [(f"{prefix}{i}", queue, prio, 1) for i in range(start, start + n)]


# (upstream case, cluster queues, weights, strategies, admitted [(name, cq, priority, cpus)], incoming
#  (cq, priority, cpus), want {(victim, reason)})
CASES = [
    ("reclaim nominal from user using the most", BASE, None, None,
     units("a", "a", 3) + units("b", "b", 5) + units("c", "c", 1), ("c", 0, 1), {("b1", RECLAIM)}),
    ("can reclaim from queue using less, if taking the latest workload from user using the most isn't enough",
     BASE, None, None, [("a1", "a", 0, 3), ("a2", "a", 0, 1), ("b1", "b", 0, 2), ("b2", "b", 0, 3)],
     ("c", 0, 3), {("a1", RECLAIM)}),
    ("reclaim borrowable quota from user using the most", BASE, None, None,
     units("a", "a", 3) + units("b", "b", 5) + units("c", "c", 1), ("a", 0, 1), {("b1", FAIR)}),
    ("preempt one from each CQ borrowing", BASE, None, None,
     [("a1", "a", 0, .5), ("a2", "a", 0, .5), ("a3", "a", 0, 3), ("b1", "b", 0, .5), ("b2", "b", 0, .5),
      ("b3", "b", 0, 3)], ("c", 0, 2), {("a1", RECLAIM), ("b1", RECLAIM)}),
    ("can't preempt when everyone under nominal", BASE, None, None,
     units("a", "a", 3) + units("b", "b", 3) + units("c", "c", 3), ("c", 0, 1), set()),
    ("can't preempt when it would switch the imbalance", BASE, None, None,
     units("a", "a", 3) + units("b", "b", 5), ("a", 0, 2), set()),
    ("can preempt lower priority workloads from same CQ", BASE, None, None,
     [("a1_low", "a", -1, 1), ("a2_low", "a", -1, 1), ("a3", "a", 0, 1), ("a4", "a", 0, 1)] + units("b", "b", 5),
     ("a", 0, 2), {("a1_low", IN_CQ), ("a2_low", IN_CQ)}),
    ("can preempt a combination of same CQ and highest user", BASE, None, None,
     [("a_low", "a", -1, 1), ("a2", "a", 0, 1), ("a3", "a", 0, 1)] + units("b", "b", 6),
     ("a", 0, 2), {("a_low", IN_CQ), ("b1", FAIR)}),
    ("preempt huge workload if there is no other option, as long as the target CQ gets a lower share", BASE, None,
     None, [("b1", "b", 0, 9)], ("a", 0, 2), {("b1", RECLAIM)}),
    ("can't preempt huge workload if the incoming is also huge", BASE, None, None,
     [("a1", "a", 0, 2), ("b1", "b", 0, 7)], ("a", 0, 5), set()),
    ("can't preempt 2 smaller workloads if the incoming is huge", BASE, None, None,
     [("b1", "b", 0, 2), ("b2", "b", 0, 2), ("b3", "b", 0, 3)], ("a", 0, 6), set()),
    ("preempt from target and others even if over nominal", BASE, None, None,
     [("a1_low", "a", -1, 2), ("a2_low", "a", -1, 1), ("b1", "b", 0, 3), ("b2", "b", 0, 3)],
     ("a", 0, 4), {("a1_low", IN_CQ), ("b1", FAIR)}),
    ("prefer to preempt workloads that don't make the target CQ have the biggest share", BASE, None, None,
     [("b1", "b", 0, 2), ("b2", "b", 0, 1), ("b3", "b", 0, 2), ("c1", "c", 0, 1)], ("a", 0, 3.5), {("b2", FAIR)}),
    ("preempt from different cluster queues if the end result has a smaller max share", BASE, None, None,
     [("b1", "b", 0, 2), ("b2", "b", 0, 2.5), ("c1", "c", 0, 2), ("c2", "c", 0, 2.5)], ("a", 0, 3.5),
     {("b1", FAIR), ("c1", FAIR)}),
    ("scenario above does not flap", BASE, None, None,
     [("a1", "a", 0, 3.5), ("b2", "b", 0, 2.5), ("c2", "c", 0, 2.5)], ("b", 0, 2), set()),
    ("cannot preempt if it would make the candidate CQ go under nominal after preempting one element", BASE, None,
     None, [("b1", "b", 0, 3), ("b2", "b", 0, 3), ("c1", "c", 0, 3)], ("a", 0, 4), set()),
    ("workloads under priority threshold not capriciously preempted", BASE, None, None,
     units("a", "a", 3) + units("b", "b", 3) + units("preemptible", "preemptible", 3, prio=-3), ("a", 0, 2), set()),
    ("preempt lower priority first, even if big", BASE, None, ["LessThanInitialShare"],
     [("a1", "a", 0, 3), ("b_low", "b", 0, 5), ("b_high", "b", 1, 1)], ("a", 0, 1), {("b_low", FAIR)}),
    ("preempt workload that doesn't transfer the imbalance, even if high priority", BASE, None,
     ["LessThanOrEqualToFinalShare"], [("a1", "a", 0, 3), ("b_low", "b", 0, 5), ("b_high", "b", 1, 1)],
     ("a", 0, 1), {("b_high", FAIR)}),
    ("CQ with higher weight can preempt more", NO_BWC, {"a": 2}, None,
     units("a", "a", 3) + units("b", "b", 6), ("a", 0, 2), {("b1", FAIR), ("b2", FAIR)}),
    ("can preempt anything borrowing from CQ with 0 weight", NO_BWC, {"b": 0}, None,
     units("a", "a", 3) + units("b", "b", 6), ("a", 0, 3), {("b1", FAIR), ("b2", FAIR), ("b3", FAIR)}),
    ("can't preempt nominal from CQ with 0 weight", NO_BWC[:2], {"b": 0}, None,
     units("a", "a", 3) + units("b", "b", 3), ("a", 0, 1), set()),
    ("can preempt within cluster queue when no cohort", [cq("a", 1, within="LowerPriority")], None, None,
     units("a", "a", 1), ("a", 1000, 1), {("a1", IN_CQ)}),
    ("cq with zero weight can reclaim nominal quota", [cq("a", 1, "ROOT", reclaim="Any"), cq("b", 0, "ROOT")],
     {"a": 0}, None, units("b", "b", 1), ("a", 0, 1), {("b1", RECLAIM)}),
]


@pytest.mark.parametrize("name,cqs,weights,strategies,admitted,incoming,want", CASES, ids=[c[0] for c in CASES])
def test_kueue_fair_preemption_matches_upstream(name, cqs, weights, strategies, admitted, incoming, want):
    assert run_fair_case(cqs, admitted, incoming, weights, strategies) == want, f"{SRC}: {name}"
