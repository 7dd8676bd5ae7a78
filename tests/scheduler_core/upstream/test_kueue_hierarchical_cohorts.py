"""Kueue's hierarchical cohorts (Cohort objects with their own quota, parent and fair-sharing weight), ported
from kubernetes-sigs/kueue's tables (read at ff69552, v0.19 line): pkg/scheduler/preemption/
preemption_fair_test.go TestFairPreemptions, preemption_test.go TestPreemption and
preemption_hierarchical_test.go TestHierarchicalPreemptions.  Each case cites its upstream name; requests
are CPUs stated as GPUs (fair cases x2, see kueue_harness.run_fair_case).  A Cohort named by a
ClusterQueue or as a parent but not stated exists with no quota, as in Kueue."""

import pytest

from scheduler_core import simulate

from tests.scheduler_core.upstream.kueue_harness import BIG_POOL, cohort, cq, run_case, run_fair_case

FAIR_SRC = "kueue pkg/scheduler/preemption/preemption_fair_test.go TestFairPreemptions"
IN_CQ, RECLAIM, FAIR, WHILE = "InClusterQueue", "InCohortReclamation", "InCohortFairSharing", \
    "InCohortReclaimWhileBorrowing"


def units(prefix, queue, n, prio=0, start=1, step_prio=False):
    return [(f"{prefix}{i}", queue, i if step_prio else prio, 1) for i in range(start, start + n)]


def weighted(c, w):
    return dict(c, fair_sharing_weight=w)


_FIVE = ([units(x, x, 5, step_prio=True) for x in "bcde"])
# (upstream case, cluster queues, cohorts, admitted [(name, cq, priority, cpus)], incoming (cq, priority, cpus),
#  want {(victim, reason)})
FAIR_CASES = [
    ("can't preempt nominal from Cohort with 0 weight",
     [cq("left-cq", 0, "root", reclaim="Any"), weighted(cq("right-cq", 0, "right-cohort", reclaim="Any"), 0)],
     [cohort("right-cohort", "root", 1, weight=0)],
     [("right-1", "right-cq", 0, 1)], ("left-cq", 0, 1), set()),
    # ROOT(5) holds LEFT(5: a, b), c, RIGHT(5: d, e), each CQ 1; every CQ but a uses 5.
    ("hierarchical preemption",
     [weighted(cq("a", 1, "LEFT", reclaim="Any"), 2), cq("b", 1, "LEFT"), cq("c", 1, "ROOT"), cq("d", 1, "RIGHT"),
      weighted(cq("e", 1, "RIGHT"), 0.99)],
     [cohort("ROOT", None, 5), cohort("LEFT", "ROOT", 5, weight=2), cohort("RIGHT", "ROOT", 5)],
     sum(_FIVE, []), ("a", 0, 5), {("b1", FAIR), ("b2", FAIR), ("c1", FAIR), ("c2", FAIR), ("e1", FAIR)}),
    # b borrows from RIGHT, but RIGHT stays within its own quota: a preempts its own workloads.  (Upstream's b
    # states no quota at all; a nominal 0 is the same tree.)
    ("borrowing cq in non-borrowing cohort is protected",
     [weighted(cq("a", 5, "ROOT", within="LowerPriority", reclaim="Any"), 10), weighted(cq("b", 0, "RIGHT"), 0.1)],
     [cohort("ROOT"), cohort("RIGHT", "ROOT", 1, weight=0.1)],
     units("a", "a", 3, prio=-1) + [("b1", "b", -1, 1)], ("a", 0, 5),
     {("a1", IN_CQ), ("a2", IN_CQ), ("a3", IN_CQ)}),
    ("forced to preempt within clusterqueue because borrowing workload too important",
     [weighted(cq("a", 5, "ROOT", within="LowerPriority", reclaim="LowerPriority"), 10),
      weighted(cq("b", 0, "RIGHT"), 0.1)],
     [cohort("ROOT"), cohort("RIGHT", "ROOT", 3, weight=0.1)],
     units("a", "a", 3, prio=-1) + [("b1", "b", 100, 4)], ("a", 0, 4),
     {("a1", IN_CQ), ("a2", IN_CQ), ("a3", IN_CQ)}),
    # ROOT has A/AA/AAA (a), B/BB/BBB (b) and C/CC/CCC/CCCC, where only CCCC has quota (1).
    ("deep preemption",
     [cq("a", 0, "AAA", reclaim="Any"), cq("b", 0, "BBB")],
     [cohort("ROOT"), cohort("A", "ROOT", weight=1.01), cohort("AA", "A"), cohort("AAA", "AA"),
      cohort("B", "ROOT", weight=0.99), cohort("BB", "B"), cohort("BBB", "BB"), cohort("C", "ROOT"),
      cohort("CC", "C"), cohort("CCC", "CC"), cohort("CCCC", "CCC", 1)],
     [("b1", "b", 0, 1)], ("a", 0, 1), {("b1", FAIR)}),
    ("cohort with zero weight can reclaim nominal quota",
     [weighted(cq("a", 0, "A", reclaim="Any"), 0), cq("b", 0, "ROOT")],
     [cohort("A", "ROOT", 1, weight=0)],
     [("b1", "b", 0, 1)], ("a", 0, 1), {("b1", FAIR)}),
    ("zero weight borrowing preemptor can preempt from a borrowing CQ which also has zero weight",
     [weighted(cq("a", 1, "all", reclaim="Any"), 0), weighted(cq("b", 0, "all"), 0)],
     [cohort("all", None, 3)],
     units("b", "b", 3), ("a", 0, 2), {("b1", FAIR)}),
    ("non-zero weight borrowing preemptor preempts from a borrowing CQ",
     [cq("a", 1, "all", reclaim="Any"), cq("b", 0, "all")],
     [cohort("all", None, 3)],
     units("b", "b", 3), ("a", 0, 2), {("b1", FAIR)}),
]


