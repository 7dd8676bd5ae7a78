"""Running: bring tenants' progress up to date, recompute speeds, rates, completions and service load.

Everything that changes a device context goes through :meth:`_begin` (bring
every tenant's progress and latency accounts up to *now*) and
:meth:`_settle` (recompute speeds, rates, completion times and the OOM
watch), so the piecewise-constant accounting stays exact.
"""

from __future__ import annotations

from typing import Iterable

from scheduler_core.cluster import DeviceContext
from scheduler_core.events import Priority
from scheduler_core.interference import speed_in
from scheduler_core.workloads import Pod, Workload


class RunningPhase:
    def _begin(self, ctxs: Iterable[DeviceContext]) -> dict[int, Workload]:
        """Bring every workload sharing ``ctxs`` up to date before their speeds change."""
        affected: dict[int, Workload] = {}
        for c in ctxs:
            if self.params.mig_interference > 0 and c.placement is not None:
                for other in c.gpu.contexts:
                    for p in other.tenants:
                        affected[p.wl.uid] = p.wl
            for p in c.tenants:
                affected[p.wl.uid] = p.wl
        for uid in sorted(affected):
            self._sync(affected[uid])
        return affected

    def _sync(self, wl: Workload) -> None:
        if wl.kind == "inference":
            self._flush_service(wl)
        elif wl.state == "running" and wl.rate > 0:
            wl.work_done += wl.rate * (self.now - wl.progress_t)
        wl.progress_t = self.now

    def _activity(self, pod: Pod) -> float:
        """Busy share of the pod now; also sets ``pod.offered`` (busy share at full speed)."""
        if pod.state != "running":
            pod.offered = 0.0
            return 0.0
        wl = pod.wl
        if wl.kind != "inference":
            pod.offered = 1.0 if wl.gang_complete else 0.0
            return pod.offered
        svc = self.services[wl.uid]
        ready = sum(1 for p in wl.pods if p.state == "running")
        if not ready or svc.rate <= 0:
            pod.offered = 0.0
            return 0.0
        work = svc.rate / ready * wl.spec.service_time.mean
        pod.offered = work
        return min(1.0, work / max(pod.speed, 1e-6))

    def _settle(self, ctxs: Iterable[DeviceContext], affected: dict[int, Workload]) -> None:
        """Recompute speeds in ``ctxs``, then rates/completions of every affected workload."""
        ctxs = list(ctxs)
        pods: dict[int, Pod] = {}
        for c in ctxs:
            if self.params.mig_interference > 0 and c.placement is not None:
                for other in c.gpu.contexts:
                    for p in other.tenants:
                        pods[p.uid] = p
            for p in c.tenants:
                pods[p.uid] = p
        plist = [pods[k] for k in sorted(pods)]
        for _ in range(2):  # activity <-> speed fixed point (inference utilisation depends on speed)
            for p in plist:
                p.activity = self._activity(p)
            for p in plist:
                p.speed = min(speed_in(c, p, self.params) for c in p.contexts) if p.contexts else 0.0
        for p in plist:
            affected.setdefault(p.wl.uid, p.wl)
        for uid in sorted(affected):
            self._resync(affected[uid])
        for c in ctxs:
            self._oom_watch(c)

    def _resync(self, wl: Workload) -> None:
        """After speeds changed: new job rate and completion time, new effective shares."""
        if wl.kind == "inference":
            svc = self.services[wl.uid]
            ready = [p for p in wl.pods if p.state == "running"]
            lam = svc.rate / len(ready) if ready else 0.0
            s = wl.spec.service_time.mean
            for p in wl.pods:
                if p.state == "running":
                    self._set_effective(p, p.need * min(lam * s, p.speed) * len(p.contexts))
                else:
                    self._set_effective(p, 0.0)
            return
        if wl.completion_event is not None:
            wl.completion_event.cancel()
            wl.completion_event = None
        if wl.state != "running" or not wl.gang_complete or any(p.state != "running" for p in wl.pods):
            wl.rate = 0.0
            for p in wl.pods:
                self._set_effective(p, 0.0)
            return
        wl.progress_t = self.now
        wl.rate = min(p.speed for p in wl.pods) / wl.topology_factor
        for p in wl.pods:
            self._set_effective(p, p.need * wl.rate * len(p.contexts))
        if wl.rate > 0:
            left = max(0.0, wl.duration - wl.work_done)
            wl.completion_event = self.schedule(self.now + left / wl.rate, Priority.COMPLETION,
                                                self._complete_check, wl)

    def _complete_check(self, wl: Workload) -> None:
        wl.completion_event = None
        self._sync(wl)
        if wl.work_done >= wl.duration - 1e-6 * max(1.0, wl.duration):
            self.complete(wl)
        else:  # rounding: reschedule the tail
            self._resync(wl)


    def _flush_service(self, wl: Workload) -> None:
        svc = self.services[wl.uid]
        dt = self.now - svc.last
        if dt <= 0:
            return
        svc.last = self.now
        if not svc.active or svc.rate <= 0:
            return
        ready = [p for p in wl.pods if p.state == "running"]
        if not ready:
            svc.latency.add_unserved(svc.rate * dt)
            return
        lam = svc.rate / len(ready)
        for p in ready:
            svc.latency.add_replica(lam, p.speed, dt)

    def refresh_service(self, wl: Workload) -> None:
        """Load per replica changed (readiness or rate): recompute every context the service touches."""
        ctxs = self._service_contexts(wl)
        affected = self._begin(ctxs)
        affected[wl.uid] = wl
        self._settle(ctxs, affected)

    def _rate_change(self, wl: Workload, rps: float) -> None:
        if wl.finished:
            return
        self._flush_service(wl)
        self.services[wl.uid].rate = rps
        self.refresh_service(wl)
