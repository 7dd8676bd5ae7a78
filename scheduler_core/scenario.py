"""Scenario documents: pool, stack, tenants, workloads, events, horizon, seed.

A scenario is one pydantic model (:class:`Scenario`), read from YAML or JSON
with :func:`load_scenario` / :func:`parse_scenario`.  Shape errors come from
pydantic; cross-references (a workload's tenant, a tenant's queue, an
event's node, a MIG layout) are checked afterwards by
:func:`check_references`.  Both kinds surface as :class:`ScenarioError`
with field paths such as ``workloads.2.tenant`` so the CLI can print them
without a traceback.

Every number that is a modelling assumption lives in :class:`ModelParameters`
with a default and the domain-facts.md section that justifies it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, Literal, Union

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from scheduler_core import mig as migmod
from scheduler_core.hardware import GPU_SPECS, GpuModelName, Interconnect
from scheduler_core.units import Duration

__all__ = [
    "Scenario", "ScenarioError", "load_scenario", "parse_scenario", "check_references",
    "ModelParameters", "NodeGroup", "Pool", "Stack", "DataPlane", "ControlPlane",
    "TrainingWorkload", "InferenceWorkload", "Tenant", "ScenarioEvent",
]


class _Model(BaseModel):
    # Unknown keys are errors: a typo in a scenario must not silently change the run.
    model_config = ConfigDict(extra="forbid", frozen=False, populate_by_name=True)


# --------------------------------------------------------------------- pool
class MigSetting(_Model):
    """MIG mode and layout for some GPUs of every node in a group (mig-parted style)."""

    devices: Literal["all"] | list[Annotated[int, Field(ge=0)]] = Field(
        "all", description="'all' or GPU indices, as mig-parted's `devices`")
    layout: str | list[str] = Field(
        description="mig-parted label (all-1g.5gb, all-balanced, all-disabled, all-enabled), "
                    "a list of profile@start entries, or bare profiles created in that order")


class NodeGroup(_Model):
    name: str = Field(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
    count: int = Field(1, ge=1, le=4096)
    gpu: GpuModelName = "A100-SXM4-80GB"
    gpus_per_node: int = Field(8, ge=1, le=16)
    interconnect: Interconnect | None = Field(None, description="default: nvswitch for SXM4, pcie for PCIe cards")
    numa_nodes: int = Field(2, ge=1, le=8, description="GPUs are split evenly across NUMA nodes")
    racks: int = Field(1, ge=1, description="nodes are split into contiguous blocks over this many racks")
    rack: str | None = Field(
        None, pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
        description="rack name (groups naming the same rack share it; default: the group's name, its own rack)")
    nics: int | None = Field(
        None, ge=1, le=32, description="RDMA NICs per node (default one per GPU, DGX A100 class)")
    nic_gbps: float | None = Field(
        None, gt=0, description="line rate of each NIC in Gb/s (default: inter_node_bandwidth_gbs x 8)")
    nic_numa: Literal["spread"] | int = Field(
        "spread", description="NICs split evenly over the NUMA nodes ('spread') or all on this one socket")
    mig: list[MigSetting] = Field(default_factory=list)
    cpu: float | None = Field(None, gt=0, description="allocatable CPU cores per node (unset: CPU not modelled)")
    memory_gib: float | None = Field(None, gt=0, description="allocatable host memory per node in GiB "
                                                             "(unset: host memory not modelled)")

    def rack_of(self, i: int) -> str:
        """Rack name of node ``i``: contiguous blocks over ``racks``."""
        base = self.rack or self.name
        return base if self.racks == 1 else f"{base}-{i * self.racks // self.count}"

    @property
    def spec(self):
        return GPU_SPECS[self.gpu]

    @property
    def link(self) -> str:
        return self.interconnect or self.spec.default_interconnect

    def node_names(self) -> list[str]:
        return [f"{self.name}-{i}" for i in range(self.count)]

    def mig_layouts(self, driver_slot_choice: str = "lowest") -> dict[int, migmod.MigLayout | None]:
        """GPU index -> layout for GPUs with MIG mode on (None = MIG on, no instances)."""
        out: dict[int, migmod.MigLayout | None] = {}
        for setting in self.mig:
            idx = range(self.gpus_per_node) if setting.devices == "all" else setting.devices
            if isinstance(setting.layout, str) and setting.layout == "all-disabled":
                for i in idx:
                    out.pop(i, None)
                continue
            layout = migmod.layout_from_spec(self.spec.mig_family, setting.layout, driver_slot_choice)
            for i in idx:
                out[i] = layout if layout is not None and layout.placements else None
        return out

    @model_validator(mode="after")
    def _check_nics(self) -> "NodeGroup":
        if not isinstance(self.nic_numa, str) and not 0 <= self.nic_numa < self.numa_nodes:
            raise ValueError(f"nic_numa: socket {self.nic_numa} does not exist (numa_nodes {self.numa_nodes})")
        return self

    @model_validator(mode="after")
    def _check_mig(self) -> "NodeGroup":
        for n, setting in enumerate(self.mig):
            if self.spec.mig_family is None and setting.layout != "all-disabled":
                raise ValueError(f"mig.{n}.layout: {self.gpu} has no MIG mode; leave mig empty on this group")
            if setting.devices != "all":
                bad = [i for i in setting.devices if i >= self.gpus_per_node]
                if bad:
                    raise ValueError(f"mig.{n}.devices: GPU index {bad[0]} >= gpus_per_node {self.gpus_per_node}")
            try:
                if not (isinstance(setting.layout, str) and setting.layout in ("all-disabled", "all-enabled")):
                    migmod.layout_from_spec(self.spec.mig_family, setting.layout)
            except migmod.MigLayoutError as exc:
                raise ValueError(f"mig.{n}.layout: {exc}") from None
        return self


class Pool(_Model):
    node_groups: list[NodeGroup] = Field(min_length=1)

    @property
    def total_gpus(self) -> int:
        return sum(g.count * g.gpus_per_node for g in self.node_groups)


# -------------------------------------------------------------- data plane
class TimeSlicingConfig(_Model):
    replicas: int = Field(4, ge=2, le=110, description="k8s-device-plugin: 'number of replicas must be >= 2' (§2.1); "
                                                     "at most 110, Kubernetes' pods per node")
    fail_requests_greater_than_one: bool = False
    rename_by_default: bool = False


class MpsConfig(_Model):
    replicas: int = Field(4, ge=2, le=48, description="at most 48 MPS clients on CC >= 7.5 (§2.2)")
    active_thread_percentage: int | None = Field(
        None, ge=1, le=100,
        description="CUDA_MPS_ACTIVE_THREAD_PERCENTAGE per client (e.g. 60); default 100 / replicas (§2.2)")


class HamiConfig(_Model):
    device_split_count: int = Field(10, ge=1, le=110, description="vGPU slots per physical GPU (values.yaml default 10, "
                                                                 "§3); at most 110, Kubernetes' pods per node")
    device_memory_scaling: float = Field(1.0, ge=1.0, description="> 1 enables virtual memory overcommit (§3)")
    gpu_scheduler_policy: Literal["spread", "binpack"] = "spread"
    node_scheduler_policy: Literal["spread", "binpack"] = "binpack"
    # Webhook and scheduler defaults (charts/hami/templates/scheduler/device-configmap.yaml, values.yaml;
    # applied as pkg/device/nvidia/device.go MutateAdmission and GenerateResourceRequests do, see hami.py).
    default_gpu_num: int = Field(1, ge=0, description="defaultGPUNum: nvidia.com/gpu the webhook adds to a container "
                                                      "asking gpumem, gpumem-percentage or gpucores without it (0: none)")
    default_memory: int = Field(0, ge=0, description="defaultMemory MiB for a container stating neither gpumem nor "
                                                     "gpumem-percentage (0: the whole card)")
    default_cores: int = Field(0, ge=0, le=100, description="defaultCores: gpucores of a container not stating them")
    memory_factor: int = Field(1, ge=1, description="memoryFactor: gpumem is counted x this")
    scheduler_name: str = Field("hami-scheduler", description="schedulerName of HAMi's scheduler; its webhook "
                                                              "mutates only pods naming it (under kube-scheduler)")


class DataPlane(_Model):
    """How GPUs are exposed, shared and isolated on a node (L4 / data plane)."""

    mechanism: Literal["whole", "mig", "time-slicing", "mps", "hami", "dra", "kai-fraction"] = "whole"
    mig_strategy: Literal["none", "single", "mixed"] | None = Field(
        None, description="k8s-device-plugin --mig-strategy (§1.5); default mixed for mechanism mig, else none")
    time_slicing: TimeSlicingConfig = Field(default_factory=TimeSlicingConfig)
    mps: MpsConfig = Field(default_factory=MpsConfig)
    hami: HamiConfig = Field(default_factory=HamiConfig)

    @property
    def strategy(self) -> str:
        if self.mig_strategy is not None:
            return self.mig_strategy
        return "mixed" if self.mechanism in ("mig", "dra") else "none"


# ------------------------------------------------------------ control plane
class KubeSchedulerConfig(_Model):
    scoring: Literal["LeastAllocated", "MostAllocated"] = Field(
        "LeastAllocated", description="NodeResourcesFit scoring strategy; LeastAllocated (spread) is kube-scheduler's default")
    preemption: bool = True


class CoschedulingConfig(_Model):
    permit_waiting_timeout: Duration = Field(60.0, description="permitWaitingTimeSeconds default 60 (§6.4)")
    pod_group_backoff: Duration = Field(0.0, description="podGroupBackoffSeconds default 0 (§6.4)")


VolcanoAction = Literal["enqueue", "allocate", "backfill", "preempt", "reclaim"]
VolcanoPlugin = Literal["priority", "gang", "conformance", "overcommit", "drf", "predicates", "proportion",
                        "capacity", "nodeorder", "binpack", "network-topology-aware"]


QueueResource = Literal["nvidia.com/gpu", "cpu", "memory"]
# A Volcano queue's ResourceList: GPUs, CPU cores, host memory in GiB.  A bare number means GPUs.
QueueResources = dict[QueueResource, Annotated[float, Field(ge=0)]]


def _resource_list(v: Any) -> Any:
    return {"nvidia.com/gpu": v} if isinstance(v, (int, float)) and not isinstance(v, bool) else v


class VolcanoQueue(_Model):
    name: str
    weight: int = Field(1, ge=1, le=65535)
    capability: QueueResources | None = Field(
        None, description="hard cap per resource: nvidia.com/gpu, cpu (cores), memory (GiB); a number means GPUs")
    guarantee: QueueResources = Field(default_factory=dict, description="reserved resources (a number: GPUs)")
    deserved: QueueResources | None = Field(None, description="capacity plugin's deserved resources (a number: GPUs)")
    reclaimable: bool = True
    priority: int = 0

    @field_validator("capability", "guarantee", "deserved", mode="before")
    @classmethod
    def _gpus(cls, v: Any) -> Any:
        return _resource_list(v)


class VolcanoConfig(_Model):
    # Helm chart default conf (§5): enqueue, allocate, backfill; preempt/reclaim must be added.
    actions: list[VolcanoAction] = Field(default_factory=lambda: ["enqueue", "allocate", "backfill"])
    plugins: list[VolcanoPlugin] = Field(default_factory=lambda: [
        "priority", "gang", "conformance", "overcommit", "drf", "predicates", "proportion", "nodeorder", "binpack"])
    queues: list[VolcanoQueue] = Field(default_factory=lambda: [VolcanoQueue(name="default")])
    overcommit_factor: float = Field(1.2, ge=1.0, description="overcommit plugin default 1.2 (§5)")

    @model_validator(mode="after")
    def _exclusive(self) -> "VolcanoConfig":
        if "capacity" in self.plugins and "proportion" in self.plugins:
            raise ValueError("plugins: capacity replaces proportion and cannot run with it (§5)")
        return self


class KueueQuota(_Model):
    nominal: float = Field(ge=0)
    borrowing_limit: float | None = Field(None, ge=0)
    lending_limit: float | None = Field(None, ge=0)


def _quota(v: Any) -> Any:
    return {"nominal": v} if isinstance(v, (int, float)) and not isinstance(v, bool) else v


class KueueFlavorQuotas(_Model):
    name: str = Field(description="ResourceFlavor name")
    node_groups: list[str] | None = Field(None, description="nodes the flavor's nodeLabels select (default: all)")
    quotas: dict[str, Annotated[KueueQuota, Field()]] = Field(
        description="resource name -> quota, e.g. nvidia.com/gpu: {nominal: 16, borrowing_limit: 8}")

    @field_validator("quotas", mode="before")
    @classmethod
    def _short(cls, v: Any) -> Any:
        return {k: _quota(x) for k, x in v.items()} if isinstance(v, dict) else v


class KueuePreemption(_Model):
    within_cluster_queue: Literal["Never", "LowerPriority", "LowerOrNewerEqualPriority"] = "Never"
    reclaim_within_cohort: Literal["Never", "LowerPriority", "Any"] = "Never"
    borrow_within_cohort: Literal["Never", "LowerPriority"] = "Never"
    borrow_within_cohort_max_priority_threshold: int | None = Field(
        None, description="borrowWithinCohort.maxPriorityThreshold: only workloads at or below it are preempted "
                          "while borrowing (unset: any lower priority)")

    @model_validator(mode="after")
    def _needs_reclaim(self) -> "KueuePreemption":
        if self.borrow_within_cohort != "Never" and self.reclaim_within_cohort == "Never":
            raise ValueError("borrow_within_cohort requires reclaim_within_cohort != Never (§4.3)")
        return self


class ClusterQueue(_Model):
    name: str
    cohort: str | None = None
    queueing_strategy: Literal["StrictFIFO", "BestEffortFIFO"] = "BestEffortFIFO"
    flavors: list[KueueFlavorQuotas] = Field(min_length=1)
    preemption: KueuePreemption = Field(default_factory=KueuePreemption)
    fair_sharing_weight: float = Field(1.0, ge=0)


class WaitForPodsReady(_Model):
    enable: bool = False
    timeout: Duration = Field(1800.0, description="default 30 min (§4.5)")
    block_admission: bool = False
    backoff_base: Duration = Field(60.0, description="requeuingStrategy.backoffBaseSeconds 60 (§4.5)")
    backoff_max: Duration = Field(3600.0, description="backoffMaxSeconds 3600 (§4.5)")
    backoff_limit_count: int | None = Field(None, ge=0, description="unset = unlimited (§4.5)")


class KueueConfig(_Model):
    cluster_queues: list[ClusterQueue] = Field(min_length=1)
    local_queues: dict[str, str] = Field(default_factory=dict, description="LocalQueue -> ClusterQueue")
    wait_for_pods_ready: WaitForPodsReady = Field(default_factory=WaitForPodsReady)
    topology_aware_scheduling: bool = Field(False, description="TAS: every flavor names the topology (racks, then "
                                            "nodes); a workload is admitted only if every pod fits in concrete "
                                            "domains, as requested or, without a request, packed node by node (§4.5)")
    topology_name: str = Field("default", description="name of the Topology object the flavors name (Kueue's "
                                                      "messages quote it)")
    fair_sharing: bool = Field(False, description="fairSharing: order admission and choose preemption victims by "
                                                  "dominant resource share (§4.4)")
    fair_sharing_preemption_strategies: list[Literal["LessThanOrEqualToFinalShare", "LessThanInitialShare"]] = Field(
        default_factory=lambda: ["LessThanOrEqualToFinalShare", "LessThanInitialShare"],
        description="fairSharing.preemptionStrategies (Kueue's default: both, in this order)")

    @field_validator("fair_sharing_preemption_strategies")
    @classmethod
    def _strategies(cls, v: list[str]) -> list[str]:
        # Kueue's validation: one strategy, or LessThanOrEqualToFinalShare then LessThanInitialShare.
        if v not in (["LessThanOrEqualToFinalShare"], ["LessThanInitialShare"],
                     ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]):
            raise ValueError("fair_sharing_preemption_strategies: one strategy, or LessThanOrEqualToFinalShare "
                             "then LessThanInitialShare")
        return v


class KaiResourceQuota(_Model):
    """One resource of a KAI queue (spec.resources.cpu / .memory); the defaults never bind."""

    quota: float = Field(-1, description="-1 unlimited (the queue deserves all it asks), 0 no guarantee")
    over_quota_weight: float = Field(1.0, ge=0)
    limit: float = Field(-1, description="-1 no limit")


class KaiQueue(_Model):
    name: str
    parent: str | None = None
    quota: float = Field(0, description="GPUs; -1 unlimited, 0 no guarantee (§6.5)")
    over_quota_weight: float = Field(1.0, ge=0)
    limit: float = Field(-1, description="GPUs; -1 no limit (§6.5)")
    cpu: KaiResourceQuota = Field(default_factory=KaiResourceQuota, description="CPU cores (spec.resources.cpu)")
    memory: KaiResourceQuota = Field(default_factory=KaiResourceQuota,
                                     description="host memory in GiB (spec.resources.memory)")
    priority: int = 0


class KaiConfig(_Model):
    queues: list[KaiQueue] = Field(min_length=1)
    gpu_sharing: bool = Field(False, description="global.gpuSharing: gpu-fraction requests (§6.5)")
    reclaim: bool = True
    min_guaranteed_runtime: Duration = Field(0.0, description="jobs younger than this are not reclaimed")


class ControlPlane(_Model):
    """Who waits, who is admitted, where pods go (L1 admission, L2 policy)."""

    scheduler: Literal["kube-default", "coscheduling", "volcano", "kai"] = "kube-default"
    admission: Literal["none", "kueue"] = "none"
    respect_device_plugin_readiness: bool = Field(
        False, description="keep pods off nodes whose device plugin is not registered (a NoSchedule taint "
                           "set by an operator/validator while the plugin is down)")
    kube: KubeSchedulerConfig = Field(default_factory=KubeSchedulerConfig)
    coscheduling: CoschedulingConfig = Field(default_factory=CoschedulingConfig)
    volcano: VolcanoConfig = Field(default_factory=VolcanoConfig)
    kueue: KueueConfig | None = None
    kai: KaiConfig | None = None

    @model_validator(mode="after")
    def _sections(self) -> "ControlPlane":
        if self.admission == "kueue" and self.kueue is None:
            raise ValueError("admission 'kueue' needs a kueue section with cluster_queues")
        if self.scheduler == "kai" and self.kai is None:
            raise ValueError("scheduler 'kai' needs a kai section with queues")
        return self


class Stack(_Model):
    name: str = "stack"
    data_plane: DataPlane = Field(default_factory=DataPlane)
    node_group_data_plane: dict[str, DataPlane] = Field(
        default_factory=dict, description="per node group override (e.g. form C: a MIG pool and a HAMi pool)")
    control_plane: ControlPlane = Field(default_factory=ControlPlane)

    def data_plane_for(self, group: str) -> DataPlane:
        return self.node_group_data_plane.get(group, self.data_plane)


# ---------------------------------------------------------------- parameters
class ModelParameters(_Model):
    """Named modelling assumptions.  Each default cites domain-facts.md; [U] = no authoritative figure."""

    timeslice_switch_overhead: float = Field(
        0.31, ge=0, lt=1,
        description="[S §7.2, fitted] throughput lost to context switches when the other tenants are busy: "
                    "MIG 1.00 vs time-slicing 0.76 req/s per A100 (docs/simulator-model.md, calibration)")
    mps_contention_penalty: float = Field(
        0.43, ge=0,
        description="[S §7.2, fitted] MPS shared-L2/HBM contention: slowdown 1 + penalty x co-clients' bandwidth "
                    "load; MPS ~30% worse than MIG when both clients are memory-bound")
    mig_interference: float = Field(
        0.0, ge=0, description="[S §1.3] leak through power throttling between MIG instances; no figure, default 0")
    nvswitch_bandwidth_gbs: float = Field(300.0, gt=0, description="[S §7.1] NVLink3 600 GB/s total = 300 per direction")
    pcie_bandwidth_gbs: float = Field(32.0, gt=0, description="[S §7.1] PCIe Gen4 x16 32 GB/s per direction")
    cross_numa_factor: float = Field(0.5, gt=0, le=1, description="[U] PCIe peer traffic across sockets: bandwidth x factor")
    inter_node_bandwidth_gbs: float = Field(25.0, gt=0, description="[U] one 200 Gb/s NIC per GPU (DGX A100 class)")
    inter_rack_factor: float = Field(0.5, gt=0, le=1, description="[U] oversubscribed spine: bandwidth x factor across racks")
    mig_reconfigure_cost: Duration = Field(
        30.0, description="[U §1.4] node-level drain per re-partition; MISO's simulator default 30 s")
    driver_slot_choice: Literal["lowest", "highest"] = Field(
        "lowest", description="[U §1.1] free slot the driver picks for an instance created without placement")
    # Kubelet: "exponential backoff delay (10s, 20s, 40s, ...), capped at 300 seconds (5 minutes). Once a
    # container has executed for 10 minutes without any problems, the kubelet resets the restart backoff
    # timer" (kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#container-restarts).
    restart_backoff: Duration = Field(10.0, gt=0, description="[V] kubelet CrashLoopBackOff first delay (pod-lifecycle)")
    restart_backoff_max: Duration = Field(300.0, gt=0, description="[V] kubelet CrashLoopBackOff cap, 5 min (pod-lifecycle)")
    restart_backoff_reset: Duration = Field(
        600.0, gt=0, description="[V] kubelet resets the backoff after the container ran this long (pod-lifecycle)")
    # Job controller: "Failed Pods associated with the Job are recreated by the Job controller with an
    # exponential back-off delay (10s, 20s, 40s ...) capped at six minutes"
    # (kubernetes.io/docs/concepts/workloads/controllers/job/#pod-backoff-failure-policy).
    job_retry_backoff: Duration = Field(10.0, gt=0, description="[V] Job controller: first delay before recreating a failed pod")
    job_retry_backoff_max: Duration = Field(360.0, gt=0, description="[V] Job controller retry backoff cap, 6 min")
    controller_recreate_delay: Duration = Field(
        1.0, description="[U] ReplicaSet controller replaces a failed service pod after this delay (no backoff)")
    rendezvous_timeout: Duration = Field(
        900.0, description="[U] workers of an incomplete gang give up (torch elastic style) and the job restarts")
    checkpoint_interval: Duration = Field(1800.0, description="[U] training checkpoints every 30 min of work")
    termination_grace: Duration = Field(30.0, description="[U] terminationGracePeriodSeconds for preempted pods")
    max_restarts: int = Field(6, ge=0, description="[V] Job backoffLimit default 6: failures before a job is marked failed")
    timeslicing_oom_scope: Literal["gpu", "pod"] = Field(
        "gpu", description="[V §2.1] time-slicing shares one fault domain: 'if one workload crashes, they all do'")
    mps_oom_scope: Literal["gpu", "pod"] = Field(
        "pod", description="[V-code §2.2] per-client pinned memory limit: only the client over its limit fails")
    hami_oom_scope: Literal["gpu", "pod"] = Field("pod", description="[V §3] HAMi-core hard memory cap per container")
    kai_oom_scope: Literal["gpu", "pod"] = Field("gpu", description="[V §6.5] KAI fractions: no memory isolation")
    mps_fault_scope: Literal["gpu", "pod"] = Field(
        "gpu", description="[S §2.3] a fatal GPU exception reaches every MPS client on that GPU")
    latency_grid_per_decade: int = Field(40, ge=5, le=200, description="histogram resolution for latency quantiles")


# --------------------------------------------------------------- tenants
class Tenant(_Model):
    name: str
    weight: float = Field(1.0, gt=0)
    queue: str | None = Field(None, description="Volcano/KAI queue or Kueue LocalQueue (default: tenant name)")

    @property
    def queue_name(self) -> str:
        return self.queue or self.name


# ------------------------------------------------------------- workloads
class DurationDist(_Model):
    dist: Literal["exponential", "lognormal", "uniform", "choice"]
    mean: Duration | None = None
    cv: float = Field(1.0, gt=0)
    low: Duration | None = None
    high: Duration | None = None
    values: list[Duration] | None = None
    weights: list[float] | None = None

    @model_validator(mode="after")
    def _fields(self) -> "DurationDist":
        need = {"exponential": ["mean"], "lognormal": ["mean"], "uniform": ["low", "high"], "choice": ["values"]}
        for f in need[self.dist]:
            if getattr(self, f) is None:
                raise ValueError(f"{self.dist} distribution needs '{f}'")
        if self.weights is not None and (self.values is None or len(self.weights) != len(self.values)):
            raise ValueError("weights must match values")
        return self


class IntChoice(_Model):
    dist: Literal["choice"] = "choice"
    values: list[Annotated[int, Field(ge=1)]] = Field(min_length=1)
    weights: list[float] | None = None

    @model_validator(mode="after")
    def _w(self) -> "IntChoice":
        if self.weights is not None and len(self.weights) != len(self.values):
            raise ValueError("weights must match values")
        return self


DurationSpec = Union[Duration, DurationDist]
IntSpec = Union[Annotated[int, Field(ge=1)], IntChoice]


class Arrival(_Model):
    """When the `count` copies of a workload are submitted."""

    at: Duration = 0.0
    every: Duration | None = Field(None, description="fixed inter-arrival time from `at`")
    poisson_per_hour: float | None = Field(None, gt=0, description="Poisson arrivals from `at`")

    @model_validator(mode="after")
    def _one(self) -> "Arrival":
        if self.every is not None and self.poisson_per_hour is not None:
            raise ValueError("give either every or poisson_per_hour, not both")
        return self


class HamiResources(_Model):
    """A container's HAMi resource limits as written, before HAMi's webhook (null: not stated)."""

    gpu: int | None = Field(None, ge=1, description="nvidia.com/gpu: physical GPUs")
    gpumem: int | None = Field(None, ge=0, description="nvidia.com/gpumem, MiB per GPU")
    gpumem_percentage: int | None = Field(None, description="nvidia.com/gpumem-percentage of each card's memory "
                                                            "(the webhook refuses values outside 0..100)")
    gpucores: int | None = Field(None, ge=0, description="nvidia.com/gpucores, % of each card (above 100: 100)")


class DeviceUnit(_Model):
    """Explicit form of the per-pod GPU request, overriding the mechanism's default translation."""

    mig_profile: str | None = Field(None, description="nvidia.com/mig-<profile> (mixed strategy) or DRA MIG device")
    whole_gpu: bool = Field(False, description="ask for plain nvidia.com/gpu even on a MIG mixed-strategy node")
    gpucores: int | None = Field(None, ge=0, le=100, description="HAMi nvidia.com/gpucores (utilisation cap, %)")
    gpu_fraction: float | None = Field(None, gt=0, le=1, description="KAI gpu-fraction annotation")
    hami: HamiResources | None = Field(None, description="the container's HAMi resources as written; HAMi's "
                                         "webhook defaults fill the rest (replaces gpus_per_worker, "
                                         "memory_request_gib and gpucores on HAMi nodes)")


