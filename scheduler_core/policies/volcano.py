"""Volcano: queues, gang, proportion or capacity shares, drf/priority order, preempt and reclaim.

Modelled from domain-facts.md §5 and volcano-sh/volcano ``pkg/scheduler`` (plugins ``proportion``,
``capacity``, ``overcommit``, ``gang``; actions ``enqueue``, ``allocate``, ``preempt``, ``reclaim``).
Queue quantities are resource vectors (:mod:`scheduler_core.resources`): ``nvidia.com/gpu`` (GPU units:
a MIG instance or replica counts as one unit of its resource, a KAI-style fraction as its fraction),
``cpu`` and ``memory`` (GiB).  A queue's capability, guarantee and deserved are ResourceLists: a
dimension they leave out is unbounded.

* **enqueue** moves a PodGroup to Inqueue when every plugin permits, in plugin order:
  ``overcommit`` (the job's minimum + everything allocated or inqueue stays within ``overcommit_factor``
  x the cluster, per dimension the job asks for) and ``proportion``/``capacity`` (minimum + the queue's
  allocated + inqueue within its realCapability).  realCapability = cluster - all guarantees + the
  queue's guarantee, capped by its capability, per dimension.
* **allocate** visits queues in order (queue priority, then the lowest share = the largest allocated /
  deserved over the dimensions), jobs in priority then creation order.  ``proportion``: deserved is the
  weighted water-filling of the cluster per dimension, capped at each queue's request and
  realCapability and floored at its guarantee; a queue whose allocation has reached its deserved share
  in *every* dimension is overused and skipped; a pod is allocatable while allocated + request <=
  deserved in each dimension it asks for.  ``capacity``: deserved is configured (capped by
  realCapability, floored at guarantee); a pod is allocatable while allocated + request <=
  realCapability - a queue may run above its deserved share while others do not claim it.  With
  ``gang`` a job's pods bind all-or-nothing (minAvailable); pods past the queue's bound wait.
  ``binpack`` scores MostAllocated; ``network-topology-aware`` packs gangs that ask for topology (or
  are communication-sensitive) into the fewest nodes; otherwise nodeorder spreads (LeastRequested).
* **preempt** (within a queue, lower priority only) runs when the job does not fit the nodes or its
  queue's bound (deserved / realCapability) - "the cluster has free resources, but the queue is not
  allocatable" is same-queue preemption's case.  **reclaim** (across queues, only ``reclaimable``
  ones) runs for a queue that is not overused and whose job would stay within its deserved share
  (capacity: within realCapability and within deserved in at least one dimension); victims come from
  queues above their deserved share in some dimension (capacity: a dimension the victim uses), and a
  victim queue is not pushed below its guarantee.  Both are off unless listed in ``actions``.  With
  ``gang``, a job's tasks are victims only while the job holds more than minAvailable pods.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler_core.cluster import GPU
from scheduler_core.metrics import KeptWaterFill
from scheduler_core.policies import volcano_backfill
from scheduler_core.policies.base import QueuedPolicy, ShapeQueue
from scheduler_core.policies.volcano_hierarchy import QueueHierarchy
from scheduler_core.policies.volcano_inqueue import EnqueueGate, updated_usage
from scheduler_core.resources import EPS, INF, add_into, exceeds_any, all_reached, any_above, exceeded, pods_within, quantity, scaled

if TYPE_CHECKING:  # pragma: no cover
    from scheduler_core.workloads import Workload


class VolcanoScheduler(QueueHierarchy, QueuedPolicy):
    """Extension points: queue_order (``priority`` plugin), open_session (deserved shares), admit (the
    enqueue action), allocate, score, preempt and reclaim (each action only when listed in ``actions``)."""

    name = "volcano"

    def __init__(self, sim) -> None:
        super().__init__(sim)
        self.cfg = sim.cp.volcano
        self.queues = {q.name: q for q in self.cfg.queues}
        # Hierarchical queues (capacity plugin, enableHierarchy): the tree under the root queue.
        self.hierarchy = self.cfg.enable_hierarchy
        self.parent: dict[str, str | None] = {}
        self.children: dict[str, list[str]] = {}
        if self.hierarchy:
            self._build_tree()
        self.plugins = set(self.cfg.plugins)
        self.actions = list(self.cfg.actions)
        self.capacity = "capacity" in self.plugins  # configured deserved, allocation up to realCapability
        self.proportion = "proportion" in self.plugins  # water-filled deserved, allocation up to it
        self.inqueue: set[int] = set()
        # The bucket each Inqueue job joined from and, per bucket, how many of its jobs are Inqueue: allocate
        # passes a bucket with none without looking its head up (buckets by the id of their interned key).
        self._inq_key: dict[int, int] = {}
        self._inq_per_key: dict[int, int] = {}
        self._enqueue_keys: tuple = (None, [])  # the buckets holding jobs not yet Inqueue, and in enqueue order
        self._by_uid: dict[int, "Workload"] = {}
        # Incremental passes (issue 34): the jobs of each bucket not yet Inqueue, in the bucket's FIFO
        # order, so that enqueue never walks the Inqueue backlog; per queue, the Inqueue jobs and the
        # resources they wait for, recomputed only for queues whose jobs changed since the last pass.
        self.unqueued = ShapeQueue(self.queue.canonical)
        self._inq_members: dict[str, dict[int, "Workload"]] = {q: {} for q in self.queues}
        self._inq_cache: dict[str, dict[str, float]] = {}
        self._inq_dirty: set[str] = set(self.queues)
        self._inq_counted: dict[str, dict[int, tuple]] = {}  # per queue: each job's (workload, pending pods) counted
        self._inq_inexact: set[str] = set()  # queues recounted in uid order (a request not dyadic)
        self._split_of: dict[str, tuple] = {}  # per resource: the caps last water-filled and their shares
        self._fills: dict[str, KeptWaterFill] = {}  # per resource: its split, kept while no capped demand changes
        self._guaranteed = any(q.guarantee for q in self.queues.values())
        self._key_order: dict[int, tuple] = {}  # by the id of a bucket's key: keys are interned, kept for the run
        self._floors: dict[tuple, dict[str, float]] = {}  # a plain job's floor, by its key's id and bound pods
        self._placed = False  # whether the last allocate step placed pods
        self._minima: dict[int, dict[str, float]] = {}  # a plain job's minimum, by the id of its bucket's key
        # A plain job's bucket enqueue last rejected, by the id of its key: the cluster's committed resources
        # and the queue's allocated + inqueue it was rejected against (the check's only other inputs).
        self._rejected: dict[int, tuple] = {}
        # A queue's allocated as proportion counts it (a releasing, terminating pod is in none): the port's
        # own method, bound once - it is asked for on every step.
        self._used = sim.queue_allocated
        self.real = self._hierarchical_real() if self.hierarchy else \
            {n: self._real_capability(q) for n, q in self.queues.items()}
        self._weights = {n: float(q.weight) for n, q in self.queues.items()}
        self._demand = False  # whether this session's demand is still to be read (and water-filled)
        self._deserved: dict[str, dict[str, float]] = {q: {} for q in self.queues}
        self._split_names: set[str] | None = None  # the resources deserved was last built for

    # -- PodGroups with task roles: the group's first role stands for it in the queue ----------------
    def key(self, wl: "Workload"):
        if wl.group is not None:  # a group's fit depends on all its roles: a bucket of its own
            return (wl.queue, wl.priority, ("podgroup", wl.group.leader.uid), 0, 0)
        return super().key(wl)

    def enqueue(self, wl: "Workload") -> None:
        self._inq_dirty.add(wl.queue)
        head = wl if wl.group is None else wl.group.leader
        if self._pending(wl) <= 0:
            return
        key = self.key(head)
        if head.uid not in self.queue.member and head.uid not in self.inqueue:
            self.unqueued.push(head, key, self.sim.now)
        self.queue.push(head, key, self.sim.now)
        self.new_keys.add(key)

    def remove(self, wl: "Workload") -> None:
        self._inq_dirty.add(wl.queue)
        if wl.group is None:
            self.unqueued.remove(wl)
            return super().remove(wl)
        if wl.group.pending <= 0:
            self.unqueued.remove(wl.group.leader)
            self.queue.remove(wl.group.leader)

    def on_finish(self, wl: "Workload") -> None:
        self._inq_dirty.add(wl.queue)
        if wl.group is not None:
            if any(not m.finished for m in wl.group.members):
                return
            wl = wl.group.leader
        super().on_finish(wl)
        self.unqueued.remove(wl)
        self._leave_inqueue(wl)

    def _join_inqueue(self, wl: "Workload", key=None) -> None:
        key = id(self.queue.canonical.setdefault(self.key(wl), self.key(wl)) if key is None else key)
        self._inq_key[wl.uid] = key
        self._inq_per_key[key] = self._inq_per_key.get(key, 0) + 1
        self.inqueue.add(wl.uid)
        self._by_uid[wl.uid] = wl
        self._inq_members[wl.queue][wl.uid] = wl
        self._inq_dirty.add(wl.queue)
        self.unqueued.remove(wl)

    def _leave_inqueue(self, wl: "Workload") -> None:
        key = self._inq_key.pop(wl.uid, None)
        if key is not None:
            self._inq_per_key[key] -= 1
        self.inqueue.discard(wl.uid)
        self._by_uid.pop(wl.uid, None)
        self._inq_members[wl.queue].pop(wl.uid, None)
        self._inq_dirty.add(wl.queue)

    @staticmethod
    def _pending(wl: "Workload") -> int:
        return wl.group.pending if wl.group is not None else wl.pending

    @staticmethod
    def _parts(wl: "Workload") -> list[tuple["Workload", int]]:
        """The pods the job needs next, per workload: up to minAvailable (a group: each role's
        minTaskMember and the PodGroup's minMember), else one more pod (elastic)."""
        if wl.group is None:
            return [(wl, max(1, wl.min_member - len(wl.pods)))]
        parts = wl.group.floor()
        if not any(k for _, k in parts):
            first = next((m for m in wl.group.members if m.pending > 0), wl.group.leader)
            parts = [(m, 1 if m is first else 0) for m in wl.group.members]
        return parts

    @staticmethod
    def _need(parts: list[tuple["Workload", int]]) -> dict[str, float]:
        need: dict[str, float] = {}
        for m, k in parts:
            add_into(need, m.request.share, k)
        return need

    # -- shares -------------------------------------------------------------------
    def _real_capability(self, q) -> dict[str, float]:
        """cluster - every queue's guarantee + this queue's guarantee, capped by its capability."""
        total = self.sim.capacity_total
        real: dict[str, float] = {}
        for r in set(total) | set(q.capability or {}):
            x = total.get(r, INF) - sum(o.guarantee.get(r, 0.0) for o in self.queues.values()) + q.guarantee.get(r, 0.0)
            if q.capability is not None and r in q.capability:
                x = min(x, q.capability[r])
            if x < INF:
                real[r] = x
        return real

    def compute_deserved(self) -> None:
        """Take the queues' demand for this session; deserved follows from it (computed when first read)."""
        if self.capacity:
            # capacity plugin: the configured deserved, within realCapability, at least the guarantee.
            self._deserved = {}
            for n, q in self.queues.items():
                d = {r: min(x, self.real[n].get(r, INF)) for r, x in (q.deserved or {}).items()}
                for r, g in q.guarantee.items():
                    d[r] = max(d.get(r, 0.0), g)
                self._deserved[n] = d
            return
        self._demand = True

    @property
    def deserved(self) -> dict[str, dict[str, float]]:
        """proportion: the weighted water-filling of the session's demand (the queues' allocation plus their
        pending pods), recomputed only when the demand changed - many sessions read none of it."""
        if self._demand:
            self._demand = False
            self._water_fill()
        return self._deserved

    @deserved.setter
    def deserved(self, value: dict[str, dict[str, float]]) -> None:
        self._demand, self._deserved = False, value

    def _water_fill(self) -> None:
        """Deserved per resource from each queue's demand (allocated + pending, within realCapability).  A
        resource's split depends only on those caps (the cluster, guarantees and weights are fixed): the same
        caps as when it was last split, the same shares - deserved is rebuilt only when some split changed."""
        sim = self.sim
        weights = self._weights
        used = [(n, self._used(n), sim.queue_pending.get(n, {}), self.real[n]) for n in self.queues]
        names = set(sim.capacity_total)
        for _, u, p, _ in used:
            names.update(u)
            names.update(p)
        splits, changed = [], False
        for r in names:
            # demand = allocated + pending (a resource missing from either is zero), capped at realCapability
            stamp = tuple(min(u.get(r, 0.0) + p.get(r, 0.0), real.get(r, INF)) for _, u, p, real in used)
            last = self._split_of.get(r)
            if last is not None and last[0] == stamp:
                splits.append((r, last[1]))
                continue
            changed = True
            caps = dict(zip(self.queues, stamp))
            total = sim.capacity_total.get(r, INF)
            if total == INF:
                share = caps  # nothing to divide: every queue deserves what it asks, within its capability
            elif self._guaranteed or min(stamp) < 0:
                guar = {n: min(q.guarantee.get(r, 0.0), caps[n]) for n, q in self.queues.items()}
                fill = self._fills.get(r) or self._fills.setdefault(r, KeptWaterFill())
                extra = fill(max(0.0, total - sum(guar.values())), {n: caps[n] - guar[n] for n in caps}, weights)
                share = {n: guar[n] + extra[n] for n in caps}
            else:  # no guarantee: each is 0.0 (caps >= 0), so the same figures without adding or taking it off
                fill = self._fills.get(r) or self._fills.setdefault(r, KeptWaterFill())
                share = fill(max(0.0, total), caps, weights)
            self._split_of[r] = (stamp, share)
            splits.append((r, share))
        if changed or self._split_names != names:
            self._split_names = names
            self._deserved = {n: {r: share[n] for r, share in splits} for n in self.queues}

    def _share(self, qname: str) -> float:
        """Volcano's queue share: the largest allocated / deserved over the deserved dimensions."""
        d = self.deserved.get(qname, {})
        if self.capacity and not any(x > EPS for x in d.values()):
            return 1.0  # capacity: a queue without deserved is best-effort, after every queue below its share
        used = self._used(qname)
        return max((used.get(r, 0.0) / x for r, x in d.items() if x > EPS), default=0.0)

    def _bound(self, qname: str) -> dict[str, float] | None:
        """What a queue's allocation must stay within (None: no queue plugin, no bound)."""
        if self.capacity:
            return self._hierarchical_bound(qname) if self.hierarchy else self.real[qname]
        if self.proportion:
            return self.deserved.get(qname, {})
        return None

    def _overused(self, qname: str) -> bool:
        """proportion's OverusedFn: deserved <= allocated in every dimension (capacity has none)."""
        return self.proportion and all_reached(self._used(qname), self.deserved.get(qname, {}))

    def _floor(self, wl: "Workload") -> dict[str, float]:
        """The resources of the pods the gang still needs to reach minAvailable (at least one)."""
        return self._need(self._parts(wl))

    # -- actions: the extension points the scheduling cycle calls ----------------------------------
    def open_session(self) -> None:
        self.compute_deserved()

    def _inqueue_usage(self) -> dict[str, dict[str, float]]:
        """Per queue, the resources its Inqueue jobs' pending pods ask for (kept between passes: the caller
        must not change it).  Summed in uid order, as a whole recount would; only queues whose jobs changed
        are recounted, and only their jobs that changed while every quantity is dyadic (:meth:`_inq_update`)."""
        for q in self._inq_dirty:
            if self._inq_update(q):
                continue
            acc: dict[str, float] = {}
            members = self._inq_members[q]
            for uid in sorted(members):
                wl = members[uid]
                for m in (wl.group.members if wl.group is not None else (wl,)):
                    add_into(acc, m.request.share, m.pending)
            self._inq_cache[q] = acc
        self._inq_dirty.clear()
        return self._inq_cache

    def _inq_update(self, q: str) -> bool:
        """Update queue ``q``'s kept inqueue usage from the jobs that changed (:mod:`volcano_inqueue`); False
        once the queue holds a quantity an update may round (recount it in uid order)."""
        if q in self._inq_inexact:
            return False
        acc = updated_usage(self._inq_cache.get(q, {}), self._inq_members[q], self._inq_counted.setdefault(q, {}))
        if acc is None:
            self._inq_inexact.add(q)
            return False
        self._inq_cache[q] = acc
        return True

    def _committed(self, inq: dict[str, dict[str, float]]) -> dict[str, float]:
        """What the overcommit plugin counts as taken: every queue's allocation plus its inqueue jobs' minima."""
        used: dict[str, float] = {}
        for q in self.queues:
            add_into(add_into(used, self._used(q)), inq[q])
        return used

    def _enqueue_rejection(self, wl: "Workload", inq: dict[str, dict[str, float]],
                           committed: dict[str, float] | None = None) -> str | None:
        """Why JobEnqueueable rejects ``wl`` (the first rejecting plugin's event), or None. ``committed``:
        :meth:`_committed` of ``inq``, when the caller keeps it up to date across many jobs."""
        minimum = self._need(wl.group.floor()) if wl.group is not None else scaled(wl.request.share, wl.min_member)
        for plugin in self.cfg.plugins:
            if plugin == "overcommit":
                used = self._committed(inq) if committed is None else dict(committed)
                idle = scaled(self.sim.capacity_total, self.cfg.overcommit_factor)
                names = exceeded(used, minimum, idle)
                if names:
                    return "resource in cluster is overused: " + ", ".join(f"overused {r}" for r in names)
            elif plugin in ("proportion", "capacity"):
                if self.hierarchy:
                    if self._not_leaf(wl.queue):
                        return self._not_leaf_words(wl)
                    over = self._hierarchy_excess(wl.queue, inq, minimum)
                    names = over[2] if over is not None else []
                else:
                    names = exceeded(add_into(dict(self._used(wl.queue)), inq[wl.queue]), minimum, self.real[wl.queue])
                if names:
                    return "queue resource quota insufficient: " + ", ".join(f"insufficient {r}" for r in names)
        return None

    def _enqueue_order(self, key) -> tuple:
        order = self._key_order.get(id(key))
        if order is None:
            order = self._key_order[id(key)] = (key[0], -key[1], str(key[2:]))
        return order

    def admit(self) -> None:
        """The enqueue action: PodGroups whose minimum every plugin permits become Inqueue."""
        if "enqueue" not in self.actions:
            return
        # Only buckets holding jobs not yet Inqueue have anything to enqueue: the pass's buckets among those,
        # in enqueue order (sorted again only when the set of such buckets changed).
        buckets = self.unqueued.buckets
        ids = tuple(map(id, buckets))  # keys are interned: the same ids, the same buckets (no key is hashed)
        if self._enqueue_keys[0] != ids:
            self._enqueue_keys = (ids, sorted(buckets, key=self._enqueue_order))
        keys = self._enqueue_keys[1]
        if not self.sim.full_pass:
            queues = {k[0] for k in self.new_keys}
            keys = [k for k in keys if k[0] in queues]
        if not keys:
            return
        inq = self._inqueue_usage()
        committed = self._committed(inq) if "overcommit" in self.cfg.plugins else None
        member = self.queue.member
        gate = EnqueueGate(self, inq, committed)
        minima, idle = self._minima, gate.idle
        for key in keys:
            # A bucket of plain jobs shares one minimum (kept by its key's id): when the cluster's overcommit
            # already rejects it, its head would be rejected too - the bucket is passed without looking it up.
            m = minima.get(id(key)) if committed is not None else None
            if m is not None and exceeds_any(committed, m, idle):
                continue
            # The bucket's jobs not yet Inqueue, in its FIFO order (the Inqueue ones are skipped as before).
            while (wl := self.unqueued.head(key)) is not None:
                entry = member.get(wl.uid)
                if entry is None or entry[0] != key or wl.uid in self.inqueue:
                    self.unqueued.remove(wl)  # left the scheduler queue meanwhile: not a job to enqueue
                    continue
                if gate.blocked(wl, key):
                    break  # queue or cluster full for this shape: later ones are no smaller
                self._join_inqueue(wl, key)
                gate.joined(wl)

    def score(self, wl: "Workload") -> tuple[str, str | None]:
        if wl.topology_required is not None:
            return "pack", wl.topology_required
        if "network-topology-aware" in self.plugins and (wl.topology_sensitivity > 0 or wl.topology_preferred):
            return "pack", None
        if "binpack" in self.plugins:
            return "binpack", None
        return "spread", None

    def queue_order(self, wl: "Workload") -> tuple:
        prio = -wl.priority if "priority" in self.plugins else 0
        return (prio, wl.enqueued_at, wl.seq)

    def allocate(self) -> None:
        """The allocate action, then backfill (each only when listed in ``actions``)."""
        if "allocate" in self.actions:
            self._allocate_jobs()
        if "backfill" in self.actions:
            volcano_backfill.backfill(self)

    def _allocate_jobs(self) -> None:
        gang = "gang" in self.plugins
        gated = "enqueue" in self.actions
        by_queue: dict[str, tuple[list, list]] = {}
        head_of = self.queue.head
        room: dict[str, tuple] = {}  # per queue: its allocation and bound as the session opens
        inq_per_key = self._inq_per_key
        for key in self.pass_keys():
            if gated and not inq_per_key.get(id(key)):
                continue  # no job of the bucket is Inqueue: its head is not either
            head = head_of(key)
            if head is None or (gated and head.uid not in self.inqueue) or volcano_backfill.best_effort(head):
                continue  # an empty bucket is not scanned; a job not Inqueue is not allocated: it would fail at once;
                # a BestEffort job is backfill's
            if head.group is None:
                # A plain job whose floor passes its queue's bound now would fail the step's same check later:
                # a queue's allocation only grows during allocate and its bound is the session's.
                used_bound = room.get(key[0])
                if used_bound is None:
                    used_bound = room[key[0]] = (self._used(key[0]), self._bound(key[0]))
                if used_bound[1] is not None and exceeds_any(used_bound[0], self._plain_floor(head, key), used_bound[1]):
                    continue
            keys, heads = by_queue.setdefault(key[0], ([], []))
            keys.append(key)
            heads.append(head)
        scans = {q: self.queue.scan(self.queue_order, keys, heads) for q, (keys, heads) in by_queue.items()}
        # Only the queue allocated to changes its share and its scan: the others' are kept across steps.
        order = {q: self._order_key(q) for q in scans if scans[q].has_next()}
        while order:
            qname = min(order, key=order.__getitem__)
            scan = scans[qname]
            key, wl = scan.next()
            if not (self._step(qname, scan, key, wl, gang) and scan.has_next()):
                del order[qname]  # drained, or overused: skipped for the rest of the session
            elif self._placed:  # nothing placed: the queue's allocation, so its share, is unchanged
                order[qname] = self._order_key(qname)
            if self.hierarchy and self._placed:  # an allocation changes its ancestors' shares, which order other leaves too
                order = {q: self._order_key(q) for q in order}

    def _step(self, qname: str, scan, key, wl: "Workload", gang: bool) -> bool:
        """One allocate step for the head job ``wl`` of bucket ``key`` of queue ``qname``; False when the
        queue is overused (deserved <= allocated) and is skipped for the session."""
        sim = self.sim
        self._placed = False
        if "enqueue" in self.actions and wl.uid not in self.inqueue:
            scan.fail(key)
            return True
        if self._overused(qname):
            return False
        if self._not_leaf(qname):
            scan.fail(key)  # capacity: only a leaf queue's jobs are allocatable
            return True
        bound = self._bound(qname)
        if bound is not None:
            floor = self._floor(wl) if wl.group is not None else self._plain_floor(wl, key)
            if exceeds_any(self._used(qname), floor, bound):
                scan.fail(key)  # its tasks would not all be allocatable within the queue's bound
                return True
        if wl.group is not None:
            ok = self._place_group(wl, bound)
            pending = wl.group.pending
        else:
            max_pods = None
            if bound is not None:
                # every pod, not only the gang minimum, stays within the bound; pods past it wait
                used = self._used(qname)
                room = pods_within({r: b - used.get(r, 0.0) for r, b in bound.items()}, wl.request.share)
                max_pods = None if room == INF else int(room)
            strategy, level = self.score(wl)
            if gang:
                ok = self.place_gang(wl, strategy, level, max_pods)
            else:
                ok = sim.place_pods_individually(wl, strategy, max_pods) > 0
            pending = wl.pending
        if ok:
            self._inq_dirty.add(wl.queue)
            self._placed = True
        if ok and pending <= 0:
            self._leave_inqueue(wl)
            scan.done(key)
        elif ok:
            scan.keep(key)
        else:
            scan.fail(key)
        return True

    def _plain_floor(self, wl: "Workload", key) -> dict[str, float]:
        """:meth:`_floor` of a plain job: it follows from its bucket and its bound pods, so it is kept."""
        floor = self._floors.get((id(key), len(wl.pods)))
        if floor is None:
            floor = self._floors[id(key), len(wl.pods)] = self._floor(wl)
        return floor

    def _place_group(self, wl: "Workload", bound: dict[str, float] | None) -> bool:
        """All roles of a PodGroup at once: every pending pod when the queue's bound allows and they fit,
        else the gang minimum (gang); pods past the bound wait.  Without gang, role by role as pods fit."""
        sim = self.sim
        group = wl.group
        strategy, level = self.score(wl)
        full = [(m, m.pending) for m in group.members]
        if "gang" not in self.plugins:
            return sum(sim.place_pods_individually(m, strategy) for m, k in full if k > 0) > 0
        plans = None
        if (bound is None or not exceeded(self._used(wl.queue), self._need(full), bound)) and \
                all(sim.quick_fit(m, k) for m, k in full if k > 0):
            plans = sim.plan_group(full, strategy, level)
        if plans is None:
            plans = self._plan_minimum(group, strategy, level)
        if not plans:
            return False
        for m, plan in plans:
            sim.bind_plan(m, plan)
        return True

    def _plan_minimum(self, group, strategy: str, level: str | None):
        """Volcano's allocate walks a job's tasks: each role's minTaskMember first (when minMember covers
        them), then further pods role by role, as long as they fit, until minMember is reached (one
        more pod once it is: elastic).  The plan, or None."""
        sim = self.sim
        members = group.members
        count = {m.uid: min(m.pending, max(0, m.min_member - len(m.pods))) if group.task_minimums else 0
                 for m in members}
        extra = max(0, group.min_member - group.bound - sum(count.values())) or (0 if any(count.values()) else 1)
        plans = sim.plan_group([(m, count[m.uid]) for m in members], strategy, level)
        for m in members:
            while plans is not None and extra and count[m.uid] < m.pending:
                count[m.uid] += 1
                trial = sim.plan_group([(x, count[x.uid]) for x in members], strategy, level)
                if trial is None:
                    count[m.uid] -= 1
                    break
                plans, extra = trial, extra - 1
        return plans if plans is not None and extra == 0 else None

    # -- eviction -----------------------------------------------------------------
    def _victim_pods(self, victim: "Workload") -> int:
        """Pods of ``victim`` that may be evicted (gang protects minAvailable; preemptable=false none)."""
        if not victim.preemptable:
            return 0
        bound = len(victim.pods)
        if "gang" in self.plugins:
            return max(0, bound - victim.min_member)
        return bound

    def _evict_for(self, wl: "Workload", need_pods: int, candidates: list["Workload"], reason: str,
                   short: dict[str, float] | None = None, allow=None) -> None:
        """Evict surplus pods of ``candidates`` (in order) until ``need_pods`` pods of ``wl`` fit on the
        freed nodes and the pods freed cover ``short`` (the preemptor queue's shortfall) in every dimension.

        ``allow(victim)`` (reclaim) says whether one more pod of ``victim`` may go, and counts it."""
        sim = self.sim
        if wl.nominated_until > sim.now:
            return  # earlier victims are still terminating
        short = {r: x for r, x in (short or {}).items() if x > EPS}
        chosen: list = []
        probe = sim.eviction_probe(wl, need_pods)

        def enough() -> bool:
            return probe.fits() and all(x <= EPS for x in short.values())

        for v in candidates:
            k = self._victim_pods(v)
            # one pod at a time, newest first: evict only as many as the preemptor needs
            for p in (list(v.pods)[-k:][::-1] if k > 0 else ()):
                if allow is not None and not allow(v):
                    break
                chosen.append(p)
                probe.add([p])
                for r in short:
                    short[r] -= v.request.share.get(r, 0.0)
                if enough():
                    break
            if enough():
                break
        else:
            return
        for p in chosen:
            sim.preempt_pod(p, reason, f"for {wl.name} of queue {wl.queue}")
        wl.nominated_until = sim.now + sim.params.termination_grace + 1e-6

    def _may_reclaim(self, wl: "Workload") -> bool:
        """reclaim's queue checks: the queue is not overused and the job may grow it (Preemptive)."""
        q = wl.queue
        if self._overused(q):
            return False
        used, need = self._used(q), self._floor(wl)
        if self.capacity:
            d = self.deserved[q]
            return not exceeded(used, need, self.real[q]) and any(
                a > 0 and used.get(r, 0.0) + a <= d.get(r, 0.0) + EPS for r, a in need.items())
        return not exceeded(used, need, self.deserved.get(q, {}))

    def _reclaimable_from(self, reclaimer: "Workload"):
        """The victim check of proportion / capacity: one more pod of a queue may go while the queue
        stays above its deserved share in some (capacity: relevant) dimension and at its guarantee."""
        left = {q: dict(self._used(q)) for q in self.queues}

        def allow(v: "Workload") -> bool:
            q, per_pod = v.queue, v.request.share
            d = self.deserved.get(q, {})
            after = add_into(dict(left[q]), per_pod, -1.0)
            if self.capacity:
                if any(after.get(r, 0.0) < g - EPS for r, g in self.queues[q].guarantee.items()):
                    return False
                # an immediate victim shares no nonzero deserved dimension; else its queue must be above
                # deserved in a dimension the victim uses that deserved names (a GPU even at zero)
                immediate = not any(a > 0 and d.get(r, 0.0) > EPS for r, a in per_pod.items())
                relevant = [r for r, a in per_pod.items() if a > 0 and r in d and (r == GPU or d[r] > EPS)]
                ok = immediate or any_above(left[q], d, relevant)
            else:
                ok = any_above(left[q], d)
            if ok:
                left[q] = after
            return ok

        return allow

    def reclaim(self) -> None:
        if "reclaim" not in self.actions:
            return
        sim = self.sim
        for wl in sorted(self._starving(), key=self.queue_order):
            if volcano_backfill.best_effort(wl) or not self._may_reclaim(wl):
                continue  # only queues below their deserved share reclaim
            parts = [(m, k) for m, k in self._parts(wl) if k > 0]
            if all(sim.quick_fit(m, k) for m, k in parts):
                continue
            # Victims in the reverse of the queue order (framework VictimQueueOrderFn without a plugin's own:
            # !QueueOrderFn - the lowest queue priority first, then the largest share), then by job.
            others = sorted((w for w in self._running() if w.queue != wl.queue and self.queues[w.queue].reclaimable),
                            key=lambda w: (-self._victim_level(w.queue, wl.queue), self.queues[w.queue].priority,
                                           -self._share(w.queue), w.priority,
                                           -(w.first_start or 0.0), -w.uid))
            allow = self._reclaimable_from(wl)
            for m, k in parts:  # a PodGroup's roles each make room for their own pods
                self._evict_for(m, k, others, "VolcanoReclaim", allow=allow)

    def preempt(self) -> None:
        if "preempt" not in self.actions:
            return
        sim = self.sim
        for wl in sorted(self._starving(), key=self.queue_order):
            need = self._floor(wl)
            bound = self._bound(wl.queue)
            # A queue at its bound cannot allocate even on idle nodes: preempt within it for the room.
            used = self._used(wl.queue)
            short = {} if bound is None else {r: used.get(r, 0.0) + a - bound[r] for r, a in need.items() if r in bound}
            parts = [(m, k) for m, k in self._parts(wl) if k > 0]
            if all(x <= EPS for x in short.values()) and all(sim.quick_fit(m, k) for m, k in parts):
                continue
            same = sorted((w for w in self._running() if w.queue == wl.queue and w.priority < wl.priority
                           and volcano_backfill.may_preempt(wl, w)),
                          key=lambda w: (w.priority, -(w.first_start or 0.0), -w.uid))
            for m, k in parts:  # the queue's shortfall is made up by the first role's victims
                self._evict_for(m, k, same, "VolcanoPreempt", short)
                short = {}

    def _running(self):
        seen: dict[int, "Workload"] = {}
        for n in self.sim.nodes:
            for p in n.pods:
                if p.state in ("running", "bound"):
                    seen.setdefault(p.wl.uid, p.wl)
        return [seen[k] for k in sorted(seen)]

    # -- explanation ----------------------------------------------------------------
    def _queue_verdict(self, wl: "Workload") -> tuple[str, str] | None:
        """("enqueue", event) when JobEnqueueable rejects ``wl``, ("queue", words) when its queue's bound
        keeps its gang minimum from allocating, else None."""
        if "enqueue" in self.actions and wl.uid not in self.inqueue:
            return "enqueue", self._enqueue_rejection(wl, self._inqueue_usage()) or "queue resource quota insufficient"
        if self.hierarchy:
            return self._hierarchy_verdict(wl, self._floor(wl))
        bound = self._bound(wl.queue)
        if bound is None:
            return None
        used, need = self._used(wl.queue), self._floor(wl)
        names = exceeded(used, need, bound)
        if not names:
            return None
        what = "realCapability" if self.capacity else "deserved"
        detail = ", ".join(f"insufficient {r} (allocated {quantity(r, used.get(r, 0.0))} + {quantity(r, need[r])} > "
                           f"{what} {quantity(r, bound[r])})" for r in names)
        # allocate's own words for a queue that is not allocatable: "Queue <q> is overused when considering task"
        state = "has reached its capability" if self.capacity else "is overused"
        return "queue", f"queue {wl.queue} {state}: {detail}"

    def explain(self, wl: "Workload") -> str:
        """The PodGroup condition Volcano writes (gang FitError), after the enqueue event or queue check."""
        sim = self.sim
        group = wl.group
        if group is not None:
            if group.pending <= 0:
                return super().explain(wl)
            wl = group.leader  # the PodGroup's condition: the same words for every role
        elif wl.pending <= 0:
            return super().explain(wl)
        verdict = self._queue_verdict(wl)
        if verdict is None and volcano_backfill.best_effort(wl):
            msg = volcano_backfill.explain(self, wl)
            return msg if msg is not None else super().explain(wl)
        if "gang" not in self.plugins:
            return verdict[1] if verdict is not None else super().explain(wl)
        members = group.members if group is not None else [wl]
        p = sum(m.pending for m in members)
        if group is None:
            head = (f"{p}/{wl.pods_total} tasks in gang unschedulable: pod group is not ready, {p} Pending, "
                    f"{wl.min_member} minAvailable; Pending: ")
        else:  # gang's OnSessionClose: minAvailable - scheduled tasks, out of all the job's tasks
            head = (f"{max(0, group.min_member - group.bound)}/{group.pods_total} tasks in gang unschedulable: "
                    f"pod group is not ready, {p} Pending, {group.min_member} minAvailable; Pending: ")
        if verdict is not None and verdict[0] == "enqueue":
            return f"{verdict[1]}; {head}{p} Undetermined"
        if verdict is not None:
            return f"{head}{p} Undetermined; {verdict[1]}"
        fits = [(m, sim.pods_that_fit(m, m.pending)) for m in members]
        fit = sum(k for _, k in fits)
        parts = sorted([(fit, "Schedulable"), (p - fit, "Unschedulable")])
        msg = head + ", ".join(f"{n} {what}" for n, what in parts if n)
        short = next(((m, k) for m, k in fits if k < m.pending), None)
        if short is not None:  # the first pod that fits nowhere, named as Volcano names a task's pod
            m, k = short
            origin = sim.unschedulable(m, siblings_fill=True, wording="unavailable")
            msg += f". Origin reason is {m.name}-{len(m.pods) + k}: {origin}"
        return msg
