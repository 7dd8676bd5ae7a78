"""Flavor fungibility in a Cohort tree: of two flavors that both need borrowing (or both need preemption),
Kueue keeps the one whose quota comes from lower in the tree, not the first listed.

Upstream (kueue v0.19.2): pkg/scheduler/flavorassigner/flavorassigner.go ``isPreferred`` (equal
preemption modes: the lower ``borrowingLevel`` wins) and ``fitsResourceQuota``, whose level is
pkg/scheduler/preemption/classical/hierarchical_preemption.go ``FindHeightOfLowestSubtreeThatFits``
(after preemption: ``borrowAfterPreemptions``). Both cases were seen on the local plane: seeds 6 and 9 of
the feature differential check (docs/controlplane.md), where the simulator took the first flavor."""

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
         "preemption": {"within_cluster_queue": "LowerPriority"}}
    docs = [job("low-a1", 1, tenant="q"), job("low-b", 2, tenant="q", at=1),
            job("low-a2", 1, tenant="q", at=2), job("high", 2, tenant="q", at=3, priority=100)]
    placed = _placed(_run([q], cohorts, docs))
    assert placed == {"low-a1": ["a"], "low-a2": ["a"], "low-b": "queued", "high": ["b"]}
