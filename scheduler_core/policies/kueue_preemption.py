"""Kueue's preemption (domain-facts.md §4.3, §4.4): which admitted workloads to evict so that a workload
fits its ClusterQueue's quota.

* **Classic** (``_victims_for``, ``_minimal_set``): candidates are same-CQ workloads matching
  ``withinClusterQueue`` and workloads of cohort CQs that are borrowing, matching
  ``reclaimWithinCohort`` (only when the preemptor fits its own nominal quota, unless
  ``borrowWithinCohort`` allows it); sorted borrowing CQs first, then lowest priority, then most
  recently admitted; greedy selection and a reverse pass that drops unneeded victims.
* **Fair sharing** (KEP-1714, ``_fair_victims``): targets chosen by dominant resource share
  (``_cq_drs``) and the ``preemptionStrategies``.

:class:`KueuePreemptor` is mixed into :class:`~scheduler_core.policies.kueue.KueueAdmission`: the
search reads the admission's quota book (``_fits``, ``_usage``, ``_borrowing``, ``cohorts``, ``cfg``)
and is called from its admission pass (``admit``, through ``_preemption``).
"""

from __future__ import annotations

import bisect
import heapq
import itertools
from typing import TYPE_CHECKING, Iterator

from scheduler_core.policies.cluster_queue import EPS, INF, ClusterQueueState, preemption_allows

if TYPE_CHECKING:  # pragma: no cover
    from scheduler_core.workloads import Workload

# Kueue's fair-sharing preemption strategies (pkg/scheduler/preemption/fairsharing/strategy.go), on DRS values
# compared as CompareDRS does: (preemptor's share with the workload, target's before, target's after removal).
_STRATEGIES = {
    "LessThanOrEqualToFinalShare": lambda mine, before, after: mine <= after,  # rule S2-a
    "LessThanInitialShare": lambda mine, before, after: mine < before,  # rule S2-b
}


class Ranked:
    """One ClusterQueue's admitted workloads on one flavor in the order classic preemption takes victims
    (lowest priority, then the most recently admitted, then the highest uid), and what the workloads of each
    priority hold; kept at every admission and release, so that a search reads the few victims it needs
    instead of sorting every admitted workload of the cohort."""

    __slots__ = ("entries", "by_priority")

    def __init__(self) -> None:
        self.entries: list[tuple] = []  # (priority, -admitted_at, -uid, workload, its usage)
        self.by_priority: dict[int, list] = {}  # priority -> [how many, {resource: what they hold}]

    def add(self, wl: "Workload", usage: dict[str, float]) -> None:
        p = wl.priority
        bisect.insort(self.entries, (p, -(wl.admitted_at or 0.0), -wl.uid, wl, usage))  # unique keys: wl never compared
        got = self.by_priority.get(p)
        if got is None:
            self.by_priority[p] = [1, dict(usage)]
            return
        got[0] += 1
        held = got[1]
        for r, a in usage.items():
            held[r] = held.get(r, 0.0) + a

    def remove(self, wl: "Workload") -> None:
        p = wl.priority
        entries = self.entries
        usage = entries.pop(bisect.bisect_left(entries, (p, -(wl.admitted_at or 0.0), -wl.uid)))[4]
        got = self.by_priority[p]
        got[0] -= 1
        if not got[0]:
            del self.by_priority[p]  # nothing left: no rounding carried over
            return
        held = got[1]
        for r, a in usage.items():
            held[r] -= a


