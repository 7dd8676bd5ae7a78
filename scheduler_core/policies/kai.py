"""KAI Scheduler: hierarchical queues with quota / over-quota weight / limit, gang, reclaim, fractions.

Modelled from domain-facts.md §6.5 and NVIDIA/KAI-Scheduler ``pkg/scheduler/plugins/proportion``.
Every queue quantity is kept per resource - GPUs, CPU cores, host memory (GiB) - as KAI's Queue
``spec.resources.{gpu,cpu,memory}`` does; a resource's quota -1 means unlimited and its limit -1 none.

* **Fair share**, per resource and top-down through the queue tree (``resource_division``): each child
  first gets ``min(quota, demand)`` (quota -1 = its whole demand); what remains of the parent's share
  is split by over-quota **priority** (higher first) and, within a priority, by ``over_quota_weight``,
  never above ``limit`` or the demand.
* **Allocation**: leaf queues in order of priority then saturation (the largest allocated / fair share
  over the resources); jobs by priority then creation; gangs all-or-nothing; placement bin-packs
  (KAI's default).  A queue may run above its fair share while resources are idle (over-quota), up to
  its ``limit`` in every resource (it and its ancestors: ``OverLimit``).  A non-preemptible job
  (priority >= 100, KAI's convention [U]) must also fit the queue's quota with the other
  non-preemptible pods (``NonPreemptibleOverQuota``).
* **Reclaim**: a leaf queue whose job would keep it within its fair share in every resource (and, for
  a non-preemptible job, within quota) and does not fit evicts whole jobs from queues above their fair
  share - preemptible jobs only, the most saturated queue first, newest first, and never pushing a
  victim queue below its own fair share in every resource the victim frees; jobs younger than
  ``min_guaranteed_runtime`` are spared.
* **GPU fractions** (``gpu_sharing``): ``gpu-fraction`` requests share a GPU by scheduler accounting
  only - KAI "does not enforce memory allocation limit or performs memory isolation" - so the data
  plane treats the tenants like time-slicing (see interference and OOM models).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler_core.cluster import GPU
from scheduler_core.metrics import KeptWaterFill
from scheduler_core.policies.base import QueuedPolicy
from scheduler_core.policies.kai_reclaimable import (
    QueueShares,
    leveled_queues,
    queue_path,
    remain_within_boundaries,
    subtract_reclaimed,
)
from scheduler_core.resources import CPU, DIMENSIONS, EPS, INF, MEMORY, add_into, any_above, dominant_share, scaled

if TYPE_CHECKING:  # pragma: no cover
    from scheduler_core.workloads import Workload

PREEMPTIBLE_BELOW = 100
# KAI checks resources in this order (resource_share.AllResources).
KAI_ORDER = (CPU, MEMORY, GPU)
# KAI's message wording per resource (pkg/scheduler/api/unschedule_info.go): what a limit is of, the
# unit, how a request is phrased, and the factor from the scenario's unit (GPUs, cores, GiB) to KAI's.
WORDS = {GPU: ("GPUs", "GPUs", "{} GPUs", 1.0), CPU: ("CPU cores", "cores", "{} CPU cores", 1.0),
         MEMORY: ("memory", "GB", "{} GB memory", 2**30 / 1e9)}


def _kai_number(x: float) -> str:
    """KAI's HumanizeResource: at most three decimals, no trailing zeros."""
    return f"{round(x, 3):.3f}".rstrip("0").rstrip(".")


