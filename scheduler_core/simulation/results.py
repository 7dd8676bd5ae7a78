"""Turn the state of a finished run (:class:`~scheduler_core.simulation.state.ClusterState`) into a
:class:`SimulationResult`.  Why each waiting workload waits is the policies' to say: the cluster
simulation hands that question in as ``pending_reason``."""

from __future__ import annotations

import hashlib
from typing import Callable

import numpy as np

from scheduler_core import metrics as M
from scheduler_core.latency import quantile
from scheduler_core.simulation.state import ClusterState
from scheduler_core.workloads import Workload

# Quantiles at which each service's latency CDF is reported (enough for a smooth plot, bounded size).
CDF_QUANTILES = (0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999)

PENDING_EXPLAINED = 2000  # waiting workloads whose reason is worked out at the horizon (O(nodes) each)


def _makespan(jobs, done, horizon: float) -> float | None:
    """First submission -> last completion.  A job that failed or is unfinished never completed, so
    the makespan is censored at the horizon (a lower bound): failing fast must not look fast."""
    if not jobs:
        return None
    first = min(w.submit for w in jobs)
    if len(done) < len(jobs):
        return M.rnd(horizon - first)
    return M.rnd(max(w.end for w in done) - first)


def build_result(sim: ClusterState, pending_reason: Callable[[Workload], str]) -> M.SimulationResult:
    sc = sim.scenario
    r = M.rnd
    horizon = sim.horizon
    jobs = [w for w in sim.workloads if w.kind != "inference" and w.submit <= horizon]
    services = [w for w in sim.workloads if w.kind == "inference" and w.submit <= horizon]

    def wait(w) -> float:
        # Never started: censored at the horizon (a lower bound), so starvation shows up in the numbers.
        return (w.first_start if w.first_start is not None else horizon) - w.submit

    done = [w for w in jobs if w.state == "done"]
    job_metrics = M.JobMetrics(
        submitted=len(jobs), completed=len(done), failed=sum(1 for w in jobs if w.state == "failed"),
        running_at_end=sum(1 for w in jobs if w.state == "running"),
        waiting_at_end=sum(1 for w in jobs if w.state in ("queued", "admitted")),
        queue_wait=M.Distribution.of(wait(w) for w in jobs),
        completion_time=M.Distribution.of(w.end - w.submit for w in done),
        makespan=_makespan(jobs, done, horizon),
        restarts=sum(w.restarts for w in jobs))

    gangs = [w for w in jobs if w.pods_total > 1]
    multi = [w for w in jobs if w.first_start is not None and (w.pods_total > 1 or w.request.count > 1)]
    gang_metrics = M.GangMetrics(
        gangs=len(gangs), partial_start_gpu_hours=r(sim.partial_int / 3600.0) or 0.0,
        rendezvous_timeouts=sim.rendezvous_timeouts, max_partial_gpus=r(sim.max_partial) or 0.0,
        topology_factor=M.Distribution.of(w.worst_topology_factor for w in multi))

    cap = float(sim.capacity_gpus)
    util = M.UtilisationMetrics(
        capacity_gpus=sim.capacity_gpus,
        allocated=r(sim.alloc_int / (cap * horizon)) or 0.0,
        effective=r(sim.eff_int / (cap * horizon)) or 0.0,
        allocated_gpu_hours=r(sim.alloc_int / 3600.0) or 0.0,
        effective_gpu_hours=r(sim.eff_int / 3600.0) or 0.0,
        stranded_gpus_mean=r(sim.stranded_sum / sim.samples_n) if sim.samples_n else 0.0,
        fragmentation_mean=r(sim.frag_sum / sim.frag_n) if sim.frag_n else 0.0,
        pending_pods_mean=r(sim.pending_int / horizon) or 0.0,
        pending_pods_max=sim.max_pending)

    def cdf_points(hist) -> list[tuple[float, float]]:
        points = []
        for q in CDF_QUANTILES:
            ms = _ms(quantile(sim.grid, hist, q))
            if ms is not None:
                points.append((ms, q))
        return points

    svc_out = []
    total_hist = sim.grid.new_hist()
    req_total = viol_total = 0.0
    missing = idle = 0
    for w in services:
        st = sim.services[w.uid]
        lat = st.latency
        total_hist += lat.hist
        req_total += lat.requests
        viol_total += lat.violations
        p99 = quantile(sim.grid, lat.hist, 0.99)
        frac = lat.violations / lat.requests if lat.requests > 0 else 0.0
        # A service the scenario sends no requests (an imported snapshot carries no traffic) is not
        # judged: it neither meets nor misses its SLO.
        silent = w.spec.arrival_rate == 0 and not any(step.rps > 0 for step in w.spec.rate_schedule)
        met = lat.requests > 0 and frac <= 0.01 + 1e-12
        idle += 1 if silent else 0
        missing += 0 if met or silent else 1
        mech = (sim.scenario.stack.data_plane_for(w.node_group) if w.node_group else sim.scenario.stack.data_plane).mechanism
        svc_out.append(M.ServiceMetrics(
            name=w.name, tenant=w.tenant, mechanism=mech, replicas=w.pods_total, requests=r(lat.requests) or 0.0,
            p50_ms=_ms(quantile(sim.grid, lat.hist, 0.5)), p99_ms=_ms(p99),
            slo_p99_ms=r(w.spec.slo.p99 * 1000.0), latency_cdf_ms=cdf_points(lat.hist),
            slo_violation_fraction=r(frac) or 0.0, slo_met=met,
            unserved_requests=r(lat.unserved) or 0.0, overload_seconds=r(lat.overload_seconds) or 0.0,
            oom_kills=st.oom_kills, no_traffic=silent))
    inference = M.InferenceMetrics(
        services=svc_out, requests=r(req_total) or 0.0,
        p50_ms=_ms(quantile(sim.grid, total_hist, 0.5)), p99_ms=_ms(quantile(sim.grid, total_hist, 0.99)),
        slo_violations=r(viol_total) or 0.0,
        slo_violation_fraction=r(viol_total / req_total) if req_total > 0 else 0.0,
        services_missing_slo=missing, services_without_traffic=idle)

    oom = M.OomMetrics(kills=sim.oom_kills, incidents=sim.oom_incident_count, collateral_kills=sim.oom_collateral,
                       max_blast_radius=sim.oom_max_blast, kills_by_workload=dict(sorted(sim.oom_by_workload.items())),
                       first_incidents=sim.oom_incidents)
    faults = M.FaultMetrics(faults=sim.faults, pods_killed=sim.fault_kills, max_blast_radius=sim.fault_max_blast)
    pre = M.PreemptionMetrics(preemptions=sim.preemptions, lost_gpu_hours=r(sim.lost_gpu_hours) or 0.0,
                              by_reason=dict(sorted(sim.preempt_reasons.items())))

    tenants_out = []
    ratios = []
    for name, t in sim.tenants.items():
        mine = [w for w in sim.workloads if w.tenant == name and w.submit <= horizon]
        fair = sim.tenant_fair_int[name]
        recv = sim.tenant_recv_int[name]
        ratio = recv / fair if fair > 1e-9 else None
        if ratio is not None:
            ratios.append(min(ratio, 1.0))  # more than the fair share is not unfair to the tenant itself
        tenants_out.append(M.TenantMetrics(
            name=name, weight=t.weight, submitted=len(mine), completed=sum(1 for w in mine if w.state == "done"),
            gpu_hours=r(sim.tenant_alloc_int[name] / 3600.0) or 0.0, fair_gpu_hours=r(fair / 3600.0) or 0.0,
            share_ratio=r(ratio), queue_wait=M.Distribution.of(wait(w) for w in mine)))
    fairness = M.FairnessMetrics(jain_index=r(M.jain(ratios)), tenants=tenants_out)

    adm = M.AdmissionErrorMetrics(total=sum(sim.admission_errors.values()),
                                  by_reason=dict(sorted(sim.admission_errors.items())))
    reconf = M.ReconfigurationMetrics(drains=sim.reconfig_drains, drain_seconds=r(sim.reconfig_seconds) or 0.0,
                                      unavailable_gpu_hours=r(sim.reconfig_gpu_hours) or 0.0,
                                      failed=sim.reconfig_failed)

    inventory = []
    for n in sim.nodes[:64]:  # bounded: big pools repeat the same few node shapes
        inventory.append(M.NodeInventory(
            node=n.name, gpu=n.spec.name, interconnect=n.link,
            mig={str(g.index): (str(g.layout) if g.layout else "(no instances)") for g in n.gpus if g.mig_enabled},
            advertised=n.inventory(), warnings=list(n.inventory_warnings)))

    waiting = [w for w in sim.workloads if w.submit <= horizon and w.state in ("queued", "admitted")]
    reasons: dict[int, str] = {}
    for w in waiting[:PENDING_EXPLAINED]:
        reasons[w.uid] = pending_reason(w)
    by_reason: dict[str, int] = {}
    for w in waiting[:PENDING_EXPLAINED]:
        why = reasons[w.uid].replace(w.name, "<workload>")  # one line per reason, not per workload
        by_reason[why] = by_reason.get(why, 0) + 1
    top = sorted(by_reason.items(), key=lambda kv: (-kv[1], kv[0]))[:20]
    pending = M.PendingMetrics(waiting=len(waiting), explained=len(reasons),
                               by_reason=[M.PendingReason(reason=k, workloads=n) for k, n in top])

    records = []
    if len(sim.workloads) <= sc.sampling.record_workloads:
        for w in sim.workloads:
            if w.submit > horizon:
                continue
            nodes = sorted({p.node.name for p in w.pods if p.node is not None}) or sorted(getattr(w, "last_nodes", []))
            records.append(M.WorkloadRecord(
                name=w.name, kind=w.kind, tenant=w.tenant, pods=w.pods_total, request=w.request.describe(),
                submit=r(w.submit), start=r(w.first_start), end=r(w.end), state=w.state,
                queue_wait=r(w.first_start - w.submit) if w.first_start is not None else None,
                topology_factor=r(w.worst_topology_factor), restarts=w.restarts, preemptions=w.preemptions,
                nodes=nodes, pending_reason=reasons.get(w.uid)))

    digest = hashlib.sha256(sc.model_dump_json().encode()).hexdigest()
    return M.SimulationResult(
        scenario=sc.name, stack=sc.stack.name, seed=sc.seed, horizon=r(horizon), scenario_digest=digest,
        events_processed=sim.processed, inventory=inventory, jobs=job_metrics, gangs=gang_metrics,
        utilisation=util, inference=inference, oom=oom, faults=faults, preemption=pre, fairness=fairness,
        admission_errors=adm, reconfiguration=reconf, workloads=records, time_series=sim.samples,
        pending=pending, events=sim.log.result())


def _ms(x: float | None) -> float | None:
    if x is None:
        return None
    if not np.isfinite(x):
        return None
    return M.rnd(x * 1000.0)
