"""Kueue's preemption table, ported: kubernetes-sigs/kueue pkg/scheduler/preemption/preemption_test.go,
TestPreemption.  Each case cites its upstream name; the ClusterQueues are upstream's defaultClusterQueues
(CPU quotas stated as GPUs, see kueue_harness)."""

import pytest

from tests.scheduler_core.upstream.kueue_harness import cq, run_case

SRC = "kueue pkg/scheduler/preemption/preemption_test.go TestPreemption"

STANDALONE = [cq("standalone", 6, within="LowerPriority")]
C = [cq("c1", 6, "cohort", borrowing_limit=6, within="LowerPriority", reclaim="LowerPriority"),
     cq("c2", 6, "cohort", borrowing_limit=6, within="Never", reclaim="Any")]
D = [cq("d1", 6, "cohort-no-limits", within="LowerPriority", reclaim="LowerPriority"),
     cq("d2", 6, "cohort-no-limits", within="Never", reclaim="Any")]
L = [cq("l1", 6, "legion", borrowing_limit=12, within="LowerPriority", reclaim="LowerPriority")]
STARVE = [cq("preventStarvation", 6, within="LowerOrNewerEqualPriority")]
_BWC = {"borrow": "LowerPriority", "threshold": 0}
SHARED = [cq("a_standard", 1, "with_shared_cq", borrowing_limit=12, reclaim="LowerPriority", **_BWC),
          cq("b_standard", 1, "with_shared_cq", borrowing_limit=12, within="LowerPriority", reclaim="Any", **_BWC),
          cq("a_best_effort", 1, "with_shared_cq", borrowing_limit=12, reclaim="LowerPriority", **_BWC),
          cq("b_best_effort", 0, "with_shared_cq", borrowing_limit=13, reclaim="LowerPriority", **_BWC),
          cq("shared", 10, "with_shared_cq")]
THREE = [cq("a", 2, "cohort-three", within="LowerPriority", reclaim="Any"), cq("b", 2, "cohort-three"),
         cq("c", 2, "cohort-three")]
LEND = [cq("lend1", 6, "cohort-lend", lending_limit=4, within="LowerPriority", reclaim="LowerPriority"),
        cq("lend2", 6, "cohort-lend", lending_limit=2, within="LowerPriority", reclaim="LowerPriority")]

IN_CQ, RECLAIM, WHILE_BORROWING = "InClusterQueue", "InCohortReclamation", "InCohortReclaimWhileBorrowing"

