"""Data plane per pool (scenario node group): GPU Operator values, mig-parted config, device plugin
sharing config, HAMi values, the DRA driver's values and DeviceClasses, and the node labels that
select each pool's configuration."""

from __future__ import annotations

from dataclasses import dataclass, field

from placement.deploy import targets as t
from placement.deploy.bundle import ExportFile, to_yaml
from placement.plans.build import DEVICE_FILTER  # PCI ids per GPU model, one table
from scheduler_core.scenario import DataPlane, NodeGroup, Scenario

# scheduler_core GPU model -> GPU Feature Discovery's nvidia.com/gpu.product value.
GFD_PRODUCTS = {
    "A100-SXM4-40GB": "NVIDIA-A100-SXM4-40GB",
    "A100-SXM4-80GB": "NVIDIA-A100-SXM4-80GB",
    "A100-PCIE-40GB": "NVIDIA-A100-PCIE-40GB",
    "A100-PCIE-80GB": "NVIDIA-A100-80GB-PCIe",
    # GFD writes the NVML product name with spaces as dashes (H100/H200/B200/L40S names as nvidia-smi prints them)
    "H100-SXM5-80GB": "NVIDIA-H100-80GB-HBM3",
    "H200-SXM5-141GB": "NVIDIA-H200",
    "B200-SXM6-180GB": "NVIDIA-B200",
    "L40S-PCIE-48GB": "NVIDIA-L40S",
}
NVIDIA_PLUGIN_MECHANISMS = ("whole", "mig", "time-slicing", "mps", "kai-fraction")


class ExportError(ValueError):
    """The scenario asks for something the targeted upstream versions cannot express."""


@dataclass
class PoolPlan:
    """One scenario node group as the cluster will see it: its nodes and the labels they carry."""

    name: str
    count: int
    gpu: str
    gpus_per_node: int
    hardware: dict  # the rest of the node group (racks, interconnect, NUMA, NICs): facts about the nodes
    mechanism: str
    labels: dict[str, str] = field(default_factory=dict)
    mig_config: str | None = None
    device_plugin: str = ""  # the plan's device plugin where the mechanism alone does not name it (volcano-vgpu)

    def as_dict(self) -> dict:
        return {"pool": self.name, "nodes": self.count, "gpu": self.gpu, "gpusPerNode": self.gpus_per_node,
                "hardware": self.hardware, "mechanism": self.mechanism, "labels": self.labels,
                **({"devicePlugin": self.device_plugin} if self.device_plugin else {})}


def mig_parted_entries(group: NodeGroup, scenario: Scenario) -> list[dict]:
    """mig-parted entries for a group, with the instance counts of the layout the simulator builds."""
    layouts = group.mig_layouts(scenario.parameters.driver_slot_choice)
    entries: list[dict] = []
    by_layout: dict[tuple, list[int]] = {}
    for index in range(group.gpus_per_node):
        if index not in layouts:
            key: tuple = ("off",)
        else:
            layout = layouts[index]
            key = tuple((p.profile.name, p.start) for p in sorted(layout.placements, key=lambda p: p.start)) if layout else ()
        by_layout.setdefault(key, []).append(index)
    for key, devices in by_layout.items():
        device_sel: str | list[int] = "all" if len(devices) == group.gpus_per_node else devices
        if key == ("off",):
            entries.append({"devices": device_sel, "mig-enabled": False})
            continue
        counts: dict[str, int] = {}
        for name, _start in key:
            counts[name] = counts.get(name, 0) + 1
        entries.append({"devices": device_sel, "mig-enabled": True, "mig-devices": counts})
    return entries


def _mig_config_name(group: NodeGroup) -> str:
    only = group.mig[0] if len(group.mig) == 1 else None
    if only is not None and only.devices == "all" and isinstance(only.layout, str):
        return only.layout  # mig-parted's own label names (all-1g.10gb, all-balanced, ...)
    return f"atlas-{group.name}"


