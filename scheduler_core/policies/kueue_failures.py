"""Kueue's remembered failures: a failed head is not searched again while its verdict cannot change.

After a release every ClusterQueue's bucket heads used to be evaluated again in full (flavor fit, the
preemption search, partial admission), although a release in one ClusterQueue of a cohort changes only the
cohort pool for the others.  When a head fails, :meth:`FailureProofs._prove_failure` remembers it; its
verdict splits into what reads the ClusterQueue alone (its usage, admitted workloads and their priorities:
worked out again whenever its generation changes) and what reads the pool (a few float bounds per resource,
compared with exactly the operations ``_fits`` and ``_minimal_set`` use).  :meth:`FailureProofs._still_fails`
answers from those bounds; anything it cannot prove is evaluated in full, so the run is the same as without
the proofs (``remember_failures = False``; tests compare the two).

:class:`FailureProofs` is mixed into :class:`~scheduler_core.policies.kueue.KueueAdmission` and reads its
quota book (``pool_used``, ``pool_cap``, ``cq_generation``) and its preemption search
(:mod:`scheduler_core.policies.kueue_preemption`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler_core.policies.cluster_queue import EPS, ClusterQueueState

if TYPE_CHECKING:  # pragma: no cover
    from scheduler_core.workloads import Workload


class FailureProofs:
    """Proofs that a ClusterQueue's failed bucket heads still fail, for the admission pass."""

    remember_failures = True  # off: every head is evaluated in full (tests compare the two)

    def _prove_failure(self, cq: ClusterQueueState, key, wl: "Workload") -> None:
        """Remember why ``wl`` (the head of ``key``, just evaluated in full and failed) cannot be admitted,
        when the reason reads nothing but this ClusterQueue's own state and the cohort pool: no flavor fits
        (``_fit_bounds``), classic preemption has no candidate or only the CQ's own workloads and they hold
        less than the shortfall (``_preemption_bounds``), and partial admission does not apply.  Then, while
        the head is the same workload, it fails again unless the pool has room on some flavor or preemption
        could reach other ClusterQueues: a release elsewhere in the cohort costs a few comparisons per
        resource instead of a search.  The bounds are worked out when the head is next looked at, from the
        ClusterQueue's state then, and again only after its usage changed (its generation): the kind of
        head that may have a proof does not depend on that state, only the bounds do."""
        if (not self.remember_failures or self.tree is not None or not cq.default_fungibility
                or (self.cfg.fair_sharing and cq.cohort)):
            return
        if wl.min_count and wl.min_count < wl.pods_total and not wl.topology_required:
            return  # partial admission tries smaller counts against the pool
        if self._spans(cq, self._usage(wl)) is not None:
            return
        # The head's queue entry: while it is live the workload is still the head (buckets only grow at the back).
        self._fail_proofs[cq.name][id(key)] = (cq.queue.member.get(wl.uid), wl.uid, self.cq_generation[cq.name],
                                           None, wl)

    def _bounds(self, cq: ClusterQueueState, wl: "Workload") -> list | bool:
        """Per eligible flavor (fit bounds, preemption bounds) of a proof; False when preemption may reach
        other ClusterQueues' workloads (nothing to prove)."""
        need = self._usage(wl)
        per_flavor = []
        for f in self._flavors(cq, wl):
            pre = self._preemption_bounds(cq, wl, f.name, need)
            if pre is None:
                return False
            per_flavor.append((self._fit_bounds(cq, f.name, need), pre))
        return per_flavor

    def _still_fails(self, cq: ClusterQueueState, key) -> bool:
        """Whether the head of ``key`` has a proof of failure (``_prove_failure``) that still holds."""
        proofs = self._fail_proofs[cq.name]
        proof = proofs.get(id(key))
        if proof is None or cq.queue.member.get(proof[1]) is not proof[0]:
            return False
        per_flavor = proof[3]
        gen = self.cq_generation[cq.name]
        if per_flavor is None or proof[2] != gen:
            # The bounds read the ClusterQueue's state as it is now: worked out again once it changed.
            per_flavor = self._bounds(cq, proof[4])
            proofs[id(key)] = (proof[0], proof[1], gen, per_flavor, proof[4])
        if per_flavor is False:
            return False
        pool_used = self.pool_used
        for fit, pre in per_flavor:
            if fit is not None:  # None: beyond this ClusterQueue's own quota on that flavor
                for pk, d, cap in fit:
                    if pool_used.get(pk, 0.0) + d > cap:
                        break
                else:
                    return False  # the pool may have room now: evaluate in full
            if pre:  # (): no victim set whatever the pool holds
                for pk, a, held, limit_room, own_room, cap in pre:
                    short = a - max(0.0, min(limit_room, own_room + (cap - pool_used.get(pk, 0.0))))
                    if short > EPS and held < short - EPS:
                        break
                else:
                    return False  # preemption may find victims now: evaluate in full
        return True

    def _fit_bounds(self, cq: ClusterQueueState, flavor: str, need: dict[str, float]):
        """``_fits`` for a flat cohort split into what reads this ClusterQueue alone and what reads the pool:
        None when ``need`` is beyond the CQ's own quota on ``flavor`` (no quota for a resource, above nominal
        without a cohort, above nominal + borrowingLimit), else per resource (pool key, the change the
        admission would make to the pool's usage, the pool's capacity + EPS): ``need`` does not fit while,
        for some resource, pool usage + change > that bound (the same float operations as ``_fits``)."""
        if not cq.cohort:
            for r, a in need.items():
                q = cq.quota(flavor, r)
                if q is None or cq.usage.get((flavor, r), 0.0) + a > q.nominal + EPS:
                    return None
            return []
        rows = self._fit_rows.get((cq.name, flavor), {})
        bounds = []
        for r, a in need.items():
            row = rows.get(r)
            if row is None:
                return None
            cur = cq.usage.get((flavor, r), 0.0)
            new = cur + a
            if new > row[1]:
                return None
            g = row[2]
            bounds.append((row[3], max(0.0, new - g) - max(0.0, cur - g), row[4]))
        return bounds
