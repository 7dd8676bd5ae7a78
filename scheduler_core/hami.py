"""HAMi's admission webhook and request generation, before its fit rules (domain-facts.md §3).

A container states some of ``nvidia.com/gpu``, ``gpumem`` (MiB), ``gpumem-percentage`` and
``gpucores`` (:class:`HamiLimits`).  HAMi 2.10 turns that into the request its Fit sees in two steps
(Project-HAMi/HAMi ``pkg/device/nvidia/device.go``):

1. **Webhook** (``pkg/scheduler/webhook.go`` ``Handle``, then ``MutateAdmission``), only for a pod
   whose scheduler is HAMi's (``schedulerName``, default ``hami-scheduler``; with kube-scheduler
   the pods name it, as the export writes them); a pod naming another scheduler (Volcano, KAI,
   scheduler-plugins) is left alone (``pod already has different scheduler assigned``):

   * a gpumem-percentage outside 0..100 is refused;
   * a container asking gpumem, gpumem-percentage or gpucores without ``nvidia.com/gpu`` gets
     ``defaultGPUNum`` GPUs (1; 0 adds none);
   * a container with ``nvidia.com/gpu``, no gpucores and no memory figure (or a percentage of 100)
     gets ``gpucores: 100``: it wants whole cards, so no one may share them
     (``defaultExclusiveCoreIfNeeded``);
   * the pod's ``schedulerName`` becomes HAMi's.

2. **Request generation** in the scheduler (``GenerateResourceRequests``): gpumem x
   ``memoryFactor``; a percentage above 100 is clamped, 0 or below is unset; with neither memory
   figure, ``defaultMemory`` MiB, or (0) the whole card's memory (percentage 100); gpucores
   default ``defaultCores`` (0).  The percentage becomes MiB per card at fit: total x pct / 100.

The chart values both steps read are :class:`HamiConfig`, a scenario's ``data_plane.hami`` section
(:mod:`scheduler_core.scenario.stack` names it from here).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from pydantic import Field

from scheduler_core.units import DocumentModel

# Each scheduler of the stack and the schedulerName its pods carry.
SCHEDULER_NAMES = {"kube-default": "default-scheduler", "volcano": "volcano", "kai": "kai-scheduler",
                   "coscheduling": "scheduler-plugins-scheduler"}


# The pod annotations that filter HAMi's cards (pkg/device/nvidia/device.go GPUInUse, GPUNoUse, GPUUseUUID,
# GPUNoUseUUID), checked in Fit after the card's health (``checkType``, then ``CheckUUID``).
USE_GPUTYPE, NOUSE_GPUTYPE = "nvidia.com/use-gputype", "nvidia.com/nouse-gputype"
USE_GPUUUID, NOUSE_GPUUUID = "nvidia.com/use-gpuuuid", "nvidia.com/nouse-gpuuuid"
CARD_FILTER_ANNOTATIONS = (USE_GPUTYPE, NOUSE_GPUTYPE, USE_GPUUUID, NOUSE_GPUUUID)


def check_type(annotations: dict[str, str], card_type: str) -> bool:
    """``device.CheckType``: may a card of ``card_type`` serve the pod? Each listed type matches as a
    case-insensitive substring; an empty or blank value (or an empty list member) constrains nothing."""
    card = card_type.upper()

    def listed(value: str) -> bool:
        return any(t.strip() and t.strip().upper() in card for t in value.split(","))

    use, nouse = annotations.get(USE_GPUTYPE, ""), annotations.get(NOUSE_GPUTYPE, "")
    if use.strip() and not listed(use):
        return False
    return not (nouse.strip() and listed(nouse))


def check_uuid(annotations: dict[str, str], card_id: str) -> bool:
    """``device.CheckUUID``: may the card ``card_id`` serve the pod? Ids match exactly after trimming."""
    def listed(value: str) -> bool:
        return any(u.strip() == card_id for u in value.split(","))

    use, nouse = annotations.get(USE_GPUUUID, ""), annotations.get(NOUSE_GPUUUID, "")
    if use.strip() and not listed(use):
        return False
    return not (nouse.strip() and listed(nouse))


class HamiConfig(DocumentModel):
    # A scenario's ``data_plane.hami`` section: HAMi's chart values, read by the webhook and request
    # generation below and by the device fit (cluster.py).
    device_split_count: int = Field(10, ge=1, le=110, description="vGPU slots per physical GPU (values.yaml default 10, "
                                                                 "§3); at most 110, Kubernetes' pods per node")
    device_memory_scaling: float = Field(1.0, ge=1.0, description="> 1 enables virtual memory overcommit (§3)")
    gpu_scheduler_policy: Literal["spread", "binpack"] = "spread"
    node_scheduler_policy: Literal["spread", "binpack"] = "binpack"
    # Webhook and scheduler defaults (charts/hami/templates/scheduler/device-configmap.yaml, values.yaml;
    # applied as pkg/device/nvidia/device.go MutateAdmission and GenerateResourceRequests do, below).
    default_gpu_num: int = Field(1, ge=0, description="defaultGPUNum: nvidia.com/gpu the webhook adds to a container "
                                                      "asking gpumem, gpumem-percentage or gpucores without it (0: none)")
    default_memory: int = Field(0, ge=0, description="defaultMemory MiB for a container stating neither gpumem nor "
                                                     "gpumem-percentage (0: the whole card)")
    default_cores: int = Field(0, ge=0, le=100, description="defaultCores: gpucores of a container not stating them")
    memory_factor: int = Field(1, ge=1, description="memoryFactor: gpumem is counted x this")
    scheduler_name: str = Field("hami-scheduler", description="schedulerName of HAMi's scheduler; its webhook "
                                                              "mutates only pods naming it (under kube-scheduler)")


@dataclass(frozen=True)
class HamiLimits:
    """A container's HAMi resources as written (``None``: not stated)."""

    gpu: int | None = None
    gpumem: int | None = None
    gpumem_percentage: int | None = None
    gpucores: int | None = None

    def states_any(self) -> bool:
        return any(v is not None for v in (self.gpu, self.gpumem, self.gpumem_percentage, self.gpucores))