# (upstream case, cluster queues, admitted [(name, cq, priority, request)], incoming (cq, priority, request), want)
CASES = [
    ("preempt lowest priority", STANDALONE,
     [("low", "standalone", -1, 2), ("mid", "standalone", 0, 2), ("high", "standalone", 1, 2)],
     ("standalone", 1, 2), {("low", IN_CQ)}),
    ("preempt multiple", STANDALONE,
     [("low", "standalone", -1, 2), ("mid", "standalone", 0, 2), ("high", "standalone", 1, 2)],
     ("standalone", 1, 3), {("low", IN_CQ), ("mid", IN_CQ)}),
    ("no preemption for low priority", STANDALONE,
     [("low", "standalone", -1, 3), ("mid", "standalone", 0, 3)], ("standalone", -1, 1), set()),
    ("not enough low priority workloads", STANDALONE,
     [("low", "standalone", -1, 3), ("mid", "standalone", 0, 3)], ("standalone", 0, 4), set()),
    ("some free quota, preempt low priority", STANDALONE,
     [("low", "standalone", -1, 1), ("mid", "standalone", 0, 1), ("high", "standalone", 1, 3)],
     ("standalone", 1, 2), {("low", IN_CQ)}),
    ("minimal set excludes low priority", STANDALONE,
     [("low", "standalone", -1, 1), ("mid", "standalone", 0, 2), ("high", "standalone", 1, 3)],
     ("standalone", 1, 2), {("mid", IN_CQ)}),
    ("reclaim quota from borrower", C,
     [("c1-low", "c1", -1, 3), ("c2-mid", "c2", 0, 3), ("c2-high", "c2", 1, 6)], ("c1", 1, 3),
     {("c2-mid", RECLAIM)}),
    ("no workloads borrowing", C, [("c1-high", "c1", 1, 4), ("c2-low-1", "c2", -1, 4)], ("c1", 1, 4), set()),
    ("not enough workloads borrowing", C,
     [("c1-high", "c1", 1, 4), ("c2-low-1", "c2", -1, 4), ("c2-low-2", "c2", -1, 4)], ("c1", 1, 4), set()),
    ("preempting locally and borrowing same resource in cohort", C,
     [("c1-med", "c1", 0, 4), ("c1-low", "c1", -1, 4), ("c2-low-1", "c2", -1, 4)], ("c1", 1, 4),
     {("c1-low", IN_CQ)}),
    ("preempting locally and borrowing same resource in cohort; no borrowing limit in the cohort", D,
     [("d1-med", "d1", 0, 4), ("d1-low", "d1", -1, 4), ("d2-low-1", "d2", -1, 4)], ("d1", 1, 4),
     {("d1-low", IN_CQ)}),
    ("preempting locally and not borrowing same resource in 1-queue cohort", L,
     [("l1-med", "l1", 0, 4), ("l1-low", "l1", -1, 2)], ("l1", 1, 4), {("l1-med", IN_CQ)}),
    ("do not reclaim borrowed quota from same priority for withinCohort=ReclaimFromLowerPriority", C,
     [("c1", "c1", 0, 2), ("c2-1", "c2", 0, 4), ("c2-2", "c2", 0, 4)], ("c1", 0, 4), set()),
    ("reclaim borrowed quota from same priority for withinCohort=ReclaimFromAny", C,
     [("c1-1", "c1", 0, 4), ("c1-2", "c1", 1, 4), ("c2", "c2", 0, 2)], ("c2", 0, 4), {("c1-1", RECLAIM)}),
    ("preempt from all ClusterQueues in cohort", C,
     [("c1-low", "c1", -1, 3), ("c1-mid", "c1", 0, 2), ("c2-low", "c2", -1, 3), ("c2-mid", "c2", 0, 4)],
     ("c1", 0, 4), {("c1-low", IN_CQ), ("c2-low", RECLAIM)}),
    ("can't preempt workloads in ClusterQueue for withinClusterQueue=Never", C,
     [("c2-low", "c2", -1, 3)], ("c2", 1, 4), set()),
    ("use BorrowWithinCohort; allow preempting a lower-priority workload from another ClusterQueue while "
     "borrowing", SHARED, [("a_best_effort_low", "a_best_effort", -1, 10), ("b_best_effort_low", "b_best_effort", -1, 1)],
     ("a_standard", 0, 10), {("a_best_effort_low", WHILE_BORROWING)}),
    ("use BorrowWithinCohort; don't allow preempting a lower-priority workload with priority above "
     "MaxPriorityThreshold, if borrowing is required even after the preemption", SHARED,
     [("b_standard", "b_standard", 1, 10)], ("a_standard", 2, 10), set()),
    ("use BorrowWithinCohort; allow preempting a lower-priority workload with priority above "
     "MaxPriorityThreshold, if borrowing is not required after the preemption", SHARED,
     [("b_standard", "b_standard", 1, 13)], ("a_standard", 2, 1), {("b_standard", RECLAIM)}),
    ("use BorrowWithinCohort; don't allow for preemption of lower-priority workload from the same ClusterQueue",
     SHARED, [("a_standard", "a_standard", 1, 13)], ("a_standard", 2, 1), set()),
    ("use BorrowWithinCohort; only preempt from CQ if no workloads below threshold and already above nominal",
     SHARED, [("a_standard_1", "a_standard", 1, 10), ("a_standard_2", "a_standard", 1, 1),
              ("b_standard_1", "b_standard", 1, 1), ("b_standard_2", "b_standard", 2, 1)],
     ("b_standard", 3, 1), {("b_standard_1", IN_CQ)}),
    ("use BorrowWithinCohort; preempt from CQ and from other CQs with workloads below threshold", SHARED,
     [("b_standard_high", "b_standard", 2, 10), ("b_standard_mid", "b_standard", 1, 1),
      ("a_best_effort_low", "a_best_effort", -1, 1), ("a_best_effort_lower", "a_best_effort", -2, 1)],
     ("b_standard", 2, 2), {("b_standard_mid", IN_CQ), ("a_best_effort_lower", WHILE_BORROWING)}),
    ("reclaim quota from lender", LEND,
     [("lend1-low", "lend1", -1, 3), ("lend2-mid", "lend2", 0, 3), ("lend2-high", "lend2", 1, 4)],
     ("lend1", 1, 3), {("lend2-mid", RECLAIM)}),
    ("preempt from all ClusterQueues in cohort-lend", LEND,
     [("lend1-low", "lend1", -1, 3), ("lend1-mid", "lend1", 0, 2), ("lend2-low", "lend2", -1, 3),
      ("lend2-mid", "lend2", 0, 4)], ("lend1", 0, 4), {("lend1-low", IN_CQ), ("lend2-low", RECLAIM)}),
    ("cannot preempt from other ClusterQueues if exceeds requestable quota including lending limit", LEND,
     [("lend2-low", "lend2", -1, 10)], ("lend1", 0, 9), set()),
    ("preemptions from cq when target queue is exhausted for the single requested resource", THREE,
     [("a1", "a", -2, 1), ("a2", "a", -2, 1), ("a3", "a", -1, 1), ("b1", "b", 0, 1), ("b2", "b", 0, 1),
      ("b3", "b", 0, 1)], ("a", 0, 2), {("a1", IN_CQ), ("a2", IN_CQ)}),
    ("allow preemption from other cluster queues if target cq is not exhausted for the requested resource", THREE,
     [("a1", "a", -1, 1), ("b1", "b", 0, 1), ("b2", "b", 0, 1), ("b3", "b", 0, 1), ("b4", "b", 0, 1),
      ("b5", "b", -1, 1)], ("a", 0, 2), {("a1", IN_CQ), ("b5", RECLAIM)}),
]