class KaiScheduler(QueuedPolicy):
    """Extension points: open_session (fair share down the queue tree), allocate, score, reclaim (when
    ``reclaim`` is on)."""

    name = "kai"

    def __init__(self, sim) -> None:
        super().__init__(sim)
        self.cfg = sim.cp.kai
        self.qspec = {q.name: q for q in self.cfg.queues}
        self.children: dict[str | None, list[str]] = {}
        for q in self.cfg.queues:
            self.children.setdefault(q.parent, []).append(q.name)
        self.leaves = [q.name for q in self.cfg.queues if q.name not in self.children]
        self._fair: dict[str, dict[str, float]] = {q: {} for q in self.qspec}
        self._leaf_demand = False  # whether this session's demand is still to be read (and divided)
        self._params: dict[tuple[str, str], tuple[float, float, float]] = {}
        self._non_preemptible: dict[str, dict[str, float]] | None = None
        # Per resource: the leaves' demand last divided and every queue's fair share of it (the division of a
        # resource depends only on that demand: the cluster and the queues' configuration are fixed).
        self._split_of: dict[str, tuple] = {}
        self._share_cache: dict[tuple[str, str], dict[str, float]] = {}  # _shares' answers while the fair share holds
        self._fills: dict[tuple, KeptWaterFill] = {}  # per resource and priority group: its split, kept (metrics)
        self._layouts: dict[tuple, tuple] = {}  # _layout's, by resource and the id of a list of siblings

    def _param(self, name: str, r: str) -> tuple[float, float, float]:
        """(quota, over_quota_weight, limit) of queue ``name`` for resource ``r`` (configuration: read once)."""
        got = self._params.get((name, r))
        if got is None:
            q = self.qspec[name]
            host = q if r == GPU else q.cpu if r == CPU else q.memory
            got = self._params[(name, r)] = (host.quota, host.over_quota_weight, host.limit)
        return got

    # -- fair share ---------------------------------------------------------------
    def compute_fair_share(self) -> None:
        """Take the leaves' demand (allocation plus pending pods) for this session; the fair share follows
        from it when first read (:attr:`fair`) - many sessions read none of it."""
        self._leaf_demand = True

    @property
    def fair(self) -> dict[str, dict[str, float]]:
        """Per queue and resource, the fair share of this session's demand."""
        if self._leaf_demand:
            self._leaf_demand = False
            self._divide()
        return self._fair

    def _divide(self) -> None:
        """Divide each resource whose leaf demand (allocation plus pending pods) changed since it was last
        divided; the fair share is rebuilt only when some resource's division changed."""
        sim = self.sim
        leaf = [(q, sim.queue_usage.get(q, {}), sim.queue_pending.get(q, {})) for q in self.leaves]
        fresh: dict[str, dict[str, float]] | None = None
        for r in DIMENSIONS:
            stamp = tuple(u.get(r, 0.0) + p.get(r, 0.0) for _, u, p in leaf)  # a missing resource is zero
            last = self._split_of.get(r)
            if last is not None and last[0] == stamp:
                continue
            if fresh is None:
                fresh = {q: {} for q in self.qspec}
            demand: dict[str, float] = dict(zip(self.leaves, stamp))

            def dem(name: str) -> float:
                if name not in demand:
                    demand[name] = sum(dem(c) for c in self.children.get(name, []))
                return demand[name]

            roots = self.children[None]  # the scenario's checks refuse a queue tree without a root (a cycle)
            for root in roots:
                dem(root)
            self._split(r, demand, roots, sim.capacity_total.get(r, INF), fresh)
            self._split_of[r] = (stamp, {q: fresh[q][r] for q in self.qspec if r in fresh[q]})
        if fresh is None:
            return  # every resource's leaf demand as last divided: the same fair share
        for r in DIMENSIONS:  # every queue's shares in the resources' order, the unchanged ones as last divided
            for q, x in self._split_of[r][1].items():
                fresh[q][r] = x
        self._fair = {q: {r: fresh[q][r] for r in DIMENSIONS if r in fresh[q]} for q in self.qspec}
        self._share_cache.clear()

    def _layout(self, r: str, names: list[str]) -> tuple[list, list]:
        """Per resource and list of siblings (configuration: worked out once): each queue's (name, quota,
        limit), and the over-quota priority groups, highest first, each with its queues' weights."""
        got = self._layouts.get((r, id(names)))
        if got is None:
            params = [(n, self._param(n, r)[0], self._param(n, r)[2]) for n in names]
            groups = []
            for prio in sorted({self.qspec[n].priority for n in names}, reverse=True):
                group = [n for n in names if self.qspec[n].priority == prio]
                groups.append((group, {n: max(self._param(n, r)[1], 1e-9) for n in group}))
            got = self._layouts[(r, id(names))] = (params, groups)
        return got

    def _split(self, r: str, demand: dict[str, float], names: list[str], capacity: float,
               fair: dict[str, dict[str, float]]) -> None:
        caps, base = {}, {}
        params, groups = self._layout(r, names)
        for n, quota, limit in params:
            caps[n] = demand[n] if limit < 0 else min(demand[n], limit)
            base[n] = caps[n] if quota < 0 else min(quota, caps[n])
        total_base = sum(base.values())
        if total_base > capacity:  # over-subscribed quotas: scale down proportionally
            f = capacity / total_base
            base = {n: v * f for n, v in base.items()}
        left = max(0.0, capacity - sum(base.values()))
        share = dict(base)
        for group, weights in groups:
            room = {n: max(0.0, caps[n] - share[n]) for n in group}
            fill = self._fills.get((r, id(group))) or self._fills.setdefault((r, id(group)), KeptWaterFill())
            extra = fill(left, room, weights)
            for n in group:
                share[n] += extra[n]
            left -= sum(extra.values())
            if left <= 1e-12:
                break
        for n in names:
            fair[n][r] = share[n]
            if n in self.children:
                self._split(r, demand, self.children[n], share[n], fair)

    def _saturation(self, q: str) -> float:
        return dominant_share(self._subtree_alloc(q), self.fair.get(q, {}))

    def _subtree_alloc(self, name: str) -> dict[str, float]:
        if name not in self.children:
            return self.sim.queue_usage.get(name, {})
        out: dict[str, float] = {}
        for c in self.children[name]:
            add_into(out, self._subtree_alloc(c))
        return out

    def _over_limit(self, q: str, need: dict[str, float], freed: dict[str, float] | None = None) -> str | None:
        """KAI's OverLimit message for the first queue (leaf, then ancestors) that ``need`` takes past
        its limit in some resource (once ``freed`` has left), or None."""
        freed = freed or {}
        name: str | None = q
        while name is not None:
            used = self._subtree_alloc(name)
            for r in KAI_ORDER:
                limit = self._param(name, r)[2]
                a = need.get(r, 0.0)
                if limit >= 0 and a > 0 and used.get(r, 0.0) - freed.get(r, 0.0) + a > limit + EPS:
                    what, unit, _, k = WORDS[r]
                    return (f"{name} quota has reached the allowable limit of {what}. Limit is {_kai_number(limit * k)} "
                            f"{unit}, currently {_kai_number(used.get(r, 0.0) * k)} {unit} allocated and workload "
                            f"requested {_kai_number(a * k)} {unit}")
            name = self.qspec[name].parent
        return None

    def _non_preemptible_alloc(self) -> dict[str, dict[str, float]]:
        """Resources bound by non-preemptible jobs per queue and ancestor (collected once per pass)."""
        if self._non_preemptible is None:
            out: dict[str, dict[str, float]] = {}
            for n in self.sim.nodes:
                for p in n.pods:
                    if p.state in ("running", "bound") and p.wl.priority >= PREEMPTIBLE_BELOW:
                        name: str | None = p.wl.queue
                        while name is not None:
                            add_into(out.setdefault(name, {}), p.wl.request.share)
                            name = self.qspec[name].parent
            self._non_preemptible = out
        return self._non_preemptible

    def _over_quota(self, wl: "Workload", need: dict[str, float]) -> str | None:
        """KAI's NonPreemptibleOverQuota message when a non-preemptible job does not fit its queue's
        (or an ancestor's) quota beside the other non-preemptible pods, or None."""
        if wl.priority < PREEMPTIBLE_BELOW:
            return None
        alloc = self._non_preemptible_alloc()
        name: str | None = wl.queue
        while name is not None:
            used = alloc.get(name, {})
            for r in KAI_ORDER:
                quota = self._param(name, r)[0]
                a = need.get(r, 0.0)
                if quota >= 0 and a > 0 and used.get(r, 0.0) + a > quota + EPS:
                    _, unit, asked, k = WORDS[r]
                    return (f"Non-preemptible workload is over quota. Workload requested {asked.format(_kai_number(a * k))}, "
                            f"but {name} quota "
                            f"is {_kai_number(quota * k)} {unit}, while {_kai_number(used.get(r, 0.0) * k)} {unit} "
                            f"are already allocated for non-preemptible pods. Use a preemptible workload to go over "
                            f"quota.")
            name = self.qspec[name].parent
        return None

    def _held(self, wl: "Workload") -> str | None:
        """Why the queue keeps ``wl``'s next gang minimum from allocating (OverLimit first), or None."""
        need = self._need(wl)
        return self._over_limit(wl.queue, need) or self._over_quota(wl, need)

    @staticmethod
    def _need_pods(wl: "Workload") -> int:
        return max(1, wl.min_member - len(wl.pods))

    def _need(self, wl: "Workload") -> dict[str, float]:
        return scaled(wl.request.share, self._need_pods(wl))

    # -- pass: the extension points the scheduling cycle calls ---------------------------------------
    def open_session(self) -> None:
        self._non_preemptible = None
        self.compute_fair_share()

    def queue_order(self, wl: "Workload") -> tuple:
        return (-wl.priority, wl.enqueued_at, wl.seq)

    def score(self, wl: "Workload") -> tuple[str, str | None]:
        if wl.topology_required is not None:
            return "pack", wl.topology_required
        if wl.topology_sensitivity > 0 or wl.topology_preferred:
            return "pack", None  # KAI supports topology-aware placement for gangs
        return "binpack", None

    def allocate(self) -> None:
        by_queue: dict[str, list] = {}
        for key in self.pass_keys():
            by_queue.setdefault(key[0], []).append(key)
        scans = {q: self.queue.scan(self.queue_order, keys) for q, keys in by_queue.items()}
        # Allocating to a leaf queue changes only its own saturation and scan: the others' ranks are kept.
        rank = {q: (-self.qspec[q].priority, self._saturation(q), q) for q in scans if scans[q].has_next()}
        while rank:
            qname = min(rank, key=rank.__getitem__)
            scan = scans[qname]
            key, wl = scan.next()
            placed = self._try(scan, key, wl)
            if not scan.has_next():
                del rank[qname]
            elif placed:  # nothing placed: the queue's allocation, so its saturation, is unchanged
                rank[qname] = (-self.qspec[qname].priority, self._saturation(qname), qname)

    def _try(self, scan, key, wl: "Workload") -> bool:
        """One allocation attempt for the head job ``wl`` of bucket ``key``; whether it placed pods."""
        if self._held(wl) is not None:
            scan.fail(key)
            return False
        strategy, level = self.score(wl)
        before = len(wl.pods)
        if self.place_gang(wl, strategy, level):
            if wl.priority >= PREEMPTIBLE_BELOW and self._non_preemptible is not None:
                name: str | None = wl.queue
                while name is not None:
                    add_into(self._non_preemptible.setdefault(name, {}), wl.request.share, len(wl.pods) - before)
                    name = self.qspec[name].parent
            scan.done(key) if wl.pending <= 0 else scan.keep(key)
            return True
        scan.fail(key)
        return False

    def _may_reclaim(self, wl: "Workload") -> bool:
        """CanReclaimResources: allocated + the job within the fair share in every resource (and, for a
        non-preemptible job, within quota)."""
        q, need = wl.queue, self._need(wl)
        preemptible = wl.priority < PREEMPTIBLE_BELOW
        # A preemptible job's check never reads the non-preemptible allocation: no walk of every pod for it.
        non_preemptible = {} if preemptible else self._non_preemptible_alloc().get(q, {})
        if not can_reclaim_resources(self.sim.queue_usage.get(q, {}), need, self.fair[q], preemptible,
                                     non_preemptible, self._shares(q, "deserved")):
            return False
        return preemptible or self._over_quota(wl, need) is None  # the ancestors' quotas too

    def reclaim(self) -> None:
        if not self.cfg.reclaim:
            return
        sim = self.sim
        starving = sorted(self._starving(), key=lambda w: (self._saturation(w.queue), self.queue_order(w)))
        running = None
        usage: dict[str, dict[str, float]] = {}
        for wl in starving:
            need_pods = self._need_pods(wl)
            if not self._may_reclaim(wl):
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
                # a queue's allocation as KAI's session sees it: a releasing (terminating) pod counts in none,
                # so victims chosen in an earlier pass have left their queue already
                usage = {q: sim.queue_allocated(q) for q in sim.queue_usage}
            fair = self.fair
            above = {q: any_above(usage.get(q, {}), fair.get(q, {})) for q in {v.queue for v in running.values()}}
            candidates = [v for v in running.values()
                          if v.queue != wl.queue and v.priority < PREEMPTIBLE_BELOW and above[v.queue]]
            min_runtime = self.cfg.min_guaranteed_runtime
            victims = [v for v in candidates if v.first_start is None or sim.now - v.first_start >= min_runtime]
            # the most saturated queue first, then the lowest priority, then the newest: a job whose pods are
            # bound but wait for their peers has not started, loses no work, and counts as the newest ([U])
            sat = {q: self._saturation(q) for q in {v.queue for v in victims}}  # once per queue, not per job
            victims.sort(key=lambda v: (-sat[v.queue], v.priority,
                                        v.first_start is not None, -(v.first_start or 0.0), -v.uid))
            chosen: list = []
            left: dict[str, dict[str, float]] = {}  # KAI's remainingResourcesMap: per queue and ancestor
            probe = sim.eviction_probe(wl, need_pods)
            need = self._need(wl)
            for v in victims:
                # The strategies judge the victim's queue as it stands before this job goes (KAI's reclaimable.go
                # reclaimResourcesFromReclaimees), at the level where its path parts from the reclaimer's.
                mine, theirs = self._leveled(wl.queue, v.queue)
                remaining = left.get(theirs)
                if remaining is None:
                    remaining = self._tree_usage(theirs, usage)
                if not self._fits_reclaim_strategy(need, mine, self._tree_usage(mine, usage), theirs, remaining):
                    continue
                freed = scaled(v.request.share, len(v.pods))
                name: str | None = v.queue
                while name is not None:  # the job leaves its queue and every ancestor
                    base = left.get(name)
                    left[name] = add_into(dict(self._tree_usage(name, usage) if base is None else base), freed, -1.0)
                    name = self.qspec[name].parent
                chosen.append(v)
                probe.add(v.pods)
                if probe.fits():
                    break
            else:
                # Reclaiming cannot make room where the job fits: evict nothing.  KAI tries again every cycle,
                # so come back when the next job spared by minRuntime becomes a candidate.
                self._retry_when_spared_age(candidates, min_runtime)
                continue
            if self.cfg.reclaimer_saturation_multiplier is not None and not self._within_boundaries(
                    wl, need, chosen, usage):
                # the reclaiming queues would end more saturated than a queue they take from
                self._retry_when_spared_age(candidates, min_runtime)
                continue
            for v in chosen:
                sim.evict(v, "KaiReclaim")
            usage.update({q: x for q, x in left.items() if q in self.leaves})  # later reclaimers see them gone
            wl.nominated_until = sim.now + sim.params.termination_grace + 1e-6

    def _retry_when_spared_age(self, candidates: list, min_runtime: float) -> None:
        """Come back when the next job spared by minRuntime becomes a candidate (KAI tries every cycle)."""
        sim = self.sim
        young = [v.first_start + min_runtime for v in candidates if v.first_start is not None
                 and sim.now - v.first_start < min_runtime]
        if young:
            sim.retry_at(min(young) + 1e-6)

    # -- in-queue preempt (KAI's preempt action, pkg/scheduler/actions/preempt) ------------------------------
    def preempt(self) -> None:
        """KAI's preempt action (``kai.preempt``): a waiting job evicts whole jobs of its own queue that are
        preemptible (priority < 100) and of lower priority - the lowest priority first, then the newest (the
        victims queue is the job order reversed) - until it fits, within its queue's limits; a
        non-preemptible job over its queue's quota preempts nothing.  Victims that the job does not need
        after all stay (KAI re-allocates them after the preemptor, highest priority and oldest first).
        KAI runs reclaim before preempt in a session; here preempt comes first in a cycle, and a job that
        preempted waits for its victims (``nominated_until``), so the two never act for the same job at once.
        ``min_guaranteed_runtime`` spares jobs from reclaim only (KAI's preemptMinRuntime is not modelled)."""
        if not self.cfg.preempt:
            return
        sim = self.sim
        starving = sorted(self._starving(), key=lambda w: (-self.qspec[w.queue].priority, self._saturation(w.queue),
                                                           self.queue_order(w)))
        running: dict[str, list] | None = None
        for wl in starving:
            if wl.nominated_until > sim.now:
                continue  # its victims are still terminating
            need_pods, need = self._need_pods(wl), self._need(wl)
            if self._over_quota(wl, need) is not None:
                continue  # IsNonPreemptibleJobOverQueueQuotaFn
            if running is None:
                running = {}
                for n in sim.nodes:
                    for p in n.pods:
                        if p.state in ("running", "bound") and p.wl not in running.get(p.wl.queue, ()):
                            running.setdefault(p.wl.queue, []).append(p.wl)
            victims = sorted((v for v in running.get(wl.queue, ()) if v is not wl and v.pods
                              and v.priority < PREEMPTIBLE_BELOW and v.priority < wl.priority),
                             key=lambda v: (v.priority, -v.created, -v.seq))
            if not victims:
                continue
            chosen = self._preempt_victims(wl, need_pods, need, victims)
            if not chosen:
                continue
            for v in chosen:
                message = "; ".join(f"Pod {p.name} was preempted by higher priority workload {wl.name}"
                                    for p in v.pods)  # unschedule_info.go GetPreemptMessage, per pod
                running[wl.queue].remove(v)
                sim.evict(v, "KaiPreempt", message=message)
            wl.nominated_until = sim.now + sim.params.termination_grace + 1e-6

    def _preempt_victims(self, wl: "Workload", need_pods: int, need: dict[str, float], victims: list) -> list:
        """The fewest of ``victims`` (taken in order) whose eviction lets ``need_pods`` pods of ``wl`` fit
        within the queue's limits; [] when all of them are not enough."""
        sim = self.sim
        nodes = sim.candidate_nodes(wl)
        shared = any(c.isolation == "kai" for n in nodes for c in n.contexts)  # gpu-fraction accounting here

        def enough(group: list) -> bool:
            freed: dict[str, float] = {}
            for v in group:
                add_into(freed, v.request.share, len(v.pods))
            if shared:
                fits = fits_after_eviction(wl, need_pods, nodes, [p for v in group for p in v.pods])
            else:
                probe = sim.eviction_probe(wl, need_pods)
                for v in group:
                    probe.add(v.pods)
                fits = probe.fits()
            return fits and self._within_limits(wl.queue, need, freed)

        if enough([]):
            return []  # it fits without victims: allocate places it
        chosen: list = []
        for v in victims:
            chosen.append(v)
            if enough(chosen):
                break
        else:
            return []
        for v in reversed(list(chosen)):  # the solver re-allocates victims in job order: those that fit stay
            rest = [x for x in chosen if x is not v]
            if rest and enough(rest):
                chosen = rest
        return chosen

    def _within_limits(self, q: str, need: dict[str, float], freed: dict[str, float]) -> bool:
        """Queue ``q`` and its ancestors stay within their limits with ``need`` once ``freed`` has left."""
        return self._over_limit(q, need, freed) is None

    def _path(self, name: str) -> list[str]:
        path: list[str] = []
        node: str | None = name
        while node is not None:
            path.append(node)
            node = self.qspec[node].parent
        return path[::-1]

    def _leveled(self, reclaimer: str, victim: str) -> tuple[str, str]:
        """KAI's getLeveledQueues: the two queues where the paths from the root part (siblings)."""
        return leveled_queues(self._path(reclaimer), self._path(victim))

    def _tree_usage(self, name: str, usage: dict[str, dict[str, float]]) -> dict[str, float]:
        """A queue's allocation in the reclaim session: its own (a leaf) or its leaves' (a parent)."""
        if name not in self.children:
            return usage.get(name, {})
        out: dict[str, float] = {}
        for c in self.children[name]:
            add_into(out, self._tree_usage(c, usage))
        return out

    def _fits_reclaim_strategy(self, need: dict[str, float], mine: str, mine_alloc: dict[str, float], theirs: str,
                               remaining: dict[str, float]) -> bool:
        """KAI's reclaim strategies (proportion/reclaimable/strategies): MaintainFairShare - the victim queue
        holds more than its allocatable share (max(deserved, fair share), within its limit) in some resource;
        or GuaranteeDeservedQuota - the reclaimer stays within its deserved quota in every resource with the
        job, and the victim queue holds more than its deserved quota in some resource."""
        return fits_reclaim_strategy(need, mine_alloc, self._shares(mine, "deserved"), remaining,
                                     self._shares(theirs, "allocatable"), self._shares(theirs, "deserved"))

    def _within_boundaries(self, wl: "Workload", need: dict[str, float], chosen: list,
                           usage: dict[str, dict[str, float]]) -> bool:
        """reclaimingQueuesRemainWithinBoundaries for the victims ``chosen`` (kai_reclaimable)."""
        preemptible = wl.priority < PREEMPTIBLE_BELOW
        policy = self

        class Shares(dict):  # the queues' figures, built as the check reads them
            def __missing__(self, name: str) -> QueueShares:
                got = self[name] = QueueShares(
                    policy.qspec[name].parent, policy._shares(name, "deserved"), policy.fair[name],
                    policy._tree_usage(name, usage),
                    {} if preemptible else policy._non_preemptible_alloc().get(name, {}),
                    policy._shares(name, "allocatable"))
                return got

        queues = Shares()
        remaining: dict[str, dict[str, float]] = {}
        involved: dict[str, set[str]] = {}
        for v in chosen:
            subtract_reclaimed(queues, remaining, involved, v.queue, scaled(v.request.share, len(v.pods)))
        return remain_within_boundaries(queues, wl.queue, need, preemptible, remaining, involved,
                                        self.cfg.reclaimer_saturation_multiplier)

    def _shares(self, q: str, which: str) -> dict[str, float]:
        """A queue's deserved quota (-1 unlimited: infinite) or allocatable share per resource (kept while the
        fair share holds: callers must not change it)."""
        fair = self.fair  # divides first when the session's demand is still to be read, which clears the cache
        got = self._share_cache.get((q, which))
        if got is not None:
            return got
        out = self._share_cache[(q, which)] = {}
        for r in KAI_ORDER:
            quota, _, limit = self._param(q, r)
            if which == "deserved":
                out[r] = INF if quota < 0 else quota
            else:
                out[r] = allocatable_share(quota, fair[q].get(r, 0.0), limit)
        return out

    # -- explanation ----------------------------------------------------------------
    def explain(self, wl: "Workload") -> str:
        """KAI's queue verdict (OverLimit, NonPreemptibleOverQuota) when the queue holds the job back,
        else why its pods fit no node."""
        if wl.pending > 0:
            self._non_preemptible = None
            held = self._held(wl)
            if held is not None:
                return held
        return super().explain(wl)


