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
    "kai-scheduler": ("v0.13.0", ("scheduling.run.ai/v2 Queue; Helm values global.gpuSharing (v0.17.0 with binder.plugins.hamicore "
                                  "where the plan has the kai-resource-isolator: that chart is not stored, so not rendered here)")),
    "kai-resource-isolator": ("1.1.0-chart", "HAMi-core for KAI fractions: its chart as upstream installs it, default values"),
    "volcano-vgpu-device-plugin": ("v1.12.0", "the upstream manifest (no chart): volcano.sh/vgpu-number, vgpu-memory, vgpu-cores"),
    "kubeflow-trainer": ("v1.9.4", "kubeflow.org/v1 PyTorchJob"),
    "jobset": ("v0.12.0", "jobset.x-k8s.io/v1alpha2 JobSet"),
    "lws": ("v0.10.0", "leaderworkerset.x-k8s.io/v1 LeaderWorkerSet"),
    "kuberay": ("v1.7.0", "ray.io/v1 RayJob, RayService"),
    # No CRD of these is stored in ../shared: the fields were read from the tag's own API types, CRD and
    # samples (tests/deploy/schemas.py names the files), and the bundle does not install their operators.
    "kserve": ("v0.20.0", "serving.kserve.io/v1beta1 InferenceService (Standard mode); operator installed by hand"),
    "nvidia-dynamo": ("v1.5.0", "nvidia.com/v1beta1 DynamoGraphDeployment; operator installed by hand"),
    "appwrapper": ("v1.2.1", "workload.codeflare.dev/v1beta2 AppWrapper; controller installed by hand"),
}

# kube-scheduler's own gang (issue 33): the Workload API's Workload and PodGroup and the pods' reference to their
# PodGroup exist from this Kubernetes version on (k8s.io/api v0.37.2 scheduling/v1beta1/types.go, core/v1 PodSpec
# schedulingGroup). Only bundles of such stacks use them, so only they need this version.
WORKLOAD_API_KUBERNETES = "1.37"
WORKLOAD_API_VERSION = "scheduling.k8s.io/v1beta1"
WORKLOAD_API_GATE = "GenericWorkload"  # beta and off by default in 1.37 (pkg/features/kube_features.go)

# NVIDIA Dynamo's vLLM runtime image of the pinned release: the docs' examples tag it with the bare
# version ("vllm-runtime:1.4.0" on the v1.4/v1.5 DGD and DCD reference pages), the operator reads the
# runtime version from that tag.
DYNAMO_VERSION = UPSTREAM["nvidia-dynamo"][0]
DYNAMO_RUNTIME_IMAGE = f"nvcr.io/nvidia/ai-dynamo/vllm-runtime:{DYNAMO_VERSION.removeprefix('v')}"

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


# ----------------------------------------------------------------------------- install
# How an operator installs each component the bundle needs: chart repository, chart, pinned chart
# version, namespace and release name. `local` is the chart's folder under ../shared/charts/ (the
# upstream chart at the tag above), which the tests render with `helm template`.
from dataclasses import dataclass, replace  # noqa: E402


@dataclass(frozen=True)
class Component:
    project: str          # key of UPSTREAM
    release: str
    namespace: str
    repo: str             # a Helm repository URL, or an oci:// chart reference (then chart is "")
    chart: str
    version: str          # the chart version `helm install --version` takes
    local: str            # folder under ../shared/charts/
    crds: tuple[str, ...] = ()          # CRDs to wait for (Established) before objects of theirs are applied
    deployments: tuple[str, ...] = ()   # Deployments that must be Available (webhooks answer) before the next step
    set_values: tuple[tuple[str, object], ...] = ()  # values every install of the chart needs (release pins)
    restart: tuple[str, ...] = ()       # workloads that read their config only at start and that the chart does not roll
    creates: tuple[tuple[str, str], ...] = ()  # (kind, name) of cluster objects the chart renders itself
    note: str = ""


