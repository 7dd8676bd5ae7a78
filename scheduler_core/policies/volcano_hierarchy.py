"""Volcano's hierarchical queues: the capacity plugin with ``enableHierarchy`` (volcano-sh/volcano
pkg/scheduler/plugins/capacity/capacity.go, buildHierarchicalQueueAttrs and checkHierarchicalQueue).

Queues form a tree under the root queue ``root`` (``spec.parent``, default the root; an unstated root
has no capability and so bounds nothing - not even the cluster's size).  A child's realCapability is its
parent's minus the guarantees of all the parent's children (never below 0) plus its own guarantee, within its
capability, which takes every dimension it leaves out from its parent's.  A job allocates and is
enqueued only in a leaf queue and only while the leaf and every ancestor stay within realCapability
(their allocation summed over their subtree); allocate orders leaf queues by the shares of the queues
where their paths part, and reclaim takes victims from the queue closest in the tree first.  Reclaim's
own checks stay at the leaves (``ancestorReclaimLevel`` 0, capacity's default).

A mixin of :class:`~scheduler_core.policies.volcano.VolcanoScheduler`: it reads the scheduler's
``queues``, ``real``, ``deserved`` and ``_used``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler_core.resources import EPS, INF, add_into, exceeded, quantity
from scheduler_core.scenario.stack import VolcanoQueue

if TYPE_CHECKING:  # pragma: no cover
    from scheduler_core.workloads import Workload


class QueueHierarchy:
    """The queue tree's checks; each is a no-op (or the flat answer) while ``hierarchy`` is off."""

    queues: dict
    real: dict[str, dict[str, float]]
    hierarchy: bool = False
    parent: dict[str, str | None]
    children: dict[str, list[str]]

    def _build_tree(self) -> None:
        if "root" not in self.queues:  # the implicit root queue: no capability, so unbounded
            self.queues["root"] = VolcanoQueue(name="root")
        for n, q in self.queues.items():
            self.parent[n] = None if n == "root" else (q.parent or "root")
            if n != "root":
                self.children.setdefault(self.parent[n], []).append(n)

    def _hierarchical_real(self) -> dict[str, dict[str, float]]:
        """realCapability down the tree (capacity.go checkHierarchicalQueue): the root's is its capability
        (unbounded where it states none - not the cluster's size); a child's is its parent's minus the
        guarantees of the parent's children (never below 0) plus its own guarantee, within its capability - which takes
        the dimensions it leaves out from its parent's."""
        cap = {"root": dict(self.queues["root"].capability or {})}
        real = {"root": dict(cap["root"])}

        def down(p: str) -> None:
            kids = self.children.get(p, [])
            guaranteed: dict[str, float] = {}
            for c in kids:
                add_into(guaranteed, self.queues[c].guarantee)
            for c in kids:
                q = self.queues[c]
                cap[c] = {**cap[p], **(q.capability or {})}
                mine: dict[str, float] = {}
                for r in set(real[p]) | set(cap[c]):
                    x = max(0.0, real[p].get(r, INF) - guaranteed.get(r, 0.0)) + q.guarantee.get(r, 0.0)
                    x = min(x, cap[c].get(r, INF))
                    if x < INF:
                        mine[r] = x
                real[c] = mine
                down(c)

        down("root")
        return real

    def _ancestors(self, name: str) -> list[str]:
        """The queue's ancestors from the root down (capacity.go queueAttr.ancestors)."""
        out: list[str] = []
        p = self.parent.get(name)
        while p is not None:
            out.append(p)
            p = self.parent[p]
        return out[::-1]

    def _subtree_used(self, name: str) -> dict[str, float]:
        """A queue's allocated with hierarchy: its own and every queue's below it."""
        out = dict(self._used(name))
        for c in self.children.get(name, ()):
            add_into(out, self._subtree_used(c))
        return out

    def _hierarchical_bound(self, qname: str) -> dict[str, float]:
        """The leaf's allocation bound that keeps it and every ancestor within realCapability
        (checkQueueAllocatableHierarchically), stated on the leaf's own allocation."""
        room: dict[str, float] = {}
        for name in [qname, *self._ancestors(qname)]:
            sub = self._subtree_used(name)
            for r, x in self.real[name].items():
                room[r] = min(room.get(r, INF), x - sub.get(r, 0.0))
        used = self._used(qname)
        return {r: used.get(r, 0.0) + x for r, x in room.items()}

    def _hierarchy_excess(self, qname: str, extra: dict[str, dict[str, float]], need: dict[str, float]):
        """The first queue, from the leaf up, whose allocated (plus ``extra`` per queue, summed over its
        subtree) and ``need`` pass its realCapability, with the resources passed; or None."""
        for name in [qname, *self._ancestors(qname)[::-1]]:
            taken = self._subtree_used(name)
            for n in [name, *self._descendants(name)]:
                add_into(taken, extra.get(n, {}))
            names = exceeded(taken, need, self.real[name])
            if names:
                return name, taken, names
        return None

    def _descendants(self, name: str) -> list[str]:
        out: list[str] = []
        for c in self.children.get(name, ()):
            out += [c, *self._descendants(c)]
        return out

    def _tree_share(self, name: str) -> float:
        """updateQueueAttrShare with hierarchy: allocated over the subtree / deserved."""
        d = self.deserved.get(name, {})
        if not any(x > EPS for x in d.values()):
            return 1.0
        used = self._subtree_used(name)
        return max((used.get(r, 0.0) / x for r, x in d.items() if x > EPS), default=0.0)

    def _order_key(self, qname: str) -> tuple:
        """allocate's queue order: queue priority, then the share - with hierarchy the shares of the queues
        on the path from the root (capacity's QueueOrderFn compares the ancestors where the paths part)."""
        if not self.hierarchy:
            return (-self.queues[qname].priority, self._share(qname), qname)
        path = [*self._ancestors(qname)[1:], qname]
        return (-self.queues[qname].priority, tuple(self._tree_share(a) for a in path), qname)

    def _victim_level(self, victim_queue: str, preemptor_queue: str) -> int:
        """capacity's VictimQueueOrderFn with hierarchy: victims from the queue whose last common ancestor
        with the preemptor's is deepest come first (getQueueLevel); 0 without hierarchy."""
        if not self.hierarchy:
            return 0
        level = 0
        for i, (a, b) in enumerate(zip(self._ancestors(victim_queue), self._ancestors(preemptor_queue))):
            if a != b:
                break
            level = i
        return level

    def _not_leaf(self, qname: str) -> bool:
        return self.hierarchy and bool(self.children.get(qname))

    @staticmethod
    def _not_leaf_words(wl: "Workload") -> str:
        # capacity's AllocatableFn (klog): a job in a parent queue is never enqueued nor allocated
        return f"Queue <{wl.queue}> is not a leaf queue, can not allocate task <{wl.name}-{len(wl.pods)}>"

    def _hierarchy_verdict(self, wl: "Workload", need: dict[str, float]) -> tuple[str, str] | None:
        """Why the tree keeps ``wl``'s gang minimum from allocating: its queue is not a leaf, or the first
        queue from the leaf up that would pass its realCapability (named with its own figures)."""
        if self._not_leaf(wl.queue):
            return "queue", self._not_leaf_words(wl)
        over = self._hierarchy_excess(wl.queue, {}, need)
        if over is None:
            return None
        name, used, names = over
        detail = ", ".join(f"insufficient {r} (allocated {quantity(r, used.get(r, 0.0))} + {quantity(r, need[r])} "
                           f"> realCapability {quantity(r, self.real[name][r])})" for r in names)
        return "queue", f"queue {name} has reached its capability: {detail}"
