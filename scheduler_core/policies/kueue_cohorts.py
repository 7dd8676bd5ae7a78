"""Kueue's hierarchical cohorts (Cohort objects with their own quota, parent and fair-sharing weight), as
Kueue v0.19 keeps them (learned from pkg/cache/scheduler/resource_node.go and fair_sharing.go,
pkg/scheduler/preemption/classical and fairsharing; not copied).

The quota tree: a ClusterQueue's subtree quota is its nominal quota; a Cohort's is its own nominal quota
plus what each child lends it (the child's subtree quota less its *local* quota, ``subtree -
lendingLimit`` when a lending limit is set, else nothing is kept back).  A node's usage is, for a
ClusterQueue, what its admitted workloads hold, and for a Cohort, what its children use beyond their local
quota.  What a ClusterQueue may still take is its unused local quota plus what its parent may give, capped
at every level by ``borrowingLimit`` (``available``); the most it could ever hold is ``potential``.  A
flat cohort is this tree with one level and no Cohort quota, so the model keeps its flat pool
(:mod:`scheduler_core.policies.kueue`) unless Cohort objects are stated.

Fair sharing: every node below a root has a dominant resource share (what it uses above its subtree quota
per resource x1000 / what its parent's subtree could lend it of that resource, the largest, divided by its
weight; weight 0 and borrowing: infinite), and preemption targets are found by walking down from the root
to the child of highest share (``_next_target``), comparing the preemptor and a target at the children of
their lowest common ancestor.  Classic preemption collects candidates subtree by subtree up the
preemptor's path, with a hierarchical advantage once a subtree holds the preemptor's request within its
own quota (``classic_victims``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler_core.policies.cluster_queue import EPS, INF, ClusterQueueState, preemption_allows

if TYPE_CHECKING:  # pragma: no cover
    from scheduler_core.workloads import Workload

NEGATIVE = (False, -1.0)  # below every share (NegativeDRS)
_REASONS = {"own": "InClusterQueue", "hier": "InCohortReclamation", "without": "InCohortReclamation",
            "while": "InCohortReclaimWhileBorrowing"}


class CohortNode:
    """A Cohort: its parent, child Cohorts and ClusterQueues, own quota per (flavor, resource) and weight."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.parent: CohortNode | None = None
        self.cohorts: list[CohortNode] = []
        self.cqs: list[ClusterQueueState] = []
        self.quotas: dict = {}
        self.weight = 1.0


