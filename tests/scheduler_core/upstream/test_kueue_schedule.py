"""Kueue's scheduling table, ported: kubernetes-sigs/kueue pkg/scheduler/scheduler_test.go, TestSchedule.

Upstream's ClusterQueues (CPU stated as GPUs): ``sales`` (StrictFIFO, default 50), ``eng-alpha`` and
``eng-beta`` in cohort ``eng`` (on-demand 50 borrowing 50 / spot 100 borrowing 0; on-demand 50 borrowing 10 /
spot 0 borrowing 100), ``lend-a``/``lend-b`` in cohort ``lend`` (3 and 2, lending limit 2 each).  The outcome
is which workloads one admission pass admits and on which flavor.
"""

import pytest

from tests.scheduler_core.upstream.kueue_harness import admit_cycle, cq_flavors

SRC = "kueue pkg/scheduler/scheduler_test.go TestSchedule"

CQS = [
    cq_flavors("sales", [("default", 50, None, None)], strategy="StrictFIFO"),
    cq_flavors("eng-alpha", [("on-demand", 50, 50, None), ("spot", 100, 0, None)], "eng", "StrictFIFO"),
    cq_flavors("eng-beta", [("on-demand", 50, 10, None), ("spot", 0, 100, None)], "eng", "StrictFIFO",
               within_cluster_queue="LowerPriority", reclaim_within_cohort="Any"),
    cq_flavors("lend-a", [("default", 3, None, 2)], "lend"),
    cq_flavors("lend-b", [("default", 2, None, 2)], "lend"),
]

# (upstream case, workloads in queue order [(name, cq, pods)], admitted {name: flavor})
CASES = [
    ("single clusterQueue full", [("assigned", "sales", 40), ("new", "sales", 11)], {"assigned": "default"}),
    ("admit in different cohorts", [("sales-new", "sales", 1), ("alpha-new", "eng-alpha", 51)],
     {"sales-new": "default", "alpha-new": "on-demand"}),
    ("admit in same cohort with no borrowing", [("alpha-new", "eng-alpha", 40), ("beta-new", "eng-beta", 40)],
     {"alpha-new": "on-demand", "beta-new": "on-demand"}),
    ("can borrow if cohort was assigned and will not result in overadmission",
     [("alpha-new", "eng-alpha", 45), ("beta-new", "eng-beta", 55)],
     {"alpha-new": "on-demand", "beta-new": "on-demand"}),
    ("not enough resources to borrow, fallback to next flavor; WhenCanPreempt: TryNextFlavor",
     [("existing", "eng-beta", 45), ("new", "eng-alpha", 60)], {"existing": "on-demand", "new": "spot"}),
    ("workload exceeds lending limit when borrow in cohort", [("a", "lend-b", 2), ("b", "lend-b", 3)],
     {"a": "default"}),
]


@pytest.mark.parametrize("name,workloads,want", CASES, ids=[c[0] for c in CASES])
def test_kueue_schedule_matches_upstream(name, workloads, want):
    assert admit_cycle(CQS, workloads) == want, f"{SRC} / {name}"


def test_kueue_partial_admission_single_variable_pod_set():
    # 50 pods x 2 CPU with minimumCount 20 in a 50-CPU queue: admitted with 25 pods.
    got = admit_cycle(CQS, [("new", "sales", 50, 2, 20)], details=True)
    assert got == {"new": "ClusterQueue sales, flavor default (25 of 50 pods: partial admission)"}, (
        f"{SRC} / partial admission single variable pod set")


def test_partial_admission_below_the_minimum_count_is_not_admitted():
    assert admit_cycle(CQS, [("new", "sales", 50, 2, 30)]) == {}