def device_plugin_config(dp: DataPlane) -> dict:
    """k8s-device-plugin config v1 (api/config/v1): flags.migStrategy and the sharing section."""
    config: dict = {"version": "v1", "flags": {"migStrategy": dp.strategy}}
    if dp.mechanism == "time-slicing":
        config["sharing"] = {"timeSlicing": {
            "renameByDefault": dp.time_slicing.rename_by_default,
            "failRequestsGreaterThanOne": dp.time_slicing.fail_requests_greater_than_one,
            "resources": [{"name": "nvidia.com/gpu", "replicas": dp.time_slicing.replicas}],
        }}
    elif dp.mechanism == "mps":
        config["sharing"] = {"mps": {"resources": [{"name": "nvidia.com/gpu", "replicas": dp.mps.replicas}]}}
    return config


def pool_plans(scenario: Scenario, vgpu_pools=frozenset()) -> list[PoolPlan]:
    """``vgpu_pools``: the pools whose HAMi-core sharing comes from Volcano's vGPU device plugin (the plan's
    volcano-vgpu-device-plugin), not from HAMi: their nodes get no HAMi label and the bundle no HAMi chart for them."""
    plans = []
    for group in scenario.pool.node_groups:
        dp = scenario.stack.data_plane_for(group.name)
        labels = {t.POOL_LABEL: group.name, t.GPU_PRODUCT: GFD_PRODUCTS[group.gpu]}
        hardware = group.model_dump(mode="json", exclude={"name", "count", "gpu", "gpus_per_node", "mig"}, exclude_defaults=True)
        plan = PoolPlan(group.name, group.count, group.gpu, group.gpus_per_node, hardware, dp.mechanism, labels)
        if group.mig:
            plan.mig_config = _mig_config_name(group)
            labels[t.MIG_CONFIG] = plan.mig_config
        if dp.mechanism in NVIDIA_PLUGIN_MECHANISMS:
            labels[t.DEVICE_PLUGIN_CONFIG] = group.name
        else:  # HAMi and the DRA driver replace the NVIDIA device plugin on these nodes
            labels[t.DEPLOY_DEVICE_PLUGIN] = "false"
        if group.name in vgpu_pools:
            plan.device_plugin = t.VOLCANO_VGPU.project
            labels[t.VOLCANO_VGPU_NODE] = "on"  # what its DaemonSet is patched to select beside other GPU pools
        elif dp.mechanism == "hami":
            labels[t.HAMI_NODE] = "on"
        plans.append(plan)
    return plans


def _configmap(name: str, namespace: str, data: dict[str, str]) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}, "data": data}


