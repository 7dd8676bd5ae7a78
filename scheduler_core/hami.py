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
