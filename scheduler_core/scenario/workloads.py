"""The ``tenants`` and ``workloads`` sections: who submits, and the training, batch and inference
workloads they submit (sizes, arrivals, durations, device units, topology, Volcano task roles).

These are the document's specs; :mod:`scheduler_core.workloads` expands them into the runtime
workloads and pods the simulation schedules.
"""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import Field, model_validator

from scheduler_core.units import DocumentModel, Duration


# --------------------------------------------------------------- tenants
class Tenant(DocumentModel):
    name: str
    weight: float = Field(1.0, gt=0)
    queue: str | None = Field(None, description="Volcano/KAI queue or Kueue LocalQueue (default: tenant name)")

    @property
    def queue_name(self) -> str:
        return self.queue or self.name


# ------------------------------------------------------------- workloads
class DurationDist(DocumentModel):
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


class IntChoice(DocumentModel):
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
# GPUs per pod: 0 is a pod without a GPU (with no cpu and host memory either, a BestEffort pod)
GpuCountSpec = Union[Annotated[int, Field(ge=0)], IntChoice]


class Arrival(DocumentModel):
    """When the `count` copies of a workload are submitted."""

    at: Duration = 0.0
    every: Duration | None = Field(None, description="fixed inter-arrival time from `at`")
    poisson_per_hour: float | None = Field(None, gt=0, description="Poisson arrivals from `at`")

    @model_validator(mode="after")
    def _one(self) -> "Arrival":
        if self.every is not None and self.poisson_per_hour is not None:
            raise ValueError("give either every or poisson_per_hour, not both")
        return self


class HamiResources(DocumentModel):
    """A container's HAMi resource limits as written, before HAMi's webhook (null: not stated)."""

    gpu: int | None = Field(None, ge=1, description="nvidia.com/gpu: physical GPUs")
    gpumem: int | None = Field(None, ge=0, description="nvidia.com/gpumem, MiB per GPU")
    gpumem_percentage: int | None = Field(None, description="nvidia.com/gpumem-percentage of each card's memory "
                                                            "(the webhook refuses values outside 0..100)")
    gpucores: int | None = Field(None, ge=0, description="nvidia.com/gpucores, % of each card (above 100: 100)")


class DraClaimSpec(DocumentModel):
    """The pod's ResourceClaim (resource.k8s.io/v1, one request): per pod from a ResourceClaimTemplate, or one
    claim shared by every pod naming it in ``resource_claim_name``."""

    device_class: str = Field("gpu.nvidia.com", description="deviceClassName: gpu.nvidia.com (whole GPUs), "
                              "mig.nvidia.com (MIG devices) or a class of data_plane.dra.device_classes")
    selectors: list[str] = Field(default_factory=list, description="CEL selectors of the request (forms: "
                                 "scheduler_core.dra), e.g. device.attributes['gpu.nvidia.com'].productName == '...'")
    count: int | None = Field(None, ge=1, description="devices per claim (allocationMode ExactCount); default "
                              "the GPUs per pod")
    allocation_mode: Literal["ExactCount", "All"] = "ExactCount"
    resource_claim_name: str | None = Field(None, pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$",
                                            description="a ResourceClaim shared by every pod naming it: allocated "
                                            "once, its devices used by all its consumers")

    @model_validator(mode="after")
    def _selectors(self) -> "DraClaimSpec":
        from scheduler_core.dra import DraError, compile_selector
        for j, expr in enumerate(self.selectors):
            try:
                compile_selector(expr, f"selectors.{j}")
            except DraError as exc:
                raise ValueError(str(exc)) from None
        if self.allocation_mode == "All" and self.count is not None:
            raise ValueError("count: allocationMode All takes every matching device; leave count out")
        return self