# -- KAI's reclaim strategies as pure functions (pkg/scheduler/plugins/proportion/reclaimable/strategies) -------------
def allocatable_share(deserved: float, fair: float, limit: float) -> float:
    """ResourceShare.GetAllocatableShare: max(deserved, fair share) within the limit; deserved -1 (unlimited)
    gives the limit (-1: infinite)."""
    lim = INF if limit < 0 else limit
    if deserved < 0:
        return lim
    return min(lim, max(deserved, fair))


def _less_equal(a: dict[str, float], b: dict[str, float]) -> bool:
    """ResourceQuantities.LessEqual over every resource (a missing one is 0)."""
    return all(a.get(r, 0.0) <= b.get(r, 0.0) + EPS for r in KAI_ORDER)


def can_reclaim_resources(alloc: dict[str, float], need: dict[str, float], fair: dict[str, float],
                          preemptible: bool, non_preemptible_alloc: dict[str, float],
                          deserved: dict[str, float]) -> bool:
    """Reclaimable.CanReclaimResources: the queue's allocation with the job stays within its fair share in
    every resource (asked for or not); a non-preemptible job's non-preemptible allocation with the job also
    within the deserved quota."""
    if not _less_equal(add_into(dict(alloc), need), fair):
        return False
    return preemptible or _less_equal(add_into(dict(non_preemptible_alloc), need), deserved)