@pytest.mark.parametrize("name,cqs,cohorts,admitted,incoming,want", FAIR_CASES, ids=[c[0] for c in FAIR_CASES])
def test_kueue_hierarchical_fair_preemption_matches_upstream(name, cqs, cohorts, admitted, incoming, want):
    assert run_fair_case(cqs, admitted, incoming, cohorts=cohorts) == want, f"{FAIR_SRC}: {name}"


def test_long_range_preemption_reclaims_across_cohorts_with_kueue_message():
    # kueue preemption_test.go TestPreemption "long range preemption": cq-left (10) in cohort-left and
    # cq-right (0) in cohort-right, both under an implicit root; cq-right borrows 5 through root.
    cqs = [cq("cq-left", 10, "cohort-left", reclaim="Any"), cq("cq-right", 0, "cohort-right")]
    cohorts = [cohort("cohort-left", "root"), cohort("cohort-right", "root")]
    got = run_case(cqs, [("to-be-preempted", "cq-right", 0, 5)], ("cq-left", 0, 8), cohorts=cohorts, messages=True)
    assert list(got) == ["to-be-preempted"]
    assert got["to-be-preempted"] == (
        "KueueInCohortReclamation: Preempted to accommodate a workload (in) due to reclamation within the cohort; "
        "preemptor path: /root/cohort-left/cq-left; preemptee path: /root/cohort-right/cq-right")


HIER_SRC = "kueue pkg/scheduler/preemption/preemption_hierarchical_test.go TestHierarchicalPreemptions"
_LA = {"within": "LowerPriority", "reclaim": "Any"}
_BWC = {"within": "LowerPriority", "reclaim": "Any", "borrow": "LowerPriority", "threshold": 0}
# Upstream's ClusterQueues without quota for the resource are stated with nominal 0 (the same tree).
R_C2 = [cohort("r"), cohort("c", "r", 2)]
R1_C4 = [cohort("r", None, 1), cohort("c", "r", 4)]
COMPLEX = [cohort("r"), cohort("c11", "r", 4), cohort("c12", "r", 4), cohort("c21", "c11", 4),
           cohort("c22", "c11", 4), cohort("c23", "c11", 4), cohort("c31", "c21", 4), cohort("c32", "c21", 4)]
