"""Flavor fungibility in a Cohort tree: of two flavors that both need borrowing (or both need preemption),
Kueue keeps the one whose quota comes from lower in the tree, not the first listed.

Upstream (kueue v0.19.2): pkg/scheduler/flavorassigner/flavorassigner.go ``isPreferred`` (equal
preemption modes: the lower ``borrowingLevel`` wins) and ``fitsResourceQuota``, whose level is
pkg/scheduler/preemption/classical/hierarchical_preemption.go ``FindHeightOfLowestSubtreeThatFits``
(after preemption: ``borrowAfterPreemptions``). Both cases were seen on the local plane: seeds 6 and 9 of
the feature differential check (docs/controlplane.md), where the simulator took the first flavor.

And two rules of the same walk seen there (seeds 5 and 3): a ClusterQueue looks for victims on a flavor
only if the request is within its nominal quota, or it may preempt while borrowing, or quota can be
reclaimed below the root of a Cohort tree (``fitsResourceQuota``: ``rQuota.Nominal >= val ||
mayReclaimInHierarchy || canPreemptWhileBorrowing()``); and ``whenCanPreempt: MayStopSearch`` stops at a
flavor that needs preemption only if the workload no longer borrows once its victims are gone, or
``whenCanBorrow`` is MayStopSearch (``shouldTryNextFlavor`` reads the mode after preemption)."""

from __future__ import annotations

from scheduler_core import simulate
from tests.scheduler_core.conftest import minimal
from tests.scheduler_core.test_policies import job, kueue

POOLS = {"node_groups": [{"name": "a", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8},
                         {"name": "b", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8}]}


def _flavors(fa: dict, fb: dict) -> list[dict]:
    return [{"name": "fa", "node_groups": ["a"], "quotas": {"nvidia.com/gpu": fa}},
            {"name": "fb", "node_groups": ["b"], "quotas": {"nvidia.com/gpu": fb}}]


def _run(cqs, cohorts, docs):
    return simulate(minimal(pool=POOLS, workloads=[{**d, "duration": "100h"} for d in docs], horizon="1h",
                            stack=kueue(cqs, cohorts=cohorts),
                            tenants=[{"name": c["name"], "queue": c["name"]} for c in cqs]))


def _placed(r):
    return {w.name: sorted({n.rsplit("-", 1)[0] for n in w.nodes}) if w.state == "running" else w.state
            for w in r.workloads}


def test_of_two_flavors_that_fit_by_borrowing_the_one_lent_by_the_nearer_cohort_wins():
    # org lends fa; team (under org) has fb of its own. ClusterQueue q has neither: in fa it borrows from
    # org (height 2), in fb from team (height 1). whenCanBorrow: TryNextFlavor walks on and keeps fb.
    cohorts = [{"name": "org", "flavors": _flavors({"nominal": 2}, {"nominal": 0})},
               {"name": "team", "parent_name": "org", "flavors": _flavors({"nominal": 0}, {"nominal": 2})}]
    q = {"name": "q", "cohort": "team", "flavors": _flavors({"nominal": 0}, {"nominal": 0}),
         "flavor_fungibility": {"when_can_borrow": "TryNextFlavor"}}
    assert _placed(_run([q], cohorts, [job("one", 1, tenant="q")])) == {"one": ["b"]}
    # whenCanBorrow: MayStopSearch stops at the first flavor that fits by borrowing
    q["flavor_fungibility"] = {"when_can_borrow": "MayStopSearch"}
    assert _placed(_run([q], cohorts, [job("one", 1, tenant="q")])) == {"one": ["a"]}


