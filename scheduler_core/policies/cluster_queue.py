"""A Kueue ClusterQueue at run time (quota, usage, admitted workloads, its queue of waiting workloads),
shared by the admission pass (:mod:`scheduler_core.policies.kueue`) and its preemption search
(:mod:`scheduler_core.policies.kueue_preemption`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler_core.policies.base import ShapeQueue
from scheduler_core.scenario.stack import resource_groups

if TYPE_CHECKING:  # pragma: no cover
    from scheduler_core.workloads import Workload

INF = float("inf")
EPS = 1e-9


class ClusterQueueState:
    """One ClusterQueue at run time: its quota per (flavor, resource), usage, admitted workloads and queue."""

    def __init__(self, spec) -> None:
        self.spec = spec
        self.name = spec.name
        self.cohort = spec.cohort
        self.usage: dict[tuple[str, str], float] = {}
        self.queue = ShapeQueue()
        self.admitted: dict[int, "Workload"] = {}
        self.priorities: dict[int, int] = {}  # priority -> admitted workloads (cheap preemption pre-check)
        self._quota = {(f.name, r): q for f in spec.flavors for r, q in f.quotas.items()}
        # Resource groups: (covered resources, flavors in order); one group keeps the plain one-flavor path.
        self.groups = [(frozenset(covered), group) for covered, group in resource_groups(spec.flavors)]
        self.group_of = {r: i for i, (covered, _) in enumerate(self.groups) for r in covered}
        self.flavor_group = {f.name: i for i, (_, group) in enumerate(self.groups) for f in group}
        self.fungibility = spec.flavor_fungibility
        self.default_fungibility = (self.fungibility.when_can_borrow == "MayStopSearch"
                                    and self.fungibility.when_can_preempt == "TryNextFlavor")

    def quota(self, flavor: str, res: str):
        return self._quota.get((flavor, res))

    def guaranteed(self, flavor: str, res: str) -> float:
        q = self._quota.get((flavor, res))
        if q is None:
            return 0.0
        return q.nominal - q.lending_limit if q.lending_limit is not None else 0.0


def preemption_allows(policy: str, victim, preemptor) -> bool:
    """Whether a ClusterQueue preemption policy (withinClusterQueue / reclaimWithinCohort) lets ``preemptor``
    evict ``victim``: Any; LowerPriority; LowerOrNewerEqualPriority (equal priority, created later); Never."""
    if policy == "Any":
        return True
    if policy == "LowerOrNewerEqualPriority":
        return victim.priority < preemptor.priority or (victim.priority == preemptor.priority and victim.created > preemptor.created)
    return policy == "LowerPriority" and victim.priority < preemptor.priority