@dataclass(frozen=True)
class HamiRequest:
    """What HAMi's Fit is asked per container (``ContainerDeviceRequest``).

    ``mem_percentage`` 0 means ``memory_mib`` holds the MiB (HAMi's sentinel 101)."""

    nums: int
    memory_mib: int
    mem_percentage: int
    cores: int


def pod_scheduler(scheduler: str, cfg: HamiConfig) -> str:
    """The schedulerName of a HAMi pod: HAMi's own under kube-scheduler (its extender places vGPU
    pods), else the stack's scheduler's."""
    return cfg.scheduler_name if scheduler == "kube-default" else SCHEDULER_NAMES[scheduler]


def webhook_applies(pod_scheduler_name: str, cfg: HamiConfig) -> bool:
    """Does HAMi's webhook mutate a pod with this ``schedulerName`` (webhook.go ``Handle``)?"""
    return pod_scheduler_name in ("", cfg.scheduler_name)


def percentage_error(limits: HamiLimits, container: str) -> str | None:
    """The webhook's refusal of a gpumem-percentage outside 0..100 (``validateMemoryPercentage``)."""
    pct = limits.gpumem_percentage
    if pct is not None and not 0 <= pct <= 100:
        return (f"invalid nvidia.com/gpumem-percentage value {pct} in container {container}: "
                "must be an integer between 0 and 100")
    return None


def mutate(limits: HamiLimits, cfg: HamiConfig) -> HamiLimits:
    """``MutateAdmission``: the default GPU count, then the exclusive-core default."""
    gpu = limits.gpu
    if gpu is None and cfg.default_gpu_num > 0 and limits.states_any():
        gpu = cfg.default_gpu_num
    cores = limits.gpucores
    if gpu is not None and cores is None:
        if limits.gpumem_percentage is not None:
            exclusive = limits.gpumem_percentage == 100
        else:
            exclusive = limits.gpumem is None
        if exclusive:
            cores = 100
    return replace(limits, gpu=gpu, gpucores=cores)


