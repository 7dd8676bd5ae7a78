"""Volcano: queues, gang, proportion (deserved shares), drf/priority order, preempt and reclaim.

Modelled from domain-facts.md §5:

* **enqueue** moves a PodGroup to Inqueue when its queue's allocated +
  inqueue + minResources stays within the queue's realCapability and the
  cluster-wide total within ``overcommit_factor`` x capacity.
* **allocate** visits queues in order (queue priority, then the lowest
  share allocated / deserved), jobs in priority then creation order.  With
  ``proportion`` a job is allocatable only if the queue's allocated + request
  <= deserved; ``deserved`` is the weighted water-filling of the cluster
  capped at each queue's request and realCapability and floored at its
  guarantee.  With ``gang`` a job's pods bind all-or-nothing (minAvailable).
  ``binpack`` scores MostAllocated; ``network-topology-aware`` packs gangs
  that ask for topology (or are communication-sensitive) into the fewest
  nodes; otherwise nodeorder spreads (LeastRequested).
* **preempt** (within a queue, by priority) and **reclaim** (across queues,
  from queues above deserved, only if ``reclaimable``) are off unless listed
  in ``actions``.  With ``gang``, a job's tasks are victims only while the job
  holds more than minAvailable pods - so a full gang at minAvailable is never
  a victim (the gang plugin's Preemptable/Reclaimable functions).
Quantities are GPUs (a MIG instance or replica counts as one unit of its
resource, a KAI-style fraction as its fraction).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler_core.metrics import water_fill
from scheduler_core.policies.base import QueuedPolicy

if TYPE_CHECKING:  # pragma: no cover
    from scheduler_core.workloads import Workload

INF = float("inf")


class VolcanoScheduler(QueuedPolicy):
    name = "volcano"

    def __init__(self, sim) -> None:
        super().__init__(sim)
        self.cfg = sim.cp.volcano
        self.queues = {q.name: q for q in self.cfg.queues}
        self.plugins = set(self.cfg.plugins)
        self.actions = list(self.cfg.actions)
        self.inqueue: set[int] = set()
        self._by_uid: dict[int, "Workload"] = {}
        self.deserved: dict[str, float] = {q: 0.0 for q in self.queues}

    def remove(self, wl: "Workload") -> None:
        super().remove(wl)

    def on_finish(self, wl: "Workload") -> None:
        super().on_finish(wl)
        self.inqueue.discard(wl.uid)
        self._by_uid.pop(wl.uid, None)

    # -- shares -------------------------------------------------------------------
    def _demand(self) -> dict[str, float]:
        """allocated + pending requests per queue (proportion's `request`)."""
        sim = self.sim
        return {q: sim.queue_units.get(q, 0.0) + sim.queue_pending_units.get(q, 0.0) for q in self.queues}

    def _real_capability(self, q) -> float:
        total = float(self.sim.capacity_gpus)
        guar = sum(x.guarantee for x in self.queues.values())
        real = total - guar + q.guarantee
        if q.capability is not None:
            real = min(real, q.capability)
        return real

    def compute_deserved(self) -> None:
        if "capacity" in self.plugins:
            # capacity plugin: configured deserved per queue (lendable and reclaimable).
            self.deserved = {n: float(q.deserved if q.deserved is not None else self._real_capability(q))
                             for n, q in self.queues.items()}
            return
        dem = self._demand()
        caps = {n: min(dem[n], self._real_capability(q)) for n, q in self.queues.items()}
        weights = {n: float(q.weight) for n, q in self.queues.items()}
        guar = {n: float(min(q.guarantee, caps[n])) for n, q in self.queues.items()}
        rest = float(self.sim.capacity_gpus) - sum(guar.values())
        extra = water_fill(max(0.0, rest), {n: caps[n] - guar[n] for n in caps}, weights)
        self.deserved = {n: guar[n] + extra[n] for n in caps}

    def _share(self, qname: str) -> float:
        d = self.deserved.get(qname, 0.0)
        a = self.sim.queue_units.get(qname, 0.0)
        return a / d if d > 0 else (INF if a > 0 else 0.0)

    # -- actions ------------------------------------------------------------------
    def cycle(self) -> None:
        self.compute_deserved()
        if "enqueue" in self.actions:
            self._enqueue()
        self._allocate()
        if "preempt" in self.actions:
            self._preempt()
        if "reclaim" in self.actions:
            self._reclaim()

    def _enqueue(self) -> None:
        sim = self.sim
        total = float(sim.capacity_gpus) * (self.cfg.overcommit_factor if "overcommit" in self.plugins else 1.0)
        inq = {q: 0.0 for q in self.queues}
        for uid in sorted(self.inqueue):
            wl = self._by_uid.get(uid)
            if wl is not None and wl.pending > 0:
                inq[wl.queue] += wl.pending * wl.request.gpu_units()
        used = sum(sim.queue_units.get(q, 0.0) for q in self.queues) + sum(inq.values())
        for key in sorted(self.pass_keys(), key=lambda k: (k[0], -k[1], str(k[2:]))):
            for wl in self.queue.iter_bucket(key):
                if wl.uid in self.inqueue:
                    continue
                need = wl.min_member * wl.request.gpu_units()
                q = self.queues[wl.queue]
                if sim.queue_units.get(wl.queue, 0.0) + inq[wl.queue] + need > self._real_capability(q) + 1e-9:
                    break  # queue full for this shape: later ones are no smaller
                if used + need > total + 1e-9:
                    break
                self.inqueue.add(wl.uid)
                self._by_uid[wl.uid] = wl
                inq[wl.queue] += need
                used += need

    def _strategy(self, wl: "Workload") -> tuple[str, str | None]:
        if wl.topology_required is not None:
            return "pack", wl.topology_required
        if "network-topology-aware" in self.plugins and (wl.topology_sensitivity > 0 or wl.topology_preferred):
            return "pack", None
        if "binpack" in self.plugins:
            return "binpack", None
        return "spread", None

    def _order(self, wl: "Workload") -> tuple:
        prio = -wl.priority if "priority" in self.plugins else 0
        return (prio, wl.enqueued_at, wl.seq)

    def _allocate(self) -> None:
        sim = self.sim
        gang = "gang" in self.plugins
        proportion = "proportion" in self.plugins or "capacity" in self.plugins
        by_queue: dict[str, list] = {}
        for key in self.pass_keys():
            by_queue.setdefault(key[0], []).append(key)
        scans = {q: self.queue.scan(self._order, keys) for q, keys in by_queue.items()}
        blocked: set[str] = set()
        while True:
            live = [q for q in scans if q not in blocked and scans[q].peek() is not None]
            if not live:
                break
            qname = min(live, key=lambda q: (-self.queues[q].priority, self._share(q), q))
            scan = scans[qname]
            key, wl = scan.next()
            if "enqueue" in self.actions and wl.uid not in self.inqueue:
                scan.fail(key)
                continue
            floor_units = max(1, wl.min_member - len(wl.pods)) * wl.request.gpu_units()
            alloc = sim.queue_units.get(qname, 0.0)
            q = self.queues[qname]
            deserved = self.deserved.get(qname, 0.0)
            if proportion and alloc >= deserved - 1e-9:
                blocked.add(qname)  # overused (deserved <= allocated): skipped for the session
                continue
            if proportion and alloc + floor_units > deserved + 1e-9:
                scan.fail(key)  # its tasks would not all be allocatable under deserved
                continue
            if q.capability is not None and alloc + floor_units > q.capability + 1e-9:
                scan.fail(key)
                continue
            strategy, level = self._strategy(wl)
            # proportion/capacity allocatable: every pod, not only the gang minimum, stays within deserved
            # (and capability); pods past it wait for the next session.
            room = INF
            if proportion:
                room = deserved - alloc
            if q.capability is not None:
                room = min(room, q.capability - alloc)
            units = wl.request.gpu_units()
            max_pods = None if room == INF or units <= 0 else max(0, int((room + 1e-9) // units))
            if max_pods == 0:
                scan.fail(key)
                continue
            if gang:
                ok = self.place_gang(wl, strategy, level, max_pods)
            else:
                ok = sim.place_pods_individually(wl, strategy, max_pods) > 0
            if ok and wl.pending <= 0:
                self.inqueue.discard(wl.uid)
                self._by_uid.pop(wl.uid, None)
                scan.done(key)
            elif ok:
                scan.keep(key)
            else:
                scan.fail(key)

    # -- eviction -----------------------------------------------------------------
    def _victim_pods(self, victim: "Workload") -> int:
        """Pods of ``victim`` that may be evicted (gang protects minAvailable; preemptable=false none)."""
        if not victim.preemptable:
            return 0
        bound = len(victim.pods)
        if "gang" in self.plugins:
            return max(0, bound - victim.min_member)
        return bound

    def _evict_for(self, wl: "Workload", candidates: list["Workload"], reason: str, free_units: float = 0.0) -> None:
        """Evict surplus pods of ``candidates`` (in order) until ``wl`` fits on the freed nodes
        and at least ``free_units`` GPU units of its queue's capability are freed."""
        sim = self.sim
        if wl.nominated_until > sim.now:
            return  # earlier victims are still terminating
        need_pods = max(1, wl.min_member - len(wl.pods))
        chosen: list = []
        probe = sim.eviction_probe(wl, need_pods)
        for v in candidates:
            k = self._victim_pods(v)
            # one pod at a time, newest first: evict only as many as the preemptor needs
            for p in (list(v.pods)[-k:][::-1] if k > 0 else ()):
                chosen.append(p)
                probe.add([p])
                free_units -= v.request.gpu_units()
                if probe.fits() and free_units <= 1e-9:
                    break
            if probe.fits() and free_units <= 1e-9:
                break
        else:
            return
        for p in chosen:
            sim.preempt_pod(p, reason, f"for {wl.name} of queue {wl.queue}")
        wl.nominated_until = sim.now + sim.params.termination_grace + 1e-6

    def _starving(self):
        for key in self.pass_keys():
            wl = self.queue.head(key)
            if wl is not None and wl.pending > 0:
                yield wl

    def _reclaim(self) -> None:
        sim = self.sim
        for wl in sorted(self._starving(), key=self._order):
            need = max(1, wl.min_member - len(wl.pods)) * wl.request.gpu_units()
            if sim.queue_units.get(wl.queue, 0.0) + need > self.deserved.get(wl.queue, 0.0) + 1e-9:
                continue  # only queues below their deserved share reclaim
            if sim.quick_fit(wl, max(1, wl.min_member - len(wl.pods))):
                continue
            others = sorted((w for w in self._running() if w.queue != wl.queue
                             and self.queues[w.queue].reclaimable
                             and sim.queue_units.get(w.queue, 0.0) > self.deserved.get(w.queue, 0.0) + 1e-9),
                            key=lambda w: (-self._share(w.queue), w.priority, -(w.first_start or 0.0), -w.uid))
            self._evict_for(wl, others, "VolcanoReclaim")

    def _preempt(self) -> None:
        sim = self.sim
        for wl in sorted(self._starving(), key=self._order):
            need_pods = max(1, wl.min_member - len(wl.pods))
            cap = self.queues[wl.queue].capability
            # A queue at its capability cannot allocate even on idle nodes: preempt within it for the room.
            short = 0.0 if cap is None else (sim.queue_units.get(wl.queue, 0.0)
                                             + need_pods * wl.request.gpu_units() - cap)
            if short <= 1e-9 and sim.quick_fit(wl, need_pods):
                continue
            same = sorted((w for w in self._running() if w.queue == wl.queue and w.priority < wl.priority),
                          key=lambda w: (w.priority, -(w.first_start or 0.0), -w.uid))
            self._evict_for(wl, same, "VolcanoPreempt", max(0.0, short))

    def _running(self):
        seen: dict[int, "Workload"] = {}
        for n in self.sim.nodes:
            for p in n.pods:
                if p.state in ("running", "bound"):
                    seen.setdefault(p.wl.uid, p.wl)
        return [seen[k] for k in sorted(seen)]

    # -- explanation ----------------------------------------------------------------
    def explain(self, wl: "Workload") -> str:
        """The PodGroup condition Volcano writes (gang FitError), or the enqueue/queue reason."""
        sim = self.sim
        if "gang" not in self.plugins or wl.pending <= 0:
            return super().explain(wl)
        p = wl.pending
        head = (f"{p}/{wl.pods_total} tasks in gang unschedulable: pod group is not ready, {p} Pending, "
                f"{wl.min_member} minAvailable; Pending: ")
        if "enqueue" in self.actions and wl.uid not in self.inqueue:
            return f"queue resource quota insufficient; {head}{p} Undetermined"
        alloc = sim.queue_units.get(wl.queue, 0.0)
        deserved = self.deserved.get(wl.queue, 0.0)
        floor = max(1, wl.min_member - len(wl.pods)) * wl.request.gpu_units()
        proportion = "proportion" in self.plugins or "capacity" in self.plugins
        if proportion and alloc + floor > deserved + 1e-9:
            return (f"{head}{p} Undetermined; queue {wl.queue} is overused: allocated {alloc:g} + "
                    f"{floor:g} > deserved {deserved:g} GPU")
        cap = self.queues[wl.queue].capability
        if cap is not None and alloc + floor > cap + 1e-9:
            return f"{head}{p} Undetermined; queue {wl.queue} capability {cap:g} GPU reached"
        fit = sim.pods_that_fit(wl, p)
        parts = sorted([(fit, "Schedulable"), (p - fit, "Unschedulable")])
        msg = head + ", ".join(f"{n} {what}" for n, what in parts if n)
        if fit < p:
            origin = sim.unschedulable(wl, siblings_fill=True, wording="unavailable")
            msg += f". Origin reason is {wl.name}-{len(wl.pods) + fit}: {origin}"
        return msg
