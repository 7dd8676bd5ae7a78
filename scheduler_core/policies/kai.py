"""KAI Scheduler: hierarchical queues with quota / over-quota weight / limit, gang, reclaim, fractions.

Modelled from domain-facts.md §6.5:

* **Fair share**, top-down through the queue tree: each child first gets
  ``min(quota, demand)`` (quota -1 = its whole demand); what remains of the
  parent's share is split by over-quota **priority** (higher first) and, within
  a priority, by ``over_quota_weight``, never above ``limit`` or the demand.
* **Allocation**: leaf queues in order of priority then saturation
  (allocated / fair share); jobs by priority then creation; gangs
  all-or-nothing; placement bin-packs (KAI's default).  A queue may run above
  its fair share while GPUs are idle (over-quota), up to its limit.
* **Reclaim**: a leaf queue below its fair share whose job does not fit
  evicts whole jobs from queues above their fair share - preemptible jobs
  only (priority < 100, KAI's convention for preemptible workloads [U]), the
  most saturated queue first, newest first, and never pushing a victim queue
  below its own fair share; jobs younger than ``min_guaranteed_runtime`` are
  spared.
* **GPU fractions** (``gpu_sharing``): ``gpu-fraction`` requests share a GPU
  by scheduler accounting only - KAI "does not enforce memory allocation
  limit or performs memory isolation" - so the data plane treats the tenants
  like time-slicing (see interference and OOM models).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler_core.metrics import water_fill
from scheduler_core.policies.base import QueuedPolicy

if TYPE_CHECKING:  # pragma: no cover
    from scheduler_core.workloads import Workload

INF = float("inf")
PREEMPTIBLE_BELOW = 100


class KaiScheduler(QueuedPolicy):
    name = "kai"

    def __init__(self, sim) -> None:
        super().__init__(sim)
        self.cfg = sim.cp.kai
        self.qspec = {q.name: q for q in self.cfg.queues}
        self.children: dict[str | None, list[str]] = {}
        for q in self.cfg.queues:
            self.children.setdefault(q.parent, []).append(q.name)
        self.leaves = [q.name for q in self.cfg.queues if q.name not in self.children]
        self.fair: dict[str, float] = {q: 0.0 for q in self.qspec}

    # -- fair share ---------------------------------------------------------------
    def _leaf_demand(self) -> dict[str, float]:
        sim = self.sim
        return {q: sim.queue_units.get(q, 0.0) + sim.queue_pending_units.get(q, 0.0) for q in self.leaves}

    def compute_fair_share(self) -> None:
        leaf = self._leaf_demand()
        demand: dict[str, float] = {}

        def dem(name: str) -> float:
            if name in leaf:
                demand[name] = leaf[name]
            else:
                demand[name] = sum(dem(c) for c in self.children.get(name, []))
            return demand[name]

        for r in self.children.get(None, []):
            dem(r)

        def split(names: list[str], capacity: float) -> None:
            caps = {}
            for n in names:
                q = self.qspec[n]
                cap = demand[n]
                if q.limit >= 0:
                    cap = min(cap, q.limit)
                caps[n] = cap
            base = {}
            for n in names:
                q = self.qspec[n]
                quota = caps[n] if q.quota < 0 else min(q.quota, caps[n])
                base[n] = quota
            total_base = sum(base.values())
            if total_base > capacity:  # over-subscribed quotas: scale down proportionally
                f = capacity / total_base if total_base > 0 else 0.0
                base = {n: v * f for n, v in base.items()}
            left = max(0.0, capacity - sum(base.values()))
            share = dict(base)
            for prio in sorted({self.qspec[n].priority for n in names}, reverse=True):
                group = [n for n in names if self.qspec[n].priority == prio]
                room = {n: max(0.0, caps[n] - share[n]) for n in group}
                weights = {n: max(self.qspec[n].over_quota_weight, 1e-9) for n in group}
                extra = water_fill(left, room, weights)
                for n in group:
                    share[n] += extra[n]
                left -= sum(extra.values())
                if left <= 1e-12:
                    break
            for n in names:
                self.fair[n] = share[n]
                if n in self.children:
                    split(self.children[n], share[n])

        split(self.children.get(None, []), float(self.sim.capacity_gpus))

    def _saturation(self, q: str) -> float:
        f = self.fair.get(q, 0.0)
        a = self.sim.queue_units.get(q, 0.0)
        return a / f if f > 0 else (INF if a > 0 else 0.0)

    def _within_limit(self, q: str, extra: float) -> bool:
        # A queue and each of its ancestors must stay within their limits.
        name: str | None = q
        while name is not None:
            spec = self.qspec[name]
            if spec.limit >= 0 and self._subtree_alloc(name) + extra > spec.limit + 1e-9:
                return False
            name = spec.parent
        return True

    def _subtree_alloc(self, name: str) -> float:
        if name not in self.children:
            return self.sim.queue_units.get(name, 0.0)
        return sum(self._subtree_alloc(c) for c in self.children[name])

    # -- pass ---------------------------------------------------------------------
    def cycle(self) -> None:
        self.compute_fair_share()
        self._allocate()
        if self.cfg.reclaim:
            self._reclaim()

    def _order(self, wl: "Workload") -> tuple:
        return (-wl.priority, wl.enqueued_at, wl.seq)

    def _strategy(self, wl: "Workload") -> tuple[str, str | None]:
        if wl.topology_required is not None:
            return "pack", wl.topology_required
        if wl.topology_sensitivity > 0 or wl.topology_preferred:
            return "pack", None  # KAI supports topology-aware placement for gangs
        return "binpack", None

    def _allocate(self) -> None:
        by_queue: dict[str, list] = {}
        for key in self.pass_keys():
            by_queue.setdefault(key[0], []).append(key)
        scans = {q: self.queue.scan(self._order, keys) for q, keys in by_queue.items()}
        while True:
            live = [q for q in scans if scans[q].peek() is not None]
            if not live:
                break
            qname = min(live, key=lambda q: (-self.qspec[q].priority, self._saturation(q), q))
            scan = scans[qname]
            key, wl = scan.next()
            need = max(1, wl.min_member - len(wl.pods)) * wl.request.gpu_units()
            if not self._within_limit(qname, need):
                scan.fail(key)
                continue
            strategy, level = self._strategy(wl)
            if self.place_gang(wl, strategy, level):
                scan.done(key) if wl.pending <= 0 else scan.keep(key)
            else:
                scan.fail(key)

    def _reclaim(self) -> None:
        sim = self.sim
        starving = []
        for key in self.pass_keys():
            wl = self.queue.head(key)
            if wl is not None and wl.pending > 0:
                starving.append(wl)
        starving.sort(key=lambda w: (self._saturation(w.queue), self._order(w)))
        running = None
        for wl in starving:
            need_pods = max(1, wl.min_member - len(wl.pods))
            need = need_pods * wl.request.gpu_units()
            if sim.queue_units.get(wl.queue, 0.0) + need > self.fair.get(wl.queue, 0.0) + 1e-9:
                continue  # only a queue below its fair share reclaims
            if sim.quick_fit(wl, need_pods):
                continue
            if wl.nominated_until > sim.now:
                continue  # victims of an earlier reclaim are still terminating
            if running is None:  # collected once per pass, only when a reclaim is really considered
                running = {}
                for n in sim.nodes:
                    for p in n.pods:
                        if p.state in ("running", "bound"):
                            running.setdefault(p.wl.uid, p.wl)
            victims = [v for v in running.values()
                       if v.queue != wl.queue and v.priority < PREEMPTIBLE_BELOW
                       and self._saturation(v.queue) > 1.0 + 1e-9
                       and (v.first_start is None or sim.now - v.first_start >= self.cfg.min_guaranteed_runtime)]
            victims.sort(key=lambda v: (-self._saturation(v.queue), v.priority, -(v.first_start or 0.0), -v.uid))
            chosen: list = []
            taken: dict[str, float] = {}
            probe = sim.eviction_probe(wl, need_pods)
            for v in victims:
                units = len(v.pods) * v.request.gpu_units()
                left = sim.queue_units.get(v.queue, 0.0) - taken.get(v.queue, 0.0) - units
                if left < self.fair.get(v.queue, 0.0) - 1e-9:
                    continue  # would push the victim queue below its own fair share
                chosen.append(v)
                taken[v.queue] = taken.get(v.queue, 0.0) + units
                probe.add(v.pods)
                if probe.fits():
                    break
            else:
                continue  # reclaiming cannot make room where the job fits: evict nothing
            for v in chosen:
                sim.evict(v, "KaiReclaim")
            wl.nominated_until = sim.now + sim.params.termination_grace + 1e-6
