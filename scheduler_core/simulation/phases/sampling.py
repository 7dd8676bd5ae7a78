"""Sampling: the bounded time series, stranded capacity and the fairness integral."""

from __future__ import annotations

from scheduler_core import metrics as M
from scheduler_core.events import Priority
from scheduler_core.simulation.state import EPS, node_free_equiv


class SamplingPhase:
    def _sample(self) -> None:
        self._advance()
        ts = self.samples
        ts.t.append(M.rnd(self.now))
        ts.allocated_gpus.append(M.rnd(self.alloc_equiv))
        ts.effective_gpus.append(M.rnd(self.eff_equiv))
        ts.pending_pods.append(self.pending_pods)
        ts.running_pods.append(self.running_pods)
        ts.waiting_workloads.append(self.waiting_workloads)
        ts.partial_gang_gpus.append(M.rnd(self.partial_gpus))
        stranded, free = self._stranded()
        ts.stranded_gpus.append(M.rnd(stranded))
        for t in self.tenants:
            ts.tenant_allocated_gpus[t].append(M.rnd(self.tenant_alloc[t]))
        self.samples_n += 1
        if free > EPS and self.waiting_workloads > 0:
            self.stranded_sum += stranded
            self.frag_sum += stranded / free
            self.frag_n += 1
        # Fairness: demand-capped weighted max-min share of the pool, sample-and-hold.
        dt = self._sample_dt
        weights = {t: self.tenants[t].weight for t in self.tenants}
        demand = {t: max(0.0, self.tenant_demand[t]) for t in self.tenants}
        fair = M.water_fill(float(self.capacity_gpus), demand, weights)
        for t in self.tenants:
            self.tenant_fair_int[t] += fair[t] * dt
            self.tenant_recv_int[t] += self.tenant_alloc[t] * dt
        if self.progress_cb is not None:
            self.progress_cb(min(1.0, self.now / self.horizon))
        nxt = self.now + self._sample_dt
        if nxt <= self.horizon + EPS:
            self.schedule(min(nxt, self.horizon), Priority.SAMPLE, self._sample)

    def _stranded(self) -> tuple[float, float]:
        """Free capacity (GPU-equivalents) and the part no waiting workload could use on its node."""
        shapes = self.scheduler.waiting_requests()
        if self.admission is not None:
            shapes = shapes + self.admission.waiting_requests()
        free_total = 0.0
        stranded = 0.0
        for n in self.nodes:
            if not n.up:
                continue
            free = node_free_equiv(n)
            if free <= EPS:
                continue
            free_total += free
            if not shapes:
                continue
            usable = any((grp is None or grp == n.group) and n.fit_count(req) > 0 for req, grp in shapes)
            if not usable:
                stranded += free
        return (stranded if shapes else 0.0), free_total
