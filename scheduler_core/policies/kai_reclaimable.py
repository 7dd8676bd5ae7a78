"""KAI's reclaim scenario checks beside the strategies (NVIDIA/KAI-Scheduler
pkg/scheduler/plugins/proportion/reclaimable/reclaimable.go, read at 72de64f), as pure functions over
per-queue shares.

* ``subtract_reclaimed``: a reclaimed job's resources leave its queue and every ancestor
  (remainingResourcesMap), and the resources it frees become "involved" for each of them.
* ``remain_within_boundaries`` (reclaimingQueuesRemainWithinBoundaries): walking from the reclaimer's
  queue up to its top queue, each queue with the job must not end more saturated than a sibling that
  loses resources - in every involved resource (the reclaimer's and that sibling's), a queue above its
  fair share (allocated / fair share > 1) may not keep a ratio x ``saturation_multiplier`` at or above
  the sibling's (the proportion plugin's ``relcaimerSaturationMultiplier``, default 1); and for a
  non-preemptible job each queue's non-preemptible allocation with the job stays within its quota.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

from scheduler_core.cluster import GPU
from scheduler_core.resources import CPU, EPS, INF, MEMORY, add_into

RESOURCES = (CPU, MEMORY, GPU)


@dataclass(frozen=True)
class QueueShares:
    """One queue's figures per resource as KAI's proportion plugin holds them (rs.QueueAttributes)."""

    parent: str | None
    deserved: dict[str, float]  # quota; unlimited = INF
    fair: dict[str, float]
    allocated: dict[str, float]
    non_preemptible: dict[str, float]
    allocatable: dict[str, float]  # max(deserved, fair share) within the limit


def leveled_queues(reclaimer_path: list[str], victim_path: list[str]) -> tuple[str, str]:
    """getLeveledQueues: the two queues where the paths from the top part (siblings), or the last pair."""
    pair = (reclaimer_path[0], victim_path[0])
    for x, y in zip(reclaimer_path, victim_path):
        pair = (x, y)
        if x != y:
            break
    return pair


def queue_path(queues: Mapping[str, QueueShares], name: str) -> list[str]:
    """getHierarchyPath: the queue's ancestors from the top down, and the queue."""
    path: list[str] = []
    node: str | None = name
    while node is not None:
        path.append(node)
        node = queues[node].parent
    return path[::-1]


def involved_resources(requests: Iterable[dict[str, float]]) -> set[str]:
    """getInvolvedResourcesNames: the resources any of ``requests`` asks for."""
    return {r for req in requests for r in RESOURCES if req.get(r, 0.0) > 0}


def saturation_ratio(allocated: float, fair: float) -> float:
    """fairShareSaturationRatio: allocated / fair share; a fair share of 0 is infinitely saturated once used."""
    if fair == 0:
        return INF if allocated > 0 else 0.0
    if fair == INF:
        return 0.0
    return allocated / fair


def saturation_lower(involved: Iterable[str], mine: dict[str, float], mine_fair: dict[str, float],
                     sibling: dict[str, float], sibling_fair: dict[str, float], multiplier: float = 1.0) -> bool:
    """isFairShareSaturationLowerPerResource."""
    for r in involved:
        mf, sf = mine_fair.get(r, 0.0), sibling_fair.get(r, 0.0)
        if mf == INF and sf == INF:
            continue
        a = saturation_ratio(mine.get(r, 0.0), mf)
        if a > 1 and sf > 0 and a * multiplier >= saturation_ratio(sibling.get(r, 0.0), sf):
            return False
    return True


def subtract_reclaimed(queues: Mapping[str, QueueShares], remaining: dict[str, dict[str, float]],
                       involved: dict[str, set[str]], victim_queue: str, freed: dict[str, float]) -> None:
    """subtractReclaimedResources: ``freed`` leaves ``victim_queue`` and every ancestor."""
    mine = involved.setdefault(victim_queue, set())
    mine.update(involved_resources([freed]))
    name: str | None = victim_queue
    while name is not None:
        base = remaining.get(name)
        remaining[name] = add_into(dict(queues[name].allocated if base is None else base), freed, -1.0)
        if name != victim_queue:
            involved.setdefault(name, set()).update(mine)
        name = queues[name].parent


def remain_within_boundaries(queues: Mapping[str, QueueShares], reclaimer_queue: str, need: dict[str, float],
                             preemptible: bool, remaining: Mapping[str, dict[str, float]],
                             involved: Mapping[str, set[str]], multiplier: float = 1.0) -> bool:
    """reclaimingQueuesRemainWithinBoundaries (see the module's docstring)."""
    mine = involved_resources([need])
    name: str | None = reclaimer_queue
    while name is not None:
        q = queues[name]
        after = add_into(dict(remaining.get(name, q.allocated)), need)
        for sibling, left in remaining.items():
            s = queues[sibling]
            if sibling == name or s.parent != q.parent:
                continue
            if not saturation_lower(involved.get(sibling, set()) | mine, after, q.fair, left, s.fair, multiplier):
                return False
        if not preemptible:
            with_job = add_into(dict(q.non_preemptible), need)
            if any(with_job.get(r, 0.0) > q.deserved.get(r, 0.0) + EPS for r in RESOURCES):
                return False
        name = q.parent
    return True
