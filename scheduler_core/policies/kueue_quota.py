"""Kueue's quota book: what each ClusterQueue uses per (flavor, resource), what its flat cohort lends and
uses, and whether a workload fits (within nominal, by borrowing, or not).

:class:`QuotaBook` is mixed into :class:`~scheduler_core.policies.kueue.KueueAdmission`; its usage has one
writer, :meth:`QuotaBook._charge_part`, which bumps the generations the admission pass keeps its proofs
and memos by.  Hierarchical cohorts answer through :class:`~scheduler_core.policies.kueue_cohorts.CohortTree`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler_core.policies.cluster_queue import EPS, ClusterQueueState

if TYPE_CHECKING:  # pragma: no cover
    from scheduler_core.workloads import Workload


class QuotaBook:
    """Usage, the cohort pool and the fit test of :class:`~scheduler_core.policies.kueue.KueueAdmission`."""

    def _init_quota_book(self) -> None:
        # Cohort pool: what each CQ lends (nominal - guaranteed) and how much of it is in use.
        self.pool_cap: dict[tuple[str, str, str], float] = {}
        self.pool_used: dict[tuple[str, str, str], float] = {}
        for c in self.cqs.values():
            if c.cohort:
                for (fl, r), q in c._quota.items():
                    pk = (c.cohort, fl, r)
                    self.pool_cap[pk] = self.pool_cap.get(pk, 0.0) + q.nominal - c.guaranteed(fl, r)
        # Per (CQ, flavor), per resource of a flat cohort: the bounds ``_fits`` compares, added up once
        # (nominal + EPS, nominal + borrowingLimit + EPS, guaranteed, pool key, pool capacity + EPS).
        self._fit_rows: dict[tuple[str, str], dict[str, tuple]] = {}
        for c in self.cqs.values():
            if c.cohort:
                for (fl, r), q in c._quota.items():
                    pk = (c.cohort, fl, r)
                    self._fit_rows.setdefault((c.name, fl), {})[r] = (
                        q.nominal + EPS, q.ceiling + EPS, c.guaranteed(fl, r), pk, self.pool_cap.get(pk, 0.0) + EPS)

    @staticmethod
    def _usage(wl: "Workload") -> dict[str, float]:
        """Quota the workload charges (read-only: cached on the workload per pod count)."""
        n = wl.admit_count or wl.pods_total
        cached = wl.admission_usage
        if cached is not None and cached[0] == n:
            return cached[1]
        usage = {r: a * n for r, a in wl.request.quota_usage().items()}
        wl.admission_usage = (n, usage)
        return usage

    @staticmethod
    def _parts(cq: ClusterQueueState, flavor, need: dict[str, float]):
        """(flavor, the part of ``need`` it covers) per resource group of an assignment."""
        if flavor.__class__ is not tuple:
            return [(flavor, need)]
        out = []
        for fl in flavor:
            covered = cq.groups[cq.flavor_group[fl]][0]
            out.append((fl, {r: a for r, a in need.items() if r in covered}))
        return out

    @staticmethod
    def _spans(cq: ClusterQueueState, need: dict[str, float]) -> list[int] | None:
        """The resource groups ``need`` touches, when more than one (and each resource is covered)."""
        if len(cq.groups) == 1:
            return None
        used = {cq.group_of.get(r, -1) for r in need}
        return sorted(used) if len(used) > 1 and -1 not in used else None

    def _fits(self, cq: ClusterQueueState, flavor: str, need: dict[str, float],
              usage_override: dict[tuple[str, str, str], float] | None = None) -> str | None:
        """'fit' (within nominal), 'borrow', or None, for ``need`` on ``flavor``.

        ``usage_override`` maps (cq, flavor, resource) to a hypothetical usage
        (preemption search); the cohort pool's usage is kept incrementally.
        """
        if flavor.__class__ is tuple:
            modes = [self._fits(cq, fl, part, usage_override) for fl, part in self._parts(cq, flavor, need)]
            return None if None in modes else ("borrow" if "borrow" in modes else "fit")
        if self.tree is not None:
            return self.tree.fits(cq, flavor, need, usage_override)
        if usage_override is None and cq.cohort:
            return self._fits_flat(cq, flavor, need)
        borrow = False
        for r, a in need.items():
            q = cq.quota(flavor, r)
            if q is None:
                return None  # resource not covered by this flavor
            cur = cq.usage.get((flavor, r), 0.0)
            if usage_override is not None:
                cur = usage_override.get((cq.name, flavor, r), cur)
            new = cur + a
            if not cq.cohort:
                if new > q.nominal + EPS:
                    return None
                continue
            limit = q.ceiling
            if new > limit + EPS:
                return None
            pk = (cq.cohort, flavor, r)
            pool_used = self.pool_used.get(pk, 0.0)
            if usage_override:
                for (cname, fl, res), u in usage_override.items():
                    if fl == flavor and res == r and cname != cq.name:
                        c = self.cqs[cname]
                        g = c.guaranteed(flavor, r)
                        pool_used += max(0.0, u - g) - max(0.0, c.usage.get((flavor, r), 0.0) - g)
            g = cq.guaranteed(flavor, r)
            pool_used += max(0.0, new - g) - max(0.0, cq.usage.get((flavor, r), 0.0) - g)
            if pool_used > self.pool_cap.get(pk, 0.0) + EPS:
                return None
            if new > q.nominal + EPS:
                borrow = True
        return "borrow" if borrow else "fit"

    def _fits_flat(self, cq: ClusterQueueState, flavor: str, need: dict[str, float]) -> str | None:
        """``_fits`` for a ClusterQueue of a flat cohort and today's usage: the same comparisons, from
        ``_fit_rows``."""
        rows = self._fit_rows.get((cq.name, flavor))
        if rows is None:
            return None
        usage, pool = cq.usage, self.pool_used
        borrow = False
        for r, a in need.items():
            row = rows.get(r)
            if row is None:
                return None  # resource not covered by this flavor
            cur = usage.get((flavor, r), 0.0)
            new = cur + a
            if new > row[1]:
                return None
            g = row[2]
            up, down = new - g, cur - g  # max(0.0, x) as a comparison: the same value, without the call
            if pool.get(row[3], 0.0) + ((up if up > 0.0 else 0.0) - (down if down > 0.0 else 0.0)) > row[4]:
                return None
            if new > row[0]:
                borrow = True
        return "borrow" if borrow else "fit"

    def _borrowing(self, c: ClusterQueueState, flavor) -> bool:
        if flavor.__class__ is tuple:
            return any(self._borrowing(c, fl) for fl in flavor)
        for (f, r), u in c.usage.items():
            if f != flavor:
                continue
            q = c.quota(f, r)
            if q is not None and u > q.nominal + EPS:
                return True
        return False

    def _charge(self, cq: ClusterQueueState, wl: "Workload", flavor, sign: float) -> None:
        for fl, part in self._parts(cq, flavor, self._usage(wl)):
            self._charge_part(cq, fl, part, sign)

    def _charge_part(self, cq: ClusterQueueState, flavor: str, need: dict[str, float], sign: float) -> None:
        self.usage_generation += 1
        self.cq_generation[cq.name] += 1
        if self.tree is not None:
            self.tree.changed()
        usage, pool = cq.usage, self.pool_used
        rows = self._fit_rows.get((cq.name, flavor), {}) if cq.cohort else None
        for r, a in need.items():
            before = usage.get((flavor, r), 0.0)
            after = before + sign * a
            usage[(flavor, r)] = after
            if rows is not None:
                row = rows.get(r)
                g, pk = (row[2], row[3]) if row is not None else (0.0, (cq.cohort, flavor, r))
                up, down = after - g, before - g  # max(0.0, x) as a comparison: the same value
                pool[pk] = pool.get(pk, 0.0) + (up if up > 0.0 else 0.0) - (down if down > 0.0 else 0.0)

    def _room(self, cq: ClusterQueueState, flavor: str, r: str) -> tuple[float, float]:
        """(unused quota the CQ may still take, maximum it may ever hold) of ``r`` on ``flavor``."""
        if self.tree is not None:
            return self.tree.room(cq, flavor, r)
        q = cq.quota(flavor, r)
        cur = cq.usage.get((flavor, r), 0.0)
        if not cq.cohort:
            return q.nominal - cur, q.nominal
        g = cq.guaranteed(flavor, r)
        pk = (cq.cohort, flavor, r)
        pool_free = self.pool_cap.get(pk, 0.0) - self.pool_used.get(pk, 0.0)
        limit = q.ceiling
        room = min(limit - cur, max(0.0, g - cur) + pool_free)  # own unused share + what the pool can lend
        return room, min(limit, g + self.pool_cap.get(pk, 0.0))