# (upstream case, cluster queues, cohorts, admitted [(name, cq, priority, cpus)], incoming (cq, priority, cpus),
#  want {(victim, reason)})
HIER_CASES = [
    ("preempt with hierarchical advantage", [cq("q", 0, "c", **_LA), cq("q_borrowing", 0, "r", **_LA)], R_C2,
     [("admitted2", "q_borrowing", 0, 2)], ("q", 0, 2), {("admitted2", RECLAIM)}),
    ("avoid queues within nominal quota",
     [cq("q_nominal", 2, "r", **_LA), cq("q", 0, "c", **_LA), cq("q_borrowing", 0, "r", **_LA)], R_C2,
     [("admitted1", "q_nominal", -10, 2), ("admitted2", "q_borrowing", 0, 2)], ("q", 0, 2),
     {("admitted2", RECLAIM)}),
    ("preempt multiple with hierarchical advantage", [cq("q", 0, "c", **_LA), cq("q_borrowing", 0, "r", **_LA)],
     R_C2, [("admitted1", "q_borrowing", 1, 1), ("admitted2", "q_borrowing", 2, 1)], ("q", 0, 2),
     {("admitted1", RECLAIM), ("admitted2", RECLAIM)}),
    # Upstream's admitted_preemptible requests 1 CPU with an assignment of 2 (c over-admitted); stated as 1.
    ("preempt in cohort and own CQ", [cq("q", 0, "c", **_BWC), cq("q_same_cohort", 0, "c", **_LA)],
     [cohort("r"), cohort("c", "r", 3)],
     [("admitted_not_preemptible", "q_same_cohort", 1, 1), ("admitted_preemptible", "q_same_cohort", 0, 1),
      ("admitted_own_queue", "q", -1, 1)], ("q", 1, 2),
     {("admitted_own_queue", IN_CQ), ("admitted_preemptible", WHILE)}),
    ("prefer to preempt hierarchical candidate", [cq("q", 0, "c", **_LA), cq("q_borrowing", 0, "r", **_LA)], R_C2,
     [("admitted_borrowing", "q_borrowing", 1, 1), ("admitted_same_queue", "q", -2, 1)], ("q", 0, 1),
     {("admitted_borrowing", RECLAIM)}),
    ("forced to preempt priority candidate",
     [cq("q", 0, "c", **_BWC), cq("q_nominal", 2, "r", **_LA), cq("q_same_cohort", 0, "c", **_LA)], R_C2,
     [("admitted_nominal", "q_nominal", -10, 2), ("admitted_same_cohort", "q_same_cohort", -1, 2)], ("q", 0, 2),
     {("admitted_same_cohort", WHILE)}),
    ("incoming workload fits in CQ nominal quota",
     [cq("q", 4, "c", **_LA), cq("q_borrowing", 0, "r", **_LA), cq("q_same_cohort", 0, "c", **_LA)], R_C2,
     [("admitted_borrowing", "q_borrowing", 10, 3), ("admitted_same_cohort", "q_same_cohort", 10, 3)], ("q", 0, 4),
     {("admitted_borrowing", RECLAIM), ("admitted_same_cohort", RECLAIM)}),
    ("preempt hierarchical and priority candidates",
     [cq("q", 0, "c", within="LowerPriority", reclaim="LowerPriority", borrow="LowerPriority", threshold=0),
      cq("q_borrowing", 0, "r", **_LA), cq("q_same_cohort", 0, "c", **_LA)], R1_C4,
     [("admitted_borrowing", "q_borrowing", -1, 2), ("admitted_same_cohort_preemptible", "q_same_cohort", -1, 1),
      ("admitted_borrowing_not_preemptible", "q_borrowing", 1, 2)], ("q", 0, 3),
     {("admitted_borrowing", RECLAIM), ("admitted_same_cohort_preemptible", WHILE)}),
    ("preempt hierarchical candidates and inside CQ",
     [cq("q", 0, "c", within="LowerPriority", reclaim="LowerPriority", borrow="LowerPriority", threshold=0),
      cq("q_borrowing", 0, "r", **_LA), cq("q_same_cohort", 0, "c", **_LA)], R1_C4,
     [("admitted_borrowing", "q_borrowing", -1, 2), ("admitted_same_queue_preemptible", "q", -1, 1),
      ("admitted_borrowing_not_preemptible", "q_borrowing", 1, 2)], ("q", 0, 3),
     {("admitted_borrowing", RECLAIM), ("admitted_same_queue_preemptible", IN_CQ)}),
    ("reclaim nominal quota from lowest priority workload, excluding non-borrowing",
     [cq("q", 0, "c", **_LA), cq("q_borrowing", 0, "r", **_LA), cq("q_nominal", 2, "r", **_LA)],
     [cohort("r"), cohort("c", "r", 3)],
     [("admitted_borrowing_prio_8", "q_borrowing", 8, 1), ("admitted_borrowing_prio_9", "q_borrowing", 9, 1),
      ("admitted_borrowing_prio_10", "q_borrowing", 9, 1), ("admitted_nominal", "q_nominal", -2, 2)], ("q", 0, 1),
     {("admitted_borrowing_prio_8", RECLAIM)}),
    ("infeasible preemption all available workloads in pruned subtrees",
     [cq("q_other", 0, "c_other", **_LA), cq("q", 0, "c", **_LA), cq("q_same_cohort", 0, "c", **_LA)],
     [cohort("r"), cohort("c", "r", 2), cohort("c_other", "r", 2)],
     [("admitted_other_1", "q_other", -10, 1), ("admitted_other_2", "q_other", -10, 1),
      ("admitted_same_cohort", "q_same_cohort", 0, 2)], ("q", 0, 2), set()),
    ("respect lending limits", [cq("q", 3, "c", lending_limit=2, **_LA), cq("q_borrowing", 0, "r", **_LA)], R_C2,
     [("admitted_borrowing", "q_borrowing", 0, 4)], ("q", -2, 5), {("admitted_borrowing", RECLAIM)}),
    ("reclaim in complex hierarchy",
     [cq("q1", 0, "c12", **_LA), cq("q2", 0, "c23", **_LA), cq("q3", 0, "c22", **_LA), cq("q4", 0, "c32", **_LA),
      cq("q5", 0, "c31", **_LA)], COMPLEX,
     [("admitted_borrowing_1", "q1", -6, 4), ("admitted_borrowing_2", "q1", -5, 4),
      ("admitted_borrowing_3", "q2", -9, 4), ("admitted_borrowing_4", "q2", -10, 4),
      ("admitted_borrowing_5", "q3", -4, 4), ("admitted_borrowing_6", "q3", -3, 3),
      ("admitted_borrowing_7", "q4", 4, 2), ("admitted_borrowing_8", "q4", 2, 3)], ("q5", -2, 7),
     {("admitted_borrowing_1", RECLAIM), ("admitted_borrowing_4", RECLAIM)}),
]


