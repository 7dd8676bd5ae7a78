"""Kueue fair sharing (domain-facts §4.4): with ``fairSharing`` on, among workloads that would all borrow
from the cohort, the ClusterQueue with the lower dominant resource share (what it would borrow / what the
cohort lends, divided by its weight) is admitted first; without it, the older workload goes first.

Cohort ``org``: ClusterQueues a, b and c with 2 GPUs nominal each (6 in the cohort, c lends its 2).
"""

from __future__ import annotations

from scheduler_core import simulate
from tests.scheduler_core.conftest import minimal
from tests.scheduler_core.test_policies import ONE_NODE, cq, job

PENDING_2_MORE = ("couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor "
                  "a100, 2 more needed")


def run(docs, fair_sharing=True, weights=None, cqs=None, pool=ONE_NODE, **kueue_extra):
    cqs = cqs or [cq("a", 2, "org"), cq("b", 2, "org"), cq("c", 2, "org")]
    for c in cqs:
        if weights and c["name"] in weights:
            c["fair_sharing_weight"] = weights[c["name"]]
    stack = {"control_plane": {"scheduler": "kube-default", "admission": "kueue",
                               "kueue": {"cluster_queues": cqs, "fair_sharing": fair_sharing, **kueue_extra}}}
    tenants = sorted({d["tenant"] for d in docs})
    r = simulate(minimal(pool=pool, workloads=docs, stack=stack, tenants=[{"name": t, "queue": t} for t in tenants]))
    return {w.name: (w.start, w.pending_reason) for w in r.workloads}


def started(out):
    return {name for name, (start, _) in out.items() if start is not None}


def test_without_fair_sharing_the_older_borrower_is_admitted_first():
    # a and b both want 4 GPUs (2 borrowed each) from a cohort of 6: only one fits, the first submitted.
    out = run([job("a-job", 4, dur="8h"), job("b-job", 4, tenant="b", dur="8h")], fair_sharing=False)
    assert started(out) == {"a-job"}
    assert out["b-job"][1] == PENDING_2_MORE


def test_fair_sharing_weight_halves_the_share_so_the_heavier_queue_borrows_first():
    # Same borrow (2 of the 6 GPUs the cohort lends) but b weighs 2: its share 167 / 2 beats a's 333.
    out = run([job("a-job", 4, dur="8h"), job("b-job", 4, tenant="b", dur="8h")], weights={"b": 2})
    assert started(out) == {"b-job"}
    assert out["a-job"][1] == PENDING_2_MORE


def test_equal_shares_fall_back_to_submission_order():
    out = run([job("a-job", 4, dur="8h"), job("b-job", 4, tenant="b", dur="8h")])
    assert started(out) == {"a-job"}


def test_a_queue_of_weight_zero_borrows_last():
    # Weight 0: an infinite share as soon as it borrows, so a goes after b although a was first.
    out = run([job("a-job", 4, dur="8h"), job("b-job", 4, tenant="b", dur="8h")], weights={"a": 0})
    assert started(out) == {"b-job"}


def test_the_share_counts_what_the_queue_already_uses():
    # a already runs its 2 nominal GPUs: a-next (2 GPUs) would borrow 2, b-job (3 GPUs) only 1, so b goes first
    # although a-next came first; without fair sharing a-next goes first.
    docs = [job("a-run", 2, dur="8h"), job("a-next", 2, dur="8h", at=60), job("b-job", 3, tenant="b", dur="8h", at=60)]
    assert started(run(docs)) == {"a-run", "b-job"}
    assert started(run(docs, fair_sharing=False)) == {"a-run", "a-next"}


def test_a_cohort_that_lends_a_single_gpu_is_still_shared_by_weight():
    # a and b lend nothing (lendingLimit 0), c lends its one GPU: a and b each want to borrow it.
    cqs = [cq("a", 2, "org", lending_limit=0), cq("b", 2, "org", lending_limit=0), cq("c", 1, "org")]
    out = run([job("a-job", 3, dur="8h"), job("b-job", 3, tenant="b", dur="8h")], weights={"b": 2}, cqs=cqs)
    assert started(out) == {"b-job"}


def test_a_cohort_that_lends_nothing_admits_within_nominal_quota():
    # No lendable capacity at all (every lendingLimit 0): the share is 0, nothing to divide by.
    cqs = [cq("a", 4, "org", lending_limit=0), cq("b", 4, "org", lending_limit=0)]
    out = run([job("a-job", 4, dur="8h"), job("b-job", 4, tenant="b", dur="8h")], cqs=cqs)
    assert started(out) == {"a-job", "b-job"}