class Source:
    """The candidates one ClusterQueue offers a search: its admitted workloads on the flavor below priority
    ``below`` (``INF``: any), with ``newer``: also those of priority ``below`` created after it
    (LowerOrNewerEqualPriority), with ``at_most``: none above that priority (borrowWithinCohort's threshold)."""

    __slots__ = ("cq", "ranked", "kind", "why", "below", "newer", "at_most")

    def __init__(self, cq: ClusterQueueState, ranked: Ranked, kind: int, why: str, below: float,
                 newer: float | None = None, at_most: int | None = None) -> None:
        self.cq, self.ranked, self.kind, self.why = cq, ranked, kind, why
        self.below, self.newer, self.at_most = below, newer, at_most

    def _prio_ok(self, p: int) -> bool:
        return p < self.below and (self.at_most is None or p <= self.at_most)

    def accepts(self, v: "Workload") -> bool:
        p = v.priority
        return self._prio_ok(p) or (self.newer is not None and p == self.below and v.created > self.newer
                                    and (self.at_most is None or p <= self.at_most))

    def held(self, r: str) -> float | None:
        """What the candidates hold of ``r`` from the kept sums (None: only a walk over them can say)."""
        if self.newer is not None:
            return None
        below, at_most, total = self.below, self.at_most, 0.0
        for p, h in self.ranked.by_priority.items():
            if p < below and (at_most is None or p <= at_most):
                total += h[1].get(r, 0.0)
        return total

    def any(self) -> bool:
        """Whether there is a candidate at all."""
        if self.newer is not None:
            return any(self.accepts(e[3]) for e in self.ranked.entries)
        below, at_most = self.below, self.at_most
        for p in self.ranked.by_priority:
            if p < below and (at_most is None or p <= at_most):
                return True
        return False

    def ordered(self) -> Iterator[tuple]:
        """(sort key, victim, CQ, reason) in victim order; the keys are unique across ClusterQueues."""
        below, at_most, kind, cq, why = self.below, self.at_most, self.kind, self.cq, self.why
        for p, nadm, nuid, v, _ in self.ranked.entries:
            if p > below or (at_most is not None and p > at_most):
                return
            if p < below or self.accepts(v):
                yield (kind, p, nadm, nuid), v, cq, why