@pytest.mark.parametrize("name,cqs,cohorts,admitted,incoming,want", HIER_CASES, ids=[c[0] for c in HIER_CASES])
def test_kueue_hierarchical_preemption_matches_upstream(name, cqs, cohorts, admitted, incoming, want):
    # A pool with room for every pod, so that only quota decides (the 7-GPU preemptor needs a free node).
    assert run_case(cqs, admitted, incoming, cohorts=cohorts, pool=BIG_POOL) == want, f"{HIER_SRC}: {name}"


def test_hierarchical_eviction_message_names_both_paths():
    # TestHierarchicalPreemptions "preempt with hierarchical advantage": Kueue's message on the victim.
    got = run_case(HIER_CASES[0][1], HIER_CASES[0][3], HIER_CASES[0][4], cohorts=R_C2, messages=True)
    assert got == {"admitted2": "KueueInCohortReclamation: Preempted to accommodate a workload (in) due to "
                                "reclamation within the cohort; preemptor path: /r/c/q; preemptee path: /r/q_borrowing"}


SCHED_SRC = "kueue pkg/scheduler/scheduler_test.go TestSchedule"


def schedule(cqs, cohorts, workloads):
    """workloads: (name, cq, priority, gpus, arrival).  Returns {name: admitted, or Kueue's pending words}."""
    docs = [{"kind": "batch", "name": n, "tenant": q, "priority": p, "gpus_per_worker": g, "duration": "10h",
             "arrival": {"at": at}} for n, q, p, g, at in workloads]
    stack = {"control_plane": {"scheduler": "kube-default", "admission": "kueue",
                               "kueue": {"cluster_queues": cqs, "cohorts": cohorts}}}
    r = simulate({"name": "kueue-schedule", "horizon": "1h", "pool": BIG_POOL, "stack": stack, "workloads": docs})
    return {w.name: "admitted" if w.start is not None else w.pending_reason for w in r.workloads}


