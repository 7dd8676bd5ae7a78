"""The ``pool`` section: node groups of GPU servers (model, count, racks, NICs, MIG layouts, host CPU
and memory)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from scheduler_core import mig as migmod
from scheduler_core.hardware import GPU_SPECS, GpuModelName, Interconnect
from scheduler_core.units import DocumentModel


class MigSetting(DocumentModel):
    """MIG mode and layout for some GPUs of every node in a group (mig-parted style)."""

    devices: Literal["all"] | list[Annotated[int, Field(ge=0)]] = Field(
        "all", description="'all' or GPU indices, as mig-parted's `devices`")
    layout: str | list[str] = Field(
        description="mig-parted label (all-1g.5gb, all-balanced, all-disabled, all-enabled), "
                    "a list of profile@start entries, or bare profiles created in that order")


class NodeGroup(DocumentModel):
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
    max_pods: int | None = Field(None, ge=1, le=1000, description="kubelet maxPods: the pods a node holds, its "
                                 "allocatable `pods` (unset: pod count not modelled; the kubelet's default is 110)")

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


class Pool(DocumentModel):
    node_groups: list[NodeGroup] = Field(min_length=1)

    @property
    def total_gpus(self) -> int:
        return sum(g.count * g.gpus_per_node for g in self.node_groups)
