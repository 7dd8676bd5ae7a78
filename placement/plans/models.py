"""The plan: one ranked stack resolved into everything needed to simulate or deploy it.

Pure pydantic (no Django). Evidence (`placement.plans.scenario`) and export (`placement.deploy`)
render this object and nothing else; `digest` links a stack, its runs and its exports.
"""

from __future__ import annotations

import hashlib
import json

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class MigLayout(_Model):
    """The mig-parted entry for one GPU model: `config` is the nvidia.com/mig.config label value."""

    config: str = Field(description="mig-parted config name, e.g. all-2g.20gb")
    device_filter: str = Field(description="PCI device id of the GPU model, mig-parted's device-filter")
    devices: dict[str, int] = Field(description="MIG profile -> instances per GPU")
    profile_memory_mib: int = Field(description="Usable memory of the profile replicas get, in MiB")


class DataPlane(_Model):
    """How a node group's GPUs are cut and advertised."""

    mechanism: str = Field(description="whole, mig, time-slicing, mps, hami, dra or kai-fraction (simulator model)")
    project: str | None = Field(None, description="Catalog slug that provides it (None: plain device plugin).")
    mig: MigLayout | None = None
    time_slicing_replicas: int | None = Field(None, description="sharing.timeSlicing replicas per GPU")
    mps_replicas: int | None = Field(None, description="sharing.mps replicas per GPU")
    mps_memory_limit_mib: int | None = Field(None, description="MPS pinned-memory limit per client (card / replicas)")
    mps_thread_percentage: int | None = Field(None, description="MPS active thread percentage (100 / replicas)")
    fail_requests_greater_than_one: bool = Field(False, description="A container may ask at most 1 shared replica")
    hami_split_count: int | None = Field(None, description="HAMi deviceSplitCount (vGPUs per card)")
    device_classes: list[str] = Field(default_factory=list, description="DRA DeviceClasses the claims name")
    advertised: dict[str, float] = Field(description="Resource name -> amount one node advertises")


class NodeGroup(_Model):
    name: str
    pool: str = Field(description="The compose pool this group belongs to")
    gpu_model: str = Field(description="Compose name, e.g. A100-80GB")
    simulated_gpu: str = Field(description="scheduler_core hardware model name, e.g. A100-SXM4-80GB")
    gpus_per_node: int
    count: int = Field(description="Whole nodes")
    labels: dict[str, str] = Field(default_factory=dict)
    data_plane: DataPlane

    @property
    def gpus(self) -> int:
        return self.count * self.gpus_per_node


class PodRequest(_Model):
    """One pod's container requests: extended resources, claims, annotations."""

    resources: dict[str, float] = Field(description="Resource name -> quantity per pod (GPU resources, cpu, memory)")
    claim_device_class: str | None = Field(None, description="DRA: the DeviceClass its ResourceClaimTemplate names")
    claim_count: int = 0
    claim_selector: str | None = Field(None, description="DRA: the CEL selector of the claim")
    annotations: dict[str, str] = Field(default_factory=dict)


class PodGroupPlan(_Model):
    """A gang placed through a Kubernetes API the scheduler serves (the Workload API): the class's
    Workload has one pod-group template with a gang policy, each tenant's job is one PodGroup made from
    it, and the job's pods name that PodGroup."""

    api: str = Field(description="Catalog slug of the API, e.g. kubernetes-workload-api")
    api_version: str = Field(description="Group/version of its Workload and PodGroup, e.g. scheduling.k8s.io/v1beta1")
    min_count: dict[str, int] = Field(description="Tenant -> the gang's minCount: the job's replicas, or an elastic "
                                                  "class's minimum for that tenant")
    pod_reference: str = Field("spec.schedulingGroup.podGroupName", description="The pod field that names the PodGroup")


class WorkloadPlan(_Model):
    name: str = Field(description="The workload class")
    kind: str = Field(description="training, online_inference, batch_inference or interactive")
    node_group: str
    object_kind: str = Field(description="Kubernetes kind, e.g. JobSet, PyTorchJob, LeaderWorkerSet, Deployment, Job")
    api_version: str
    controller: str | None = Field(None, description="Workload-unit project that owns the kind (None: built-in)")
    replicas: int
    pods_per_replica: int
    gpus_per_replica: float
    gpu_memory_gib: float
    gang: bool
    pod: PodRequest
    scheduler_name: str = Field(description="schedulerName on the pod")
    scheduler: str = Field(description="simulator scheduler model: kube-default, volcano, kai, coscheduling")
    queues: dict[str, str] = Field(description="Tenant -> the queue its pods submit to")
    replicas_per_tenant: dict[str, int]
    unit: str = Field(description="Resource unit, e.g. mig_instance")
    unit_size: str = Field(description="What one replica gets, in words")
    # Elastic classes only; left out of dumps (and so of the digest) when unset.
    min_replicas: int | None = Field(None, exclude_if=lambda v: v is None,
                                     description="Elastic job: the fewest replicas it starts with; `replicas` is the most")
    # Gang classes whose gang the scheduler places through an API (kube-scheduler and the Workload API) only.
    pod_group: PodGroupPlan | None = Field(None, exclude_if=lambda v: v is None,
                                           description="The PodGroup each tenant's job of a gang class is placed as")

    def min_for(self, tenant: str) -> int | None:
        """An elastic class's minimum for one tenant's job: the class's minimum scaled to the tenant's
        share of its replicas, rounded up (at least 1, at most the tenant's replicas); None if not elastic."""
        n = self.replicas_per_tenant.get(tenant, 0)
        if self.min_replicas is None or self.min_replicas >= self.replicas or not n:
            return None
        return min(n, max(1, -(-self.min_replicas * n // self.replicas)))


class QueuePlan(_Model):
    name: str
    tenant: str
    workload: str = Field(description="The workload class(es) it admits, comma-separated when a team submits several")
    quota: dict[str, float] = Field(description="Resource name -> nominal quota: every resource the tenant's pods request")


class Component(_Model):
    project: str
    role: str
    settings: dict[str, str] = Field(default_factory=dict, description="Settings the plan relies on")


class Shortfall(_Model):
    pool: str
    resource: str = Field(description="gpus, gpu_memory or nodes")
    needed: float
    available: float
    reason: str


class Plan(_Model):
    stack: str = Field(description="Stack title")
    gpu_model: str
    admission: str = Field(description="Simulator admission model: kueue or none")
    scheduler: str = Field(description="Simulator scheduler model")
    node_groups: list[NodeGroup]
    workloads: list[WorkloadPlan]
    queues: list[QueuePlan]
    components: list[Component]
    assumptions: list[str] = Field(default_factory=list)
    shortfalls: list[Shortfall] = Field(default_factory=list, description="Where demand exceeds the pool, in numbers")

    @property
    def digest(self) -> str:
        """sha256 of the canonical JSON, first 16 hex digits: the plan's identity across stack, runs and exports."""
        body = json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(body.encode()).hexdigest()[:16]

    def node_group(self, name: str) -> NodeGroup:
        return next(g for g in self.node_groups if g.name == name)
