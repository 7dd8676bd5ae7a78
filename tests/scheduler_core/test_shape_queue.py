"""ShapeQueue (scheduler_core/policies/base.py), the FIFO buckets every policy keeps its waiting
workloads in: removal is lazy, and a bucket that empties is dropped, so a policy that asks again for a
bucket it saw earlier, or one never made, must get None rather than an error."""

from __future__ import annotations

from types import SimpleNamespace

from scheduler_core.policies.base import ShapeQueue


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
