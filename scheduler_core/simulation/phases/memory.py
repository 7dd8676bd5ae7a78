"""Memory: the exact next limit crossing of every device context, and who an OOM kills."""

from __future__ import annotations

from scheduler_core import metrics as M
from scheduler_core.cluster import DeviceContext
from scheduler_core.events import Priority
from scheduler_core.workloads import Pod


class MemoryPhase:
    def _oom_watch(self, ctx: DeviceContext) -> None:
        if ctx.oom_event is not None:
            ctx.oom_event.cancel()
            ctx.oom_event = None
        if not ctx.tenants:
            return
        t = self._next_oom(ctx)
        if t is not None and t <= self.horizon:
            ctx.oom_event = self.schedule(max(t, self.now), Priority.FAULT, self._oom_fire, ctx)

    def _shared_memory(self, ctx: DeviceContext) -> bool:
        iso = ctx.isolation
        if iso in ("timeslice", "kai"):
            return True
        if iso == "hami" and ctx.node.data_plane.hami.device_memory_scaling > 1.0:
            return True
        return False

    def _next_oom(self, ctx: DeviceContext) -> float | None:
        now = self.now
        best = None
        for p in ctx.tenants:
            if p.mem_limit is None:
                continue
            t = _crossing([p], p.mem_limit, now)
            if t is not None and (best is None or t < best):
                best = t
        if self._shared_memory(ctx) or len(ctx.tenants) > 1:
            t = _crossing(ctx.tenants, ctx.memory_mib, now)
            if t is not None and (best is None or t < best):
                best = t
        return best

    def _oom_fire(self, ctx: DeviceContext) -> None:
        ctx.oom_event = None
        now = self.now
        victims: list[Pod] = []
        offender: Pod | None = None
        scope = "pod"
        over = [p for p in ctx.tenants if p.mem_limit is not None and _exceeds(p.memory(now), p.memory_rate(now),
                                                                                 p.mem_limit)]
        if over:
            offender = max(over, key=lambda p: (p.memory(now) - p.mem_limit, p.memory_rate(now), -p.uid))
            scope = self._oom_scope(ctx)
        elif _exceeds(sum(p.memory(now) for p in ctx.tenants), sum(p.memory_rate(now) for p in ctx.tenants),
                      ctx.memory_mib):
            live = [p for p in ctx.tenants if p.state in ("running", "bound")]
            if live:
                # The process whose allocation failed: the one growing fastest, then the largest.
                offender = max(live, key=lambda p: (p.memory_rate(now), p.memory(now), -p.uid))
                scope = self._oom_scope(ctx)
        if offender is None:
            self._oom_watch(ctx)
            return
        if scope == "gpu":
            victims = [p for p in ctx.tenants if p.state in ("running", "bound")]
        else:
            victims = [offender]
        self._record_oom(ctx, offender, victims)
        for p in victims:
            if p.wl.kind == "inference":
                self.services[p.wl.uid].oom_kills += 1
            self.crash_pod(p, "OOMKilled")
        self._oom_watch(ctx)

    def _oom_scope(self, ctx: DeviceContext) -> str:
        iso = ctx.isolation
        if iso == "timeslice":
            return self.params.timeslicing_oom_scope
        if iso == "kai":
            return self.params.kai_oom_scope
        if iso == "mps":
            return self.params.mps_oom_scope
        if iso == "hami":
            return self.params.hami_oom_scope
        return "pod"

    def _record_oom(self, ctx: DeviceContext, offender: Pod, victims: list[Pod]) -> None:
        self.oom_incident_count += 1
        self.log.record(self.now, "oom", offender.name,
                        f"OOMKilled on {ctx.name} ({ctx.node.mechanism}): {len(victims)} killed, "
                        f"{sum(1 for v in victims if v is not offender)} collateral", ctx.node.name)
        self.oom_kills += len(victims)
        coll = sum(1 for v in victims if v is not offender)
        self.oom_collateral += coll
        self.oom_max_blast = max(self.oom_max_blast, len(victims))
        for v in victims:
            self.oom_by_workload[v.wl.name] = self.oom_by_workload.get(v.wl.name, 0) + 1
        if len(self.oom_incidents) < 20:
            self.oom_incidents.append(M.OomIncident(
                time=M.rnd(self.now), device=ctx.name, mechanism=ctx.node.mechanism, offender=offender.name,
                killed=[v.name for v in victims], collateral=coll))





MEM_EPS = 1e-3  # MiB: using exactly the limit is allowed; the next allocation beyond it fails


def _exceeds(used: float, rate: float, limit: float) -> bool:
    """Out of memory: above the limit, or at it and still allocating."""
    return used > limit + MEM_EPS or (used >= limit - MEM_EPS and rate > 0)


def _crossing(pods: list[Pod], limit: float, now: float) -> float | None:
    """Earliest t >= now when the summed memory of ``pods`` reaches ``limit`` (piecewise linear)."""
    total = 0.0
    segs = []  # (time growth stops, rate)
    for p in pods:
        total += p.memory(now)
        r = p.memory_rate(now)
        if r > 0:
            kv_now = p.kv_init + p.kv_growth * max(0.0, now - p.container_start)
            stop = now + max(0.0, (p.kv_max - kv_now)) / r
            segs.append((stop, r))
    if total > limit + MEM_EPS:
        return now
    if not segs:
        return None
    segs.sort()
    t = now
    rate = sum(r for _, r in segs)
    for stop, r in segs:
        if rate <= 0:
            return None
        reach = t + (limit - total) / rate
        if reach <= stop:
            return reach
        total += rate * (stop - t)
        t = stop
        rate -= r
    return None