def test_of_two_flavors_that_need_preemption_the_one_borrowing_lower_after_it_wins():
    # Seed 9's shape: q has no quota of its own; fa comes from org (2), fb from team (2). Two low-priority
    # 1-GPU jobs fill fa, a 2-GPU one fills fb; a high-priority 2-GPU job preempts within q. In fa it would
    # still borrow from org, in fb only from team: Kueue preempts the job in fb.
    cohorts = [{"name": "org", "flavors": _flavors({"nominal": 2}, {"nominal": 0})},
               {"name": "team", "parent_name": "org", "flavors": _flavors({"nominal": 0}, {"nominal": 2})}]
    q = {"name": "q", "cohort": "team", "flavors": _flavors({"nominal": 0}, {"nominal": 0}),
         "preemption": {"within_cluster_queue": "LowerPriority", "reclaim_within_cohort": "Any",
                        "borrow_within_cohort": "LowerPriority"}}  # preempting while borrowing
    docs = [job("low-a1", 1, tenant="q"), job("low-b", 2, tenant="q", at=1),
            job("low-a2", 1, tenant="q", at=2), job("high", 2, tenant="q", at=3, priority=100)]
    placed = _placed(_run([q], cohorts, docs))
    assert placed == {"low-a1": ["a"], "low-a2": ["a"], "low-b": "queued", "high": ["b"]}


FLAT = {"node_groups": POOLS["node_groups"]}


def test_a_cluster_queue_that_would_borrow_does_not_preempt_even_its_own_lower_priority_work():
    # Seed 5's shape, a flat cohort without fair sharing: q has no quota of its own and borrows from
    # lender's 2 GPUs of fa. Its low-priority job holds 1; a high-priority 2-GPU job of q would need
    # preemption in q, but 2 is above q's nominal 0 and borrowWithinCohort is Never: Kueue finds no
    # victims there and leaves it waiting ("1 more needed"); the low job keeps running.
    lender = {"name": "lender", "cohort": "org", "flavors": _flavors({"nominal": 2}, {"nominal": 0})}
    q = {"name": "q", "cohort": "org", "flavors": _flavors({"nominal": 0}, {"nominal": 0}),
         "preemption": {"within_cluster_queue": "LowerPriority"}}
    r = _run([lender, q], [], [job("low", 1, tenant="q"), job("high", 2, tenant="q", at=1, priority=100)])
    assert _placed(r) == {"low": ["a"], "high": "queued"}
    high = next(w for w in r.workloads if w.name == "high")
    assert "insufficient unused quota for nvidia.com/gpu in flavor fa, 1 more needed" in high.pending_reason
    # within its nominal quota the same ClusterQueue preempts its own lower-priority job
    q["flavors"] = _flavors({"nominal": 2}, {"nominal": 0})
    lender["flavors"] = _flavors({"nominal": 0}, {"nominal": 0})
    r = _run([lender, q], [], [job("low", 1, tenant="q"), job("high", 2, tenant="q", at=1, priority=100)])
    assert _placed(r) == {"low": "queued", "high": ["a"]}


def test_when_can_preempt_may_stop_search_walks_on_when_the_workload_would_still_borrow_after_preemption():
    # Seed 3's shape: q (nominal 1 in each flavor, whenCanPreempt MayStopSearch, whenCanBorrow
    # TryNextFlavor) in a tree: in fa it needs to preempt its own low job and would still borrow; fb fits
    # by borrowing. Kueue walks on to fb and preempts nothing.
    cohorts = [{"name": "org", "flavors": _flavors({"nominal": 1}, {"nominal": 2})},
               {"name": "team", "parent_name": "org"}]
    q = {"name": "q", "cohort": "team", "flavors": _flavors({"nominal": 1}, {"nominal": 1}),
         "preemption": {"within_cluster_queue": "LowerPriority", "reclaim_within_cohort": "Any",
                        "borrow_within_cohort": "LowerPriority"},
         "flavor_fungibility": {"when_can_preempt": "MayStopSearch", "when_can_borrow": "TryNextFlavor"}}
    docs = [job("low", 2, tenant="q"), job("high", 2, tenant="q", at=1, priority=100)]
    assert _placed(_run([q], cohorts, docs)) == {"low": ["a"], "high": ["b"]}
    # whenCanBorrow: MayStopSearch stops at fa and preempts there (the low job, requeued, then fits fb)
    q["flavor_fungibility"]["when_can_borrow"] = "MayStopSearch"
    r = _run([q], cohorts, docs)
    assert _placed(r) == {"low": ["b"], "high": ["a"]}
    assert [w.preemptions for w in r.workloads if w.name == "low"] == [1]
