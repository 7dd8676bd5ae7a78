"""Volcano's inqueue usage kept between passes (issue 34): per queue, the resources its Inqueue jobs'
pending pods ask for, brought up to date from the jobs that changed instead of recounted every pass.

A recount sums the jobs in uid order; an update adds and removes only the jobs that joined, left or
whose pending pods changed.  Both give the same float while every quantity is a multiple of 2^-16 below
2^20 (whole GPUs, cores and GiB, halves, quarters...) and every total stays below 2^35: sums of such
numbers are exact, so their order does not matter.  A queue that holds any other quantity is recounted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler_core.resources import add_into

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