@pytest.mark.parametrize("name,cqs,admitted,incoming,want", CASES, ids=[c[0] for c in CASES])
def test_kueue_preemption_matches_upstream(name, cqs, admitted, incoming, want):
    assert run_case(cqs, admitted, incoming) == want, f"{SRC} / {name}"


def test_kueue_preempt_newer_workloads_with_the_same_priority():
    # Upstream: wl2 reserved quota a second after wl3; the incoming workload was created 15 s before both.
    name = "preempt newer workloads with the same priority"
    admitted = [("wl1", "preventStarvation", 2, 2), ("wl3", "preventStarvation", 1, 2),
                ("wl2", "preventStarvation", 1, 2)]
    got = run_case(STARVE, admitted, ("preventStarvation", 1, 2), incoming_created_early=75.0)
    assert got == {("wl2", IN_CQ)}, f"{SRC} / {name}"


def test_reclaim_within_cohort_never_leaves_a_lower_priority_borrower_running():
    # Not an upstream table case: the ClusterQueue API's documented default, reclaimWithinCohort: Never ("do
    # not preempt Workloads in the cohort").  n2 borrows n1's whole nominal quota with a lower-priority
    # workload; n1's incoming workload waits instead of reclaiming it (with Any it reclaims, as the
    # "reclaim quota from borrower" case above does).
    never = [cq("n1", 6, "cohort-n", within="LowerPriority", reclaim="Never"), cq("n2", 6, "cohort-n")]
    assert run_case(never, [("n2-low", "n2", -1, 12)], ("n1", 1, 6)) == set()
    anyq = [cq("n1", 6, "cohort-n", within="LowerPriority", reclaim="Any"), cq("n2", 6, "cohort-n")]
    assert run_case(anyq, [("n2-low", "n2", -1, 12)], ("n1", 1, 6)) == {("n2-low", RECLAIM)}
