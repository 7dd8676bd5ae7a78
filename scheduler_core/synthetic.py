"""Synthetic scenarios for benchmarks and scale tests.

:func:`synthetic_scenario` builds a pool of DGX-class nodes (8x A100-SXM4-80GB
on NVSwitch, 16 nodes per rack), several tenants, a job mix and inference
services sized so the offered load is about ``load`` of the pool.  The job
mix (by count) follows the shape of public GPU-cluster traces - most jobs are
single-GPU, a minority are multi-GPU pods and a few are multi-node gangs -
with log-normal durations.  Everything is expressed as scenario entries with
arrival processes, so the document stays small at 50,000 jobs and the
expansion is seeded.
"""

from __future__ import annotations

import random

from scheduler_core.scenario import Scenario, parse_scenario

# (name, share of jobs, workers, gpus per worker (choice), mean hours, topology sensitivity)
JOB_MIX = [
    ("single", 0.70, 1, [1], 1.0, 0.0),
    ("multi", 0.22, 1, [2, 4, 8], 1.0, 0.1),
    ("gang", 0.08, [2, 2, 4], [8], 1.0, 0.3),
]


def _expected_gpu_hours() -> float:
    total = 0.0
    for _, share, workers, gpw, hours, _ in JOB_MIX:
        w = sum(workers) / len(workers) if isinstance(workers, list) else workers
        g = sum(gpw) / len(gpw)
        total += share * w * g * hours
    return total


def synthetic_scenario(nodes: int = 128, jobs: int = 50_000, services: int = 100, days: float = 7.0,
                       seed: int = 0, stack: str = "kube-binpack", load: float = 0.85,
                       tenants: int = 8) -> Scenario:
    """A large, realistic-shaped scenario.

    :param nodes: DGX-class nodes (8 GPUs each).
    :param jobs: training/batch jobs over the horizon (Poisson arrivals).
    :param services: inference services (1-4 replicas, one GPU each).
    :param days: horizon.
    :param stack: ``kube-binpack`` (kube-scheduler with MostAllocated scoring, the usual GPU
        setting), ``kube-default`` (LeastAllocated), ``coscheduling``, ``volcano``, ``kueue`` or ``kai``.
    :param load: offered GPU load of jobs + services as a share of the pool.
    """
    rng = random.Random(f"synthetic:{seed}")
    gpus = nodes * 8
    hours = days * 24.0
    tenant_names = [f"team-{i}" for i in range(tenants)]
    weights = [1 + (i % 3) for i in range(tenants)]

    svc_entries = []
    svc_gpus = 0
    for i in range(services):
        replicas = rng.choice([1, 2, 2, 3, 4])
        svc_gpus += replicas
        mean_ms = rng.choice([40, 60, 80, 120, 200])
        rate = replicas * 0.5 / (mean_ms / 1000.0)  # ~50% utilisation per replica
        steps = [{"at": f"{h}h", "rps": round(rate * (1.3 if (h // 6) % 2 else 0.7), 3)}
                 for h in range(6, int(hours), 6)]
        svc_entries.append({
            "kind": "inference", "name": f"svc-{i}", "tenant": tenant_names[i % tenants], "priority": 100,
            "replicas": replicas, "model_memory_gib": rng.choice([14, 20, 28, 40]),
            "kv_cache": {"initial_gib": 2, "growth_gib_per_hour": 0.0, "max_gib": 8},
            "compute_fraction": 0.6, "arrival_rate": round(rate, 3), "rate_schedule": steps,
            "service_time": {"mean": f"{mean_ms}ms", "cv": 0.6}, "slo": {"p99": f"{mean_ms * 6}ms"},
        })

    job_gpu_hours = max(1.0, load * gpus * hours - svc_gpus * hours)
    scale = job_gpu_hours / max(1, jobs) / _expected_gpu_hours()
    job_entries = []
    assigned = 0
    mix_counts = []
    for j, (name, share, *_rest) in enumerate(JOB_MIX):
        n = int(round(jobs * share)) if j < len(JOB_MIX) - 1 else jobs - assigned
        assigned += n
        mix_counts.append(n)
    for (name, share, workers, gpw, mean_h, sens), n in zip(JOB_MIX, mix_counts):
        for t in range(tenants):
            count = n // tenants + (1 if t < n % tenants else 0)
            if count <= 0:
                continue
            entry = {
                "kind": "training" if name == "gang" else "batch",
                "name": f"{name}-{tenant_names[t]}", "tenant": tenant_names[t], "count": count,
                "arrival": {"poisson_per_hour": count / hours},
                "workers": {"dist": "choice", "values": workers} if isinstance(workers, list) else workers,
                "gpus_per_worker": {"dist": "choice", "values": gpw},
                "duration": {"dist": "lognormal", "mean": mean_h * scale * 3600.0, "cv": 1.5},
                "memory_gib": 40, "topology_sensitivity": sens,
            }
            job_entries.append(entry)

    cp: dict = {"scheduler": "kube-default"}
    tenants_doc = [{"name": n, "weight": w} for n, w in zip(tenant_names, weights)]
    if stack == "kube-binpack":
        cp = {"scheduler": "kube-default", "kube": {"scoring": "MostAllocated"}}
    elif stack == "coscheduling":
        cp = {"scheduler": "coscheduling"}
    elif stack == "volcano":
        cp = {"scheduler": "volcano", "volcano": {
            "queues": [{"name": n, "weight": w} for n, w in zip(tenant_names, weights)]}}
    elif stack == "kai":
        cp = {"scheduler": "kai", "kai": {"queues": [{"name": n, "quota": gpus // tenants, "over_quota_weight": w}
                                                     for n, w in zip(tenant_names, weights)]}}
    elif stack == "kueue":
        share = gpus // tenants
        cp = {"scheduler": "kube-default", "kube": {"scoring": "MostAllocated"}, "admission": "kueue", "kueue": {"cluster_queues": [
            {"name": n, "cohort": "pool", "flavors": [{"name": "a100", "quotas": {"nvidia.com/gpu": share}}],
             "preemption": {"reclaim_within_cohort": "Any", "within_cluster_queue": "LowerPriority"}}
            for n in tenant_names]}}
    elif stack != "kube-default":
        raise ValueError(f"unknown stack {stack!r}")

    doc = {
        "name": f"synthetic-{nodes}n-{jobs}j-{services}s-{days:g}d",
        "description": "Synthetic benchmark scenario (scheduler_core.synthetic)",
        "seed": seed, "horizon": days * 86400.0,
        "pool": {"node_groups": [{"name": "dgx", "count": nodes, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8,
                                  "racks": max(1, nodes // 16)}]},
        "stack": {"name": stack, "control_plane": cp},
        "tenants": tenants_doc,
        "workloads": svc_entries + job_entries,
        "sampling": {"max_points": 500, "record_workloads": 0},
    }
    return parse_scenario(doc, "synthetic")
