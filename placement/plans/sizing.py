"""Sizing from facts: MIG profiles by usable memory and compute share, whole-node pools, demand.

MIG tables are scheduler_core's hardware model (usable MiB per profile per GPU model, with sources in
scheduler_core/mig.py); nominal profile names are never read as memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scheduler_core import mig as migmod
from scheduler_core.hardware import MIB_PER_GIB, GpuSpec, gpu_spec

# A g-slice instance gets g/7 of the MIG-mode GPU's compute (facts §1.1); a request for a share s
# needs g/7 >= s. A request for 1 whole GPU (or more) needs the whole card: the 7g profile.
COMPUTE_SLICES = migmod.COMPUTE_SLICES
# A slice counts as giving a replica its share when it has at least 85% of it (3g = 0.43 serves a
# 0.5 share); a whole-GPU request (share 1) still needs 7g, the only profile above 0.85.
MIG_COMPUTE_SHARE_TOLERANCE = 0.85
# Node shapes (GPUs per node) a derived pool may use: the 1/2/4/8-GPU shapes cloud GPU machine types
# come in (e.g. GCP a2-highgpu-1g/2g/4g/8g); 8 = an HGX board, the largest node the rules accept.
NODE_SHAPES = (1, 2, 4, 8)
MAX_GPUS_PER_NODE = 8


@dataclass(frozen=True)
class MigChoice:
    name: str
    memory_mib: int
    compute_slices: int
    per_gpu: int  # instances of this profile one GPU holds (all-<profile> layout)


def mig_profile(spec: GpuSpec, memory_gib: float, gpus_per_replica: float) -> MigChoice | None:
    """The smallest profile (by usable memory, then slices) holding `memory_gib` with at least
    min(1, gpus_per_replica) of the GPU's compute, or None (no MIG on this model, or nothing fits).

    Monotone: a larger request never gets a smaller profile."""
    if spec.mig_family is None:
        return None
    share = min(1.0, gpus_per_replica)
    need_mib = memory_gib * MIB_PER_GIB
    fitting = [
        p for p in migmod.PROFILES[spec.mig_family].values()
        if not p.media_extensions and p.memory_mib >= need_mib and p.compute_slices >= share * COMPUTE_SLICES * MIG_COMPUTE_SHARE_TOLERANCE - 1e-9
    ]
    if not fitting:
        return None
    best = min(fitting, key=lambda p: (p.memory_mib, p.compute_slices))
    per_gpu = min(best.max_instances, migmod.MEMORY_SLICES // best.memory_slices, COMPUTE_SLICES // best.compute_slices)
    return MigChoice(best.name, best.memory_mib, best.compute_slices, per_gpu)


def node_shape(total_gpus: int | None, whole_gpus_needed: int, demand_gpus: int) -> int:
    """GPUs per node: 8 for pools of 8 GPUs or more; a smaller cloud shape for a smaller pool.
    A given pool size that 8 does not divide gets the largest shape that divides it."""
    floor = max(1, whole_gpus_needed)
    if total_gpus is not None:
        for shape in reversed(NODE_SHAPES):
            if shape >= floor and total_gpus % shape == 0 and shape <= max(total_gpus, 1):
                return shape
        return MAX_GPUS_PER_NODE if floor > total_gpus else max(s for s in NODE_SHAPES if s <= total_gpus)
    target = max(floor, min(demand_gpus, MAX_GPUS_PER_NODE))
    return next(s for s in NODE_SHAPES if s >= target)


def split_nodes(total_nodes: int, demands: list[float]) -> list[int]:
    """Whole nodes per pool, proportional to demand (largest remainder), at least one each."""
    n = len(demands)
    if total_nodes <= n:
        return [1] * n
    weight = sum(demands) or n
    raw = [total_nodes * (d or 0) / weight for d in demands]
    counts = [max(1, math.floor(r)) for r in raw]
    while sum(counts) > total_nodes:
        i = max(range(n), key=lambda k: counts[k])
        counts[i] -= 1
    order = sorted(range(n), key=lambda k: -(raw[k] - math.floor(raw[k])))
    i = 0
    while sum(counts) < total_nodes:
        counts[order[i % n]] += 1
        i += 1
    return counts


def per_gpu_share_fit(card_mib: int, memory_gib: float, share: float) -> int:
    """Replicas of a shared (non-MIG) unit one GPU holds: by compute share and by memory."""
    by_compute = max(1, math.floor(1.0 / share + 1e-9)) if share < 1 else 1
    by_memory = max(0, math.floor(card_mib / (memory_gib * MIB_PER_GIB) + 1e-9))
    return min(by_compute, by_memory)


__all__ = ["MigChoice", "gpu_spec", "mig_profile", "node_shape", "per_gpu_share_fit", "split_nodes"]
