"""Evidence renders the plan: the scheduler_core scenario document of a plan, and nothing else.

Node groups, GPU model, data planes, tenants, queues and quotas come from the plan; only the traffic
shape (arrivals, durations, service times) is this module's, named below.
"""

from __future__ import annotations

from placement.plans.build import PARTIAL_ADMISSION, simulation_mapping
from placement.plans.models import Plan

HORIZON = "24h"
# Traffic shape of the generated day (not part of the plan): a training job every 5 h running 3 h,
# batch jobs every 40 min running 1 h, 15 requests/s per inference replica at full GPU. Durations are
# wall-clock on the replica's share: the simulator's duration is work at a full GPU, so a job on a
# 0.1 share asks 0.1 x its wall-clock time.
TRAINING_EVERY, TRAINING_HOURS = "5h", 3.0
BATCH_EVERY, BATCH_HOURS = "40m", 1.0
RPS_PER_REPLICA = 15

# The simulator models Volcano's vGPU with HAMi's resource names (same memory and core caps).
SIMULATED_NAME = {"volcano.sh/vgpu-number": "nvidia.com/gpu", "volcano.sh/vgpu-memory": "nvidia.com/gpumem",
                  "volcano.sh/vgpu-cores": "nvidia.com/gpucores"}


def _data_plane(group) -> dict:
    dp = group.data_plane
    out: dict = {"mechanism": dp.mechanism}
    if dp.time_slicing_replicas:
        out["time_slicing"] = {"replicas": dp.time_slicing_replicas,
                               "fail_requests_greater_than_one": dp.fail_requests_greater_than_one}
    if dp.mps_replicas:
        out["mps"] = {"replicas": dp.mps_replicas}
    if dp.hami_split_count:
        out["hami"] = {"device_split_count": dp.hami_split_count}
    return out


def _unit(w, group) -> dict:
    dp = group.data_plane
    if dp.mig is not None:
        return {"mig_profile": next(iter(dp.mig.devices))}
    if dp.mechanism == "hami":
        cores = next(v for k, v in w.pod.resources.items() if k.endswith(("gpucores", "vgpu-cores")))
        return {"gpucores": int(cores)}
    if dp.mechanism == "kai-fraction" and w.gpus_per_replica < 1:
        return {"gpu_fraction": w.gpus_per_replica}
    return {}