class KueuePreemptor:
    """The preemption search of :class:`~scheduler_core.policies.kueue.KueueAdmission`."""

    def _preemption(self, cq: ClusterQueueState, wl: "Workload") -> tuple[str, list["Workload"]] | None:
        pol = cq.spec.preemption
        if pol.within_cluster_queue == "Never" and pol.reclaim_within_cohort == "Never":
            return None
        need = self._usage(wl)
        if self._spans(cq, need) is not None:
            return None  # a workload spanning resource groups is not a preemptor (docs/simulator-model.md)
        best, best_height = None, None
        for f in self._flavors(cq, wl):
            victims = self._victims_on(cq, wl, f.name, need)
            if not victims:
                continue
            if self.tree is None:
                return f.name, victims
            # In a Cohort tree Kueue tries every flavor (whenCanPreempt: TryNextFlavor) and keeps the one
            # that, once its victims are gone, borrows lowest in the tree (flavorassigner.go isPreferred,
            # borrowAfterPreemptions); the first of equals.
            ov: dict = {}
            for v, _reason in victims:
                c = self.cqs[v.admission_info["cq"]]
                for r, a in self._usage(v).items():
                    k = (c.name, f.name, r)
                    ov[k] = ov.get(k, c.usage.get((f.name, r), 0.0)) - a
            height = self.tree.borrow_height(self, cq, f.name, wl, ov)
            if best is None or height < best_height:
                best, best_height = (f.name, victims), height
        return best

    def _victims_on(self, cq: ClusterQueueState, wl: "Workload", flavor: str, need: dict[str, float]):
        pol = cq.spec.preemption
        if pol.within_cluster_queue == "Never" and pol.reclaim_within_cohort == "Never":
            return None
        if not self._may_preempt_on(cq, flavor, need):
            return None
        fair = self.cfg.fair_sharing and cq.cohort
        if self.tree is not None:  # hierarchical cohorts (scheduler_core.policies.kueue_cohorts)
            if fair:
                return self.tree.fair_victims(self, cq, wl, flavor, need, self.cfg.fair_sharing_preemption_strategies,
                                              _STRATEGIES)
            return self.tree.classic_victims(self, cq, wl, flavor, need)
        return (self._fair_victims if fair else self._victims_for)(cq, wl, flavor, need)

    def _may_preempt_on(self, cq: ClusterQueueState, flavor: str, need: dict[str, float]) -> bool:
        """Whether Kueue looks for victims on ``flavor`` at all (flavorassigner.go ``fitsResourceQuota``): for
        each resource that does not fit, the request is within the ClusterQueue's nominal quota, or quota
        can be reclaimed below the root of a Cohort tree, or it may preempt while borrowing
        (borrowWithinCohort, or fair sharing with reclaimWithinCohort). Else the flavor is NoFit: a
        ClusterQueue that would borrow does not even preempt its own lower-priority workloads."""
        pol = cq.spec.preemption
        if pol.borrow_within_cohort != "Never" or (self.cfg.fair_sharing and pol.reclaim_within_cohort != "Never"):
            return True
        for r, a in need.items():
            q = cq.quota(flavor, r)
            if q is None or a <= q.nominal + EPS or self._fits(cq, flavor, {r: a}) is not None:
                continue
            if self.tree is not None and self.tree.reclaims_below_root(cq, (flavor, r), a):
                continue
            return False
        return True

    @staticmethod
    def _holds(v: "Workload", flavor: str) -> bool:
        """Whether ``v`` was admitted on ``flavor`` (alone, or as one of its resource groups' flavors)."""
        held = v.admission_info.get("flavor")
        return held == flavor or (held.__class__ is tuple and flavor in held)

    # -- fair sharing preemption (KEP-1714; pkg/scheduler/preemption/preemption.go fairPreemptions) -----------
    def _cq_drs(self, c: ClusterQueueState, usage: dict[tuple[str, str, str], float]) -> tuple[bool, float, bool]:
        """A ClusterQueue's dominant resource share as Kueue compares them (``CompareDRS``): (borrows with
        weight 0, share, borrowing).  Per resource, what it uses above nominal over all flavors, x1000 / what
        the cohort lends of it; the largest such ratio, divided by the fair-sharing weight (weight 0: infinite
        once it borrows, and such shares compare by their unweighted ratio)."""
        borrowed: dict[str, float] = {}
        for (f, r), q in c._quota.items():
            b = usage.get((c.name, f, r), c.usage.get((f, r), 0.0)) - q.nominal
            if b > EPS:
                borrowed[r] = borrowed.get(r, 0.0) + b
        if not borrowed:
            return (False, 0.0, False)
        ratio = 0.0
        for r, b in borrowed.items():
            lendable = sum(q.nominal - m.guaranteed(f, res) for m in self.cohorts[c.cohort]
                           for (f, res), q in m._quota.items() if res == r)
            if lendable > 0:
                ratio = max(ratio, b * 1000.0 / lendable)
        w = c.spec.fair_sharing_weight
        if w == 0 and ratio > 0:
            return (True, ratio, True)
        return (False, ratio / w if w > 0 else 0.0, True)

    def _fair_victims(self, cq: ClusterQueueState, wl: "Workload", flavor: str, need: dict[str, float]):
        """Kueue's fair-sharing preemption for a ClusterQueue in a cohort: [(victim, reason)] or None.

        Candidates: the CQ's own workloads its ``withinClusterQueue`` policy allows and, from cohort CQs that
        borrow a resource the workload needs, those ``reclaimWithinCohort`` allows; ordered other CQs first,
        lowest priority, newest, uid.  With the incoming workload's usage added, the CQ of the highest share
        among the preemptor's CQ and the borrowing CQs with candidates is the next target: the preemptor's
        own CQ gives up its candidate (InClusterQueue); while the preemptor stays within nominal, any target
        does (InCohortReclamation); else a target's candidate goes when the first strategy passes
        (InCohortFairSharing), after which the target is chosen again.  Candidates the first strategy
        passed over get the second (LessThanInitialShare: one per CQ).  Then the reverse fill-back."""
        pol = cq.spec.preemption
        frs = [r for r, a in need.items() if a > 0 and cq.quota(flavor, r) is not None]

        def uses(v) -> bool:
            return self._holds(v, flavor) and any(self._usage(v).get(r, 0.0) > 0 for r in frs)

        def allowed(policy: str, v) -> bool:
            return preemption_allows(policy, v, wl)

        cands: list[tuple[tuple, "Workload", ClusterQueueState]] = []
        if pol.within_cluster_queue != "Never":
            cands += [((1, v.priority, -(v.admitted_at or 0.0), v.uid), v, cq) for v in cq.admitted.values()
                      if uses(v) and allowed(pol.within_cluster_queue, v)]
        if pol.reclaim_within_cohort != "Never":
            for c in self.cohorts[cq.cohort]:
                if c is cq or not any(c.usage.get((flavor, r), 0.0) > c.quota(flavor, r).nominal + EPS
                                      for r in frs if c.quota(flavor, r) is not None):
                    continue
                cands += [((0, v.priority, -(v.admitted_at or 0.0), v.uid), v, c) for v in c.admitted.values()
                          if uses(v) and allowed(pol.reclaim_within_cohort, v)]
        if not cands:
            return None
        cands.sort(key=lambda x: x[0])
        override: dict[tuple[str, str, str], float] = {}

        def change(v, c, sign: float) -> None:
            for r, a in self._usage(v).items():
                k = (c.name, flavor, r)
                override[k] = override.get(k, c.usage.get((flavor, r), 0.0)) + sign * a

        def fits() -> bool:  # the incoming workload is in the simulated usage: take it out to test it
            for r, a in need.items():
                k = (cq.name, flavor, r)
                override[k] = override.get(k, cq.usage.get((flavor, r), 0.0)) - a
            ok = self._fits(cq, flavor, need, override) is not None
            for r, a in need.items():
                override[(cq.name, flavor, r)] += a
            return ok

        for r, a in need.items():  # DRS values include the incoming workload
            override[(cq.name, flavor, r)] = cq.usage.get((flavor, r), 0.0) + a
        within_nominal = all(override[(cq.name, flavor, r)] <= cq.quota(flavor, r).nominal + EPS for r in frs)
        strategies = self.cfg.fair_sharing_preemption_strategies
        targets: list[tuple["Workload", ClusterQueueState, str]] = []

        def take(v, c, reason: str) -> bool:
            change(v, c, -1.0)
            targets.append((v, c, reason))
            return fits()

        def next_target(per_cq: dict[str, list], pruned: set[str]) -> ClusterQueueState | None:
            best, best_drs = None, None
            for c in self.cohorts[cq.cohort]:
                if c.name in pruned:
                    continue
                drs = self._cq_drs(c, override)
                if (not drs[2] and c is not cq) or not per_cq.get(c.name):
                    pruned.add(c.name)
                elif best is None or drs[:2] > best_drs[:2] or (
                        drs[:2] == best_drs[:2] and per_cq[c.name][0][0] < per_cq[best.name][0][0]):
                    best, best_drs = c, drs
            return best

        def groups(items) -> dict[str, list]:
            out: dict[str, list] = {}
            for item in items:
                out.setdefault(item[2].name, []).append(item)
            return out

        rule = _STRATEGIES[strategies[0]]
        per_cq, pruned, retry, done = groups(cands), set(), [], False
        while not done:
            target = next_target(per_cq, pruned)
            if target is None:
                break
            queue = per_cq[target.name]
            if target is cq or within_nominal:
                _, v, c = queue.pop(0)
                done = take(v, c, "InClusterQueue" if target is cq else "InCohortReclamation")
                continue
            mine, theirs = self._cq_drs(cq, override), self._cq_drs(target, override)
            if mine[0] and not theirs[0]:  # an infinite share (weight 0, borrowing) passes no strategy
                retry += queue
                queue.clear()
                continue
            while queue:
                item = queue.pop(0)
                _, v, c = item
                change(v, c, -1.0)
                after = self._cq_drs(target, override)
                change(v, c, +1.0)
                if rule(mine[:2], theirs[:2], after[:2]):
                    done = take(v, c, "InCohortFairSharing")
                    break  # shares changed: choose the target again
                retry.append(item)
        if not done and len(strategies) > 1:
            per_cq, pruned = groups(retry), set()
            while not done:
                target = next_target(per_cq, pruned)
                if target is None:
                    break
                mine, theirs = self._cq_drs(cq, override), self._cq_drs(target, override)
                _, v, c = per_cq[target.name].pop(0)
                if mine[:2] < theirs[:2]:
                    done = take(v, c, "InCohortFairSharing")
                pruned.add(target.name)  # rule S2-b applies at most once per ClusterQueue
        if not done:
            return None
        for r, a in need.items():  # fill back without the incoming workload's usage
            override[(cq.name, flavor, r)] -= a
        for i in range(len(targets) - 2, -1, -1):  # fillBackWorkloads: keep only the victims still needed
            v, c, _ = targets[i]
            change(v, c, +1.0)
            if self._fits(cq, flavor, need, override) is not None:
                targets.pop(i)
            else:
                change(v, c, -1.0)
        return [(v, why) for v, _, why in targets]

    def _victims_for(self, cq: ClusterQueueState, wl: "Workload", flavor: str, need: dict[str, float]):
        """Kueue's classic preemption: the minimal set of (victim, reason) that lets ``wl`` fit, or None.

        Attempts as Kueue makes them: while the CQ is under its nominal quota, first try to fit
        without borrowing, reclaiming from cohort CQs that borrow (reclaimWithinCohort); then, or
        directly when already at nominal, try with borrowing, where only the CQ's own workloads and,
        with borrowWithinCohort, other CQs' workloads below the preemptor's priority (and at or
        below maxPriorityThreshold) are candidates (reason InCohortReclaimWhileBorrowing).
        """
        pol = cq.spec.preemption
        outlook = self._preemption_outlook(cq, wl, flavor, need)
        if outlook is None:
            return None  # no attempt below would have a single candidate (the usual verdict with a backlog)
        under_nominal, own_possible = outlook
        if under_nominal:
            under_nominal = self._nominal_reachable(cq, flavor, need,
                                                    self._own_candidates(cq, wl, flavor) if own_possible else [])
        own = []
        if own_possible:
            newer = wl.created if pol.within_cluster_queue == "LowerOrNewerEqualPriority" else None
            own = [Source(cq, self._ranked_on(cq, flavor), 1, "InClusterQueue", wl.priority, newer)]
        attempts = ([False] if under_nominal else []) + [True]
        lenders = None
        for allow_borrowing in attempts:
            sources = list(own)
            # While borrowing, only borrowWithinCohort makes other CQs' workloads candidates.
            if cq.cohort and pol.reclaim_within_cohort != "Never" and (
                    not allow_borrowing or pol.borrow_within_cohort == "LowerPriority"):
                if lenders is None:  # the cohort CQs that borrow on this flavor (usage does not change here)
                    borrowers = self._borrowing_cqs(cq.cohort, flavor)
                    lenders = [c for c in self.cohorts[cq.cohort] if c is not cq and c.name in borrowers]
                for c in lenders:
                    ranked = self._ranked_on(c, flavor)
                    if not allow_borrowing:
                        below = INF if pol.reclaim_within_cohort == "Any" else wl.priority
                        sources.append(Source(c, ranked, 0, "InCohortReclamation", below))
                    else:
                        sources.append(Source(c, ranked, 0, "InCohortReclaimWhileBorrowing", wl.priority,
                                              at_most=pol.borrow_within_cohort_max_priority_threshold))
            chosen = self._minimal_set(cq, flavor, need, sources, allow_borrowing)
            if chosen is not None:
                return chosen
        return None

    def _ranked_on(self, cq: ClusterQueueState, flavor: str) -> Ranked:
        got = self._ranked.get((cq.name, flavor))
        if got is None:
            got = self._ranked[cq.name, flavor] = Ranked()
        return got

    def _rank(self, cq: ClusterQueueState, wl: "Workload", flavor, admitted: bool) -> None:
        """Keep ``_ranked`` at an admission (``admitted``) or a release of ``wl`` on ``flavor``."""
        ranked, usage = self._ranked, self._usage(wl)
        for fl in (flavor if flavor.__class__ is tuple else (flavor,)):
            got = ranked.get((cq.name, fl))
            if got is None:
                got = ranked[cq.name, fl] = Ranked()
            if admitted:
                got.add(wl, usage)
            else:
                got.remove(wl)

    @staticmethod
    def _preemption_outlook(cq: ClusterQueueState, wl: "Workload", flavor: str, need: dict[str, float]):
        """Whether classic preemption could have any candidate for ``wl`` on ``flavor``: None when no attempt
        could (no own workload its ``withinClusterQueue`` allows, and no reclaiming from the cohort: the CQ is
        at its nominal quota and ``borrowWithinCohort`` is off), else (under nominal, own candidates possible).
        It reads only this ClusterQueue (usage, admitted priorities, policy) and the workload's priority."""
        pol = cq.spec.preemption
        under_nominal = all(cq.usage.get((flavor, r), 0.0) < cq.quota(flavor, r).nominal - EPS
                            for r in need if cq.quota(flavor, r) is not None)
        lowest = min(cq.priorities) if cq.priorities else None
        own_possible = lowest is not None and (
            (pol.within_cluster_queue == "LowerPriority" and lowest < wl.priority) or
            (pol.within_cluster_queue == "LowerOrNewerEqualPriority" and lowest <= wl.priority))
        if not own_possible and not (cq.cohort and pol.reclaim_within_cohort != "Never" and (
                under_nominal or pol.borrow_within_cohort == "LowerPriority")):
            return None
        return under_nominal, own_possible

    def _held_on(self, cq: ClusterQueueState, flavor: str) -> list["Workload"]:
        """The CQ's admitted workloads on ``flavor``, in admission order, kept while its usage stands."""
        gen = self.cq_generation[cq.name]
        got = self._held_memo.get((cq.name, flavor))
        if got is not None and got[0] == gen:
            return got[1]
        held = [v for v in cq.admitted.values() if self._holds(v, flavor)]
        self._held_memo[cq.name, flavor] = (gen, held)
        return held

    def _own_candidates(self, cq: ClusterQueueState, wl: "Workload", flavor: str) -> list:
        """The CQ's own admitted workloads on ``flavor`` that ``withinClusterQueue`` lets ``wl`` preempt, as
        (sort key, victim, CQ, reason), in admission order; kept while the CQ's usage stands (callers copy
        before they change it)."""
        lower_or_newer = cq.spec.preemption.within_cluster_queue == "LowerOrNewerEqualPriority"
        memo_key = (cq.name, flavor, wl.priority, wl.created if lower_or_newer else None)
        gen = self.cq_generation[cq.name]
        got = self._own_memo.get(memo_key)
        if got is not None and got[0] == gen:
            return got[1]
        own = []
        for v in self._held_on(cq, flavor):
            if (v.priority < wl.priority or (lower_or_newer and
                                             v.priority == wl.priority and v.created > wl.created)):
                own.append(((1, v.priority, -(v.admitted_at or 0.0), -v.uid), v, cq, "InClusterQueue"))
        self._own_memo[memo_key] = (gen, own)
        return own

    def _nominal_reachable(self, cq: ClusterQueueState, flavor: str, need: dict[str, float], own: list) -> bool:
        """Whether ``need`` fits the CQ's nominal quota once every own candidate is gone: without borrowing
        the CQ must end within nominal, and cohort victims free cohort capacity, not this CQ's nominal."""
        freed: dict[str, float] = {}
        for _, v, _, _ in own:
            for r, a in self._usage(v).items():
                freed[r] = freed.get(r, 0.0) + a
        return all(cq.usage.get((flavor, r), 0.0) - freed.get(r, 0.0) + a <= cq.quota(flavor, r).nominal + EPS
                   for r, a in need.items() if cq.quota(flavor, r) is not None)

    def _preemption_bounds(self, cq: ClusterQueueState, wl: "Workload", flavor: str, need: dict[str, float]):
        """When classic preemption on a flat cohort's ``flavor`` can only take the CQ's own workloads (the CQ
        at its nominal quota, no ``borrowWithinCohort``): the test ``_minimal_set`` makes before its greedy
        search, split into what reads this ClusterQueue and what reads the pool.  () when no victim set can
        exist whatever the pool holds; else per resource (pool key or None, request, what the own candidates
        hold, limit - usage, unused guaranteed quota, pool capacity): the search fails while, for some
        resource, the shortfall left by the room (``_room``) exceeds what they hold.  None: the search may
        take other ClusterQueues' workloads (nothing to prove)."""
        pol = cq.spec.preemption
        outlook = self._preemption_outlook(cq, wl, flavor, need)
        if outlook is None:
            return ()
        under_nominal, own_possible = outlook
        own = self._own_candidates(cq, wl, flavor) if own_possible else []
        if (under_nominal and self._nominal_reachable(cq, flavor, need, own)) or (
                cq.cohort and pol.reclaim_within_cohort != "Never" and pol.borrow_within_cohort == "LowerPriority"):
            return None
        if not own:
            return ()
        held = [self._usage(v) for _, v, _, _ in own]
        bounds = []
        for r, a in need.items():
            q = cq.quota(flavor, r)
            if q is None:
                return ()
            total = sum(u.get(r, 0.0) for u in held)
            cur = cq.usage.get((flavor, r), 0.0)
            if not cq.cohort:
                short = a - max(0.0, q.nominal - cur)
                if short > EPS and total < short - EPS:
                    return ()
                continue
            pk = (cq.cohort, flavor, r)
            limit = q.ceiling
            bounds.append((pk, a, total, limit - cur, max(0.0, cq.guaranteed(flavor, r) - cur),
                           self.pool_cap.get(pk, 0.0)))
        return bounds

    def _borrowing_cqs(self, cohort: str, flavor: str) -> set[str]:
        """The names of the cohort's ClusterQueues that borrow on ``flavor``: worked out once while no usage
        changes (every ClusterQueue's search in a pass asks the same question)."""
        got = self._borrowers.get((cohort, flavor))
        if got is None or got[0] != self.usage_generation:
            got = self._borrowers[cohort, flavor] = (
                self.usage_generation, {c.name for c in self.cohorts[cohort] if self._borrowing(c, flavor)})
        return got[1]

    def _minimal_set(self, cq: ClusterQueueState, flavor: str, need: dict[str, float], sources: list[Source],
                     allow_borrowing: bool):
        """Kueue's greedy victim search over the candidates of ``sources`` in sort-key order (other CQs' first):
        victims are added until ``need`` fits, then a reverse pass drops those not needed."""
        for src in sources:
            if src.any():
                break
        else:
            return None
            return None
        # Necessary condition before the greedy search: the candidates hold what the CQ's room lacks of
        # every resource (removing a victim frees at most its usage; the room already free counts too).
        for r, a in need.items():
            if cq.quota(flavor, r) is None:
                return None
            short = a - max(0.0, self._room(cq, flavor, r)[0])
            if short > EPS and not self._hold_at_least(sources, flavor, r, short - EPS):
                return None
        cands = itertools.chain(heapq.merge(*(src.ordered() for src in sources if src.kind == 0)),
                                *(src.ordered() for src in sources if src.kind == 1))
        override: dict[tuple[str, str, str], float] = {}

        def remove(v, c, sign=-1.0):
            for r, a in self._usage(v).items():
                k = (c.name, flavor, r)
                override[k] = override.get(k, c.usage.get((flavor, r), 0.0)) + sign * a

        def fits() -> bool:
            mode = self._fits(cq, flavor, need, override)
            return mode == "fit" or (mode == "borrow" and allow_borrowing)

        chosen = []
        for _, v, c, why in cands:
            if c is not cq:
                # Only reclaim from a CQ while it is still above its nominal quota.
                still = any(override.get((c.name, flavor, r), c.usage.get((flavor, r), 0.0)) >
                            (c.quota(flavor, r).nominal + EPS) for r in need if c.quota(flavor, r) is not None)
                if not still:
                    continue
            remove(v, c)
            chosen.append((v, c, why))
            if fits():
                break
        else:
            return None
        for item in reversed(list(chosen)):  # reverse pass: keep only victims that are needed
            v, c, _ = item
            remove(v, c, +1.0)
            if fits():
                chosen.remove(item)
            else:
                remove(v, c)
        return [(v, why) for v, _, why in chosen]

    def _hold_at_least(self, sources: list[Source], flavor: str, r: str, bound: float) -> bool:
        """Whether the candidates hold at least ``bound`` of ``r``, as the sum over them one by one (own
        workloads first, in admission order) says: from the kept sums unless that is within rounding."""
        approx = 0.0
        for src in sources:
            part = src.held(r)
            if part is None:
                break
            approx += part
        else:
            tol = 1e-6 * max(1.0, abs(approx), abs(bound))
            if approx - bound > tol:
                return True
            if bound - approx > tol:
                return False
        return sum(self._usage(v).get(r, 0.0) for src in sources
                   for v in self._held_on(src.cq, flavor) if src.accepts(v)) >= bound