def data_plane_files(scenario: Scenario, plans: list[PoolPlan]) -> list[ExportFile]:
    groups = {g.name: g for g in scenario.pool.node_groups}
    planes = {p.name: scenario.stack.data_plane_for(p.name) for p in plans}
    files: list[ExportFile] = []

    # One config name may serve several GPU models (all-1g.10gb on A100-80GB and H100): one entry per
    # model, each with its PCI device-filter, as mig-parted's own config-default.yaml does.
    mig_configs: dict[str, list[dict]] = {}
    filtered: dict[str, set[str]] = {}
    for p in plans:
        if p.mig_config:
            group = groups[p.name]
            device_filter = DEVICE_FILTER.get(group.spec.mig_family or "")
            if device_filter in filtered.setdefault(p.mig_config, set()):
                continue
            filtered[p.mig_config].add(device_filter)
            entries = mig_parted_entries(group, scenario)
            if device_filter:
                entries = [{"device-filter": device_filter, **e} for e in entries]
            mig_configs.setdefault(p.mig_config, []).extend(entries)
    plugin_pools = [p for p in plans if p.mechanism in NVIDIA_PLUGIN_MECHANISMS]
    mig_strategies = [planes[p.name].strategy for p in plans if p.mig_config and p.name in planes]

    values: dict = {
        # Cluster default; each pool's device plugin config below sets its own migStrategy.
        "mig": {"strategy": next((s for s in mig_strategies if s != "none"), "single")},
        "devicePlugin": {"enabled": bool(plugin_pools)},
        "migManager": {"enabled": bool(mig_configs)},
    }
    if plugin_pools:
        values["devicePlugin"]["config"] = {"create": False, "name": t.DEVICE_PLUGIN_CONFIGMAP, "default": plugin_pools[0].name}
        data = {p.name: to_yaml(device_plugin_config(planes[p.name])) for p in plugin_pools}
        files.append(ExportFile("gpu-operator/device-plugin-config.yaml", "manifests",
                                objects=[_configmap(t.DEVICE_PLUGIN_CONFIGMAP, t.GPU_OPERATOR_NAMESPACE, data)],
                                note="one k8s-device-plugin config per pool, picked by the node label "
                                     f"{t.DEVICE_PLUGIN_CONFIG}=<pool>"))
    if mig_configs:
        values["migManager"]["config"] = {"create": False, "name": t.MIG_PARTED_CONFIGMAP, "default": "all-disabled"}
        document = {"version": "v1", "mig-configs": {"all-disabled": [{"devices": "all", "mig-enabled": False}], **mig_configs}}
        files.append(ExportFile("gpu-operator/mig-parted-config.yaml", "manifests",
                                objects=[_configmap(t.MIG_PARTED_CONFIGMAP, t.GPU_OPERATOR_NAMESPACE, {"config.yaml": to_yaml(document)})],
                                note=f"MIG layouts the simulation used; a node takes one with the label {t.MIG_CONFIG}=<name>"))
    files.insert(0, ExportFile("gpu-operator/values.yaml", "helm-values", values=values, chart="gpu-operator",
                               note="device plugin, MIG strategy and MIG manager"))

    hami = [planes[p.name].hami for p in plans if p.mechanism == "hami" and not p.device_plugin]
    if hami:
        if any(h != hami[0] for h in hami):
            raise ExportError("HAMi pools with different split counts or policies need per-node HAMi configs; "
                              "give every HAMi pool the same settings")
        h = hami[0]
        # The chart's device-config template writes defaultMemory 0, defaultCores 0, defaultGPUNum 1 and
        # memoryFactor 1; other values need a whole device-config.yaml, which the export does not write.
        for field, chart_value, key in (("default_memory", 0, "defaultMemory"), ("default_cores", 0, "defaultCores"),
                                        ("default_gpu_num", 1, "defaultGPUNum"), ("memory_factor", 1, "memoryFactor")):
            if getattr(h, field) != chart_value:
                raise ExportError(f"HAMi {key} {getattr(h, field)}: the chart fixes it at {chart_value} unless a whole "
                                  "device-config.yaml replaces its template; the export does not write one")
        files.append(ExportFile("hami/values.yaml", "helm-values", chart="hami", note="vGPU split, scaling and policies", values={
            "schedulerName": h.scheduler_name,
            "scheduler": {"defaultSchedulerPolicy": {"nodeSchedulerPolicy": h.node_scheduler_policy,
                                                     "gpuSchedulerPolicy": h.gpu_scheduler_policy}},
            "devicePlugin": {"deviceSplitCount": h.device_split_count,
                             "deviceMemoryScaling": h.device_memory_scaling,
                             "deviceCoreScaling": 1,
                             "migStrategy": "none",
                             "nvidiaNodeSelector": {t.HAMI_NODE: "on"}},
        }))
    if any(p.mechanism == "dra" for p in plans):
        dra_pools = [p.name for p in plans if p.mechanism == "dra"]
        selector = {t.POOL_LABEL: dra_pools[0]} if len(dra_pools) == 1 else {t.DEPLOY_DEVICE_PLUGIN: "false"}
        files.append(ExportFile("dra/values.yaml", "helm-values", chart="k8s-dra-driver-gpu", note="GPU devices only", values={
            "nvidiaDriverRoot": "/run/nvidia/driver",  # the GPU Operator's driver container root
            "resources": {"gpus": {"enabled": True}, "computeDomains": {"enabled": False}},
            "kubeletPlugin": {"nodeSelector": selector},
        }))
        files.append(ExportFile("dra/deviceclasses.yaml", "manifests", note="as the driver's chart renders them for resource.k8s.io/v1",
                                objects=[_device_class("gpu.nvidia.com", "gpu"), _device_class("mig.nvidia.com", "mig")]))
    return files


def _device_class(name: str, device_type: str) -> dict:
    spec = {"selectors": [{"cel": {"expression":
            f"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == '{device_type}'"}}]}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}