def generate_request(limits: HamiLimits, cfg: HamiConfig) -> HamiRequest | None:
    """``GenerateResourceRequests``: None when the container asks no ``nvidia.com/gpu``."""
    if limits.gpu is None:
        return None
    mem = limits.gpumem * cfg.memory_factor if limits.gpumem is not None else 0
    pct = 0
    if limits.gpumem_percentage is not None and limits.gpumem_percentage > 0:
        pct = min(limits.gpumem_percentage, 100)
    if pct == 0 and mem == 0:
        if cfg.default_memory:
            mem = cfg.default_memory
        else:
            pct = 100
    cores = limits.gpucores if limits.gpucores is not None else cfg.default_cores
    return HamiRequest(limits.gpu, mem, pct, cores)


def admitted_request(limits: HamiLimits, cfg: HamiConfig, scheduler: str) -> HamiRequest | None:
    """Webhook (when it applies to the pods of the stack's ``scheduler``) and request generation."""
    if webhook_applies(pod_scheduler(scheduler, cfg), cfg):
        limits = mutate(limits, cfg)
    return generate_request(limits, cfg)


def card_memory(total_mib: float, req_memory_mib: float, mem_percentage: int) -> float:
    """MiB a request books on a card of ``total_mib``: its gpumem, or total x pct / 100 (integer)."""
    if mem_percentage and not req_memory_mib:
        return float(int(total_mib) * mem_percentage // 100)
    return req_memory_mib


# ------------------------------------------------------------------ scoring (pkg/scheduler/policy)
# util.Weight: each share counts x 10 in a node's and a card's score.
SCORE_WEIGHT = 10.0


@dataclass(frozen=True)
class CardUsage:
    """What HAMi's scorer reads of one card (``device.DeviceUsage``): vGPU slots, cores and MiB, each
    used and total (``Totalmem`` is the card's memory x ``deviceMemoryScaling``)."""

    used: int
    count: int
    usedmem: float
    totalmem: float
    usedcores: int = 0
    totalcore: int = 100
    numa: int = 0


@dataclass(frozen=True)
class ScoringWeights:
    """``hami.io/device-scoring-weights`` (slot, core, memory; default 1 each) of a card's score."""

    slot: float = 1.0
    core: float = 1.0
    memory: float = 1.0


def node_score(cards: list[CardUsage]) -> float:
    """``NodeScore.ComputeDefaultScore``: 10 x (used slots / slots + used cores / cores + used MiB / MiB)
    summed over the node's cards, before the pod is placed; 0 when a total is 0."""
    used = sum(c.used for c in cards)
    total = sum(c.count for c in cards)
    cores, total_cores = sum(c.usedcores for c in cards), sum(c.totalcore for c in cards)
    mem, total_mem = sum(c.usedmem for c in cards), sum(c.totalmem for c in cards)
    if not total or not total_cores or not total_mem:
        return 0.0
    return SCORE_WEIGHT * (used / total + cores / total_cores + mem / total_mem)


def card_score(card: CardUsage, requests: list[tuple[int, float, int]],
               weights: ScoringWeights = ScoringWeights()) -> float:
    """``DeviceListsScore.ComputeScore``: 10 x the weighted sum of the card's slot, core and memory shares
    with the pod's containers on it. ``requests``: (cores, MiB, memory percentage) per container asking
    this card's type; each counts one slot whatever its ``Nums``; 0 for a card with a zero total."""
    if not card.count or not card.totalcore or not card.totalmem:
        return 0.0
    slots = len(requests)
    cores = sum(r[0] for r in requests)
    mem = sum(int(card.totalmem) * pct // 100 if pct not in (0, 101) else mib for _, mib, pct in requests)
    return SCORE_WEIGHT * (weights.slot * (slots + card.used) / card.count
                           + weights.core * (cores + card.usedcores) / card.totalcore
                           + weights.memory * (mem + card.usedmem) / card.totalmem)


def card_order_key(score: float, numa: int, gpu_policy: str) -> tuple:
    """Where a card sorts in ``DeviceUsageList`` (``Less``, one policy, no NUMA binding): binpack by score
    ascending, spread descending, equal scores by NUMA node ascending. Fit takes cards from the end."""
    return (score, numa) if gpu_policy == "binpack" else (-score, numa)


def node_order_key(score: float, node_policy: str) -> float:
    """Where a node sorts in ``NodeScoreList`` (``Less``): binpack by score ascending, spread descending.
    The extender binds the last node: binpack the most used, spread the least used."""
    return score if node_policy == "binpack" else -score