def maintain_fair_share(victim_remaining: dict[str, float], victim_allocatable: dict[str, float]) -> bool:
    """MaintainFairShareStrategy: the victim queue's remaining allocation exceeds its allocatable share somewhere."""
    return not _less_equal(victim_remaining, victim_allocatable)


def guarantee_deserved_quota(need: dict[str, float], reclaimer_alloc: dict[str, float],
                             reclaimer_deserved: dict[str, float], victim_remaining: dict[str, float],
                             victim_deserved: dict[str, float]) -> bool:
    """GuaranteeDeservedQuotaStrategy: the reclaimer with the job stays within its deserved quota in every
    resource, and the victim queue's remaining allocation exceeds its deserved quota in some resource."""
    if not _less_equal(add_into(dict(reclaimer_alloc), need), reclaimer_deserved):
        return False
    return not _less_equal(victim_remaining, victim_deserved)


def fits_reclaim_strategy(need: dict[str, float], reclaimer_alloc: dict[str, float],
                          reclaimer_deserved: dict[str, float], victim_remaining: dict[str, float],
                          victim_allocatable: dict[str, float], victim_deserved: dict[str, float]) -> bool:
    """strategies.FitsReclaimStrategy: MaintainFairShare or GuaranteeDeservedQuota."""
    return maintain_fair_share(victim_remaining, victim_allocatable) or guarantee_deserved_quota(
        need, reclaimer_alloc, reclaimer_deserved, victim_remaining, victim_deserved)


