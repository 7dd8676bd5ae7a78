"""Kueue: quota admission above the scheduler (L1), modelled from domain-facts.md §4.

* A workload waits in its ClusterQueue (via its tenant's LocalQueue) and no
  pods exist until it is **admitted**: quota for *all* pod sets is reserved at
  once (§4.1).  Admitted pods then go to the configured scheduler
  (kube-scheduler by default, pod by pod: without TAS, Kueue can admit a
  gang whose pods cannot all be placed, §4.5).
* **Flavors** are tried in order; the first where the workload fits (without
  or with borrowing) wins (``whenCanBorrow: MayStopSearch``); preemption is
  tried only when no flavor fits (``whenCanPreempt: TryNextFlavor``) (§4.2).
  ``flavor_fungibility`` changes the walk as flavorassigner.go
  ``shouldTryNextFlavor`` does (v0.19): ``whenCanBorrow: TryNextFlavor`` passes a
  flavor that fits only by borrowing (kept as the fallback) for a later one that
  fits within nominal; ``whenCanPreempt: MayStopSearch`` stops at the first
  flavor where preemption finds victims, though a later flavor may fit.
* **Resource groups** (flavors with disjoint covered resources): a workload
  whose requests span groups gets one flavor per group, each group walked on
  its own; its assignment is the tuple of those flavors (one flavor, a plain
  name, otherwise), and it is admitted when every group has room.
* **Cohorts**: each CQ keeps ``nominal - lendingLimit`` for itself and lends
  the rest to a pool shared by the cohort; usage above that guaranteed part
  comes from the pool; ``borrowingLimit`` caps usage above nominal (§4.2).  With Cohort objects
  stated (hierarchical cohorts), quota, the admission order and preemption go through the cohort tree
  (:mod:`scheduler_core.policies.kueue_cohorts`).
* Order: StrictFIFO blocks a CQ behind its head; BestEffortFIFO lets newer
  workloads that fit pass.  Across CQs, workloads that fit without borrowing
  go first, then higher priority, then (with fair sharing) the lower share,
  then creation time (§4.2, §4.4).
* **Preemption** (classic, §4.3): candidates are same-CQ workloads matching
  ``withinClusterQueue`` and workloads of cohort CQs that are borrowing,
  matching ``reclaimWithinCohort`` (only when the preemptor fits its own
  nominal quota, unless ``borrowWithinCohort`` allows it); sorted borrowing
  CQs first, then lowest priority, then most recently admitted; greedy
  selection and a reverse pass that drops unneeded victims; with fair sharing, by dominant resource
  share (§4.4).  The search is :mod:`scheduler_core.policies.kueue_preemption`; a ClusterQueue's
  run-time state is :mod:`scheduler_core.policies.cluster_queue`.
* **waitForPodsReady** (§4.5): an admitted workload whose pods are not all
  running after ``timeout`` is evicted, its quota released, and requeued
  after ``backoff_base * 2^(n-1)`` capped at ``backoff_max``; after
  ``backoff_limit_count`` requeues it is deactivated.  ``block_admission``
  admits one workload at a time until it is ready.  A workload that loses pods to
  a node failure stays admitted while they are recreated; one that was ready
  gets ``recovery_timeout`` (``keeps_reservation``).
* **TAS** (§4.5): with TAS on, every flavor names the topology (as the export
  writes them), so every ClusterQueue is TAS-only and every workload gets a
  topology assignment before admission: a required or preferred level is
  packed as asked; a workload without a topology request is an *implied*
  unconstrained request at the lowest level (node), placed least-free-capacity
  first (``TASProfileMixed``, on by default since v0.15): the fullest node that
  holds every pod, else nodes filled from the fullest
  (pkg/scheduler/flavorassigner/tas_flavorassigner.go ``isTASImplied``,
  pkg/cache/scheduler/tas_flavor_snapshot.go).  A workload is admitted only if
  all its pods fit, and its pods are bound there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler_core.events import Priority
from scheduler_core.policies.base import ControlPlanePolicy
from scheduler_core.policies.cluster_queue import EPS, INF, ClusterQueueState
from scheduler_core.policies.kueue_cohorts import CohortTree
from scheduler_core.policies.kueue_failures import FailureProofs
from scheduler_core.policies.kueue_preemption import KueuePreemptor, Ranked
from scheduler_core.policies.kueue_quota import QuotaBook

if TYPE_CHECKING:  # pragma: no cover
    from scheduler_core.workloads import Workload

# Kueue's preemption reasons and the words its eviction message uses for them (pkg/scheduler/preemption).
HUMAN_REASON = {
    "InClusterQueue": "prioritization in the ClusterQueue",
    "InCohortReclamation": "reclamation within the cohort",
    "InCohortReclaimWhileBorrowing": "reclamation within the cohort while borrowing",
    "InCohortFairSharing": "Fair Sharing within the cohort",
}


class KueueAdmission(FailureProofs, KueuePreemptor, QuotaBook, ControlPlanePolicy):
    """Extension points: admit (the admission pass: flavors, preemption, partial admission, TAS), end_pass;
    queue_order is kube-scheduler's within each ClusterQueue."""

    name = "kueue"

    def __init__(self, sim) -> None:
        self.sim = sim
        self.cfg = sim.cp.kueue
        self.cqs = {c.name: ClusterQueueState(c) for c in self.cfg.cluster_queues}
        self.lq = dict(self.cfg.local_queues)
        self._cqs_sorted = sorted(self.cqs.items())  # the pass visits ClusterQueues by name
        self.cohorts: dict[str, list[ClusterQueueState]] = {}
        for c in self.cqs.values():
            if c.cohort:
                self.cohorts.setdefault(c.cohort, []).append(c)
        self._init_quota_book()
        # Hierarchical cohorts: with Cohort objects stated, quota comes through the cohort tree.
        self.tree = CohortTree(self.cfg.cohorts, self.cqs) if self.cfg.cohorts else None
        self.admitted: dict[int, "Workload"] = {}
        self.ready: set[int] = set()
        # Incremental passes: quota only shrinks between releases, so failed shapes stay failed.
        self.new_keys: set = set()
        self.quota_freed = True
        self.original_group: dict[int, str | None] = {}
        # Bumped whenever a ClusterQueue's usage changes (``_charge_part``, its only writer): what is derived
        # from the usage alone may be kept while it stands (the preemption search's borrowing CQs).
        self.usage_generation = 0
        self._borrowers: dict[tuple, tuple[int, set[str]]] = {}
        # Per ClusterQueue, bumped with its own usage (and so its admitted workloads): a failed head's proof
        # (``_prove_failure``) holds while it stands.
        self.cq_generation = {name: 0 for name in self.cqs}
        # Per CQ, by the id of its canonical bucket key (the queue keeps every key alive): no hashing of the key.
        self._fail_proofs: dict[str, dict[int, tuple]] = {name: {} for name in self.cqs}
        self._own_memo: dict[tuple, tuple] = {}  # preemption's own candidates per CQ generation
        self._ranked: dict[tuple[str, str], "Ranked"] = {}  # admitted workloads per (CQ, flavor) in victim order
        self._held_memo: dict[tuple, tuple] = {}  # a CQ's admitted workloads per flavor, per CQ generation

    # -- API used by the simulator ------------------------------------------------
    def cq_of(self, wl: "Workload") -> ClusterQueueState:
        return self.cqs[self.lq.get(wl.queue, wl.queue)]

    def submit(self, wl: "Workload") -> None:
        self.original_group.setdefault(wl.uid, wl.node_group)
        cq = self.cq_of(wl)
        key = self._key(wl)
        key = cq.queue.canonical.setdefault(key, key)  # the queue's own key object (failure proofs go by its id)
        cq.queue.push(wl, key, self.sim.now)
        self.new_keys.add((cq.name, key))

    def end_pass(self) -> None:
        self.new_keys.clear()
        self.quota_freed = False

    def _key(self, wl: "Workload"):
        return (wl.priority, wl.shape(), wl.pods_total)

    def is_admitted(self, wl: "Workload") -> bool:
        return wl.uid in self.admitted

    def on_ready(self, wl: "Workload") -> None:
        if wl.uid in self.admitted:
            if wl.kind != "inference" or len([p for p in wl.pods if p.state == "running"]) >= wl.pods_total:
                self.ready.add(wl.uid)
                if self.cfg.wait_for_pods_ready.block_admission:
                    self.sim.request_cycle()

    def keeps_reservation(self, wl: "Workload") -> bool:
        """Whether an admitted workload that loses pods (node failure) keeps its quota while its job
        recreates them: with waitForPodsReady, Kueue leaves it admitted; one that was PodsReady turns
        PodsReady=False (WaitForRecovery) and has ``recovery_timeout`` (default: ``timeout``; 0: no limit)
        to be ready again, else it is evicted (PodsReadyTimeout) and requeued with the backoff.  One not
        yet ready keeps its admission timeout (workload_controller.go ``admittedNotReadyWorkload``, v0.19)."""
        wfpr = self.cfg.wait_for_pods_ready
        if not wfpr.enable or wl.uid not in self.admitted:
            return False
        if wl.uid in self.ready:
            self.ready.discard(wl.uid)
            ev = wl.admission_info.get("timer")
            if ev is not None:
                ev.cancel()
            recovery = wfpr.timeout if wfpr.recovery_timeout is None else wfpr.recovery_timeout
            wl.admission_info["timer"] = (self.sim.schedule_in(recovery, Priority.MONITOR, self._pods_ready_check,
                                                               wl, "WaitForRecovery") if recovery > 0 else None)
            self.sim.log_event("pods-ready-false", wl, "WaitForRecovery: At least one pod has failed, waiting "
                                                       "for recovery")
        return True

    def on_finish(self, wl: "Workload") -> None:
        self._release(wl)
        self.cq_of(wl).queue.remove(wl)

    def requeue(self, wl: "Workload", delay: float) -> None:
        self._release(wl)
        wl.pods_total, wl.min_member = wl.full_count, wl.full_min_member  # partial admission starts over
        wl.node_group = self.original_group.get(wl.uid, wl.node_group)
        if delay > 0:
            self.sim.schedule_in(delay, Priority.ARRIVAL, self._repush, wl)
        else:
            self.submit(wl)

    def _repush(self, wl: "Workload") -> None:
        if wl.finished:
            return
        self.submit(wl)
        self.sim.request_cycle()

    def waiting_requests(self) -> list:
        out = []
        for c in self.cqs.values():
            out.extend(c.queue.waiting_requests())
        return out

    # -- flavor assignment ----------------------------------------------------------
    def _flavors(self, cq: ClusterQueueState, wl: "Workload"):
        for f in cq.spec.flavors:
            if wl.node_group is not None and f.node_groups is not None and wl.node_group not in f.node_groups:
                continue
            yield f

    def _assign(self, cq: ClusterQueueState, wl: "Workload") -> tuple | None:
        need = self._usage(wl)
        used = self._spans(cq, need)
        if used is not None:
            return self._assign_groups(cq, wl, need, used)
        if not cq.default_fungibility:
            w = self._walk(cq, wl, need, self._flavors(cq, wl), preempt=False)
            return None if w is None else w[:2]
        for f in self._flavors(cq, wl):
            mode = self._fits(cq, f.name, need)
            if mode is not None:
                return f.name, mode
        return None

    def _assign_groups(self, cq: ClusterQueueState, wl: "Workload", need: dict[str, float], used: list[int]):
        """One flavor per resource group the workload's requests touch (flavorassigner.go assigns each
        group's resources together); no flavor in some group: no assignment."""
        eligible = {f.name for f in self._flavors(cq, wl)}
        parts, borrow = [], False
        for gi in used:
            covered, flavors = cq.groups[gi]
            part = {r: a for r, a in need.items() if r in covered}
            w = self._walk(cq, wl, part, [f for f in flavors if f.name in eligible], preempt=False)
            if w is None:
                return None
            parts.append(w[0])
            borrow = borrow or w[1] == "borrow"
        return tuple(parts), ("borrow" if borrow else "fit")

    def _walk(self, cq: ClusterQueueState, wl: "Workload", need: dict[str, float], flavors, preempt: bool):
        """(flavor, mode, victims or None) walking one resource group's flavors in order as
        flavorassigner.go does (v0.19 ``shouldTryNextFlavor``, ``isPreferred`` borrowing over
        preemption): a flavor that fits within nominal ends the walk; one that fits by borrowing ends
        it under ``whenCanBorrow: MayStopSearch``, else it is the fallback (the first such); with
        ``preempt`` and ``whenCanPreempt: MayStopSearch``, a flavor where preemption finds victims
        ends it."""
        fung = cq.fungibility
        best, best_height = None, None
        for f in flavors:
            mode = self._fits(cq, f.name, need)
            if mode is None:
                if preempt and fung.when_can_preempt == "MayStopSearch":
                    victims = self._victims_on(cq, wl, f.name, need)
                    # It stops there unless the workload would still borrow once they are gone and
                    # whenCanBorrow walks on (shouldTryNextFlavor reads the mode after preemption).
                    if victims and (fung.when_can_borrow == "MayStopSearch"
                                    or not self._borrows_after(cq, f.name, need, victims)):
                        return f.name, "fit", victims
                continue
            if mode == "fit" or fung.when_can_borrow == "MayStopSearch":
                return f.name, mode, None
            # Of the flavors that fit by borrowing, the one that borrows lowest in a Cohort tree (the
            # first of equals; in a flat cohort all borrow at the same height).
            height = 0 if self.tree is None else self.tree.borrow_height(self, cq, f.name, wl)
            if best is None or height < best_height:
                best, best_height = (f.name, mode, None), height
        return best

    def _borrows_after(self, cq: ClusterQueueState, flavor: str, need: dict[str, float], victims) -> bool:
        """Whether ``need`` on ``flavor`` is above the ClusterQueue's nominal quota once its own victims are gone."""
        freed: dict[str, float] = {}
        for v, _reason in victims:
            if v.admission_info.get("cq") == cq.name:
                for r, a in self._usage(v).items():
                    freed[r] = freed.get(r, 0.0) + a
        return any(cq.usage.get((flavor, r), 0.0) - freed.get(r, 0.0) + a > cq.quota(flavor, r).nominal + EPS
                   for r, a in need.items() if cq.quota(flavor, r) is not None)

    def _flavor_groups(self, cq: ClusterQueueState, flavor) -> list[str] | None:
        """The node groups an assignment's flavors select together (None: every group)."""
        if flavor.__class__ is not tuple:
            return next((f.node_groups for f in cq.spec.flavors if f.name == flavor), None)
        chosen = None
        for f in cq.spec.flavors:
            if f.name in flavor and f.node_groups is not None:
                chosen = list(f.node_groups) if chosen is None else [g for g in chosen if g in f.node_groups]
        return chosen

    def _release(self, wl: "Workload") -> None:
        if wl.uid not in self.admitted:
            return
        info = wl.admission_info
        cq = self.cqs[info["cq"]]
        self._charge(cq, wl, info["flavor"], -1.0)
        if cq.admitted.pop(wl.uid, None) is not None:
            self._rank(cq, wl, info["flavor"], admitted=False)
            cq.priorities[wl.priority] -= 1
            if not cq.priorities[wl.priority]:
                del cq.priorities[wl.priority]
        del self.admitted[wl.uid]
        self.quota_freed = True
        self.ready.discard(wl.uid)
        ev = info.get("timer")
        if ev is not None:
            ev.cancel()
        wl.admission_info = {"requeues": info.get("requeues", 0)}

    def _drs(self, cq: ClusterQueueState, flavor: str, wl: "Workload") -> float:
        """Dominant resource share (§4.4): borrowed / lendable capacity of the cohort, / weight."""
        if self.tree is not None:
            return self.tree.admission_drs(self, cq, flavor, wl)
        if not cq.cohort:
            return 0.0
        best = 0.0
        for fl, part in self._parts(cq, flavor, self._usage(wl)):
            for r, a in part.items():
                q = cq.quota(fl, r)
                if q is None:
                    continue
                borrowed = max(0.0, cq.usage.get((fl, r), 0.0) + a - q.nominal)
                lendable = sum((c.quota(fl, r).nominal - c.guaranteed(fl, r))
                               for c in self.cohorts[cq.cohort] if c.quota(fl, r) is not None)
                if lendable > 0:
                    best = max(best, borrowed * 1000.0 / lendable)
        w = cq.spec.fair_sharing_weight
        return best / w if w > 0 else (INF if best > 0 else 0.0)

    # -- the admission pass: the extension point the scheduling cycle calls ---------------------------
    def admit(self) -> None:
        wfpr = self.cfg.wait_for_pods_ready
        failed: dict[str, set] = {name: set() for name in self.cqs}
        # Buckets a BestEffortFIFO CQ may try (None: every bucket not in ``failed``).
        only: dict[str, set | None] = dict.fromkeys(self.cqs)
        # Freed node capacity alone (``sim.full_pass``) changes no verdict of an admission that reads quota only:
        # Topology-aware scheduling reads the nodes, and a pass that waits for PodsReady is retried with it.
        nodes_matter = self.cfg.topology_aware_scheduling or (wfpr.enable and wfpr.block_admission)
        if not (self.quota_freed or (self.sim.full_pass and nodes_matter)):
            # Only buckets that received new workloads can change their verdict: the others count as failed
            # (StrictFIFO stops at them, so its failed set is spelled out; the rest only name the fresh ones).
            for name in self.cqs:
                only[name] = set()
            for name, k in self.new_keys:
                only[name].add(k)
            for name, c in self.cqs.items():
                if c.spec.queueing_strategy == "StrictFIFO":
                    failed[name] = set(c.queue.buckets).difference(only[name])
        cache: dict[str, tuple | None] = {}
        while True:
            if wfpr.enable and wfpr.block_admission and any(uid not in self.ready for uid in self.admitted):
                return
            cands = []
            for name, cq in self._cqs_sorted:
                if name not in cache:
                    o = only[name]
                    # A BestEffortFIFO CQ with no fresh shape to try has no candidate: no search to set up.
                    cache[name] = (None if o is not None and not o and cq.spec.queueing_strategy != "StrictFIFO"
                                   else self._candidate(cq, failed[name], o))
                if cache[name] is not None:
                    cands.append(cache[name])
            if not cands:
                return

            def order(c):
                cq, wl, flavor, mode, victims = c
                drs = self._drs(cq, flavor, wl) if self.cfg.fair_sharing else 0.0
                borrows = (mode == "borrow" if self.tree is None or mode != "borrow"
                           else self.tree.borrow_height(self, cq, flavor, wl))
                return (borrows, victims is not None, -wl.priority, drs, wl.enqueued_at, wl.seq)

            if self.tree is not None and self.cfg.fair_sharing:  # hierarchical cohorts: Kueue's tournament
                cq, wl, flavor, mode, victims = self.tree.pick(self, cands, order)
            else:
                cq, wl, flavor, mode, victims = min(cands, key=order)
            if victims:
                for v, reason in victims:
                    self.sim.evict(v, "Kueue" + reason, message=(
                        f"Preempted to accommodate a workload ({wl.name}) due to {HUMAN_REASON[reason]}"
                        + (self._paths(cq, v) if self.tree is not None else "")))
                for f in failed.values():
                    f.clear()  # freed quota: shapes that failed may fit now
                only = dict.fromkeys(self.cqs)
                cache.clear()
            if not self._admit(cq, wl, flavor):
                failed[cq.name].add(self._key(wl))
            # Usage grew for this CQ and, through the pool, for its cohort.  A cohort CQ with no
            # candidate stays without one (quota only shrank); one with a candidate is re-checked.
            cache.pop(cq.name, None)
            if cq.cohort:
                for name, c in self.cqs.items():
                    cand = cache.get(name)
                    if name == cq.name or cand is None or (c.cohort != cq.cohort and (
                            self.tree is None or not self.tree.same_tree(c, cq))):
                        continue
                    _, cwl, cflavor, cmode, cvictims = cand
                    if cvictims is not None or self._fits(c, cflavor, self._usage(cwl)) != cmode:
                        cache.pop(name, None)

    def _paths(self, cq: ClusterQueueState, victim: "Workload") -> str:
        """The cohort-tree paths Kueue's eviction message names (pkg/scheduler/preemption ``preemptionMessage``)."""
        return (f"; preemptor path: {self.tree.path(cq)}; "
                f"preemptee path: {self.tree.path(self.cqs[victim.admission_info['cq']])}")

    def _candidate(self, cq: ClusterQueueState, failed: set, only: set | None = None):
        """The first workload of ``cq`` in queue order that can be admitted, as (cq, workload, flavor, mode,
        victims), or None; ``failed`` gathers the shapes that cannot; ``only``: the shapes a BestEffortFIFO
        CQ may try (those that received workloads since the last release), None: every shape."""
        strict = cq.spec.queueing_strategy == "StrictFIFO"
        # BestEffortFIFO passes a failed shape by: leave it out of the scan.  StrictFIFO stops at it.
        buckets = cq.queue.buckets
        keys = None if strict else ([k for k in buckets if k not in failed] if only is None else
                                    [k for k in only if k in buckets and k not in failed])
        proven = set()  # ids of the keys whose proof of failure was checked just now (the scan skips them)
        if keys is not None:
            if not keys:
                return None  # every shape failed already (the usual case outside a full pass): no scan to build
            for k in keys:
                if not self._still_fails(cq, k):
                    break
                proven.add(id(k))
            else:
                failed.update(keys)  # what the scan would conclude, head by head
                return None
        scan = cq.queue.scan(self.queue_order, keys)
        while True:
            item = scan.next()
            if item is None:
                return None
            key, wl = item
            if key in failed:
                if strict:
                    return None
                continue
            if not strict and (id(key) in proven or self._still_fails(cq, key)):
                failed.add(key)
                continue
            wl.admit_count = None
            if cq.fungibility.when_can_preempt == "MayStopSearch" and self._spans(cq, self._usage(wl)) is None:
                w = self._walk(cq, wl, self._usage(wl), self._flavors(cq, wl), preempt=True)
                if w is not None and w[2]:  # the search stopped at a flavor that needs preemption
                    return (cq, wl, w[0], "fit", w[2])
            a = self._assign(cq, wl)
            if a is not None and self._topology_ok(wl, a[0]):
                return (cq, wl, a[0], a[1], None)
            p = self._preemption(cq, wl) if a is None else None
            if p is not None:
                return (cq, wl, p[0], "fit", p[1])
            a = self._partial(cq, wl) if a is None else None
            if a is not None:
                return (cq, wl, a[0], a[1], None)
            failed.add(key)
            if strict:
                return None  # StrictFIFO: the head blocks newer workloads
            self._prove_failure(cq, key, wl)

    def _partial(self, cq: ClusterQueueState, wl: "Workload"):
        """Partial admission: the largest count >= minCount that fits (Kueue searches it by bisection).

        Leaves ``wl.admit_count`` set when it finds one; the pass admits that many pods."""
        if not wl.min_count or wl.min_count >= wl.pods_total or wl.topology_required:
            return None
        lo, hi, best = wl.min_count, wl.pods_total - 1, None
        while lo <= hi:
            mid = (lo + hi) // 2
            wl.admit_count = mid
            a = self._assign(cq, wl)
            if a is not None and self._topology_ok(wl, a[0]):
                best, lo = (mid, a), mid + 1
            else:
                hi = mid - 1
        if best is None:
            wl.admit_count = None
            return None
        wl.admit_count = best[0]
        return best[1]

    def _topology_ok(self, wl: "Workload", flavor: str) -> bool:
        if not self.cfg.topology_aware_scheduling:
            return True
        return self._tas_plan(wl, flavor) is not None

    def _flavor_leaves(self, wl: "Workload", flavor: str) -> list:
        """The nodes of ``wl``'s flavor (its nodeLabels) that TAS may use."""
        groups = self._flavor_groups(self.cq_of(wl), flavor)
        return [n for n in self.sim.nodes if self.sim.node_eligible(n) and (groups is None or n.group in groups)]

    def _flavor_nodes(self, wl: "Workload", flavor: str):
        return [n for n in self._flavor_leaves(wl, flavor) if wl.node_group is None or n.group == wl.node_group]

    def _tas_plan(self, wl: "Workload", flavor: str):
        """The topology assignment of the pods still to place, or None if they do not all fit."""
        nodes = self._flavor_nodes(wl, flavor)
        pods = (wl.admit_count or wl.pods_total) - len(wl.pods)
        if wl.topology_required or wl.topology_preferred:
            return self.sim.plan(wl, pods, "pack", wl.topology_required, nodes=nodes)
        return least_free_capacity(nodes, wl.request, pods)

    def _admit(self, cq: ClusterQueueState, wl: "Workload", flavor: str) -> bool:
        sim = self.sim
        if self._fits(cq, flavor, self._usage(wl)) is None:
            return False  # victims still terminating hold nothing in quota; should not happen
        plan = None
        if self.cfg.topology_aware_scheduling:
            plan = self._tas_plan(wl, flavor)
            if plan is None:
                return False
        cq.queue.pop(self._key(wl)) if cq.queue.head(self._key(wl)) is wl else cq.queue.remove(wl)
        partial = ""
        if wl.admit_count:  # partial admission: the job runs with the admitted count
            partial = f" ({wl.admit_count} of {wl.full_count} pods: partial admission)"
            wl.pods_total = wl.admit_count
            wl.min_member = min(wl.min_member, wl.admit_count)
            wl.admit_count = None
        self._charge(cq, wl, flavor, +1.0)
        prev = wl.admission_info.get("requeues", 0)
        wl.admission_info = {"cq": cq.name, "flavor": flavor, "requeues": prev}
        cq.admitted[wl.uid] = wl
        cq.priorities[wl.priority] = cq.priorities.get(wl.priority, 0) + 1
        self.admitted[wl.uid] = wl
        wl.admitted_at = sim.now
        self._rank(cq, wl, flavor, admitted=True)
        named = f"flavors {', '.join(flavor)}" if flavor.__class__ is tuple else f"flavor {flavor}"
        sim.log_event("admit", wl, f"ClusterQueue {cq.name}, {named}"
                      + (" (borrowing)" if self._borrowing(cq, flavor) else "") + partial)
        if wl.state == "queued":
            sim.set_state(wl, "admitted")
        # ResourceFlavor nodeLabels become the pods' nodeSelector.
        if flavor.__class__ is tuple:
            chosen = self._flavor_groups(cq, flavor)
            if chosen and len(chosen) == 1 and wl.node_group is None:
                wl.node_group = chosen[0]
        for f in cq.spec.flavors:
            if f.name == flavor and f.node_groups and len(f.node_groups) == 1 and wl.node_group is None:
                wl.node_group = f.node_groups[0]
        sim.create_pods(wl)
        if plan is not None:
            sim.bind_plan(wl, plan)
        wfpr = self.cfg.wait_for_pods_ready
        if wfpr.enable:
            wl.admission_info["timer"] = sim.schedule_in(wfpr.timeout, Priority.MONITOR, self._pods_ready_check, wl)
        return True

    def _pods_ready_check(self, wl: "Workload", cause: str = "WaitForStart") -> None:
        if wl.uid not in self.admitted:
            return
        wl.admission_info["timer"] = None
        if wl.uid in self.ready or wl.finished:
            return
        wfpr = self.cfg.wait_for_pods_ready
        n = wl.admission_info.get("requeues", 0) + 1
        if wfpr.backoff_limit_count is not None and n > wfpr.backoff_limit_count:
            self.sim.count_admission_error("KueueDeactivated")
            self.sim.fail_workload(wl, "Deactivated")
            return
        delay = min(wfpr.backoff_max, wfpr.backoff_base * 2 ** (n - 1))
        # Kueue's message names the Workload (namespace/name: the tenant's namespace here); the recovery
        # eviction says so, the admission timeout keeps the reason alone as before.
        message = (f"Exceeded the PodsReady timeout {wl.tenant}/{wl.name} (underlying cause WaitForRecovery)"
                   if cause == "WaitForRecovery" else "")
        self.sim.evict(wl, "PodsReadyTimeout", requeue_delay=delay, preemption=False, message=message)
        wl.admission_info["requeues"] = n

    # -- explanation ----------------------------------------------------------------
    def explain(self, wl: "Workload") -> str:
        """The Pending condition Kueue writes on a workload it does not admit."""
        wfpr = self.cfg.wait_for_pods_ready
        if wfpr.enable and wfpr.block_admission and any(uid not in self.ready for uid in self.admitted):
            return "waiting for all admitted workloads to be in PodsReady condition"
        cq = self.cq_of(wl)
        wl.admit_count = None
        need = self._usage(wl)
        used = self._spans(cq, need)
        if used is not None:  # one flavor per resource group: the groups with no room say why
            reasons = []
            for gi in used:
                covered, flavors = cq.groups[gi]
                part = {r: a for r, a in need.items() if r in covered}
                if self._walk(cq, wl, part, [f for f in self._flavors(cq, wl) if f in flavors], False) is None:
                    reasons += self._flavor_reasons(cq, wl, flavors, part)
            if not reasons:
                return "Pending: quota is free, waiting for the next admission cycle"
            return "couldn't assign flavors to pod set main: " + ", ".join(reasons)
        reasons = []
        for f in cq.spec.flavors:
            if wl.node_group is not None and f.node_groups is not None and wl.node_group not in f.node_groups:
                reasons.append(f"flavor {f.name} doesn't match node affinity")
                continue
            for r, a in sorted(need.items()):
                why = ("resource %s unavailable in ClusterQueue" % r if cq.quota(f.name, r) is None
                       else self._quota_reason(cq, f.name, r, a))
                if why:
                    reasons.append(why)
                    break
            else:
                if not self._topology_ok(wl, f.name):
                    reasons.append(self._tas_not_fit(wl, f.name))
                    continue
                if cq.spec.queueing_strategy == "StrictFIFO":
                    return "Pending: StrictFIFO, waiting behind an older workload that does not fit"
                return "Pending: quota is free, waiting for the next admission cycle"
        return "couldn't assign flavors to pod set main: " + ", ".join(reasons)

    def _flavor_reasons(self, cq: ClusterQueueState, wl: "Workload", flavors, need: dict[str, float]) -> list[str]:
        """Why none of ``flavors`` (one resource group) holds ``need``."""
        reasons = []
        for f in flavors:
            if wl.node_group is not None and f.node_groups is not None and wl.node_group not in f.node_groups:
                reasons.append(f"flavor {f.name} doesn't match node affinity")
                continue
            for r, a in sorted(need.items()):
                why = self._quota_reason(cq, f.name, r, a)
                if why:
                    reasons.append(why)
                    break
        return reasons

    def _quota_reason(self, cq: ClusterQueueState, flavor: str, r: str, a: float) -> str | None:
        """Kueue's words for why ``a`` of ``r`` does not fit ``flavor``'s quota (no quota: room 0), or None."""
        room, most = self._room(cq, flavor, r) if cq.quota(flavor, r) is not None else (0.0, 0.0)
        if a > most + EPS:
            return f"insufficient quota for {r} in flavor {flavor}, request > maximum capacity ({_q(a)} > {_q(most)})"
        if a > room + EPS:
            return f"insufficient unused quota for {r} in flavor {flavor}, {_q(a - room)} more needed"
        return None

    def _domain_fit(self, wl: "Workload", flavor: str) -> int:
        """Most pods of ``wl`` TAS finds room for: in one domain of a required level (node or rack),
        else over the whole topology (preferred levels and implied requests fall back to every domain)."""
        best: dict[tuple, int] = {}
        for n in self._flavor_nodes(wl, flavor):
            if wl.topology_required == "node":
                key: tuple = (n.name,)
            elif wl.topology_required == "rack":
                key = (n.rack,)
            else:
                key = ()
            best[key] = best.get(key, 0) + n.fit_count(wl.request)
        return min(wl.pods_total, max(best.values(), default=0))

    def _tas_not_fit(self, wl: "Workload", flavor: str) -> str:
        """Kueue's TAS message (tas_flavor_snapshot.go ``notFitMessage``) with its node exclusions."""
        fit, n, name = self._domain_fit(wl, flavor), wl.pods_total, self.cfg.topology_name
        msg = (f"topology \"{name}\" doesn't allow to fit any of {n} pod(s)" if fit == 0 else
               f"topology \"{name}\" allows to fit only {fit} out of {n} pod(s)")
        leaves = self._flavor_leaves(wl, flavor)
        selector = 0
        short: dict[str, int] = {}
        for node in leaves:
            if wl.node_group is not None and node.group != wl.node_group:
                selector += 1
            elif node.fit_count(wl.request) == 0:
                res = limiting_resource(node, wl.request)
                short[res] = short.get(res, 0) + 1
        reasons = [f"nodeSelector: {selector}"] if selector else []
        reasons += [f"resource \"{r}\": {k}" for r, k in short.items()]
        if reasons:
            msg += f". Total nodes: {len(leaves)}; excluded: {', '.join(sorted(reasons))}"
        return msg


