"""The ``stack`` section: the data plane (how GPUs are exposed and shared on a node: whole, MIG,
time-slicing, MPS, HAMi, DRA, KAI fractions) and the control plane (kube-scheduler, coscheduling,
Volcano, KAI; Kueue admission), with each project's configuration.

HAMi's chart values (:class:`~scheduler_core.hami.HamiConfig`) live beside the webhook rules that read
them, in :mod:`scheduler_core.hami`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from scheduler_core.hami import HamiConfig
from scheduler_core.units import DocumentModel, Duration


# -------------------------------------------------------------- data plane
class TimeSlicingConfig(DocumentModel):
    replicas: int = Field(4, ge=2, le=110, description="k8s-device-plugin: 'number of replicas must be >= 2' (§2.1); "
                                                     "at most 110, Kubernetes' pods per node")
    fail_requests_greater_than_one: bool = False
    rename_by_default: bool = False


class MpsConfig(DocumentModel):
    replicas: int = Field(4, ge=2, le=48, description="at most 48 MPS clients on CC >= 7.5 (§2.2)")
    active_thread_percentage: int | None = Field(
        None, ge=1, le=100,
        description="CUDA_MPS_ACTIVE_THREAD_PERCENTAGE per client (e.g. 60); default 100 / replicas (§2.2)")


class DeviceClassSpec(DocumentModel):
    """A DeviceClass (resource.k8s.io/v1) beside the NVIDIA driver's gpu.nvidia.com and mig.nvidia.com."""

    name: str = Field(pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
    selectors: list[str] = Field(min_length=1, description="CEL expressions (spec.selectors[].cel.expression) in the "
                                 "forms scheduler_core.dra reads; all must hold")

    @model_validator(mode="after")
    def _selectors(self) -> "DeviceClassSpec":
        from scheduler_core.dra import DraError, compile_selector
        for j, expr in enumerate(self.selectors):
            try:
                compile_selector(expr, f"selectors.{j}")
            except DraError as exc:
                raise ValueError(str(exc)) from None
        return self


class DraConfig(DocumentModel):
    """The DRA driver's side of a ``dra`` data plane: DeviceClasses the claims may name."""

    device_classes: list[DeviceClassSpec] = Field(default_factory=list)
    partitionable_devices: bool = Field(False, description="the NVIDIA driver's dynamic MIG (KEP 4815 partitionable "
                                        "devices): a MIG-capable GPU not MIG-enabled in the pool publishes itself and "
                                        "every MIG partition, sharing one counter set, so one allocated blocks the "
                                        "devices it overlaps (the whole GPU blocks all)")

    def classes(self) -> dict[str, tuple[str, ...]]:
        from scheduler_core.dra import NVIDIA_CLASSES
        return {**NVIDIA_CLASSES, **{c.name: tuple(c.selectors) for c in self.device_classes}}


class DataPlane(DocumentModel):
    """How GPUs are exposed, shared and isolated on a node (L4 / data plane)."""

    mechanism: Literal["whole", "mig", "time-slicing", "mps", "hami", "dra", "kai-fraction"] = "whole"
    mig_strategy: Literal["none", "single", "mixed"] | None = Field(
        None, description="k8s-device-plugin --mig-strategy (§1.5); default mixed for mechanism mig, else none")
    time_slicing: TimeSlicingConfig = Field(default_factory=TimeSlicingConfig)
    mps: MpsConfig = Field(default_factory=MpsConfig)
    hami: HamiConfig = Field(default_factory=HamiConfig)
    dra: DraConfig = Field(default_factory=DraConfig)

    @property
    def strategy(self) -> str:
        if self.mig_strategy is not None:
            return self.mig_strategy
        return "mixed" if self.mechanism in ("mig", "dra") else "none"


# ------------------------------------------------------------ control plane
class KubeSchedulerConfig(DocumentModel):
    scoring: Literal["LeastAllocated", "MostAllocated"] = Field(
        "LeastAllocated", description="NodeResourcesFit scoring strategy; LeastAllocated (spread) is kube-scheduler's default")
    preemption: bool = True
    workload_gang: bool = Field(
        False, description="the Workload API's gang (KEP-4671; scheduling.k8s.io/v1beta1 from Kubernetes 1.37 with the "
                           "GenericWorkload feature gate, which turns on the GangScheduling plugin): a training job's "
                           "pods form a PodGroup with a gang policy of minCount = min_available, bound all-or-nothing")


class CoschedulingConfig(DocumentModel):
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


class VolcanoQueue(DocumentModel):
    name: str
    weight: int = Field(1, ge=1, le=65535)
    capability: QueueResources | None = Field(
        None, description="hard cap per resource: nvidia.com/gpu, cpu (cores), memory (GiB); a number means GPUs")
    guarantee: QueueResources = Field(default_factory=dict, description="reserved resources (a number: GPUs)")
    deserved: QueueResources | None = Field(None, description="capacity plugin's deserved resources (a number: GPUs)")
    reclaimable: bool = True
    priority: int = 0
    parent: str | None = Field(None, description=(
        "spec.parent: the parent queue with enable_hierarchy (default the root queue, 'root'); a queue's "
        "capability inherits the dimensions it leaves out from its parent, and it is bounded by every ancestor"))

    @field_validator("capability", "guarantee", "deserved", mode="before")
    @classmethod
    def _gpus(cls, v: Any) -> Any:
        return _resource_list(v)


class VolcanoConfig(DocumentModel):
    # Helm chart default conf (§5): enqueue, allocate, backfill; preempt/reclaim must be added.
    actions: list[VolcanoAction] = Field(default_factory=lambda: ["enqueue", "allocate", "backfill"])
    plugins: list[VolcanoPlugin] = Field(default_factory=lambda: [
        "priority", "gang", "conformance", "overcommit", "drf", "predicates", "proportion", "nodeorder", "binpack"])
    queues: list[VolcanoQueue] = Field(default_factory=lambda: [VolcanoQueue(name="default")])
    overcommit_factor: float = Field(1.2, ge=1.0, description="overcommit plugin default 1.2 (§5)")
    enable_hierarchy: bool = Field(False, description=(
        "the capacity plugin's enableHierarchy: queues form a tree under the root queue 'root' (stated or "
        "implicit, unbounded unless it states a capability); jobs run in leaf queues only"))

    @model_validator(mode="after")
    def _exclusive(self) -> "VolcanoConfig":
        if "capacity" in self.plugins and "proportion" in self.plugins:
            raise ValueError("plugins: capacity replaces proportion and cannot run with it (§5)")
        if self.enable_hierarchy and "capacity" not in self.plugins:
            raise ValueError("enable_hierarchy is an option of the capacity plugin: add 'capacity' to plugins")
        return self


class KueueQuota(DocumentModel):
    nominal: float = Field(ge=0)
    borrowing_limit: float | None = Field(None, ge=0)
    lending_limit: float | None = Field(None, ge=0)

    @property
    def ceiling(self) -> float:
        """The most a ClusterQueue in a cohort may use: nominal + borrowingLimit (no limit: unbounded)."""
        return self.nominal + (self.borrowing_limit if self.borrowing_limit is not None else float("inf"))


def _quota(v: Any) -> Any:
    return {"nominal": v} if isinstance(v, (int, float)) and not isinstance(v, bool) else v


class KueueFlavorQuotas(DocumentModel):
    name: str = Field(description="ResourceFlavor name")
    node_groups: list[str] | None = Field(None, description="nodes the flavor's nodeLabels select (default: all)")
    quotas: dict[str, Annotated[KueueQuota, Field()]] = Field(
        description="resource name -> quota, e.g. nvidia.com/gpu: {nominal: 16, borrowing_limit: 8}")

    @field_validator("quotas", mode="before")
    @classmethod
    def _short(cls, v: Any) -> Any:
        return {k: _quota(x) for k, x in v.items()} if isinstance(v, dict) else v


class KueuePreemption(DocumentModel):
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


_FUNGIBILITY_ALIASES = {"Borrow": "MayStopSearch", "Preempt": "MayStopSearch"}  # v1beta1 names


class KueueFlavorFungibility(DocumentModel):
    """spec.flavorFungibility (apis/kueue/v1beta2/clusterqueue_types.go, v0.19): whether flavor assignment
    walks on to the next flavor of a resource group when the current one fits only by borrowing or only
    by preempting.  v1beta1's ``Borrow`` and ``Preempt`` read as ``MayStopSearch``."""

    when_can_borrow: Literal["MayStopSearch", "TryNextFlavor"] = Field(
        "MayStopSearch", description="MayStopSearch (default): a flavor that fits by borrowing ends the search")
    when_can_preempt: Literal["MayStopSearch", "TryNextFlavor"] = Field(
        "TryNextFlavor", description="TryNextFlavor (default): a flavor that needs preemption is passed over "
                                     "for a later one that fits")

    @field_validator("when_can_borrow", "when_can_preempt", mode="before")
    @classmethod
    def _v1beta1(cls, v: Any) -> Any:
        return _FUNGIBILITY_ALIASES.get(v, v)


class ClusterQueue(DocumentModel):
    name: str
    cohort: str | None = None
    queueing_strategy: Literal["StrictFIFO", "BestEffortFIFO"] = "BestEffortFIFO"
    flavors: list[KueueFlavorQuotas] = Field(min_length=1, description=(
        "in resource-group order: flavors covering overlapping resources form one group, disjoint ones "
        "their own (scheduler_core.scenario.stack.resource_groups)"))
    preemption: KueuePreemption = Field(default_factory=KueuePreemption)
    flavor_fungibility: KueueFlavorFungibility = Field(default_factory=KueueFlavorFungibility)
    fair_sharing_weight: float = Field(1.0, ge=0)


def resource_groups(flavors) -> list[tuple[list[str], list]]:
    """(covered resources, flavors) per Kueue resource group. Flavors whose covered resources are
    disjoint from every other set are their own groups (as an imported ClusterQueue had them: a
    resource sits in one group only); overlapping sets share one group, missing entries at 0."""
    sets: list[tuple[set[str], list[str], list]] = []
    for f in flavors:
        names = list(f.quotas)
        match = [g for g in sets if g[0] & set(names)]
        if not match:
            sets.append((set(names), names, [f]))
            continue
        keep = match[0]
        for other in match[1:]:  # a flavor that bridges two groups merges them
            keep[0].update(other[0])
            keep[1].extend(r for r in other[1] if r not in keep[1])
            keep[2].extend(other[2])
            sets.remove(other)
        keep[0].update(names)
        keep[1].extend(r for r in names if r not in keep[1])
        keep[2].append(f)
    return [(covered, group) for _set, covered, group in sets]


class KueueCohort(DocumentModel):
    """A Cohort object (kueue.x-k8s.io Cohort, v0.19, hierarchical cohorts): ClusterQueues name it in
    ``cohort`` and Cohorts in ``parent_name``; a Cohort named but not stated exists with no quota.  Its own
    quota (``flavors``, as a ClusterQueue states them) is lent to its subtree; ``lending_limit`` caps what
    it lends upward and ``borrowing_limit`` what it takes from its parent (pkg/cache/scheduler
    resource_node.go)."""

    name: str
    parent_name: str | None = Field(None, description="spec.parentName: the parent Cohort (none: a root)")
    flavors: list[KueueFlavorQuotas] = Field(default_factory=list, description="spec.resourceGroups' flavors "
                                             "and quotas (nominal, borrowing_limit, lending_limit)")
    fair_sharing_weight: float = Field(1.0, ge=0, description="spec.fairSharing.weight")


class WaitForPodsReady(DocumentModel):
    enable: bool = False
    timeout: Duration = Field(1800.0, description="default 30 min (§4.5)")
    block_admission: bool = False
    backoff_base: Duration = Field(60.0, description="requeuingStrategy.backoffBaseSeconds 60 (§4.5)")
    backoff_max: Duration = Field(3600.0, description="backoffMaxSeconds 3600 (§4.5)")
    backoff_limit_count: int | None = Field(None, ge=0, description="unset = unlimited (§4.5)")
    recovery_timeout: Duration | None = Field(None, description=(
        "recoveryTimeout: how long a workload that was PodsReady keeps its quota after losing pods (a node "
        "failure) while they are recreated, before it is evicted (PodsReadyTimeout); unset = timeout (Kueue "
        "v0.19's default), 0 = never"))


class KueueConfig(DocumentModel):
    cluster_queues: list[ClusterQueue] = Field(min_length=1)
    local_queues: dict[str, str] = Field(default_factory=dict, description="LocalQueue -> ClusterQueue")
    cohorts: list[KueueCohort] = Field(default_factory=list, description=(
        "Cohort objects (hierarchical cohorts): quota, parent and fair-sharing weight of the cohorts the "
        "ClusterQueues name; unset: every cohort is a flat pool of its ClusterQueues' lendable quota"))
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


class KaiResourceQuota(DocumentModel):
    """One resource of a KAI queue (spec.resources.cpu / .memory); the defaults never bind."""

    quota: float = Field(-1, description="-1 unlimited (the queue deserves all it asks), 0 no guarantee")
    over_quota_weight: float = Field(1.0, ge=0)
    limit: float = Field(-1, description="-1 no limit")


class KaiQueue(DocumentModel):
    name: str
    parent: str | None = None
    quota: float = Field(0, description="GPUs; -1 unlimited, 0 no guarantee (§6.5)")
    over_quota_weight: float = Field(1.0, ge=0)
    limit: float = Field(-1, description="GPUs; -1 no limit (§6.5)")
    cpu: KaiResourceQuota = Field(default_factory=KaiResourceQuota, description="CPU cores (spec.resources.cpu)")
    memory: KaiResourceQuota = Field(default_factory=KaiResourceQuota,
                                     description="host memory in GiB (spec.resources.memory)")
    priority: int = 0


class KaiConfig(DocumentModel):
    queues: list[KaiQueue] = Field(min_length=1)
    gpu_sharing: bool = Field(False, description="global.gpuSharing: gpu-fraction requests (§6.5)")
    reclaim: bool = True
    preempt: bool = Field(False, description=(
        "KAI's preempt action: a pending job evicts lower-priority preemptible jobs (priority < 100) of its own "
        "queue. In KAI's default action list; off here so that scenarios written before it keep their results"))
    min_guaranteed_runtime: Duration = Field(0.0, description="jobs younger than this are not reclaimed")
    reclaimer_saturation_multiplier: float | None = Field(None, ge=1.0, description=(
        "the proportion plugin's relcaimerSaturationMultiplier (sic): with it, reclaim checks KAI's "
        "reclaimingQueuesRemainWithinBoundaries - a reclaiming queue (or ancestor) that ends above its fair share "
        "must end less saturated, times this factor, than each sibling it takes from. KAI's default is 1; unset "
        "here the check is skipped, so that scenarios written before it keep their results"))


class ControlPlane(DocumentModel):
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


class Stack(DocumentModel):
    name: str = "stack"
    data_plane: DataPlane = Field(default_factory=DataPlane)
    node_group_data_plane: dict[str, DataPlane] = Field(
        default_factory=dict, description="per node group override (e.g. form C: a MIG pool and a HAMi pool)")
    control_plane: ControlPlane = Field(default_factory=ControlPlane)

    def data_plane_for(self, group: str) -> DataPlane:
        return self.node_group_data_plane.get(group, self.data_plane)