def _lender_borrower(lending_limit):
    return ([cq("cq-lender", 10, "child", lending_limit=lending_limit), cq("cq-borrower", 5, "child",
                                                                          borrowing_limit=10)],
            [cohort("root"), cohort("child", "root")])


def test_hierarchical_cohort_respects_lending_limit_when_borrowing():
    # TestSchedule "hierarchical cohort respects lending limit when borrowing": the lender lends 3 of its 10.
    cqs, cohorts = _lender_borrower(3)
    got = schedule(cqs, cohorts, [("wl-existing", "cq-borrower", 0, 5, 0.0), ("wl-pending", "cq-borrower", 0, 4, 10.0)])
    assert got == {"wl-existing": "admitted", "wl-pending": "couldn't assign flavors to pod set main: insufficient "
                                                            "unused quota for nvidia.com/gpu in flavor default, "
                                                            "1 more needed"}, SCHED_SRC


def test_hierarchical_cohort_allows_borrowing_up_to_lending_limit():
    # TestSchedule "hierarchical cohort allows borrowing up to lending limit": 5 lent, 5 asked.
    cqs, cohorts = _lender_borrower(5)
    got = schedule(cqs, cohorts, [("wl-existing", "cq-borrower", 0, 5, 0.0),
                                  ("wl-borrowing", "cq-borrower", 0, 5, 10.0)])
    assert got == {"wl-existing": "admitted", "wl-borrowing": "admitted"}, SCHED_SRC


def test_in_a_hierarchical_cohort_workload_borrowing_less_is_scheduled_first():
    # TestSchedule "in a hierarchical cohort, workload borrowing less is scheduled first": the quota (4) is at
    # the Cohort "guaranteed" under root; best-effort (priority 3) borrows from root, guaranteed (priority 0)
    # only from its own Cohort, so it goes first although its priority is lower.  (Upstream's best-effort
    # reads "Workload no longer fits after processing another workload", a one-cycle message.)
    cqs = [cq("guaranteed", 0, "guaranteed"), cq("best-effort", 0, "root")]
    got = schedule(cqs, [cohort("root"), cohort("guaranteed", "root", 4)],
                   [("guaranteed", "guaranteed", 0, 4, 0.0), ("best-effort", "best-effort", 3, 4, 0.0)])
    assert got["guaranteed"] == "admitted" and got["best-effort"] != "admitted", SCHED_SRC


def test_hierarchical_preemption_with_multiple_resources():
    # TestHierarchicalPreemptions "hiearchical preemption with multiple resources": r (3 cpu) holds c (4 cpu,
    # 4Gi memory) and q_borrowing; c holds q and q_same_cohort; no ClusterQueue has quota of its own.  Only
    # memory needs preemption; c holds the incoming request within its own quota, so q_borrowing's workload,
    # beyond c, is taken with the hierarchical advantage.  Every model pod asks for a GPU: c holds 100 GPUs
    # of quota so that GPUs never decide (upstream has none).
    def flavor(**quotas):
        return [{"name": "default", "quotas": quotas}]

    zero = flavor(**{"nvidia.com/gpu": 0, "cpu": 0, "memory": 0})
    cqs = [{"name": n, "cohort": co, "flavors": zero, "preemption": {"within_cluster_queue": "LowerPriority",
                                                                      "reclaim_within_cohort": "Any"}}
           for n, co in (("q", "c"), ("q_borrowing", "r"), ("q_same_cohort", "c"))]
    cohorts = [{"name": "r", "flavors": flavor(cpu=3)},
               {"name": "c", "parent_name": "r", "flavors": flavor(**{"nvidia.com/gpu": 100, "cpu": 4, "memory": 4})}]

    def wl(name, queue, prio, cpu, mem, at):
        return {"kind": "batch", "name": name, "tenant": queue, "priority": prio, "gpus_per_worker": 1, "cpu": cpu,
                "host_memory_gib": mem, "duration": "10h", "arrival": {"at": at}}

    pool = {"node_groups": [{"name": "dgx", "count": 4, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8, "cpu": 64,
                             "memory_gib": 512}]}
    stack = {"control_plane": {"scheduler": "kube-default", "admission": "kueue",
                               "kueue": {"cluster_queues": cqs, "cohorts": cohorts}}}
    r = simulate({"name": "kueue-multi", "horizon": "2h", "pool": pool, "stack": stack, "workloads": [
        wl("admitted_borrowing", "q_borrowing", 0, 3, 1, 0.0), wl("admitted_same_cohort", "q_same_cohort", -2, 1, 3, 1.0),
        wl("in", "q", -2, 2, 1, 60.0)]})
    assert {e.workload for e in r.events.entries if e.kind == "admit" and e.t < 60} == {
        "admitted_borrowing", "admitted_same_cohort"}
    got = {(e.workload, e.detail.split(":", 1)[0]) for e in r.events.entries if e.kind == "preempt" and e.t == 60}
    assert got == {("admitted_borrowing", "KueueInCohortReclamation")}, HIER_SRC


