"""Volcano's inqueue usage kept between passes (issue 34): per queue, the resources its Inqueue jobs'
pending pods ask for, brought up to date from the jobs that changed instead of recounted every pass.

A recount sums the jobs in uid order; an update adds and removes only the jobs that joined, left or
whose pending pods changed.  Both give the same float while every quantity is a multiple of 2^-16 below
2^20 (whole GPUs, cores and GiB, halves, quarters...) and every total stays below 2^35: sums of such
numbers are exact, so their order does not matter.  A queue that holds any other quantity is recounted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler_core.resources import add_into, exceeds_any, scaled

if TYPE_CHECKING:  # pragma: no cover
    from scheduler_core.workloads import Workload

_EXACT_TOTAL = 2.0 ** 35


def dyadic(vec: dict[str, float]) -> bool:
    """Whether every quantity is a multiple of 2^-16 below 2^20: sums of such are exact in any order."""
    return all((x * 65536.0).is_integer() and abs(x) < 2.0 ** 20 for x in vec.values())


def updated_usage(acc: dict[str, float], members: dict[int, "Workload"],
                  counted: dict[int, tuple]) -> dict[str, float] | None:
    """``acc`` (the usage last counted, left unchanged) updated for ``members`` (the queue's Inqueue jobs by
    uid); ``counted`` (per uid: the workloads and pending pods counted) is updated with it.  None when a
    quantity or a total leaves the exact range: the caller recounts."""
    acc = dict(acc)
    for uid in [u for u in counted if u not in members]:
        ms, pend = counted.pop(uid)
        for m, k in zip(ms, pend):
            add_into(acc, m.request.share, -k)
    for uid, wl in members.items():
        ms = wl.group.members if wl.group is not None else (wl,)
        pend = tuple(m.pending for m in ms)
        old = counted.get(uid)
        if old is not None and old[1] == pend:
            continue
        for m, k in zip(ms, pend):
            if not dyadic(m.request.share) or k >= 2 ** 15:
                return None
            add_into(acc, m.request.share, k)
        if old is not None:
            for m, k in zip(*old):
                add_into(acc, m.request.share, -k)
        counted[uid] = (tuple(ms), pend)
        if any(abs(x) >= _EXACT_TOTAL for x in acc.values()):
            return None
    return acc


class EnqueueGate:
    """One enqueue action's JobEnqueueable check as a yes/no (the same comparisons as
    :meth:`VolcanoScheduler._enqueue_rejection`, without wording a rejection nobody reads): the cluster's
    overcommitted size computed once, a queue's allocated + inqueue once until a job joins it, and a
    plain job's minimum once per bucket for the run (its request and minMember are part of the bucket's
    key, an interned object the queues keep: its id names it)."""

    def __init__(self, policy, inq: dict[str, dict[str, float]],
                 committed: dict[str, float] | None) -> None:
        self.policy, self.inq, self.committed = policy, dict(inq), committed  # a queue's entry is copied on change
        self.plugins = [p for p in policy.cfg.plugins if p in ("overcommit", "proportion", "capacity")]
        self.idle = scaled(policy.sim.capacity_total, policy.cfg.overcommit_factor)
        self.taken: dict[str, dict[str, float]] = {}
        self.minima = policy._minima

    def minimum(self, wl: "Workload", key) -> dict[str, float]:
        if wl.group is not None:
            return self.policy._need(wl.group.floor())
        m = self.minima.get(id(key))
        if m is None:
            m = self.minima[id(key)] = scaled(wl.request.share, wl.min_member)
        return m

    def blocked(self, wl: "Workload", key) -> bool:
        if self.policy.hierarchy:  # an ancestor's room depends on every queue below it: no per-queue caches
            return self.policy._enqueue_rejection(wl, self.inq, self.committed) is not None
        q = wl.queue
        minimum = self.minimum(wl, key)
        # The cluster-wide overcommit check first (a yes/no: the plugins' order only picks the words): with a
        # backlog it rejects most heads, before their queue's allocated + inqueue is even added up.
        if self.committed is not None and exceeds_any(self.committed, minimum, self.idle):
            return True
        taken = self.taken.get(q)
        if taken is None:
            taken = self.taken[q] = add_into(dict(self.policy._used(q)), self.inq[q])
        plain = wl.group is None
        if plain:  # a plain job's minimum is its bucket's: rejected against equal inputs, rejected again
            last = self.policy._rejected.get(id(key))
            if last is not None and last[1] == taken and last[0] == self.committed:
                return True
        for plugin in self.plugins:
            if plugin == "overcommit":
                continue  # passed above
            if not exceeds_any(taken, minimum, self.policy.real[q]):  # proportion or capacity
                continue
            if plain:
                self.policy._rejected[id(key)] = (None if self.committed is None else dict(self.committed), dict(taken))
            return True
        return False

    def joined(self, wl: "Workload") -> None:
        """``wl`` became Inqueue: its minimum now counts in its queue's and the cluster's inqueue."""
        minimum = self.policy._need(wl.group.floor() if wl.group is not None else [(wl, wl.min_member)])
        self.inq[wl.queue] = add_into(dict(self.inq[wl.queue]), minimum)
        self.taken.pop(wl.queue, None)
        if self.committed is not None:
            add_into(self.committed, minimum)
