"""GPU models and links (domain-facts.md §7.1 for the A100; each other row names its source).

Only what the simulator and the plan use: memory, SMs, memory bandwidth, the GPU-to-GPU link of the
form factor, the MIG family for geometry (None: no MIG), a relative speed and NVLink bandwidth.

`relative_speed` is the card's dense BF16/FP16 tensor peak over the A100's 312 TFLOPS (datasheet
figures; a named parameter, not a measured speed-up). `memory_mib` is the whole card as the device
plugin and NVML report it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

GpuModelName = Literal[
    "A100-SXM4-40GB", "A100-SXM4-80GB", "A100-PCIE-40GB", "A100-PCIE-80GB",
    "H100-SXM5-80GB", "H200-SXM5-141GB", "B200-SXM6-180GB", "L40S-PCIE-48GB",
]
Interconnect = Literal["nvswitch", "pcie"]


class UnknownGpuModel(ValueError):
    """A GPU model the hardware model does not know; the message lists the known ones."""


@dataclass(frozen=True)
class GpuSpec:
    name: str
    memory_mib: int
    sms: int
    memory_bandwidth_gbs: float
    form_factor: Literal["sxm4", "sxm5", "sxm6", "pcie"]
    mig_family: str | None
    relative_speed: float = 1.0
    nvlink_gbs: float = 0.0  # per-GPU NVLink bandwidth (0: none, PCIe only)
    source: str = "domain-facts §7.1"

    @property
    def default_interconnect(self) -> Interconnect:
        # SXM boards sit behind NVSwitch in DGX/HGX systems (6 NVSwitches on DGX A100, §7.1);
        # PCIe cards talk over PCIe unless an NVLink bridge is fitted.
        return "pcie" if self.form_factor == "pcie" else "nvswitch"

    @property
    def mig_capable(self) -> bool:
        return self.mig_family is not None


_HOPPER = "NVIDIA H100/H200 datasheets (989 TFLOPS dense BF16, NVLink 4 900 GB/s); mig-parted issue #120 (H200 -lgip)"
# 40 GB = 40960 MiB nominal; the MIG mock's 7g.40gb has 40192 MiB usable (§1.1).
GPU_SPECS: dict[str, GpuSpec] = {
    "A100-SXM4-40GB": GpuSpec("A100-SXM4-40GB", 40960, 108, 1555.0, "sxm4", "a100-40gb", 1.0, 600.0),
    "A100-SXM4-80GB": GpuSpec("A100-SXM4-80GB", 81920, 108, 2039.0, "sxm4", "a100-80gb", 1.0, 600.0),
    "A100-PCIE-40GB": GpuSpec("A100-PCIE-40GB", 40960, 108, 1555.0, "pcie", "a100-40gb", 1.0, 0.0),
    "A100-PCIE-80GB": GpuSpec("A100-PCIE-80GB", 81920, 108, 1935.0, "pcie", "a100-80gb", 1.0, 0.0),
    "H100-SXM5-80GB": GpuSpec("H100-SXM5-80GB", 81559, 132, 3350.0, "sxm5", "h100-80gb", round(989 / 312, 2), 900.0,
                              "NVIDIA H100 datasheet (SXM5: 132 SMs, 3.35 TB/s, NVLink 4 900 GB/s); facts §1.2"),
    "H200-SXM5-141GB": GpuSpec("H200-SXM5-141GB", 143771, 132, 4800.0, "sxm5", "h200-141gb", round(989 / 312, 2), 900.0,
                               _HOPPER + "; 4.8 TB/s"),
    "B200-SXM6-180GB": GpuSpec("B200-SXM6-180GB", 183359, 148, 8000.0, "sxm6", "b200-180gb", round(2250 / 312, 2), 1800.0,
                               "NVIDIA DGX B200 datasheet (2.25 PFLOPS dense FP16 per GPU, 8 TB/s, NVLink 5 1.8 TB/s); "
                               "mig-parted PR #166 (-lgip)"),
    "L40S-PCIE-48GB": GpuSpec("L40S-PCIE-48GB", 46068, 142, 864.0, "pcie", None, round(362 / 312, 2), 0.0,
                              "NVIDIA L40S datasheet (142 SMs, 864 GB/s, 362 TFLOPS dense FP16, no NVLink, no MIG)"),
}

# The names a compose request uses (fixtures/rules/units.yaml `gpu_models`) -> the simulated card.
COMPOSE_MODELS: dict[str, str] = {
    "A100-40GB": "A100-SXM4-40GB",
    "A100-80GB": "A100-SXM4-80GB",
    "H100-80GB": "H100-SXM5-80GB",
    "H200": "H200-SXM5-141GB",
    "B200": "B200-SXM6-180GB",
    "L40S": "L40S-PCIE-48GB",
}


def gpu_spec(model: str) -> GpuSpec:
    """The spec of a GPU model by its simulator name or compose name; UnknownGpuModel lists the known ones."""
    key = model.strip()
    for name in (key, COMPOSE_MODELS.get(key, "")):
        if name in GPU_SPECS:
            return GPU_SPECS[name]
    lowered = {k.lower(): v for k, v in COMPOSE_MODELS.items()}
    if key.lower() in lowered:
        return GPU_SPECS[lowered[key.lower()]]
    known = ", ".join(list(COMPOSE_MODELS) + list(GPU_SPECS))
    raise UnknownGpuModel(f"unknown GPU model {model!r}; the hardware model knows: {known}")


MIB_PER_GIB = 1024.0