FS_SRC = "kueue pkg/scheduler/scheduler_fs_test.go TestScheduleForFairSharing"


def fair_schedule(cqs, cohorts, admitted, pending):
    """admitted: (name, cq, gpus) admitted at t=0 in order; pending: (name, cq, gpus) arriving together at t=10.
    Returns the pending ones Kueue's fair-sharing pass admits (one admission pass: the others do not fit)."""
    docs = [{"kind": "batch", "name": n, "tenant": q, "gpus_per_worker": g, "duration": "10h",
             "arrival": {"at": 0.0 if i < len(admitted) else 10.0}}
            for i, (n, q, g) in enumerate([*admitted, *pending])]
    stack = {"control_plane": {"scheduler": "kube-default", "admission": "kueue",
                               "kueue": {"cluster_queues": cqs, "cohorts": cohorts, "fair_sharing": True}}}
    pool = {"node_groups": [{"name": "dgx", "count": 40, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8}]}
    r = simulate({"name": "kueue-fs", "horizon": "1h", "pool": pool, "stack": stack, "workloads": docs})
    admitted_at = {e.workload: e.t for e in r.events.entries if e.kind == "admit"}
    assert all(admitted_at.get(n) == 0.0 for n, _, _ in admitted), "the case's admitted workloads must fit"
    return {n for n, _, _ in pending if n in admitted_at}


def _od(name, nominal, cohort_name):
    return cq(name, nominal, cohort_name)


FS_CASES = [
    # root holds Cohort-A (10: cq-a) and Cohort-B (cq-b 5, cq-c 0); c0 borrows 10 through Cohort-B.  Within
    # its own quota cq-b's wl-b does not borrow, but Cohort-B does: Cohort-A's wl-a wins at root.
    ("with fair sharing: hierarchical nominal-first prefers non-borrowing subtree",
     [_od("cq-a", 0, "Cohort-A"), _od("cq-b", 5, "Cohort-B"), _od("cq-c", 0, "Cohort-B")],
     [cohort("root"), cohort("Cohort-A", "root", 10), cohort("Cohort-B", "root")],
     [("c0", "cq-c", 10)], [("wl-a", "cq-a", 5), ("wl-b", "cq-b", 5)], {"wl-a"}),
    ("with fair sharing: hierarchical nominal-first with deeper nesting",
     [_od("cq-a", 0, "SUB-A"), _od("cq-b", 5, "Cohort-B"), _od("cq-c", 0, "Cohort-B")],
     [cohort("root"), cohort("Cohort-A", "root"), cohort("SUB-A", "Cohort-A", 10), cohort("Cohort-B", "root")],
     [("c0", "cq-c", 10)], [("wl-a", "cq-a", 5), ("wl-b", "cq-b", 5)], {"wl-a"}),
    ("with fair sharing: hierarchical nominal-first with mixed CQ and cohort quotas",
     [_od("cq-a1", 5, "Cohort-A"), _od("cq-a2", 3, "Cohort-A"), _od("cq-b", 5, "Cohort-B"), _od("cq-c", 3, "Cohort-B")],
     [cohort("root"), cohort("Cohort-A", "root", 10), cohort("Cohort-B", "root", 10)],
     [("a2-admitted", "cq-a2", 6), ("c-admitted", "cq-c", 20)], [("wl-a1", "cq-a1", 7), ("wl-b", "cq-b", 4)],
     {"wl-a1"}),
    # A (200) holds B (d, e) and C (f, g): d1 wins in B (share 400 against e1's 405), f1 in C, and B's share with
    # d1 (500) is below C's with f1 (505).
    ("hierarchical fair sharing schedule workload which wins tournament",
     [_od(n, 0, co) for n, co in (("d", "B"), ("e", "B"), ("f", "C"), ("g", "C"))],
     [cohort("A", None, 200), cohort("B", "A"), cohort("C", "A")],
     [("d0", "d", 10), ("e0", "e", 20), ("g0", "g", 100)],
     [("d1", "d", 70), ("e1", "e", 61), ("f1", "f", 1), ("g1", "g", 1)], {"d1"}),
]