def reclaimable(queues: "dict[str, QueueShares]", reclaimer_queue: str, need: dict[str, float], preemptible: bool,
                reclaimees: dict[str, list[dict[str, float]]], multiplier: float = 1.0) -> bool:
    """Reclaimable.Reclaimable for one scenario: each reclaimed job (per queue, the resources it frees) fits a
    strategy, judged at the queues where the reclaimer's and its paths part before it goes; then the
    reclaiming queues remain within boundaries."""
    remaining: dict[str, dict[str, float]] = {}
    involved: dict[str, set[str]] = {}
    for victim_queue, jobs in reclaimees.items():
        mine, theirs = leveled_queues(queue_path(queues, reclaimer_queue), queue_path(queues, victim_queue))
        for freed in jobs:
            left = remaining.get(theirs, queues[theirs].allocated)
            if not fits_reclaim_strategy(need, queues[mine].allocated, queues[mine].deserved, left,
                                         queues[theirs].allocatable, queues[theirs].deserved):
                return False
            subtract_reclaimed(queues, remaining, involved, victim_queue, freed)
    return remain_within_boundaries(queues, reclaimer_queue, need, preemptible, remaining, involved, multiplier)


def fits_after_eviction(wl: "Workload", pods: int, nodes: list, victims: list) -> bool:
    """Whether ``pods`` pods of ``wl`` fit on ``nodes`` once the ``victims`` pods are gone, GPU by GPU with
    KAI's fraction accounting (a gpu-fraction pod frees its fraction of one GPU, a whole-GPU pod the GPU; a
    whole-GPU request needs GPUs nobody else holds), and within the nodes' CPU and host memory."""
    req = wl.request
    gone = {id(p) for p in victims}
    total = best = 0
    for n in nodes:
        room = 0  # fraction pods that fit, or GPUs nobody holds
        for c in n.contexts:
            if c.unusable or not c.slots:
                continue
            left = [p for p in c.tenants if id(p) not in gone]
            if req.kind == "fraction":
                used = sum(p.wl.request.fraction if p.wl.request.kind == "fraction" else 1.0 for p in left)
                room += int((1.0 - used + 1e-9) // req.fraction)
            elif not left and c.resource == req.resource:
                room += 1
        k = room if req.kind == "fraction" else room // max(1, req.count)
        back = [p for p in victims if p.node is n]
        if req.cpu and n.cpu_free is not None:
            k = min(k, int((n.cpu_free + sum(p.wl.request.cpu for p in back)) / req.cpu + 1e-9))
        if req.host_gib and n.host_gib_free is not None:
            k = min(k, int((n.host_gib_free + sum(p.wl.request.host_gib for p in back)) / req.host_gib + 1e-9))
        total += k
        best = max(best, k)
    return (best if wl.topology_required == "node" else total) >= pods
