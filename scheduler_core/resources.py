"""Resource vectors: quantities keyed by resource name, as the quota-keeping schedulers count them.

A vector is a plain ``dict[str, float]``: ``nvidia.com/gpu`` (GPUs, or GPU units for a MIG instance or
a fraction), ``cpu`` (cores) and ``memory`` (host memory, GiB).  A pod's vector comes from its
:class:`~scheduler_core.cluster.DeviceRequest` (``quota_usage`` for Kueue's per-flavor quotas,
``share_usage`` for Volcano's and KAI's GPU-denominated queues); these functions compare and combine
them the way those schedulers do, so the three policies share one notion of "fits in every dimension".

A resource missing from a bound (capability, limit, deserved) is unbounded; a resource missing from a
usage is zero.
"""

from __future__ import annotations

from typing import Iterable

from scheduler_core.cluster import GPU

CPU = "cpu"
MEMORY = "memory"
DIMENSIONS = (GPU, CPU, MEMORY)
INF = float("inf")
EPS = 1e-9


def ordered(names: Iterable[str]) -> list[str]:
    """Resource names in the order messages list them: GPU, cpu, memory, then any other by name."""
    names = set(names)
    return [r for r in DIMENSIONS if r in names] + sorted(names - set(DIMENSIONS))


def scaled(vec: dict[str, float], k: float) -> dict[str, float]:
    return {r: a * k for r, a in vec.items()}


def add_into(acc: dict[str, float], vec: dict[str, float], k: float = 1.0) -> dict[str, float]:
    """``acc += k * vec`` in place (returns ``acc``)."""
    for r, a in vec.items():
        acc[r] = acc.get(r, 0.0) + a * k
    return acc


def exceeded(used: dict[str, float], need: dict[str, float], bound: dict[str, float]) -> list[str]:
    """The resources ``need`` asks for (> 0) whose ``used + need`` would pass ``bound``.

    Volcano's ``LessEqualWithDimensionAndResourcesName`` (only the request's own dimensions are
    compared) and KAI's per-resource limit check."""
    return [r for r in ordered(need) if need[r] > 0 and used.get(r, 0.0) + need[r] > bound.get(r, INF) + EPS]


def all_reached(used: dict[str, float], bound: dict[str, float]) -> bool:
    """``bound <= used`` in every resource of ``bound`` (Volcano: a queue is overused only when its
    allocation has reached its deserved share in every dimension)."""
    return all(used.get(r, 0.0) >= b - EPS for r, b in bound.items())


def any_above(used: dict[str, float], bound: dict[str, float], among: Iterable[str] | None = None) -> bool:
    """``used > bound`` in at least one resource (of ``among``, default every resource of ``used``)."""
    names = used if among is None else among
    return any(used.get(r, 0.0) > bound.get(r, INF) + EPS for r in names)


def pods_within(room: dict[str, float], per_pod: dict[str, float]) -> float:
    """How many pods of ``per_pod`` fit in ``room`` (INF when no requested resource is bounded)."""
    best = INF
    for r, a in per_pod.items():
        if a > 0 and r in room:
            best = min(best, max(0, int((room[r] + EPS) // a)))
    return best


def dominant_share(used: dict[str, float], share: dict[str, float]) -> float:
    """Largest used / share over the resources (a queue's share in Volcano's proportion plugin)."""
    best = 0.0
    for r in set(used) | set(share):
        u, s = used.get(r, 0.0), share.get(r, 0.0)
        if s > 0:
            best = max(best, u / s)
        elif u > EPS:
            return INF
    return best


def quantity(r: str, x: float) -> str:
    """``x`` of resource ``r`` as messages print it (memory in GiB)."""
    text = str(int(round(x))) if abs(x - round(x)) < 1e-6 else f"{x:g}"
    return text + ("Gi" if r == MEMORY else "")


def exceeds_any(used: dict[str, float], need: dict[str, float], bound: dict[str, float]) -> bool:
    """Whether :func:`~scheduler_core.resources.exceeded` would name any resource."""
    for r, a in need.items():
        if a > 0 and used.get(r, 0.0) + a > bound.get(r, INF) + EPS:
            return True
    return False