class Topology(_Model):
    required: Literal["node", "rack"] | None = Field(None, description="kueue podset-required-topology / Volcano hard network topology")
    preferred: Literal["node", "rack"] | None = None
    unconstrained: bool = Field(False, description="kueue podset-unconstrained-topology: any nodes, packed node by "
                                                   "node (what Kueue TAS also does without a request)")

    @model_validator(mode="after")
    def _one(self) -> "Topology":
        if sum((self.required is not None, self.preferred is not None, self.unconstrained)) > 1:
            raise ValueError("give one of required, preferred and unconstrained (Kueue refuses a pod set with two)")
        return self


class TaskRole(_Model):
    """One task of a Volcano Job (master, worker, ps...): its pods share a spec, and its minAvailable is
    the PodGroup's ``minTaskMember`` entry for the task."""

    name: str = Field(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
    replicas: int = Field(ge=1)
    min_available: int | None = Field(None, ge=0, description="minTaskMember of the task; default replicas")
    gpus_per_worker: int = Field(1, ge=1)
    cpu: float = Field(0.0, ge=0, description="CPU cores each pod of the task requests")
    host_memory_gib: float = Field(0.0, ge=0, description="host memory each pod of the task requests, GiB")
    node_group: str | None = Field(None, description="the task's node selector (default: the job's)")


class TrainingWorkload(_Model):
    """A gang training job (`training`) or an independent job (`batch`, default 1 worker)."""

    kind: Literal["training", "batch"] = "training"
    name: str
    tenant: str = "default"
    count: int = Field(1, ge=1)
    arrival: Arrival = Field(default_factory=Arrival)
    cpu: float = Field(0.0, ge=0, description="CPU cores each pod requests (counts on nodes with `cpu` and "
                                        "in Kueue quotas for `cpu`)")
    host_memory_gib: float = Field(0.0, ge=0, description="host memory each pod requests in GiB (Kueue "
                                                          "resource `memory`, in GiB)")
    priority: int = 0
    created_early: Duration = Field(0.0, ge=0, description="the Workload object exists this long before it "
                                    "arrives (Kueue compares creation times in LowerOrNewerEqualPriority)")
    workers: IntSpec = 1
    gpus_per_worker: IntSpec = 1
    duration: DurationSpec = Field(description="run time at ideal speed and ideal placement")
    memory_gib: float = Field(16.0, gt=0, description="GPU memory each worker uses")
    memory_request_gib: float | None = Field(None, gt=0, description="declared memory (HAMi gpumem); default memory_gib")
    compute_fraction: float = Field(1.0, gt=0, le=1, description="share of a full A100 the worker can use")
    memory_bandwidth_fraction: float = Field(
        0.0, ge=0, le=1,
        description="share of the GPU's HBM bandwidth the worker uses alone at full speed (0 = compute-bound)")
    topology_sensitivity: float = Field(
        0.0, ge=0, lt=1, description="communication share of step time on NVSwitch (all-reduce bound part)")
    min_available: int | None = Field(None, ge=0, description="gang minMember; default = workers (0: no gang "
                                      "minimum, every pod may be preempted); with roles, the PodGroup's "
                                      "minMember (default: the sum of the roles' min_available)")
    roles: list[TaskRole] = Field(default_factory=list, description="Volcano Job tasks in one PodGroup, each with "
                                  "its replicas, minTaskMember and per-pod request (replaces workers, "
                                  "gpus_per_worker, cpu and host_memory_gib)")
    preemptable: bool = Field(True, description="Volcano volcano.sh/preemptable: false keeps the job's pods out "
                              "of preempt and reclaim")
    min_count: int | None = Field(None, ge=1, description="Kueue partial admission (podSet minCount): when all "
                                  "workers do not fit the quota, admit as many as fit, at least this many")
    checkpoint_interval: Duration | None = None
    node_group: str | None = None
    unit: DeviceUnit = Field(default_factory=DeviceUnit)
    topology: Topology = Field(default_factory=Topology)


class KvCache(_Model):
    initial_gib: float = Field(1.0, ge=0)
    growth_gib_per_hour: float = Field(0.0, ge=0)
    max_gib: float = Field(8.0, ge=0)


class RateStep(_Model):
    at: Duration
    rps: float = Field(ge=0)


class ServiceTime(_Model):
    mean: Duration = Field(description="mean service time on a dedicated full A100, e.g. 50ms")
    cv: float = Field(0.5, ge=0, le=1, description="coefficient of variation (shifted-exponential model, <= 1)")


class Slo(_Model):
    p99: Duration = Field(description="latency objective at the 99th percentile")


class InferenceWorkload(_Model):
    kind: Literal["inference"] = "inference"
    name: str
    tenant: str = "default"
    cpu: float = Field(0.0, ge=0, description="CPU cores each pod requests (counts on nodes with `cpu` and "
                                        "in Kueue quotas for `cpu`)")
    host_memory_gib: float = Field(0.0, ge=0, description="host memory each pod requests in GiB (Kueue "
                                                          "resource `memory`, in GiB)")
    priority: int = 0
    replicas: int = Field(1, ge=1)
    start: Duration = 0.0
    stop: Duration | None = None
    gpus_per_replica: int = Field(1, ge=1)
    model_memory_gib: float = Field(gt=0)
    kv_cache: KvCache = Field(default_factory=KvCache)
    memory_request_gib: float | None = Field(None, gt=0, description="declared memory; default model + KV initial")
    compute_fraction: float = Field(0.5, gt=0, le=1)
    memory_bandwidth_fraction: float = Field(
        0.0, ge=0, le=1,
        description="share of the GPU's HBM bandwidth a replica uses alone at full speed (0 = compute-bound)")
    arrival_rate: float = Field(0.0, ge=0, description="requests per second to the whole service")
    rate_schedule: list[RateStep] = Field(default_factory=list, description="later rate changes")
    service_time: ServiceTime
    slo: Slo
    node_group: str | None = None
    unit: DeviceUnit = Field(default_factory=DeviceUnit)

    @property
    def declared_memory_gib(self) -> float:
        return self.memory_request_gib or (self.model_memory_gib + self.kv_cache.initial_gib)


Workload = Annotated[Union[TrainingWorkload, InferenceWorkload], Field(discriminator="kind")]


# ----------------------------------------------------------------- events
class ScenarioEvent(_Model):
    at: Duration
    kind: Literal["device_plugin_restart", "node_failure", "gpu_fault", "mig_reconfigure"]
    node: str
    duration: Duration = Field(0.0, description="plugin restart / node outage length")
    gpu: int | None = Field(None, ge=0)
    gpus: Literal["all"] | list[int] = "all"
    layout: str | list[str] | None = None
    scope: Literal["gpu", "instance"] = Field("gpu", description="gpu_fault on a MIG GPU: whole GPU or one instance")
    instance: int | None = Field(None, ge=0, description="start slot of the faulty instance (scope instance)")


class Sampling(_Model):
    max_points: int = Field(240, ge=2, le=5000, description="time-series length bound")
    record_workloads: int = Field(500, ge=0, description="per-workload records are kept up to this many workloads")


class Scenario(_Model):
    name: str
    description: str = ""
    seed: int = 0
    horizon: Duration
    pool: Pool
    stack: Stack = Field(default_factory=Stack)
    tenants: list[Tenant] = Field(default_factory=list)
    workloads: list[Workload] = Field(default_factory=list)
    events: list[ScenarioEvent] = Field(default_factory=list)
    parameters: ModelParameters = Field(default_factory=ModelParameters)
    sampling: Sampling = Field(default_factory=Sampling)

    @field_validator("horizon")
    @classmethod
    def _positive(cls, v: float) -> float:
        if v <= 0:
            raise ValueError("horizon must be > 0")
        return v

    def tenant_list(self) -> list[Tenant]:
        """Declared tenants plus any only named by workloads (weight 1)."""
        out = list(self.tenants)
        known = {t.name for t in out}
        for w in self.workloads:
            if w.tenant not in known:
                known.add(w.tenant)
                out.append(Tenant(name=w.tenant))
        return out


# --------------------------------------------------------------- checking
class ScenarioError(ValueError):
    """A scenario failed validation.  ``errors`` is a list of (field path, message)."""

    def __init__(self, errors: list[tuple[str, str]], source: str = "scenario") -> None:
        self.errors = errors
        self.source = source
        lines = "\n".join(f"  {loc or '(root)'}: {msg}" for loc, msg in errors)
        super().__init__(f"{source}: {len(errors)} error(s)\n{lines}")


def _loc(parts: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in parts)


def _pydantic_errors(exc: ValidationError) -> list[tuple[str, str]]:
    out = []
    for e in exc.errors(include_url=False):
        # Drop union-branch and validator tags from the path: users wrote `workloads.3.duration`.
        parts = tuple(p for p in e["loc"] if not (isinstance(p, str) and (
            "[" in p or p in ("training", "batch", "inference", "float", "int", "str", "list[str]",
                              "DurationDist", "IntChoice", "constrained-int"))))
        msg = e["msg"]
        if msg.startswith("Value error, "):
            msg = msg[len("Value error, "):]
        # Model validators report "sub.path: message"; fold the sub-path into the location.
        head, sep, rest = msg.partition(": ")
        if sep and head.replace(".", "").replace("_", "").isalnum() and "." in head and " " not in head:
            parts = parts + tuple(int(x) if x.isdigit() else x for x in head.split("."))
            msg = rest
        out.append((_loc(parts), msg))
    # Unions report one error per branch; keep the first per location for readability.
    seen: dict[str, str] = {}
    for loc, msg in out:
        seen.setdefault(loc, msg)
    return list(seen.items())


def _role_errors(i: int, w: "TrainingWorkload", scheduler: str, groups: dict) -> list[tuple[str, str]]:
    errs = []
    if scheduler != "volcano":
        errs.append((f"workloads.{i}.roles", "task roles (one PodGroup with minTaskMember) are modelled for the "
                                             "volcano scheduler only"))
    for field in ("workers", "gpus_per_worker", "cpu", "host_memory_gib"):
        if field in w.model_fields_set:
            errs.append((f"workloads.{i}.{field}", "set per role when the job has roles"))
    errs += _not_unique(f"workloads.{i}.roles", "role", (r.name for r in w.roles))
    for j, r in enumerate(w.roles):
        if r.min_available is not None and r.min_available > r.replicas:
            errs.append((f"workloads.{i}.roles.{j}.min_available", f"{r.min_available} > replicas {r.replicas}"))
        if r.node_group is not None and r.node_group not in groups:
            errs.append((f"workloads.{i}.roles.{j}.node_group", f"unknown node group {r.node_group!r}"))
    total = sum(r.replicas for r in w.roles)
    if w.min_available is not None and w.min_available > total:
        errs.append((f"workloads.{i}.min_available", f"{w.min_available} > the roles' {total} replicas"))
    return errs


def _not_unique(loc: str, what: str, names: Iterable[str]) -> list[tuple[str, str]]:
    """An error at ``loc`` naming every name given more than once (linear: imported clusters have 10^4
    workloads)."""
    dup = sorted(n for n, k in Counter(names).items() if k > 1)
    return [(loc, f"{what} names must be unique: {', '.join(dup)}")] if dup else []


def _parent_cycles(queues: list["KaiQueue"]) -> list[tuple[str, str]]:
    """An error at the parent field of the queue that closes each cycle of KAI queue parents, which
    leaves its queues without a root and so without a fair share."""
    parent = {q.name: q.parent for q in queues}
    index = {q.name: i for i, q in reversed(list(enumerate(queues)))}  # the first queue of a name
    errs, seen = [], set()
    for start in parent:
        path: list[str] = []
        name: str | None = start
        while name is not None and name in parent and name not in seen and name not in path:
            path.append(name)
            name = parent[name]
        if name in path:  # this walk closed a cycle
            cycle = path[path.index(name):]
            errs.append((f"stack.control_plane.kai.queues.{index[cycle[0]]}.parent",
                         "parent cycle: " + " -> ".join([*cycle, cycle[0]])))
        seen.update(path)
    return errs


def check_references(sc: Scenario) -> list[tuple[str, str]]:
    """Cross-field checks pydantic cannot express locally.  Returns (path, message) pairs."""
    errs: list[tuple[str, str]] = []
    groups = {g.name: g for g in sc.pool.node_groups}
    errs += _not_unique("pool.node_groups", "node group", (g.name for g in sc.pool.node_groups))
    nodes: dict[str, Any] = {}
    for g in sc.pool.node_groups:
        for n in g.node_names():
            nodes[n] = g
    stack = sc.stack
    for name in stack.node_group_data_plane:
        if name not in groups:
            errs.append((f"stack.node_group_data_plane.{name}", f"unknown node group {name!r}"))
    # Data plane vs MIG hardware.
    for gi, g in enumerate(sc.pool.node_groups):
        dp = stack.data_plane_for(g.name)
        try:
            layouts = g.mig_layouts(sc.parameters.driver_slot_choice)
        except migmod.MigLayoutError as exc:  # pragma: no cover - caught by NodeGroup validator
            errs.append((f"pool.node_groups.{gi}.mig", str(exc)))
            continue
        if layouts and dp.mechanism == "mps":
            errs.append((f"pool.node_groups.{gi}.mig", "MPS is not supported on MIG-enabled devices (§2.2)"))
        if layouts and dp.mechanism in ("hami", "kai-fraction"):
            errs.append((f"pool.node_groups.{gi}.mig",
                         f"{dp.mechanism} on MIG-enabled GPUs (HAMi dynamic-MIG mode) is not modelled; use mechanism mig"))
        if dp.mechanism == "mig" and not layouts:
            errs.append((f"pool.node_groups.{gi}.mig", "mechanism 'mig' needs MIG enabled on some GPUs of this group"))
    uses_fractions = stack.data_plane.mechanism == "kai-fraction" or any(
        d.mechanism == "kai-fraction" for d in stack.node_group_data_plane.values())
    if uses_fractions and not (stack.control_plane.scheduler == "kai" and stack.control_plane.kai is not None
                               and stack.control_plane.kai.gpu_sharing):
        errs.append(("stack.data_plane.mechanism", "kai-fraction needs scheduler 'kai' with kai.gpu_sharing: true "
                                                   "(fractions are KAI scheduler accounting, §6.5)"))
    tenants = {t.name for t in sc.tenant_list()}
    errs += _not_unique("tenants", "tenant", (t.name for t in sc.tenants))
    errs += _not_unique("workloads", "workload", (w.name for w in sc.workloads))
    cp = stack.control_plane
    # Queues a tenant may name, per policy.
    queue_sets: list[tuple[str, set[str]]] = []
    if cp.admission == "kueue" and cp.kueue is not None:
        cqs = {q.name for q in cp.kueue.cluster_queues}
        errs += _not_unique("stack.control_plane.kueue.cluster_queues", "ClusterQueue",
                            (q.name for q in cp.kueue.cluster_queues))
        for lq, cq in cp.kueue.local_queues.items():
            if cq not in cqs:
                errs.append((f"stack.control_plane.kueue.local_queues.{lq}", f"unknown ClusterQueue {cq!r}"))
        queue_sets.append(("Kueue LocalQueue or ClusterQueue", set(cp.kueue.local_queues) | cqs))
        for i, cq in enumerate(cp.kueue.cluster_queues):
            for j, fl in enumerate(cq.flavors):
                for ng in fl.node_groups or []:
                    if ng not in groups:
                        errs.append((f"stack.control_plane.kueue.cluster_queues.{i}.flavors.{j}.node_groups",
                                     f"unknown node group {ng!r}"))
    if cp.scheduler == "volcano":
        errs += _not_unique("stack.control_plane.volcano.queues", "Volcano queue", (q.name for q in cp.volcano.queues))
        queue_sets.append(("Volcano queue", {q.name for q in cp.volcano.queues}))
    if cp.scheduler == "kai" and cp.kai is not None:
        parents = {q.parent for q in cp.kai.queues if q.parent}
        allq = {q.name for q in cp.kai.queues}
        errs += _not_unique("stack.control_plane.kai.queues", "KAI queue", (q.name for q in cp.kai.queues))
        for i, q in enumerate(cp.kai.queues):
            if q.parent and q.parent not in allq:
                errs.append((f"stack.control_plane.kai.queues.{i}.parent", f"unknown queue {q.parent!r}"))
        errs += _parent_cycles(cp.kai.queues)
        queue_sets.append(("KAI leaf queue", allq - parents))
    for i, t in enumerate(sc.tenant_list()):
        for what, qs in queue_sets:
            if t.queue_name not in qs:
                loc = f"tenants.{i}.queue" if i < len(sc.tenants) else f"tenants ({t.name})"
                errs.append((loc, f"tenant {t.name!r} submits to {t.queue_name!r}, which is not a {what} "
                                  f"(known: {', '.join(sorted(qs)) or 'none'})"))
    for i, w in enumerate(sc.workloads):
        if w.tenant not in tenants:  # pragma: no cover - tenant_list adds it
            errs.append((f"workloads.{i}.tenant", f"unknown tenant {w.tenant!r}"))
        if w.node_group is not None and w.node_group not in groups:
            errs.append((f"workloads.{i}.node_group", f"unknown node group {w.node_group!r}"))
        if w.unit.mig_profile is not None:
            fams = {g.spec.mig_family for g in sc.pool.node_groups
                    if w.node_group in (None, g.name) and g.spec.mig_family}
            if not any(w.unit.mig_profile in migmod.PROFILES[f] for f in fams):
                errs.append((f"workloads.{i}.unit.mig_profile",
                             f"{w.unit.mig_profile!r} is not a MIG profile of {', '.join(sorted(fams))}"))
        if w.unit.hami is not None:
            errs.extend(_check_hami_unit(sc, i, w))
        if isinstance(w, TrainingWorkload) and w.roles:
            errs += _role_errors(i, w, cp.scheduler, groups)
        elif isinstance(w, TrainingWorkload):
            wk = w.workers if isinstance(w.workers, int) else max(w.workers.values)
            if w.min_available is not None and w.min_available > wk:
                errs.append((f"workloads.{i}.min_available", f"{w.min_available} > workers {wk}"))
        if isinstance(w, InferenceWorkload) and w.stop is not None and w.stop <= w.start:
            errs.append((f"workloads.{i}.stop", "stop must be after start"))
    for i, ev in enumerate(sc.events):
        if ev.node not in nodes:
            errs.append((f"events.{i}.node", f"unknown node {ev.node!r} (nodes are <group>-<index>, e.g. "
                                             f"{next(iter(nodes))})"))
            continue
        g = nodes[ev.node]
        if ev.gpu is not None and ev.gpu >= g.gpus_per_node:
            errs.append((f"events.{i}.gpu", f"GPU {ev.gpu} >= gpus_per_node {g.gpus_per_node}"))
        if ev.kind == "gpu_fault" and ev.gpu is None:
            errs.append((f"events.{i}.gpu", "gpu_fault needs a gpu index"))
        if ev.kind in ("device_plugin_restart", "node_failure") and ev.duration <= 0:
            errs.append((f"events.{i}.duration", f"{ev.kind} needs a duration > 0"))
        if ev.kind == "mig_reconfigure":
            if ev.layout is None:
                errs.append((f"events.{i}.layout", "mig_reconfigure needs a layout"))
            else:
                try:
                    if not (isinstance(ev.layout, str) and ev.layout in ("all-disabled", "all-enabled")):
                        migmod.layout_from_spec(g.spec.mig_family, ev.layout, sc.parameters.driver_slot_choice)
                except migmod.MigLayoutError as exc:
                    errs.append((f"events.{i}.layout", str(exc)))
            if ev.gpus != "all" and any(x >= g.gpus_per_node for x in ev.gpus):
                errs.append((f"events.{i}.gpus", f"GPU index >= gpus_per_node {g.gpus_per_node}"))
        if ev.at > sc.horizon:
            errs.append((f"events.{i}.at", "event after the horizon"))
    return errs


def _check_hami_unit(sc: Scenario, i: int, w: Any) -> list[tuple[str, str]]:
    """``unit.hami`` states the container as written: HAMi's webhook must accept it and leave it
    asking for GPUs (hami.py); the other ways to state GPUs, memory and cores must stay unset."""
    from scheduler_core import hami as hamimod

    errs = []
    loc = f"workloads.{i}.unit"
    count_field = "gpus_per_worker" if isinstance(w, TrainingWorkload) else "gpus_per_replica"
    for f, stated in ((count_field, getattr(w, count_field) != 1), ("memory_request_gib", w.memory_request_gib),
                      ("unit.gpucores", w.unit.gpucores is not None)):
        if stated:
            errs.append((f"{loc}.hami", f"{f} and unit.hami both state the request; give it in unit.hami"))
    dp = sc.stack.data_plane_for(w.node_group) if w.node_group else sc.stack.data_plane
    if dp.mechanism != "hami":
        return errs
    h = w.unit.hami
    limits = hamimod.HamiLimits(h.gpu, h.gpumem, h.gpumem_percentage, h.gpucores)
    if not limits.states_any():
        errs.append((f"{loc}.hami", "the container states no HAMi resource; HAMi leaves it alone"))
        return errs
    scheduler = sc.stack.control_plane.scheduler
    pod_scheduler = hamimod.pod_scheduler(scheduler, dp.hami)
    webhook = hamimod.webhook_applies(pod_scheduler, dp.hami)
    if webhook and (msg := hamimod.percentage_error(limits, w.name)):
        errs.append((f"{loc}.hami.gpumem_percentage", f"HAMi's webhook refuses the pod: {msg}"))
    elif hamimod.admitted_request(limits, dp.hami, scheduler) is None:
        why = ("defaultGPUNum is 0, so HAMi's webhook adds none" if webhook else
               f"HAMi's webhook leaves pods of {pod_scheduler!r} alone (pod already has different "
               "scheduler assigned)")
        errs.append((f"{loc}.hami.gpu", f"the container asks no nvidia.com/gpu: {why}; state unit.hami.gpu"))
    return errs


def parse_scenario(data: Any, source: str = "scenario") -> Scenario:
    """Validate a decoded document (dict) or pass a :class:`Scenario` through re-checked."""
    if isinstance(data, Scenario):
        sc = data
    else:
        if not isinstance(data, dict):
            raise ScenarioError([("", "a scenario must be a mapping (YAML/JSON object)")], source)
        try:
            sc = Scenario.model_validate(data)
        except ValidationError as exc:
            raise ScenarioError(_pydantic_errors(exc), source) from None
    from scheduler_core.limits import check_size

    # Size first: the reference checks enumerate every node, which is itself the cost to avoid.
    errs = check_size(sc) or check_references(sc)
    if errs:
        raise ScenarioError(errs, source)
    return sc


def load_scenario(path: str | Path) -> Scenario:
    """Read a YAML or JSON scenario file.  Raises :class:`ScenarioError` (never a bare traceback)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError([("", f"cannot read {p}: {exc.strerror or exc}")], str(p)) from None
    try:
        data = json.loads(text) if p.suffix.lower() == ".json" else yaml.safe_load(text)
    except (yaml.YAMLError, json.JSONDecodeError) as exc:
        raise ScenarioError([("", f"not valid {'JSON' if p.suffix.lower() == '.json' else 'YAML'}: {exc}")], str(p)) from None
    return parse_scenario(data, str(p))