COMPONENTS: dict[str, Component] = {c.project: c for c in (
    Component("gpu-operator", "gpu-operator", "gpu-operator", "https://helm.ngc.nvidia.com/nvidia", "gpu-operator", "v26.7.0",
              "gpu-operator/v26.7.0/gpu-operator", crds=("clusterpolicies.nvidia.com",),
              deployments=("gpu-operator",)),
    Component("hami", "hami", "kube-system", "https://project-hami.github.io/HAMi/", "hami", "2.10.0", "hami/v2.10.0/hami",
              deployments=("hami-scheduler",), restart=("daemonset/hami-device-plugin", "deployment/hami-scheduler")),
    Component("k8s-dra-driver-gpu", "dra-driver-nvidia-gpu", "nvidia-dra-driver-gpu", "https://helm.ngc.nvidia.com/nvidia",
              "dra-driver-nvidia-gpu", "0.4.0", "k8s-dra-driver-gpu/v0.4.0/dra-driver-nvidia-gpu",
              # The chart refuses resources.gpus.enabled without this (templates/validation.yaml): the NVIDIA
              # device plugin must be off on the DRA nodes, which the pool labels ensure.
              set_values=(("gpuResourcesEnabledOverride", True),),
              creates=(("DeviceClass", "gpu.nvidia.com"), ("DeviceClass", "mig.nvidia.com")),
              note="chart repository unverified for 0.4.0 (the chart moved to kubernetes-sigs): check with "
                   "`helm search repo dra-driver-nvidia-gpu --versions`"),
    Component("kueue", "kueue", "kueue-system", "oci://registry.k8s.io/kueue/charts/kueue", "", "0.19.2", "kueue/v0.19.2/kueue",
              crds=("clusterqueues.kueue.x-k8s.io", "localqueues.kueue.x-k8s.io", "resourceflavors.kueue.x-k8s.io"),
              deployments=("kueue-controller-manager",)),
    Component("volcano", "volcano", "volcano-system", "https://volcano-sh.github.io/helm-charts", "volcano", "1.15.1",
              "volcano/v1.15.1/volcano", crds=("queues.scheduling.volcano.sh", "podgroups.scheduling.volcano.sh"),
              deployments=("volcano-admission", "volcano-scheduler", "volcano-controllers")),
    Component("kai-scheduler", "kai-scheduler", "kai-scheduler", "oci://ghcr.io/nvidia/kai-scheduler/kai-scheduler", "",
              "v0.13.0", "kai-scheduler/v0.13.0/kai-scheduler", crds=("queues.scheduling.run.ai",),
              deployments=("kai-operator",)),
    Component("scheduler-plugins", "scheduler-plugins", "scheduler-plugins", "https://scheduler-plugins.sigs.k8s.io",
              "scheduler-plugins", "0.34.7", "scheduler-plugins/v0.34.7/as-a-second-scheduler",
              crds=("podgroups.scheduling.x-k8s.io",), deployments=("scheduler-plugins-scheduler", "scheduler-plugins-controller"),
              restart=("deployment/scheduler-plugins-scheduler",)),
    Component("jobset", "jobset", "jobset-system", "oci://registry.k8s.io/jobset/charts/jobset", "", "0.12.0",
              "jobset/v0.12.0/jobset", crds=("jobsets.jobset.x-k8s.io",), deployments=("jobset-controller",)),
    Component("lws", "lws", "lws-system", "oci://registry.k8s.io/lws/charts/lws", "", "0.10.0", "lws/v0.10.0/lws",
              crds=("leaderworkersets.leaderworkerset.x-k8s.io",), deployments=("lws-controller-manager",)),
    Component("kuberay", "kuberay-operator", "kuberay-system", "https://ray-project.github.io/kuberay-helm/", "kuberay-operator",
              "1.7.0", "kuberay/v1.7.0/kuberay-operator", crds=("rayjobs.ray.io", "rayclusters.ray.io", "rayservices.ray.io"),
              deployments=("kuberay-operator",)),
)}

# KAI for the kai-resource-isolator (issue 30). Its hamicore binder plugin writes each fractional pod's
# CUDA_DEVICE_MEMORY_LIMIT; kai-scheduler/KAI-Scheduler docs/gpu-sharing/hami/README.md (commit 98fd1f72, on main
# after v0.17.0) states the prerequisite "KAI-Scheduler >= v0.17.0", installs it with --set global.gpuSharing=true
# --set binder.plugins.hamicore.enabled=true --version v0.17.0 from this chart (README.md at v0.17.0: the
# chart moved from ghcr.io/nvidia to ghcr.io/kai-scheduler). The plugin itself is in the tags from v0.16.0
# (CHANGELOG v0.16.0), but upstream supports the isolator from v0.17.0, so that is the pin. No chart of
# v0.17 is stored in ../shared/charts: `local` is empty and the offline render test skips it, saying so.
KAI_HAMICORE = replace(COMPONENTS["kai-scheduler"], repo="oci://ghcr.io/kai-scheduler/kai-scheduler/kai-scheduler",
                       version="v0.17.0", local="",
                       note="v0.17.0 and not v0.13.0: upstream supports the kai-resource-isolator and its binder.plugins.hamicore "
                            "from KAI v0.17.0 on; no chart of that version is stored offline, so the Atlas did not render it "
                            "with these values by helm template: run `helm template` on it before installing")
