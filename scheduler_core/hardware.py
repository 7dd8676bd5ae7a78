"""A100 models and links (domain-facts.md §7.1).

Only what the simulator uses: memory, SMs, memory bandwidth, the GPU-to-GPU
link of the form factor and the MIG family for geometry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

GpuModelName = Literal["A100-SXM4-40GB", "A100-SXM4-80GB", "A100-PCIE-40GB", "A100-PCIE-80GB"]
Interconnect = Literal["nvswitch", "pcie"]


@dataclass(frozen=True)
class GpuSpec:
    name: str
    memory_mib: int
    sms: int
    memory_bandwidth_gbs: float
    form_factor: Literal["sxm4", "pcie"]
    mig_family: str

    @property
    def default_interconnect(self) -> Interconnect:
        # SXM4 boards sit behind NVSwitch in DGX/HGX A100 (6 NVSwitches, §7.1);
        # PCIe cards talk over PCIe Gen4 x16 unless an NVLink bridge is fitted.
        return "nvswitch" if self.form_factor == "sxm4" else "pcie"


# 40 GB = 40960 MiB nominal; the MIG mock's 7g.40gb has 40192 MiB usable (§1.1).
GPU_SPECS: dict[str, GpuSpec] = {
    "A100-SXM4-40GB": GpuSpec("A100-SXM4-40GB", 40960, 108, 1555.0, "sxm4", "a100-40gb"),
    "A100-SXM4-80GB": GpuSpec("A100-SXM4-80GB", 81920, 108, 2039.0, "sxm4", "a100-80gb"),
    "A100-PCIE-40GB": GpuSpec("A100-PCIE-40GB", 40960, 108, 1555.0, "pcie", "a100-40gb"),
    "A100-PCIE-80GB": GpuSpec("A100-PCIE-80GB", 81920, 108, 1935.0, "pcie", "a100-80gb"),
}

MIB_PER_GIB = 1024.0