def _cpu_cq(name, gpus, cpus, gpu_lending_limit=None):
    q = cq(name, gpus, "org", **({} if gpu_lending_limit is None else {"lending_limit": gpu_lending_limit}))
    q["flavors"][0]["quotas"]["cpu"] = {"nominal": cpus}
    return q


def test_the_dominant_resource_decides_the_share():
    # The cohort lends 5 GPUs (c keeps 1 of its 2) and 96 cores.  a-job borrows 2 GPUs (2/5 = 400) and 16
    # cores (167): its dominant share is 400.  b-job borrows no GPU but 34 cores (354).  The cores cannot
    # serve both (48 + 66 > 96): b, the lower dominant share, is admitted although a came first.
    cqs = [_cpu_cq("a", 2, 32), _cpu_cq("b", 2, 32), _cpu_cq("c", 2, 32, gpu_lending_limit=1)]
    docs = [job("a-job", 4, dur="8h", cpu=48), job("b-job", 1, tenant="b", dur="8h", cpu=66)]
    out = run(docs, cqs=cqs)
    assert started(out) == {"b-job"}
    assert out["a-job"][1] == ("couldn't assign flavors to pod set main: insufficient unused quota for cpu in "
                               "flavor a100, 18 more needed")
    assert started(run(docs, cqs=cqs, fair_sharing=False)) == {"a-job"}


# Workloads within their nominal quota all have share 0: fair sharing keeps them in submission order, also
# beside a ClusterQueue outside any cohort and a cohort member of weight 0.  They compete for the one node
# here (both 8 GPUs): the first admitted gets it, the other waits for the scheduler.
NODE_FULL = "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."


def test_fair_sharing_keeps_submission_order_beside_a_queue_outside_any_cohort():
    cqs = [cq("solo", 8), cq("a", 8, "org"), cq("b", 8, "org")]
    out = run([job("solo-job", 8, tenant="solo", dur="8h"), job("a-job", 8, dur="8h")], cqs=cqs)
    assert started(out) == {"solo-job"} and out["a-job"][1] == NODE_FULL
    out = run([job("a-job", 8, dur="8h"), job("solo-job", 8, tenant="solo", dur="8h")], cqs=cqs)
    assert started(out) == {"a-job"} and out["solo-job"][1] == NODE_FULL


def test_weight_zero_only_sends_a_queue_last_when_it_borrows():
    cqs = [cq("a", 8, "org"), cq("b", 8, "org")]
    out = run([job("a-job", 8, dur="8h"), job("b-job", 8, tenant="b", dur="8h")], weights={"a": 0}, cqs=cqs)
    assert started(out) == {"a-job"} and out["b-job"][1] == NODE_FULL


def test_weight_zero_sends_a_queue_last_however_little_it_borrows():
    # Only c lends cores (1000). a (weight 0) would borrow 1 core, b 1000: a's share is infinite, so b is
    # admitted although a came first and borrows far less; a then lacks its one core.
    def cqs():
        return [_cpu_cq("a", 4, 0), _cpu_cq("b", 4, 0), _cpu_cq("c", 0, 1000)]

    docs = [job("a-job", 1, dur="8h", cpu=1), job("b-job", 1, tenant="b", dur="8h", cpu=1000)]
    out = run(docs, cqs=cqs(), weights={"a": 0})
    assert started(out) == {"b-job"}
    assert out["a-job"][1] == ("couldn't assign flavors to pod set main: insufficient unused quota for cpu in "
                               "flavor a100, 1 more needed")
    assert started(run(docs, cqs=cqs())) == {"a-job"}  # at weight 1 a's share (1) is the lower


def test_a_request_that_takes_the_whole_cohort_in_one_resource_is_refused_for_the_resource_it_cannot_get():
    # Nothing admitted yet in the cohort: the 96 cores it lends are all unused, so a job asking for all 96
    # is short of nothing there; it waits for the 8 GPUs no ClusterQueue of the cohort can ever lend.
    cqs = [_cpu_cq("a", 2, 32), _cpu_cq("b", 2, 32), _cpu_cq("c", 2, 32)]
    out = run([job("a-job", 8, dur="8h", cpu=96)], cqs=cqs)
    assert out["a-job"] == (None, "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu "
                                  "in flavor a100, request > maximum capacity (8 > 6)")