class CohortTree:
    """The quota tree of every ClusterQueue and Cohort, with usage read from the ClusterQueues' books
    (``override`` maps (cq, flavor, resource) to a hypothetical usage during a preemption search)."""

    def __init__(self, cohorts, cqs: dict[str, ClusterQueueState]) -> None:
        self.nodes: dict[str, CohortNode] = {}
        for c in cohorts:
            n = self._node(c.name)
            n.quotas = {(f.name, r): q for f in c.flavors for r, q in f.quotas.items()}
            n.weight = c.fair_sharing_weight
            if c.parent_name:
                n.parent = self._node(c.parent_name)
                n.parent.cohorts.append(n)
        self.cq_parent: dict[str, CohortNode] = {}
        for cq in cqs.values():
            if cq.cohort:
                p = self._node(cq.cohort)
                self.cq_parent[cq.name] = p
                p.cqs.append(cq)
        self.subtree: dict = {}
        self._usage_cache: dict = {}
        for n in self.nodes.values():
            if n.parent is None:
                self._fill(n)
        for cq in cqs.values():
            if cq.name not in self.cq_parent:
                self._fill(cq)

    def _node(self, name: str) -> CohortNode:
        n = self.nodes.get(name)
        if n is None:
            n = self.nodes[name] = CohortNode(name)
        return n

    # -- the tree ---------------------------------------------------------------------------------------
    def parent(self, n):
        return n.parent if n.__class__ is CohortNode else self.cq_parent.get(n.name)

    def up(self, n):
        """n's ancestors, parent first (PathParentToRoot)."""
        p = self.parent(n)
        while p is not None:
            yield p
            p = p.parent

    def root(self, n):
        for a in self.up(n):
            n = a
        return n

    def same_tree(self, a: ClusterQueueState, b: ClusterQueueState) -> bool:
        return a.cohort is not None and b.cohort is not None and self.root(a) is self.root(b)

    def path(self, cq: ClusterQueueState) -> str:
        """The ClusterQueue's path from its root, as Kueue's eviction message writes it."""
        return "/" + "/".join([a.name for a in reversed(list(self.up(cq)))] + [cq.name])

    @staticmethod
    def _quota(n, fr):
        return n.quotas.get(fr) if n.__class__ is CohortNode else n._quota.get(fr)

    @staticmethod
    def _children(n: CohortNode):
        return [*n.cohorts, *n.cqs]

    def _fill(self, n) -> None:
        st = {fr: q.nominal for fr, q in (n.quotas if n.__class__ is CohortNode else n._quota).items()}
        if n.__class__ is CohortNode:
            for ch in self._children(n):
                self._fill(ch)
                for fr, v in self.subtree[ch].items():
                    st[fr] = st.get(fr, 0.0) + v - self._local(ch, fr)
        self.subtree[n] = st

    def _local(self, n, fr) -> float:
        """The quota n keeps for itself (not lent to its parent): subtree - lendingLimit, else 0."""
        q = self._quota(n, fr)
        if q is None or q.lending_limit is None:
            return 0.0
        return max(0.0, self.subtree[n].get(fr, 0.0) - q.lending_limit)

    def usage(self, n, fr, ov) -> float:
        if n.__class__ is not CohortNode:
            cur = n.usage.get(fr, 0.0)
            return ov.get((n.name, fr[0], fr[1]), cur) if ov else cur
        if not ov:  # the books' own usage: kept until a ClusterQueue's usage changes (``changed``)
            cached = self._usage_cache.get((n, fr))
            if cached is not None:
                return cached
        out = sum(max(0.0, self.usage(ch, fr, ov) - self._local(ch, fr)) for ch in self._children(n))
        if not ov:
            self._usage_cache[(n, fr)] = out
        return out

    def changed(self) -> None:
        """A ClusterQueue's usage changed (admission or release): Cohort usage is read again."""
        self._usage_cache.clear()

    def available(self, n, fr, ov=None) -> float:
        """What n may still take of fr: its unused local quota plus what its parent may give (``available``)."""
        st, use = self.subtree[n].get(fr, 0.0), self.usage(n, fr, ov)
        p = self.parent(n)
        if p is None:
            return st - use
        from_parent = self.available(p, fr, ov)
        q = self._quota(n, fr)
        local = self._local(n, fr)
        if q is not None and q.borrowing_limit is not None:
            from_parent = min(st - local - max(0.0, use - local) + q.borrowing_limit, from_parent)
        return max(0.0, local - use) + from_parent

    def potential(self, n, fr) -> float:
        """The most n could hold of fr with nothing else used (``potentialAvailable``)."""
        p = self.parent(n)
        st = self.subtree[n].get(fr, 0.0)
        if p is None:
            return st
        avail = self._local(n, fr) + self.potential(p, fr)
        q = self._quota(n, fr)
        if q is not None and q.borrowing_limit is not None:
            avail = min(st + q.borrowing_limit, avail)
        return avail

    def _within_nominal(self, n, frs, ov) -> bool:
        return all(self.subtree[n].get(fr, 0.0) >= self.usage(n, fr, ov) - EPS for fr in frs)

    def _fit_in_quota(self, n, requests: dict, ov) -> tuple[bool, dict]:
        """(requests fit n's subtree quota, what is left of them past n's unused local quota)."""
        fits, remaining = True, {}
        for fr, v in requests.items():
            use = self.usage(n, fr, ov)
            if self.subtree[n].get(fr, 0.0) < use + v - EPS:
                fits = False
            remaining[fr] = max(0.0, v - max(0.0, self._local(n, fr) - use))
        return fits, remaining

    # -- admission --------------------------------------------------------------------------------------
    def fits(self, cq: ClusterQueueState, flavor: str, need: dict[str, float], ov=None) -> str | None:
        """'fit' (within nominal), 'borrow' or None, for ``need`` on one flavor of ``cq``."""
        borrow = False
        for r, a in need.items():
            q = cq.quota(flavor, r)
            if q is None:
                return None
            fr = (flavor, r)
            if a > self.available(cq, fr, ov) + EPS:
                return None
            if self.usage(cq, fr, ov) + a > q.nominal + EPS:
                borrow = True
        return "borrow" if borrow else "fit"

    def room(self, cq: ClusterQueueState, flavor: str, r: str) -> tuple[float, float]:
        fr = (flavor, r)
        return self.available(cq, fr), self.potential(cq, fr)

    def drs(self, n, ov=None, extra: dict | None = None) -> tuple[bool, float, bool]:
        """n's dominant resource share as CompareDRS orders them: (borrows with weight 0, share, borrowing)."""
        p = self.parent(n)
        if p is None:
            return (False, 0.0, False)
        borrowed: dict[str, float] = {}
        for fr, st in self.subtree[n].items():
            b = (extra.get(fr, 0.0) if extra else 0.0) + self.usage(n, fr, ov) - st
            if b > EPS:
                borrowed[fr[1]] = borrowed.get(fr[1], 0.0) + b
        if not borrowed:
            return (False, 0.0, False)
        lendable: dict[str, float] = {}
        for fr in self.subtree[self.root(n)]:
            lendable[fr[1]] = lendable.get(fr[1], 0.0) + self.potential(p, fr)
        ratio = max([b * 1000.0 / lendable[r] for r, b in borrowed.items() if lendable.get(r, 0.0) > 0] or [0.0])
        w = n.weight if n.__class__ is CohortNode else n.spec.fair_sharing_weight
        if w == 0 and ratio > 0:
            return (True, ratio, True)
        return (False, ratio / w if w > 0 else 0.0, True)

    def admission_drs(self, adm, cq: ClusterQueueState, flavor, wl: "Workload") -> float:
        """The ClusterQueue's share with the workload admitted (admission order under fair sharing)."""
        extra = {(fl, r): a for fl, part in adm._parts(cq, flavor, adm._usage(wl)) for r, a in part.items()}
        zero_weight, share, _ = self.drs(cq, None, extra)
        return INF if zero_weight else share

    def _height(self, n: CohortNode) -> int:
        return max([min(len(n.cohorts) + len(n.cqs), 1)] + [self._height(ch) + 1 for ch in n.cohorts])

    def borrow_height(self, adm, cq: ClusterQueueState, flavor, wl: "Workload", ov=None) -> int:
        """How high in the tree the workload borrows: 0 within the ClusterQueue's nominal quota, else the
        height of the lowest Cohort whose subtree holds it (``FindHeightOfLowestSubtreeThatFits``; the
        admission order puts lower first, as Kueue's ``Assignment.Borrowing`` does, and flavor assignment
        prefers the flavor that borrows lower, ``isPreferred``). ``ov``: usage with victims removed."""
        best = 0
        for fl, part in adm._parts(cq, flavor, adm._usage(wl)):
            for r, a in part.items():
                fr = (fl, r)
                if self.parent(cq) is None or self.usage(cq, fr, ov) + a <= self.subtree[cq].get(fr, 0.0) + EPS:
                    continue
                remaining = a - max(0.0, self._local(cq, fr) - self.usage(cq, fr, ov))
                height = None
                for node in self.up(cq):
                    if self.usage(node, fr, ov) + remaining <= self.subtree[node].get(fr, 0.0) + EPS:
                        height = self._height(node)
                        break
                    remaining -= max(0.0, self._local(node, fr) - self.usage(node, fr, ov))
                best = max(best, height if height is not None else self._height(self.root(cq)))
        return best

    def reclaims_below_root(self, cq: ClusterQueueState, fr, a: float) -> bool:
        """``mayReclaimInHierarchy`` of ``FindHeightOfLowestSubtreeThatFits``: the lowest subtree that holds
        ``a`` more of fr is not the whole tree (a ClusterQueue within its quota counts as such a subtree)."""
        if self.parent(cq) is None:
            return False
        if self.usage(cq, fr, None) + a <= self.subtree[cq].get(fr, 0.0) + EPS:
            return True
        remaining = a - max(0.0, self._local(cq, fr) - self.usage(cq, fr, None))
        for node in self.up(cq):
            if self.usage(node, fr, None) + remaining <= self.subtree[node].get(fr, 0.0) + EPS:
                return self.parent(node) is not None
            remaining -= max(0.0, self._local(node, fr) - self.usage(node, fr, None))
        return False

    def pick(self, adm, cands: list, order):
        """The admission pass's next entry under fair sharing (fair_sharing_iterator.go ``runTournament``):
        in each tree, every Cohort's entry is the best of its child Cohorts' and ClusterQueues' entries,
        compared by the share of the child below that Cohort with the entry's usage added - one that does
        not borrow a resource it asks for first (FairSharingPrioritizeNonBorrowing), then the lower share,
        then priority and arrival; entries that need preemption after the others, as the flat order has
        it.  Across trees (and ClusterQueues without a cohort), the flat order."""
        by_cq = {c[0].name: c for c in cands}
        winners, roots = [], []
        for c in cands:
            if self.parent(c[0]) is None:
                winners.append(c)
            else:
                root = self.root(c[0])
                if root not in roots:
                    roots.append(root)
        for root in roots:
            w = self._tournament(adm, root, by_cq)
            if w is not None:
                winners.append(w)
        return min(winners, key=order)

    def _tournament(self, adm, node: CohortNode, by_cq: dict):
        entries = [w for w in (self._tournament(adm, ch, by_cq) for ch in node.cohorts) if w is not None]
        entries += [by_cq[c.name] for c in node.cqs if c.name in by_cq]
        if not entries:
            return None

        def key(entry) -> tuple:
            cq, wl, flavor, _, victims = entry
            ov, asked = {}, set()
            for fl, part in adm._parts(cq, flavor, adm._usage(wl)):
                for r, a in part.items():
                    ov[(cq.name, fl, r)] = cq.usage.get((fl, r), 0.0) + a
                    asked.add((fl, r))
            child = self._almost(cq, node)
            borrows_asked = any(self.usage(child, fr, ov) > self.subtree[child].get(fr, 0.0) + EPS for fr in asked)
            return (victims is not None, borrows_asked, self.drs(child, ov)[:2], -wl.priority, wl.enqueued_at, wl.seq)

        return min(entries, key=key)

    # -- preemption -------------------------------------------------------------------------------------
    def _setup(self, adm, cq: ClusterQueueState, wl: "Workload", flavor: str, need: dict[str, float]):
        """(resources needing preemption, whether a workload uses them, whether a policy allows it)."""
        if any(cq.quota(flavor, r) is None for r in need):
            return None
        frs = [(flavor, r) for r, a in need.items() if a > 0 and a > self.available(cq, (flavor, r)) + EPS]
        if not frs:
            return None

        def uses(v) -> bool:
            return adm._holds(v, flavor) and any(adm._usage(v).get(r, 0.0) > 0 for _, r in frs)

        def allowed(policy: str, v) -> bool:
            return preemption_allows(policy, v, wl)

        return frs, uses, allowed

    @staticmethod
    def _order(v, c, cq, newest_uid_first: bool = False) -> tuple:
        """CandidatesOrdering: other ClusterQueues first, lowest priority, newest reservation, then UID (random
        in a cluster; the model's flat searches break this last tie as they always did: classic preemption
        takes the later-created workload first, fair sharing the earlier, as upstream's tables name them)."""
        return (c is cq, v.priority, -(v.admitted_at or 0.0), -v.uid if newest_uid_first else v.uid)

    def _changer(self, adm, flavor: str, ov: dict):
        def change(v, c, sign: float) -> None:
            for r, a in adm._usage(v).items():
                k = (c.name, flavor, r)
                ov[k] = ov.get(k, c.usage.get((flavor, r), 0.0)) + sign * a
        return change

    def _workload_fits(self, cq, flavor, need, ov, borrowing: bool) -> bool:
        mode = self.fits(cq, flavor, need, ov)
        return mode == "fit" or (mode == "borrow" and borrowing)

    def _fill_back(self, targets: list, change, fits) -> list:
        for i in range(len(targets) - 2, -1, -1):  # keep only the victims still needed
            v, c, _ = targets[i]
            change(v, c, +1.0)
            if fits():
                targets.pop(i)
            else:
                change(v, c, -1.0)
        return targets

    def classic_victims(self, adm, cq: ClusterQueueState, wl: "Workload", flavor: str, need: dict[str, float]):
        """Kueue's classic preemption in a cohort tree: [(victim, reason)] or None.

        Candidates: the ClusterQueue's own (``withinClusterQueue``) and, walking up its path, those of
        ClusterQueues above nominal in subtrees whose every Cohort down to them is above nominal
        (``reclaimWithinCohort``).  Once the request fits a subtree's own quota, candidates further up
        have a *hierarchical advantage* (reason InCohortReclamation even while borrowing); others need
        ``borrowWithinCohort`` to be taken while borrowing (InCohortReclaimWhileBorrowing).  Order:
        advantaged, then the others, then the own ClusterQueue's, each by CandidatesOrdering; attempts
        with and without borrowing as preemption.go ``classicalPreemptions`` orders them; the fill-back."""
        setup = self._setup(adm, cq, wl, flavor, need)
        if setup is None:
            return None
        frs, uses, allowed = setup
        pol = cq.spec.preemption
        forbidden = pol.borrow_within_cohort == "Never"
        thr = pol.borrow_within_cohort_max_priority_threshold
        ov: dict = {}

        def variant(v, c, advantage: bool) -> str | None:
            if not allowed(pol.within_cluster_queue if c is cq else pol.reclaim_within_cohort, v) or not uses(v):
                return None
            if c is cq:
                return "own"
            if advantage:
                return "hier"
            if forbidden or v.priority >= wl.priority or (thr is not None and v.priority > thr):
                return "without"
            return "while"

        def from_cq(c, lca, advantage: bool, out: list) -> None:
            for v in c.admitted.values():
                kind = variant(v, c, advantage)
                if kind is not None:
                    out.append((self._order(v, c, cq, True), v, c, kind, lca))

        def collect(node: CohortNode, top: CohortNode, skip, advantage: bool, out: list) -> None:
            for ch in node.cohorts:
                if ch is not skip and not self._within_nominal(ch, frs, ov):
                    collect(ch, top, skip, advantage, out)
            for c in node.cqs:
                if c is not cq and not self._within_nominal(c, frs, ov):
                    from_cq(c, top, advantage, out)

        own: list = []
        # No admitted workload of a priority the policy allows: no own candidate (the priorities are counted).
        lowest = min(cq.priorities) if cq.priorities else None
        if pol.within_cluster_queue != "Never" and lowest is not None and (
                lowest < wl.priority or (lowest == wl.priority and pol.within_cluster_queue == "LowerOrNewerEqualPriority")):
            from_cq(cq, None, False, own)
        hier: list = []
        prio: list = []
        if self.parent(cq) is not None and pol.reclaim_within_cohort != "Never":
            advantage, remaining = self._fit_in_quota(cq, {(flavor, r): a for r, a in need.items()}, ov)
            prev = None
            for anc in self.up(cq):
                collect(anc, anc, prev, advantage, hier if advantage else prio)
                fits, remaining = self._fit_in_quota(anc, remaining, ov)
                advantage = advantage or fits
                prev = anc
        for lst in (own, hier, prio):
            lst.sort(key=lambda x: x[0])
        cands = hier + prio + own
        under_nominal = all(cq.quota(f, r).nominal > self.usage(cq, (f, r), ov) + EPS for f, r in frs)
        if not hier and not prio or (forbidden and not under_nominal):
            attempts = [True]
        elif forbidden and not hier:
            attempts = [False, True]
        else:
            attempts = [True, False]

        def valid(c, kind, lca, borrowing: bool) -> bool:
            if c is cq:
                return True
            if borrowing and kind == "without":
                return False
            if self._within_nominal(c, frs, ov):
                return False
            for node in self.up(c):
                if node is lca:
                    break
                if self._within_nominal(node, frs, ov):
                    return False
            return True

        change = self._changer(adm, flavor, ov)
        for borrowing in attempts:
            ov.clear()
            targets = []
            for _, v, c, kind, lca in cands:
                if not valid(c, kind, lca, borrowing):
                    continue
                change(v, c, -1.0)
                targets.append((v, c, _REASONS[kind]))
                if self._workload_fits(cq, flavor, need, ov, borrowing):
                    targets = self._fill_back(
                        targets, change, lambda: self._workload_fits(cq, flavor, need, ov, borrowing))
                    return [(v, why) for v, _, why in targets]
        return None

    def fair_victims(self, adm, cq: ClusterQueueState, wl: "Workload", flavor: str, need: dict[str, float],
                     strategies: list, rules: dict):
        """Kueue's fair-sharing preemption in a cohort tree: [(victim, reason)] or None.

        Candidates: the ClusterQueue's own (``withinClusterQueue``) and those of every borrowing
        ClusterQueue of its tree (``reclaimWithinCohort``), by CandidatesOrdering.  With the incoming
        workload's usage added, targets come from walking down from the root to the child of highest
        share (a Cohort or ClusterQueue not borrowing and off the preemptor's path is pruned); shares are
        compared between the preemptor's and the target's ancestors just below their lowest common
        ancestor.  Reasons and strategies as :meth:`KueuePreemptor._fair_victims` states them."""
        setup = self._setup(adm, cq, wl, flavor, need)
        if setup is None:
            return None
        frs, uses, allowed = setup
        pol = cq.spec.preemption
        cands: list = []
        if pol.within_cluster_queue != "Never":
            cands += [(self._order(v, cq, cq), v, cq) for v in cq.admitted.values()
                      if uses(v) and allowed(pol.within_cluster_queue, v)]
        root = self.root(cq)
        if pol.reclaim_within_cohort != "Never":
            for c in self._subtree_cqs(root):
                if c is cq or not any(self.usage(c, fr, None) > cq_nominal(c, fr) + EPS for fr in frs):
                    continue
                cands += [(self._order(v, c, cq), v, c) for v in c.admitted.values()
                          if uses(v) and allowed(pol.reclaim_within_cohort, v)]
        if not cands:
            return None
        cands.sort(key=lambda x: x[0])
        ov: dict = {}
        change = self._changer(adm, flavor, ov)
        for r, a in need.items():  # shares include the incoming workload
            ov[(cq.name, flavor, r)] = cq.usage.get((flavor, r), 0.0) + a
        within_nominal = all(ov[(cq.name, f, r)] <= cq.quota(f, r).nominal + EPS for f, r in frs)
        ancestors = set(self.up(cq))

        def fits() -> bool:  # the incoming workload is in the simulated usage: take it out to test it
            for r, a in need.items():
                ov[(cq.name, flavor, r)] -= a
            ok = self.fits(cq, flavor, need, ov) is not None
            for r, a in need.items():
                ov[(cq.name, flavor, r)] += a
            return ok

        targets: list = []

        def take(v, c, reason: str) -> bool:
            change(v, c, -1.0)
            targets.append((v, c, reason))
            return fits()

        def shares(target) -> tuple:
            lca = next(a for a in self.up(target) if a in ancestors)
            return self.drs(self._almost(cq, lca), ov)[:2], self.drs(self._almost(target, lca), ov)[:2]

        def after_removal(target, v) -> tuple:
            change(v, target, -1.0)
            lca = next(a for a in self.up(target) if a in ancestors)
            out = self.drs(self._almost(target, lca), ov)[:2]
            change(v, target, +1.0)
            return out

        rule = rules[strategies[0]]
        done, retry = False, []
        ordering = _TargetOrdering(self, cq, ancestors, cands, ov)
        for target in ordering.targets(root):
            queue = ordering.per_cq[target.name]
            if target is cq or within_nominal:
                _, v, c = queue.pop(0)
                if take(v, c, "InClusterQueue" if target is cq else "InCohortReclamation"):
                    done = True
                    break
                continue
            mine, theirs = shares(target)
            if mine[0] and not theirs[0]:  # an infinite share passes no strategy: keep them for the second
                retry += queue
                queue.clear()
                continue
            while queue:
                item = queue.pop(0)
                if rule(mine, theirs, after_removal(target, item[1])):
                    done = take(item[1], item[2], "InCohortFairSharing")
                    break  # shares changed: choose the target again
                retry.append(item)
            if done:
                break
        if not done and len(strategies) > 1:
            ordering = _TargetOrdering(self, cq, ancestors, retry, ov)
            for target in ordering.targets(root):
                mine, theirs = shares(target)
                _, v, c = ordering.per_cq[target.name].pop(0)
                if mine < theirs and take(v, c, "InCohortFairSharing"):
                    done = True
                    break
                ordering.pruned.add(target)  # rule S2-b applies at most once per ClusterQueue
        if not done:
            return None
        for r, a in need.items():  # fill back without the incoming workload's usage
            ov[(cq.name, flavor, r)] -= a
        targets = self._fill_back(targets, change, lambda: self.fits(cq, flavor, need, ov) is not None)
        return [(v, why) for v, _, why in targets]

    def _almost(self, n, lca):
        """The node on n's path whose parent is ``lca`` (n itself when its parent is)."""
        prev = n
        for a in self.up(n):
            if a is lca:
                return prev
            prev = a
        raise ValueError(f"{lca.name} is not an ancestor of {n.name}")

    def _subtree_cqs(self, n: CohortNode) -> list[ClusterQueueState]:
        out = list(n.cqs)
        for ch in n.cohorts:
            out += self._subtree_cqs(ch)
        return out