def least_free_capacity(nodes: list, req, pods: int) -> list | None:
    """Kueue TAS for an unconstrained (or implied) request at the node level: nodes by free capacity
    ascending, then rack and name (``sortedDomains`` with ``TASProfileMixed``); the first node that
    holds every pod, else every node in that order filled until the pods are placed; None if they
    do not fit."""
    order = sorted(((n.fit_count(req), n.rack, n.name), n) for n in nodes)
    for (k, _, _), n in order:
        if k >= pods:
            return [(n, pods)]
    plan, left = [], pods
    for (k, _, _), n in order:
        if k > 0:
            plan.append((n, min(k, left)))
            left -= min(k, left)
            if left == 0:
                return plan
    return None


def limiting_resource(node, req) -> str:
    """The resource that leaves no room for one pod on ``node`` (ties: alphabetical, as Kueue's
    ``CountInWithLimitingResource`` breaks them); Kueue names HAMi's vGPU ``nvidia.com/gpu``."""
    counts = [(node.device_fit_count(req), "nvidia.com/gpu" if req.kind == "hami" else req.resource)]
    if req.cpu and node.cpu_free is not None:
        counts.append((int(node.cpu_free / req.cpu + 1e-9), "cpu"))
    if req.host_gib and node.host_gib_free is not None:
        counts.append((int(node.host_gib_free / req.host_gib + 1e-9), "memory"))
    return min(counts)[1]


def _q(x: float) -> str:
    return str(int(round(x))) if abs(x - round(x)) < 1e-6 else f"{x:g}"
