"""ShapeQueue (scheduler_core/policies/base.py), the FIFO buckets every policy keeps its waiting
workloads in: removal is lazy, and a bucket that empties is dropped, so a policy that asks again for a
bucket it saw earlier, or one never made, must get None rather than an error. The queued schedulers
(Volcano, KAI) read the heads of these buckets to find the jobs that preempt and reclaim act for."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from scheduler_core.policies.base import ShapeQueue
from scheduler_core.policies.kai import KaiScheduler
from scheduler_core.policies.volcano import VolcanoScheduler


def _wl(uid):
    return SimpleNamespace(uid=uid, enqueued_at=None, request=("gpu", 1), node_group=None)


def test_a_bucket_that_emptied_or_never_was_has_no_head_and_pops_nothing():
    q = ShapeQueue()
    a = _wl(1)
    q.push(a, "k", now=5.0)
    assert (q.head("k"), a.enqueued_at) == (a, 5.0)
    assert q.pop("k") is a
    assert q.head("k") is None and q.keys() == []  # emptied: dropped
    assert q.head("k") is None and q.pop("k") is None  # asked again: still nothing, no error
    assert q.head("never") is None and list(q.iter_bucket("never")) == []


def test_a_removed_workload_leaves_the_head_to_the_one_behind_it_and_may_queue_again_at_the_back():
    q = ShapeQueue()
    a, b = _wl(1), _wl(2)
    q.push(a, "k", now=0.0)
    q.push(b, "k", now=1.0)
    q.remove(a)
    assert q.head("k") is b and len(q) == 1
    q.push(a, "k", now=2.0)  # its old entry is stale: it queues behind b
    assert list(q.iter_bucket("k")) == [b, a]
    assert q.waiting_requests() == [(("gpu", 1), None)]  # one shape, said once


@pytest.mark.parametrize("scheduler", [VolcanoScheduler, KaiScheduler])
def test_a_job_with_no_pod_pending_is_not_starving_so_preempt_and_reclaim_pass_it_by(scheduler):
    # e.g. a job between a rendezvous timeout and the recreation of its pods: still queued, nothing to place
    waiting = SimpleNamespace(uid=1, group=None, pending=2, request="2 GPUs", node_group=None, enqueued_at=None)
    between = SimpleNamespace(uid=2, group=None, pending=0, request="1 GPU", node_group=None, enqueued_at=None)
    policy = scheduler.__new__(scheduler)  # only its queue and the pass's keys are read
    policy.sim, policy.queue = SimpleNamespace(full_pass=True), ShapeQueue()
    policy.queue.push(between, ("q", 0, "1 GPU"), now=0.0)
    policy.queue.push(waiting, ("q", 0, "2 GPUs"), now=1.0)
    assert list(policy._starving()) == [waiting]