@pytest.mark.parametrize("name,cqs,cohorts,admitted,pending,want", FS_CASES, ids=[c[0] for c in FS_CASES])
def test_kueue_hierarchical_fair_sharing_admission_matches_upstream(name, cqs, cohorts, admitted, pending, want):
    assert fair_schedule(cqs, cohorts, admitted, pending) == want, f"{FS_SRC}: {name}"


def test_hierarchical_nominal_first_per_flavor_ignores_cross_flavor_borrowing():
    # TestScheduleForFairSharing "with fair sharing: hierarchical nominal-first per-flavor ignores cross-flavor
    # borrowing": Cohort-A holds 10 on-demand (cq-a: 0 of each), Cohort-B 10 spot (cq-b: 5 on-demand).
    # Cohort-A borrows spot, but wl-a asks for on-demand, where Cohort-A does not borrow: wl-a wins at root
    # although Cohort-B's share is lower.  Admitted workloads are pinned to their flavor by its node group.
    def two(od, spot):
        return [{"name": "on-demand", "node_groups": ["od"], "quotas": {"nvidia.com/gpu": od}},
                {"name": "spot", "node_groups": ["spot"], "quotas": {"nvidia.com/gpu": spot}}]

    cqs = [{"name": "cq-a", "cohort": "Cohort-A", "flavors": two(0, 0)},
           {"name": "cq-b", "cohort": "Cohort-B", "flavors": two(5, 0)}]
    cohorts = [{"name": "root"},
               {"name": "Cohort-A", "parent_name": "root", "flavors": [two(10, 0)[0]]},
               {"name": "Cohort-B", "parent_name": "root", "flavors": [two(0, 10)[1]]}]

    def wl(name, queue, gpus, at, group=None):
        doc = {"kind": "batch", "name": name, "tenant": queue, "gpus_per_worker": gpus, "duration": "10h",
               "arrival": {"at": at}}
        return {**doc, "node_group": group} if group else doc

    pool = {"node_groups": [{"name": g, "count": 4, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8}
                            for g in ("od", "spot")]}
    stack = {"control_plane": {"scheduler": "kube-default", "admission": "kueue",
                               "kueue": {"cluster_queues": cqs, "cohorts": cohorts, "fair_sharing": True}}}
    r = simulate({"name": "kueue-fs-flavors", "horizon": "1h", "pool": pool, "stack": stack, "workloads": [
        wl("spot-admitted", "cq-a", 5, 0.0, "spot"), wl("od-admitted", "cq-b", 8, 0.0, "od"),
        wl("wl-a", "cq-a", 4, 10.0), wl("wl-b", "cq-b", 4, 10.0)]})
    # wl-a takes on-demand; wl-b no longer fits there (upstream's cycle ends here) and, next, takes spot.  Had
    # wl-b gone first, it would hold on-demand and wl-a would be left with spot.
    admits = {e.workload: e.detail for e in r.events.entries if e.kind == "admit"}
    assert admits == {"spot-admitted": "ClusterQueue cq-a, flavor spot (borrowing)",
                      "od-admitted": "ClusterQueue cq-b, flavor on-demand (borrowing)",
                      "wl-a": "ClusterQueue cq-a, flavor on-demand (borrowing)",
                      "wl-b": "ClusterQueue cq-b, flavor spot (borrowing)"}, FS_SRC