def cq_nominal(c: ClusterQueueState, fr) -> float:
    q = c.quota(*fr)
    return q.nominal if q is not None else 0.0


class _TargetOrdering:
    """Which ClusterQueue gives up a workload next (fairsharing/ordering.go): from the root down, the
    child Cohort or ClusterQueue of highest share; a Cohort wins ties against a ClusterQueue and the later
    of tied Cohorts wins, tied ClusterQueues go by their first candidate."""

    def __init__(self, tree: CohortTree, cq: ClusterQueueState, ancestors: set, cands: list, ov: dict) -> None:
        self.tree, self.cq, self.ancestors, self.ov = tree, cq, ancestors, ov
        self.per_cq: dict[str, list] = {}
        for item in cands:
            self.per_cq.setdefault(item[2].name, []).append(item)
        self.pruned: set = set()

    def targets(self, root: CohortNode):
        while root not in self.pruned:
            t = self._next(root)
            if t is not None:
                yield t

    def _next(self, cohort: CohortNode):
        tree, best, best_drs = self.tree, None, NEGATIVE
        for c in cohort.cqs:
            if c in self.pruned:
                continue
            d = tree.drs(c, self.ov)
            if (not d[2] and c is not self.cq) or not self.per_cq.get(c.name):
                self.pruned.add(c)
            elif d[:2] > best_drs or (d[:2] == best_drs and
                                      self.per_cq[c.name][0][0] < self.per_cq[best.name][0][0]):
                best, best_drs = c, d[:2]
        best_co, best_co_drs = None, NEGATIVE
        for co in cohort.cohorts:
            if co in self.pruned:
                continue
            d = tree.drs(co, self.ov)
            if not d[2] and co not in self.ancestors:
                self.pruned.add(co)
            elif d[:2] >= best_co_drs:
                best_co, best_co_drs = co, d[:2]
        if best is None and best_co is None:
            self.pruned.add(cohort)
            return None
        if best_co is not None and best_co_drs >= best_drs:
            return self._next(best_co)
        return best
