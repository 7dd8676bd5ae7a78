"""KAI queues form a tree: a parent queue's quota and limit bind the jobs of all its children."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from scheduler_core import parse_scenario, simulate
from scheduler_core.cluster import GPU
from scheduler_core.policies.kai import KaiScheduler
from scheduler_core.scenario import KaiConfig
from scheduler_core.simulation import ClusterSimulation
from tests.scheduler_core.conftest import minimal
from tests.scheduler_core.test_queue_resources import NODE, job, kai

TENANTS = [{"name": "a", "queue": "a"}, {"name": "b", "queue": "b"}]


def run(queues, docs):
    r = simulate(minimal(pool=NODE, stack=kai(queues), workloads=docs, tenants=TENANTS))
    return {w.name: (w.start, w.pending_reason) for w in r.workloads}


def test_non_preemptible_pods_of_a_sibling_count_against_the_parent_quota():
    # a and b each have quota 4 under org (quota 4): a's non-preemptible 3 GPUs leave org room for 1, so b's
    # non-preemptible 2-GPU job waits with KAI's words about org; b's preemptible job goes over quota.
    queues = [{"name": "org", "quota": 4}, {"name": "a", "parent": "org", "quota": 4},
              {"name": "b", "parent": "org", "quota": 4}]
    out = run(queues, [job("train", 3, priority=100), job("serve", 2, tenant="b", priority=100, at=60),
                       job("batch", 2, tenant="b", at=60)])
    assert out["train"][0] == 0 and out["batch"][0] == 60
    assert out["serve"] == (None, "Non-preemptible workload is over quota. Workload requested 2 GPUs, but org quota "
                                  "is 4 GPUs, while 3 GPUs are already allocated for non-preemptible pods. Use a "
                                  "preemptible workload to go over quota.")


def test_non_preemptible_pods_bound_earlier_in_the_same_pass_count_against_the_parent_quota():
    # The same jobs arriving together: train binds first in the pass, and its 3 GPUs already count for org
    # when serve is checked in that pass (KAI updates the queue's allocation as each job is allocated).
    queues = [{"name": "org", "quota": 4}, {"name": "a", "parent": "org", "quota": 4},
              {"name": "b", "parent": "org", "quota": 4}]
    out = run(queues, [job("train", 3, priority=100), job("serve", 2, tenant="b", priority=100)])
    assert out["train"][0] == 0
    assert out["serve"] == (None, "Non-preemptible workload is over quota. Workload requested 2 GPUs, but org quota "
                                  "is 4 GPUs, while 3 GPUs are already allocated for non-preemptible pods. Use a "
                                  "preemptible workload to go over quota.")


def _reclaimed(queues, docs):
    r = simulate(minimal(pool=NODE, stack=kai(queues), workloads=docs, tenants=TENANTS))
    return [e.workload for e in r.events.entries if e.kind == "preempt"], {w.name: w.start for w in r.workloads}


def test_a_higher_priority_queue_takes_the_over_quota_share_first_and_reclaims_it():
    # No quotas: the 8 GPUs are all over-quota.  At queue priority 1, a deserves the whole node for its 8-GPU
    # job and reclaims both of b's jobs (newest first); at equal priority a deserves 4 and reclaims nothing.
    docs = [job("b1", 4, tenant="b"), job("b2", 4, tenant="b"), job("a1", 8, at=60)]
    preempted, start = _reclaimed([{"name": "a", "quota": 0, "priority": 1}, {"name": "b", "quota": 0}], docs)
    assert preempted == ["b2", "b1"] and start["a1"] == 60 + 30
    preempted, start = _reclaimed([{"name": "a", "quota": 0}, {"name": "b", "quota": 0}], docs)
    assert preempted == [] and start["a1"] is None


def test_min_runtime_spares_young_jobs_until_they_have_run_it_then_reclaims():
    # a runs 4 x 2 GPUs over its quota of 4 since t=0; b's job arrives at 600 s.  With minRuntime 1h KAI
    # reclaims at the first cycle after a's jobs have run an hour (the newest, a3), not when they end at 4h.
    docs = [job(f"a{i}", 2, dur="4h") for i in range(4)] + [job("b1", 2, tenant="b", at=600)]
    stack = kai([{"name": "a", "quota": 4}, {"name": "b", "quota": 4}])
    stack["control_plane"]["kai"]["min_guaranteed_runtime"] = "1h"
    r = simulate(minimal(horizon="6h", pool=NODE, stack=stack, workloads=docs, tenants=TENANTS))
    preempt = [(e.t, e.workload) for e in r.events.entries if e.kind == "preempt"]
    assert [w for _, w in preempt] == ["a3"] and preempt[0][0] == pytest.approx(3600, abs=1e-3)
    assert next(w for w in r.workloads if w.name == "b1").start == pytest.approx(3600 + 30, abs=1e-3)


def _starts(queues, docs):
    stack = kai(queues)
    stack["control_plane"]["kai"]["reclaim"] = False
    r = simulate(minimal(pool=NODE, stack=stack, workloads=docs, tenants=TENANTS))
    return {w.name: w.start for w in r.workloads}


def test_the_less_saturated_queue_allocates_first():
    # a already runs 4 GPUs of its share; a1 and b1 (4 GPUs each) arrive together for the 4 GPUs left: b's,
    # the queue with nothing allocated, gets them, a1 waits until a0 ends.
    start = _starts([{"name": "a", "quota": 4}, {"name": "b", "quota": 4}],
                    [job("a0", 4, dur="1h"), job("a1", 4, at=60, dur="1h"), job("b1", 4, tenant="b", at=60, dur="1h")])
    assert start == {"a0": 0, "b1": 60, "a1": 3600}


def test_a_higher_priority_queue_allocates_first():
    start = _starts([{"name": "a", "quota": 4}, {"name": "b", "quota": 4, "priority": 1}],
                    [job("a1", 6, at=60), job("b1", 6, tenant="b", at=60)])
    assert start == {"a1": None, "b1": 60}


def test_a_victim_queue_above_its_fair_share_loses_whole_jobs_even_if_that_takes_it_below():
    # b runs 6 + 2 GPUs with a fair share of 4 once a asks for 4.  KAI judges each victim against what its
    # queue holds before that job goes (proportion/reclaimable/reclaimable.go reclaimResourcesFromReclaimees;
    # MaintainFairShare): b holds 8 > 4, then 6 > 4, so b2 and then b1 go although b ends with 0 < 4.
    preempted, start = _reclaimed([{"name": "a", "quota": 4}, {"name": "b", "quota": 4}],
                                  [job("b1", 6, tenant="b"), job("b2", 2, tenant="b"), job("a1", 4, at=60)])
    assert preempted == ["b2", "b1"] and start["a1"] == 90


def test_pods_of_a_gang_still_waiting_for_its_other_workers_count_as_non_preemptible_allocation():
    # train (non-preemptible, 4 x 1 GPU, minAvailable 2) is pinned to a 2-GPU node: two pods bind and wait for
    # the other two. Their GPUs count against queue a's quota (4) when serve (3 GPUs) is checked.
    pool = {"node_groups": [{"name": "a", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 2},
                            {"name": "b", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 4}]}
    docs = [job("train", 1, workers=4, priority=100) | {"min_available": 2, "node_group": "a"},
            job("serve", 3, priority=200, at=100)]
    r = simulate(minimal(horizon="10m", pool=pool, stack=kai([{"name": "a", "quota": 4}]), workloads=docs,
                         tenants=[{"name": "a", "queue": "a"}]))
    out = {w.name: (w.start, w.pending_reason) for w in r.workloads}
    assert [e.detail for e in r.events.entries if e.workload == "train" and e.kind == "bind"] == ["2 pod(s): a-0 x2"]
    assert out["serve"] == (None, "Non-preemptible workload is over quota. Workload requested 3 GPUs, but a quota is "
                                  "4 GPUs, while 2 GPUs are already allocated for non-preemptible pods. Use a "
                                  "preemptible workload to go over quota.")


def _reclaim_pass(docs, queues=("a", "b", "c", "d"), pool=NODE, quotas=None):
    """Queues without quota unless ``quotas`` names one (fair shares from demand alone): (time, workload) of each
    preemption, starts."""
    tenants = [{"name": q, "queue": q} for q in queues]
    stack = kai([{"name": q, "quota": (quotas or {}).get(q, 0)} for q in queues])
    r = simulate(minimal(pool=pool, stack=stack, workloads=docs, tenants=tenants))
    return [(e.t, e.workload) for e in r.events.entries if e.kind == "preempt"], {w.name: w.start for w in r.workloads}


# Four queues without quota on one 8-GPU node, each deserving 2 GPUs: a runs 1, c runs 4 single-GPU jobs
# (2 over its fair share), d one 3-GPU job (over, but only as a whole). At t=60 a asks for 1 more GPU and b
# for 2, in one pass.
RECLAIM_PASS = ([job("a0", 1)] + [job(f"c{i}", 1, tenant="c") for i in range(4)] + [job("d0", 3, tenant="d")]
                + [job("a-more", 1, at=60), job("b-new", 2, tenant="b", at=60)])


def test_the_least_served_queue_reclaims_first_and_a_queue_at_its_fair_share_is_not_reclaimed():
    # b holds nothing (saturation 0) and goes before a (1 of its 2): b's job takes c's two newest. c is then
    # at its fair share - c's terminating pods no longer count as c's (KAI's session counts a releasing pod in
    # no queue) - so a's job takes d's 3-GPU job instead: d holds 3 > 2 before it goes (MaintainFairShare).
    preempted, start = _reclaim_pass(RECLAIM_PASS)
    # (d0, requeued and older, then takes its GPUs back before a-more: the model does not pipeline released
    # devices to the reclaimer - see docs/simulator-model.md, known gaps.)
    assert preempted == [(60.0, "c3"), (60.0, "c2"), (60.0, "d0")]
    assert start["b-new"] == 90.0


def test_a_reclaimer_that_cannot_reclaim_does_not_stop_the_ones_after_it():
    # a's 8-GPU job is first in the pass (same saturation, created first) but asks past a's fair share; b's
    # 2-GPU job behind it still reclaims from c.
    docs = [job(f"c{i}", 1, tenant="c") for i in range(8)] + [job("big", 8, at=60), job("small", 2, tenant="b", at=60)]
    preempted, start = _reclaim_pass(docs, queues=("a", "b", "c"))
    assert preempted == [(60.0, "c7"), (60.0, "c6")]
    assert start["small"] == 90.0 and start["big"] is None


def test_a_reclaimer_is_nominated_for_its_victims_grace_period_and_no_longer():
    # While nominated, a reclaimer reclaims nothing more and its pending reason says it waits for its
    # victims; that lasts terminationGracePeriodSeconds (30 s), the time its victims hold their devices.
    docs = [job(f"c{i}", 1, tenant="c") for i in range(8)] + [job("small", 2, tenant="b", at=60)]
    sim = ClusterSimulation(parse_scenario(minimal(pool=NODE, stack=kai([{"name": q, "quota": 0} for q in "bc"]),
                                                   workloads=docs, tenants=[{"name": q, "queue": q} for q in "bc"])))
    sim.execute()
    small = next(w for w in sim.workloads if w.name == "small")
    assert small.first_start == 90.0
    assert small.nominated_until == pytest.approx(90.0, abs=1e-3)


def test_a_job_whose_bound_pods_wait_for_their_peers_is_reclaimed_like_a_running_one():
    # c runs a 6-GPU job and has a 3-worker job with 2 workers bound, waiting for a third that has no room;
    # b's 2-GPU job reclaims those two bound pods (c stays at its fair share of 6), not nothing.
    waiting = job("cwait", 1, tenant="c", workers=3, at=1)
    waiting["min_available"] = 2
    docs = [job("crun", 1, tenant="c", workers=6), waiting, job("bnew", 2, tenant="b", at=60)]
    preempted, start = _reclaim_pass(docs, queues="bc")
    assert preempted == [(60.0, "cwait")] and start["bnew"] == 90.0


def test_of_two_victims_of_one_queue_and_priority_the_one_that_never_started_goes_first():
    # c runs cbase (4 GPUs, from t=0), crun (2 GPUs, started at 0.5 s) and cwait (2 of its 3 workers bound,
    # waiting for the third). b's 2-GPU job needs one victim, and crun or cwait would each leave c at its
    # fair share: cwait goes, since it has done no work yet, although crun started later than t=0.
    waiting = job("cwait", 1, tenant="c", workers=3, at=1)
    waiting["min_available"] = 2
    docs = [job("cbase", 1, tenant="c", workers=4), job("crun", 2, tenant="c", at=0.5), waiting,
            job("bnew", 2, tenant="b", at=60)]
    preempted, _ = _reclaim_pass(docs, queues="bc")
    assert preempted == [(60.0, "cwait")]


def test_a_starving_job_that_fits_by_count_does_not_stop_the_reclaim_for_the_jobs_after_it():
    # One GPU free on each of two nodes: a's pinned job (two 1-GPU workers on one node) fits them by count,
    # so reclaim passes it by (allocate's plan is what refuses it); b's 2-GPU job behind it still reclaims.
    pool = {"node_groups": [{"name": g, "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8} for g in ("g0", "g1")]}
    docs = [{**job(f"c{i}", 1, tenant="c"), "node_group": "g0" if i < 7 else "g1"} for i in range(14)]
    pinned = {**job("pinned", 1, workers=2, at=60), "topology": {"required": "node"}}
    preempted, _ = _reclaim_pass([*docs, pinned, job("bnew", 2, tenant="b", at=60)], queues="abc", pool=pool)
    assert preempted[:1] == [(60.0, "c13")]


def test_a_reclaimer_whose_victims_would_not_make_room_does_not_stop_the_reclaim_for_the_jobs_after_it():
    # Two 8-GPU nodes; d's quota 8 holds its non-preemptible 8-GPU job on g0, fair shares a 2, b 2, c 4 of the
    # rest; c runs eight 1-GPU jobs on g1 (4 over its share). a's job, pinned to g0 and first in the pass, is
    # within its share, but only d's job could make room for it and it is no victim: it evicts nothing. b's
    # 2-GPU job behind it still reclaims c's two newest.
    pool = {"node_groups": [{"name": g, "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8} for g in ("g0", "g1")]}
    docs = ([{**job("d0", 8, tenant="d", priority=100), "node_group": "g0"}]
            + [{**job(f"c{i}", 1, tenant="c"), "node_group": "g1"} for i in range(8)]
            + [{**job("pinned", 2, at=60), "node_group": "g0"}, job("bnew", 2, tenant="b", at=60)])
    preempted, start = _reclaim_pass(docs, queues="abcd", pool=pool, quotas={"d": 8})
    assert preempted == [(60.0, "c7"), (60.0, "c6")]
    assert start["bnew"] == 90.0 and start["pinned"] is None


def _fair_shares(queues, usage, pending, gpus):
    """KAI's fair share in GPUs of each queue, divided from the queues' usage and pending requests."""
    sim = SimpleNamespace(cp=SimpleNamespace(kai=KaiConfig(queues=queues)), capacity_total={GPU: gpus},
                          queue_usage={q: {GPU: g} for q, g in usage.items()},
                          queue_pending={q: {GPU: g} for q, g in pending.items()})
    policy = KaiScheduler(sim)
    policy.compute_fair_share()
    return {q: policy.fair[q][GPU] for q in policy.fair}


def test_a_queue_whose_quota_covers_its_request_deserves_its_request_and_no_more():
    # KAI's resource division caps every queue's share at what it requests: a asks for 2 GPUs within its
    # quota of 4, so the 6 GPUs left over go to b, which asks for 10, and none to a.
    fair = _fair_shares([{"name": "a", "quota": 4}, {"name": "b", "quota": 0}],
                        usage={"a": 1, "b": 7}, pending={"a": 1, "b": 3}, gpus=8)
    assert fair == {"a": 2.0, "b": 6.0}