def scenario_document(plan: Plan, *, name: str | None = None) -> dict:
    """The one-day scenario that simulates `plan` (a plain dict for scheduler_core.parse_scenario)."""
    groups = {g.name: g for g in plan.node_groups}
    node_groups = []
    for g in plan.node_groups:
        entry: dict = {"name": g.name, "count": g.count, "gpu": g.simulated_gpu, "gpus_per_node": g.gpus_per_node,
                       "cpu": g.data_plane.advertised.get("cpu"), "memory_gib": g.data_plane.advertised.get("memory")}
        if g.data_plane.mig is not None:
            entry["mig"] = [{"devices": "all", "layout": g.data_plane.mig.config}]
        node_groups.append(entry)
    tenants: dict[str, dict] = {}
    workloads = []
    classes_of: dict[str, int] = {}
    for w in plan.workloads:
        for tenant in w.replicas_per_tenant:
            classes_of[tenant] = classes_of.get(tenant, 0) + 1
    for w in plan.workloads:
        group = groups[w.node_group]
        share = min(1.0, w.gpus_per_replica)
        whole = max(1, int(-(-w.gpus_per_replica // 1)))
        for i, (tenant, n) in enumerate(w.replicas_per_tenant.items()):
            if tenant in tenants:  # a team submitting several classes: one tenant, its weight their sum
                tenants[tenant]["weight"] += max(1, n)
            else:
                tenants[tenant] = {"name": tenant, "queue": w.queues[tenant], "weight": max(1, n)}
            if not n:
                continue
            # a team's workload of one class is named after the team; of several, after team and class
            label = tenant if classes_of[tenant] == 1 else f"{tenant}-{w.name}"
            common = {"tenant": tenant, "node_group": w.node_group, "unit": _unit(w, group), "compute_fraction": share,
                      "memory_request_gib": w.gpu_memory_gib, "cpu": w.pod.resources.get("cpu", 0.0),
                      "host_memory_gib": w.pod.resources.get("memory", 0.0)}
            if w.kind == "training":
                least = w.min_for(tenant)  # an elastic class: the gang's minMember, Kueue's minCount
                job = {**common, "kind": "training", "name": label, "count": 4,
                       "arrival": {"at": f"{i * 7}m", "every": TRAINING_EVERY}, "workers": n,
                       "gpus_per_worker": whole, "duration": f"{round(TRAINING_HOURS * 3600 * share)}s",
                       "memory_gib": round(0.9 * w.gpu_memory_gib, 3),
                       "min_available": (least or n) if w.gang else 0}
                if least and plan.admission == PARTIAL_ADMISSION:
                    job["min_count"] = least
                workloads.append(job)
            elif w.kind == "online_inference":
                workloads.append({**common, "kind": "inference", "name": label, "replicas": n, "gpus_per_replica": whole,
                                  "model_memory_gib": round(0.7 * w.gpu_memory_gib, 3),
                                  "kv_cache": {"initial_gib": round(0.1 * w.gpu_memory_gib, 3), "growth_gib_per_hour": 0.0,
                                               "max_gib": round(0.3 * w.gpu_memory_gib, 3)},
                                  "arrival_rate": round(RPS_PER_REPLICA * n * share, 2),
                                  "service_time": {"mean": "20ms", "cv": 0.5}, "slo": {"p99": "200ms"}})
            else:  # batch inference and interactive sessions: n at a time, coming and going
                workloads.append({**common, "kind": "batch", "name": label, "count": n * 3, "gpus_per_worker": whole,
                                  "arrival": {"at": f"{i * 5}m", "every": BATCH_EVERY},
                                  "duration": f"{round(BATCH_HOURS * 3600 * share)}s",
                                  "memory_gib": round(0.9 * w.gpu_memory_gib, 3)})
    control: dict = {"scheduler": plan.scheduler, "admission": plan.admission}
    if plan.scheduler == "kube-default" and any(w.pod_group is not None for w in plan.workloads):
        control["kube"] = {"workload_gang": True}  # the Workload API's gang: PodGroups of minCount = min_available
    total_gpus = sum(g.gpus for g in plan.node_groups)
    if plan.scheduler == "volcano":
        control["volcano"] = {"queues": [{"name": q.name, "weight": max(1, round(q.quota.get("nvidia.com/gpu", 1)))}
                                         for q in plan.queues],
                              "actions": ["enqueue", "allocate", "backfill", "reclaim"]}
    if plan.scheduler == "kai":
        control["kai"] = {"queues": [{"name": q.name, "quota": round(min(total_gpus, _gpus(q, plan)), 3)} for q in plan.queues],
                          "gpu_sharing": any(g.data_plane.mechanism == "kai-fraction" for g in plan.node_groups)}
    if plan.admission == "kueue":
        control["kueue"] = {"cluster_queues": [
            {"name": q.name, "cohort": "atlas", "preemption": {"reclaim_within_cohort": "Any"},
             "flavors": [{"name": "default", "quotas": {SIMULATED_NAME.get(r, r): {"nominal": v}
                                                        for r, v in q.quota.items() if not r.startswith("claim:")}}]}
            for q in plan.queues]}
    per_group = {g.name: _data_plane(g) for g in plan.node_groups}
    document = {
        "name": (name or f"plan-{plan.digest}")[:120],
        "description": f"Rendered from plan {plan.digest} of stack {plan.stack}.",
        "seed": 1, "horizon": HORIZON,
        "pool": {"node_groups": node_groups},
        "stack": {"name": plan.stack[:200], "data_plane": next(iter(per_group.values()), {"mechanism": "whole"}),
                  "node_group_data_plane": per_group, "control_plane": control},
        "tenants": list(tenants.values()),
        "workloads": workloads,
    }
    parameters = _parameters(plan)
    if parameters:
        document["parameters"] = parameters
    return document


def _parameters(plan: Plan) -> dict:
    """Model parameters the plan's data planes decide: KAI fractions whose memory an add-on caps
    (simulation.yaml oom_scope) fail only the pod past its fraction, not the whole card."""
    scopes = simulation_mapping().get("oom_scope", {})
    kai = [g.data_plane.project for g in plan.node_groups if g.data_plane.mechanism == "kai-fraction"]
    if kai and all(p in scopes for p in kai) and len({scopes[p] for p in kai}) == 1:
        return {"kai_oom_scope": scopes[kai[0]]}
    return {}


def _gpus(queue, plan: Plan) -> float:
    """GPUs a queue's quota stands for (KAI queues count GPUs, fractions included), summed over the
    classes the queue admits."""
    total = 0.0
    for w in plan.workloads:
        if w.queues.get(queue.tenant) != queue.name:
            continue
        n = w.replicas_per_tenant[queue.tenant]
        total += max(0.01, min(1.0, w.gpus_per_replica) * n) if w.gpus_per_replica < 1 else w.gpus_per_replica * n
    return total
