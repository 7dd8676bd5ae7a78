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

IN_CQ, RECLAIM = "InClusterQueue", "InCohortReclamation"

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
]


@pytest.mark.parametrize("name,cqs,admitted,incoming,want", CASES, ids=[c[0] for c in CASES])
def test_kueue_preemption_matches_upstream(name, cqs, admitted, incoming, want):
    assert run_case(cqs, admitted, incoming) == want, f"{SRC} / {name}"
