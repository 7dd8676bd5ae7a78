"""Deterministic synthetic traces shaped like the two real ones.

Used by ``benchmarks/sim_bench.py`` when no ``--trace`` is given and by the
tests.  They copy only aggregate *shape* (GPU-count mix, share mix, node
classes, offered load) from the published traces, never rows.  Every draw
comes from one ``random.Random(seed)``, so a seed gives the same trace.
"""

from __future__ import annotations

import random

from scheduler_core.traces.csvio import GPU_MEMORY_MIB
from scheduler_core.traces.records import MILLI, TraceJob, TraceNode

__all__ = ["synthetic_sharing_trace", "synthetic_whole_gpu_jobs"]

# Philly (Gavel b436b2): share of jobs by GPU count.
_PHILLY_GPUS = ((1, 0.87), (2, 0.01), (4, 0.05), (8, 0.07))


def _pick(rng: random.Random, table):
    x = rng.random()
    acc = 0.0
    for value, p in table:
        acc += p
        if x < acc:
            return value
    return table[-1][0]


def synthetic_whole_gpu_jobs(
    n_jobs: int = 1874,
    *,
    capacity: int = 96,
    load: float = 0.73,
    median_duration_s: float = 2400.0,
    sigma: float = 2.4,
    seed: int = 0,
) -> list[TraceJob]:
    """Whole-GPU jobs like the Philly-Gavel trace.

    GPU counts follow Philly's mix (87% 1-GPU, 7% 8-GPU...), durations are
    log-normal (median ``median_duration_s``, heavy tail, capped at 17.5 days
    like the longest Philly job),
    arrivals Poisson at the rate that offers ``load x capacity`` GPUs.
    """
    if n_jobs <= 0:
        raise ValueError("n_jobs must be positive")
    rng = random.Random(seed)
    import math

    mu = math.log(median_duration_s)
    shapes = []
    for _ in range(n_jobs):
        k = _pick(rng, _PHILLY_GPUS)
        d = min(rng.lognormvariate(mu, sigma), 1.5e6)
        shapes.append((k, max(d, 1.0)))
    demand = sum(k * d for k, d in shapes) / n_jobs  # GPU-seconds per job
    rate = load * capacity / demand  # jobs per second
    t = 0.0
    jobs = []
    for i, (k, d) in enumerate(shapes):
        jobs.append(TraceJob(index=i, job_id=str(i), submit_s=round(t, 3), num_gpus=k, gpu_milli=MILLI,
                             duration_s=round(d, 3)))
        t += rng.expovariate(rate)
    return jobs


# Alibaba openb node classes: (GPUs, model, cpu_milli, mem_mib, share of nodes).
_NODE_CLASSES = (
    (8, "G2", 96_000, 393_216, 0.453),
    (2, "T4", 104_000, 524_288, 0.319),
    (2, "P100", 64_000, 262_144, 0.108),
    (8, "G3", 128_000, 786_432, 0.032),
    (4, "V100M16", 32_000, 131_072, 0.023),
    (8, "V100M32", 96_000, 786_432, 0.017),
    (1, "V100M16", 8_000, 32_768, 0.016),
    (4, "T4", 96_000, 393_216, 0.014),
    (4, "V100M32", 48_000, 376_832, 0.008),
    (8, "V100M16", 96_000, 393_216, 0.007),
    (1, "P100", 16_000, 122_880, 0.003),
)
# Pod shapes: (num_gpus, gpu_milli, share of pods).
_POD_SHAPES = (
    (0, 0, 0.133), (1, 1000, 0.480), (1, 810, 0.132), (1, 470, 0.092), (1, 320, 0.040),
    (1, 650, 0.031), (1, 230, 0.017), (1, 460, 0.016), (1, 590, 0.009), (1, 160, 0.009),
    (1, 550, 0.009), (1, 220, 0.008), (2, 1000, 0.010), (4, 1000, 0.008), (8, 1000, 0.006),
)
_CPU_PER_GPU = (4000, 6000, 8000, 12000, 16000)


def synthetic_sharing_trace(
    n_pods: int = 8152,
    n_nodes: int = 1213,
    *,
    seed: int = 0,
    mean_gap_s: float = 1580.0,
    median_duration_s: float = 3600.0,
) -> tuple[list[TraceJob], list[TraceNode]]:
    """Pods and nodes shaped like Alibaba's 2023 GPU-sharing trace.

    About 13% CPU-only pods, 48% whole-GPU, 37% fractional (0.16-0.81 GPU)
    and 2% multi-GPU; with the defaults the arriving GPU demand is close to
    the cluster's capacity, as in ``openb_pod_list_default``.
    """
    if n_pods <= 0 or n_nodes <= 0:
        raise ValueError("n_pods and n_nodes must be positive")
    rng = random.Random(seed)
    import math

    nodes: list[TraceNode] = []
    total = sum(c[4] for c in _NODE_CLASSES)
    counts = [int(n_nodes * c[4] / total) for c in _NODE_CLASSES]
    counts[0] += n_nodes - sum(counts)
    for (g, model, cpu, mem, _p), cnt in zip(_NODE_CLASSES, counts):
        for _ in range(cnt):
            nodes.append(TraceNode(name=f"syn-node-{len(nodes):04d}", num_gpus=g, model=model,
                                   gpu_mem_mib=GPU_MEMORY_MIB[model], cpu_milli=cpu, mem_mib=mem))
    cap_gpus = sum(n.num_gpus for n in nodes)
    # Scale the pod mix so the arriving demand is ~98% of capacity.
    mean_demand = sum(k * m / MILLI * p for k, m, p in _POD_SHAPES)
    want = 0.98 * cap_gpus / n_pods
    scale = want / mean_demand
    shapes = [(k, m, p * (scale if k else 1.0)) for k, m, p in _POD_SHAPES]
    norm = sum(p for _k, _m, p in shapes)
    shapes = [((k, m), p / norm) for k, m, p in shapes]
    mu = math.log(median_duration_s)
    pods: list[TraceJob] = []
    t = 0.0
    for i in range(n_pods):
        k, m = _pick(rng, shapes)
        cpu_per = _pick(rng, [(c, 1 / len(_CPU_PER_GPU)) for c in _CPU_PER_GPU])
        cpu = max(1000, int(cpu_per * max(k * m / MILLI, 0.25)))
        mem = cpu * 2 // 1000 * 1024
        pods.append(TraceJob(
            index=i, job_id=f"syn-pod-{i:05d}", submit_s=round(t, 3), num_gpus=k, gpu_milli=m,
            duration_s=round(rng.lognormvariate(mu, 1.5), 3), priority_class=rng.choice(("LS", "BE")),
            cpu_milli=cpu, mem_mib=mem,
        ))
        t += rng.expovariate(1.0 / mean_gap_s)
    return pods, nodes
