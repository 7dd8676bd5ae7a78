"""Kueue's classic preemption reads each ClusterQueue's admitted workloads from an index kept at admission and
release (``kueue_preemption.Ranked``) instead of gathering and sorting every candidate of the cohort per search.
These tests hold the index to what the search used to compute from scratch: the same candidates in the same
order (other ClusterQueues' first; lowest priority, newest admission, highest uid first), and what they hold."""

import heapq
import itertools
import random

import pytest

from scheduler_core import simulate
from scheduler_core.policies import kueue_preemption
from scheduler_core.policies.kueue_preemption import Ranked
from tests.scheduler_core.conftest import minimal

POOL = {"node_groups": [{"name": "dgx", "count": 4, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8, "cpu": 64,
                         "memory_gib": 512}]}


class _W:
    """The few fields of a workload the index reads."""

    def __init__(self, uid, priority, admitted_at):
        self.uid, self.priority, self.admitted_at = uid, priority, admitted_at


def test_the_index_keeps_victim_order_and_what_each_priority_holds_through_admissions_and_releases():
    rng = random.Random(7)
    ranked, live = Ranked(), {}
    for step in range(600):
        if live and rng.random() < 0.45:
            wl = live.pop(rng.choice(sorted(live)))
            ranked.remove(wl)
        else:
            wl = _W(step, rng.choice([0, 10, 50]), float(step // 3))  # admissions at the same instant too
            live[wl.uid] = wl
            ranked.add(wl, {"nvidia.com/gpu": float(rng.choice([1, 2, 4])), "cpu": 4.0})
            wl.usage = ranked.entries[[e[3] for e in ranked.entries].index(wl)][4]
        expected = sorted(live.values(), key=lambda w: (w.priority, -w.admitted_at, -w.uid))
        assert [e[3] for e in ranked.entries] == expected
        for p in {w.priority for w in live.values()}:
            count, held = ranked.by_priority[p]
            same = [w for w in live.values() if w.priority == p]
            assert count == len(same)
            assert held["nvidia.com/gpu"] == pytest.approx(sum(w.usage["nvidia.com/gpu"] for w in same))
        assert set(ranked.by_priority) == {w.priority for w in live.values()}


def _cq(name, gpus, within="LowerPriority", reclaim="Any", borrow="Never", threshold=None, **quota):
    preemption = {"within_cluster_queue": within, "reclaim_within_cohort": reclaim, "borrow_within_cohort": borrow}
    if threshold is not None:
        preemption["borrow_within_cohort_max_priority_threshold"] = threshold
    return {"name": name, "cohort": "org", "flavors": [{"name": "a100", "quotas": {
        "nvidia.com/gpu": {"nominal": gpus, **quota}, "cpu": 64, "memory": 512}}], "preemption": preemption}


def _backlog(tenant, priority, per_hour):
    return {"kind": "batch", "name": f"{tenant}-p{priority}", "tenant": tenant, "count": 50, "priority": priority,
            "arrival": {"poisson_per_hour": per_hour}, "workers": {"dist": "choice", "values": [1, 2]},
            "gpus_per_worker": {"dist": "choice", "values": [1, 2, 4]}, "cpu": 4, "host_memory_gib": 32,
            "duration": {"dist": "lognormal", "mean": 1800, "cv": 1.0}, "memory_gib": 20}


CASES = {
    "reclaim Any, lower priority within the ClusterQueue": [_cq("a", 10), _cq("b", 12), _cq("c", 10)],
    "reclaim lower priority, newer equal priority within": [
        _cq("a", 10, within="LowerOrNewerEqualPriority", reclaim="LowerPriority"),
        _cq("b", 12, reclaim="LowerPriority"), _cq("c", 10, within="LowerOrNewerEqualPriority")],
    "borrowWithinCohort below a priority threshold": [
        _cq("a", 10, borrow="LowerPriority", threshold=40), _cq("b", 12, borrow="LowerPriority"),
        _cq("c", 10, reclaim="LowerPriority", borrowing_limit=6)],
}


def _scenario(cqs):
    workloads = [_backlog(t, p, 18) for t in "abc" for p in (0, 30, 60)]
    return minimal(name="victim-order", horizon="8h", seed=11, pool=POOL, workloads=workloads,
                   tenants=[{"name": t} for t in "abc"],
                   stack={"control_plane": {"scheduler": "kube-default", "admission": "kueue", "kueue": {
                       "cluster_queues": cqs, "local_queues": {t: t for t in "abc"}}}})


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_search_walks_the_candidates_a_full_sort_of_the_cohort_gives(case, monkeypatch):
    searched = []
    original = kueue_preemption.KueuePreemptor._minimal_set

    def checked(self, cq, flavor, need, sources, allow_borrowing):
        # From scratch, as the search did before the index: every admitted workload on the flavor each source
        # accepts, sorted by (other CQs first, priority, newest admission, highest uid).
        scratch = sorted(((src.kind, v.priority, -(v.admitted_at or 0.0), -v.uid), v)
                         for src in sources for v in self._held_on(src.cq, flavor) if src.accepts(v))
        walked = [(key, v) for key, v, _, _ in itertools.chain(
            heapq.merge(*(src.ordered() for src in sources if src.kind == 0)),
            *(src.ordered() for src in sources if src.kind == 1))]
        assert walked == scratch
        for r in need:
            held = sum(self._usage(v).get(r, 0.0) for src in sources
                       for v in self._held_on(src.cq, flavor) if src.accepts(v))
            kept = [src.held(r) for src in sources]
            if None not in kept:
                assert sum(kept) == pytest.approx(held, abs=1e-9)
        searched.append(len(scratch))
        return original(self, cq, flavor, need, sources, allow_borrowing)

    monkeypatch.setattr(kueue_preemption.KueuePreemptor, "_minimal_set", checked)
    result = simulate(_scenario(CASES[case]))
    assert sum(1 for n in searched if n) >= 20, "the scenario should make Kueue search for victims"
    assert result.preemption.preemptions > 0