# The isolator's own chart (same README: `helm install kai-resource-isolator oci://docker.io/projecthami/kai-resource-isolator
# --namespace kai-resource-isolator --create-namespace --version 1.1.0-chart`); its DaemonSet copies HAMi-core to
# the GPU nodes and its webhook injects it into pods with a gpu-fraction / gpu-memory annotation. Its object names
# are not known here (the repository could not be read): `helm --wait` waits for them.
KAI_RESOURCE_ISOLATOR = Component("kai-resource-isolator", "kai-resource-isolator", "kai-resource-isolator",
                                  "oci://docker.io/projecthami/kai-resource-isolator", "", "1.1.0-chart", "")


@dataclass(frozen=True)
class Manifest:
    """A component upstream ships as plain manifests, applied from its tag's raw URL (nothing copied here)."""
    project: str
    repository: str       # owner/name on GitHub
    version: str          # the tag
    file: str             # the manifest at the repository root
    namespace: str
    daemonsets: tuple[str, ...]   # rolled out before the workloads
    resources: tuple[str, ...]    # extended resources its nodes advertise
    split_count: int              # the DaemonSet's --device-split-count at this tag

    @property
    def url(self) -> str:
        return f"https://raw.githubusercontent.com/{self.repository}/{self.version}/{self.file}"


# Volcano's vGPU device plugin (Project-HAMi/volcano-vgpu-device-plugin v1.12.0, volcano-vgpu-device-plugin.yml:
# ConfigMap volcano-vgpu-device-config names the resources, DaemonSet kube-system/volcano-device-plugin runs
# --device-split-count=10 on every node, no nodeSelector). Volcano binds these resources only with its deviceshare
# plugin's deviceshare.VGPUEnable (volcano-sh/volcano v1.15.1 pkg/scheduler/plugins/deviceshare/deviceshare.go,
# docs/user-guide/how_to_use_volcano_vgpu.md). It replaces HAMi's device plugin and scheduler on its nodes.
VOLCANO_VGPU = Manifest("volcano-vgpu-device-plugin", "Project-HAMi/volcano-vgpu-device-plugin", "v1.12.0",
                        "volcano-vgpu-device-plugin.yml", "kube-system", ("volcano-device-plugin",),
                        ("volcano.sh/vgpu-number", "volcano.sh/vgpu-memory", "volcano.sh/vgpu-cores"), 10)
VOLCANO_VGPU_ARGUMENT = "deviceshare.VGPUEnable"
# The upstream DaemonSet has no nodeSelector: in a bundle with other GPU pools (MIG, NVIDIA plugin) it is patched
# to the nodes of the vGPU pools, which carry this label.
VOLCANO_VGPU_NODE = "placement-atlas.io/volcano-vgpu"

# Plan components another component installs (its operand or what its chart ships): nothing of their own to install.
DELIVERED_BY = {
    "nvidia-device-plugin": "gpu-operator", "nvidia-container-toolkit": "gpu-operator", "dcgm-exporter": "gpu-operator",
    "mig": "gpu-operator", "cuda-mps": "gpu-operator", "time-slicing": "gpu-operator", "hami-core": "hami",
    "nvidia-dra-driver": "k8s-dra-driver-gpu",
}
# Plan components that more than one installed component brings: HAMi-core (libvgpu.so) is copied onto the nodes
# by HAMi's device plugin, by Volcano's vGPU device plugin (its DaemonSet's postStart copies /k8s-vgpu/lib/nvidia/
# to /usr/local/vgpu, volcano-vgpu-device-plugin.yml v1.12.0) and by the kai-resource-isolator's DaemonSet.
ALSO_DELIVERED_BY = {"hami-core": ("volcano-vgpu-device-plugin", "kai-resource-isolator")}
# Plan settings (Component.settings) that are Helm values of the component's chart, by dotted key; the
# others (device plugin config, MIG labels) are rendered by the data-plane files in their own shape.
HELM_SETTINGS = {"kai-scheduler": ("global.gpuSharing", "binder.plugins.hamicore.enabled")}
# Parts of Kubernetes itself (kube-scheduler, the Job controller): on every cluster the bundle targets.
IN_KUBERNETES = {"kube-scheduler", "kubernetes-workload-api"}

# The training operator (v1) ships as kustomize manifests, not a chart.
TRAINING_OPERATOR_KUSTOMIZE = "github.com/kubeflow/trainer.git/manifests/overlays/standalone?ref=v1.9.4"
TRAINING_OPERATOR_LOCAL = "kubeflow-trainer/v1.9.4/manifests/overlays/standalone"
TRAINING_OPERATOR_NAMESPACE = "kubeflow"
TRAINING_OPERATOR_DIR = "training-operator"  # the bundle's kustomization over TRAINING_OPERATOR_KUSTOMIZE
TRAINING_OPERATOR_CRDS = ("pytorchjobs.kubeflow.org",)
