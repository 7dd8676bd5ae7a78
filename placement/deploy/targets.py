"""The upstream versions an export targets, and the label keys it relies on.

Each target names the release whose CRDs / chart values the tests validate the objects against
(../shared/schemas/<project>/<tag>/, see its README). Changing a version here without the matching
schema files there fails the validation tests.
"""

from __future__ import annotations

KUBERNETES_VERSION = "1.34"  # resource.k8s.io/v1 (DRA) is GA from 1.34

# project -> (tag, what the export uses from it)
UPSTREAM: dict[str, tuple[str, str]] = {
    "kubernetes": (KUBERNETES_VERSION, "core kinds: ConfigMap, Namespace, Job, Deployment, DeviceClass, ResourceClaimTemplate"),
    "gpu-operator": ("v26.7.0", "Helm values (device plugin, MIG strategy, MIG manager)"),
    "mig-parted": ("v0.15.0", "MIG manager config (version v1, mig-configs)"),
    "k8s-device-plugin": ("v0.20.0", "sharing config (time-slicing, MPS) deployed by the GPU Operator"),
    "hami": ("v2.10.0", "Helm values (split count, memory/core scaling, scheduler policy)"),
    "k8s-dra-driver-gpu": ("v0.4.0", "Helm values and the gpu.nvidia.com / mig.nvidia.com DeviceClasses"),
    "kueue": ("v0.19.2", "kueue.x-k8s.io/v1beta2 ResourceFlavor, ClusterQueue, Cohort, LocalQueue, WorkloadPriorityClass, Topology"),
    "volcano": ("v1.15.1", "scheduling.volcano.sh/v1beta1 Queue, batch.volcano.sh/v1alpha1 Job and the scheduler configuration"),
    "kai-scheduler": ("v0.13.0", "scheduling.run.ai/v2 Queue; Helm values global.gpuSharing (its values.yaml is not stored, so not key-checked)"),
    "kubeflow-trainer": ("v1.9.4", "kubeflow.org/v1 PyTorchJob"),
    "jobset": ("v0.12.0", "jobset.x-k8s.io/v1alpha2 JobSet"),
    "lws": ("v0.10.0", "leaderworkerset.x-k8s.io/v1 LeaderWorkerSet"),
    "kuberay": ("v1.7.0", "ray.io/v1 RayJob"),
}

# Labels GPU Feature Discovery / the GPU Operator put on (or read from) nodes.
GPU_PRODUCT = "nvidia.com/gpu.product"
GPU_COUNT = "nvidia.com/gpu.count"
MIG_CONFIG = "nvidia.com/mig.config"            # mig-manager applies the named mig-parted config
MIG_STRATEGY = "nvidia.com/mig.strategy"        # GFD: none | single | mixed
MIG_CAPABLE = "nvidia.com/mig.capable"
GPU_PRESENT = "nvidia.com/gpu.present"
DEVICE_PLUGIN_CONFIG = "nvidia.com/device-plugin.config"  # per-node key into the plugin's config map
DEPLOY_DEVICE_PLUGIN = "nvidia.com/gpu.deploy.device-plugin"  # GPU Operator: "false" keeps its plugin off
HAMI_NODE = "gpu"                                # HAMi device plugin's nodeSelector: gpu=on
# The Atlas's own node labels: which pool (scenario node group) and rack a node belongs to.
POOL_LABEL = "placement-atlas.io/pool"
RACK_LABEL = "placement-atlas.io/rack"
HOSTNAME_LABEL = "kubernetes.io/hostname"

GPU_OPERATOR_NAMESPACE = "gpu-operator"
MIG_PARTED_CONFIGMAP = "atlas-mig-parted-config"
DEVICE_PLUGIN_CONFIGMAP = "atlas-device-plugin-config"
EXPORT_CONFIGMAP = "atlas-export"