class DeviceUnit(DocumentModel):
    """Explicit form of the per-pod GPU request, overriding the mechanism's default translation."""

    mig_profile: str | None = Field(None, description="nvidia.com/mig-<profile> (mixed strategy) or DRA MIG device")
    whole_gpu: bool = Field(False, description="ask for plain nvidia.com/gpu even on a MIG mixed-strategy node")
    gpucores: int | None = Field(None, ge=0, le=100, description="HAMi nvidia.com/gpucores (utilisation cap, %)")
    gpu_fraction: float | None = Field(None, gt=0, le=1, description="KAI gpu-fraction annotation")
    hami: HamiResources | None = Field(None, description="the container's HAMi resources as written; HAMi's "
                                         "webhook defaults fill the rest (replaces gpus_per_worker, "
                                         "memory_request_gib and gpucores on HAMi nodes)")
    dra: DraClaimSpec | None = Field(None, description="DRA: the pod's ResourceClaim (device class, selectors, "
                                     "count or All, shared claim name); replaces mig_profile and whole_gpu")
    annotations: dict[str, str] = Field(default_factory=dict, description="the pod's HAMi card filters: "
                                        "nvidia.com/use-gputype, nouse-gputype (card types, comma-separated, "
                                        "matched as case-insensitive substrings of 'NVIDIA <gpu>'), use-gpuuuid, "
                                        "nouse-gpuuuid (card ids '<node>/gpu<i>', comma-separated)")

    @model_validator(mode="after")
    def _annotations(self) -> "DeviceUnit":
        from scheduler_core.hami import CARD_FILTER_ANNOTATIONS
        for key in self.annotations:
            if key not in CARD_FILTER_ANNOTATIONS:
                raise ValueError(f"annotations: {key!r} is not modelled; give one of {', '.join(CARD_FILTER_ANNOTATIONS)}")
        return self


class Topology(DocumentModel):
    required: Literal["node", "rack"] | None = Field(None, description="kueue podset-required-topology / Volcano hard network topology")
    preferred: Literal["node", "rack"] | None = None
    unconstrained: bool = Field(False, description="kueue podset-unconstrained-topology: any nodes, packed node by "
                                                   "node (what Kueue TAS also does without a request)")

    @model_validator(mode="after")
    def _one(self) -> "Topology":
        if sum((self.required is not None, self.preferred is not None, self.unconstrained)) > 1:
            raise ValueError("give one of required, preferred and unconstrained (Kueue refuses a pod set with two)")
        return self


class TaskRole(DocumentModel):
    """One task of a Volcano Job (master, worker, ps...): its pods share a spec, and its minAvailable is
    the PodGroup's ``minTaskMember`` entry for the task."""

    name: str = Field(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
    replicas: int = Field(ge=1)
    min_available: int | None = Field(None, ge=0, description="minTaskMember of the task; default replicas")
    gpus_per_worker: int = Field(1, ge=1)
    cpu: float = Field(0.0, ge=0, description="CPU cores each pod of the task requests")
    host_memory_gib: float = Field(0.0, ge=0, description="host memory each pod of the task requests, GiB")
    node_group: str | None = Field(None, description="the task's node selector (default: the job's)")


class TrainingWorkload(DocumentModel):
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
    gpus_per_worker: GpuCountSpec = Field(1, description="GPUs each pod requests; 0: no GPU (no cpu and "
                                          "host_memory_gib either: a BestEffort pod, bounded by a node's max_pods)")
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


class KvCache(DocumentModel):
    initial_gib: float = Field(1.0, ge=0)
    growth_gib_per_hour: float = Field(0.0, ge=0)
    max_gib: float = Field(8.0, ge=0)


class RateStep(DocumentModel):
    at: Duration
    rps: float = Field(ge=0)


class ServiceTime(DocumentModel):
    mean: Duration = Field(description="mean service time on a dedicated full A100, e.g. 50ms")
    cv: float = Field(0.5, ge=0, le=1, description="coefficient of variation (shifted-exponential model, <= 1)")


class Slo(DocumentModel):
    p99: Duration = Field(description="latency objective at the 99th percentile")


class InferenceWorkload(DocumentModel):
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
