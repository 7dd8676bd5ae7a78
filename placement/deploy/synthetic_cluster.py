"""Synthetic `kubectl get -o json` snapshots (made here, deterministic): the shipped sample and
the import benchmark's 5,000-node cluster. Names are anonymised (gpu-a-001, team-...)."""

from __future__ import annotations

import random

from placement.deploy import targets as t
from placement.deploy.data_plane import GFD_PRODUCTS
from scheduler_core import mig as migmod
from scheduler_core.hardware import GPU_SPECS

KUBELET = "v1.34.2"
DRIVER = ("570", "124", "06")


def _node(name: str, model: str, gpus: int, rack: str, *, mig_config: str | None = None, strategy: str = "none",
          sharing: tuple[str, int] | None = None, hami: bool = False) -> dict:
    spec = GPU_SPECS[model]
    labels = {
        "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
        "node.kubernetes.io/instance-type": "dgx-a100" if spec.form_factor == "sxm4" else "pcie-a100",
        t.RACK_LABEL: rack, "topology.kubernetes.io/zone": "dc1",
        t.GPU_PRESENT: "true", t.GPU_PRODUCT: GFD_PRODUCTS[model], t.GPU_COUNT: str(gpus),
        "nvidia.com/gpu.memory": str(spec.memory_mib), "nvidia.com/gpu.family": "ampere",
        "nvidia.com/gpu.compute.major": "8", "nvidia.com/gpu.compute.minor": "0",
        "nvidia.com/cuda.driver.major": DRIVER[0], "nvidia.com/cuda.driver.minor": DRIVER[1],
        "nvidia.com/cuda.driver.rev": DRIVER[2], t.MIG_CAPABLE: "true", t.MIG_STRATEGY: strategy,
        "feature.node.kubernetes.io/pci-10de.present": "true",
    }
    capacity = {"cpu": "256", "memory": "2113123456Ki", "pods": "110", "ephemeral-storage": "1845646756Ki"}
    if mig_config:
        labels[t.MIG_CONFIG] = mig_config
        labels["nvidia.com/mig.config.state"] = "success"
        names = migmod.label_profiles(spec.mig_family, mig_config) or []
        for profile, n in sorted({p: names.count(p) for p in names}.items()):
            if strategy == "mixed":
                labels[f"nvidia.com/mig-{profile}.count"] = str(n * gpus)
                capacity[f"nvidia.com/mig-{profile}"] = str(n * gpus)
        if strategy == "single":
            labels[t.GPU_PRODUCT] = f"{GFD_PRODUCTS[model]}-MIG-{names[0]}"
            labels[t.GPU_COUNT] = str(len(names) * gpus)
            capacity["nvidia.com/gpu"] = str(len(names) * gpus)
    elif hami:
        labels[t.HAMI_NODE] = "on"
        labels[t.DEPLOY_DEVICE_PLUGIN] = "false"
        capacity["nvidia.com/gpu"] = str(gpus * 10)
    elif sharing:
        labels["nvidia.com/gpu.sharing-strategy"], labels["nvidia.com/gpu.replicas"] = sharing[0], str(sharing[1])
        labels[t.GPU_PRODUCT] += "-SHARED"
        capacity["nvidia.com/gpu"] = str(gpus * sharing[1])
    else:
        capacity["nvidia.com/gpu"] = str(gpus)
    annotations = {"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"}
    if hami:
        annotations["hami.io/node-nvidia-register"] = f"GPU-{name}-0,10,{spec.memory_mib},100,NVIDIA-{model},0,true:"
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": labels, "annotations": annotations, "uid": f"uid-{name}",
                     "creationTimestamp": "2026-10-02T08:15:00Z"},
        "spec": {"podCIDR": "10.0.0.0/24"},
        "status": {"capacity": capacity, "allocatable": dict(capacity),
                   "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
                   "nodeInfo": {"kubeletVersion": KUBELET, "containerRuntimeVersion": "containerd://2.0.5",
                                "osImage": "Ubuntu 22.04.5 LTS", "architecture": "amd64"}},
    }


def _pod(name: str, namespace: str, node: str | None, limits: dict, *, owner: tuple[str, str] | None = None,
         labels: dict | None = None, annotations: dict | None = None, scheduler: str = "default-scheduler",
         priority: int = 0) -> dict:
    meta: dict = {"name": name, "namespace": namespace, "labels": labels or {}, "uid": f"uid-{namespace}-{name}"}
    if annotations:
        meta["annotations"] = annotations
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1" if owner[0] == "ReplicaSet" else "batch/v1",
                                    "kind": owner[0], "name": owner[1], "controller": True, "uid": f"uid-{owner[1]}"}]
    spec: dict = {"schedulerName": scheduler, "priority": priority, "restartPolicy": "Never" if owner and owner[0] == "Job" else "Always",
                  "containers": [{"name": "main", "image": "registry.example/ml/worker:1.0",
                                  "resources": {"limits": {"cpu": "8", "memory": "64Gi", **limits},
                                                "requests": {"cpu": "4", "memory": "32Gi", **limits}}}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec,
            "status": {"phase": "Running" if node else "Pending"}}


def sample_snapshot() -> tuple[dict, dict, dict]:
    """A small mixed cluster: 6 DGX A100 80GB training nodes, 2 MIG nodes (mixed, all-2g.20gb),
    2 HAMi nodes for notebooks, 2 CPU nodes; three teams with Kueue quotas."""
    nodes = [_node(f"gpu-a-{i:03d}", "A100-SXM4-80GB", 8, f"rack-{i // 3 + 1}") for i in range(1, 7)]
    nodes += [_node(f"gpu-m-{i:03d}", "A100-SXM4-80GB", 8, "rack-3", mig_config="all-2g.20gb", strategy="mixed") for i in (1, 2)]
    nodes += [_node(f"gpu-s-{i:03d}", "A100-PCIE-40GB", 4, "rack-4", hami=True) for i in (1, 2)]
    nodes += [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"cpu-{i:03d}", "labels": {"kubernetes.io/hostname": f"cpu-{i:03d}"}},
               "status": {"capacity": {"cpu": "64", "memory": "263843864Ki", "pods": "110"}}} for i in (1, 2)]
    q = lambda queue: {"kueue.x-k8s.io/queue-name": queue}  # noqa: E731
    pods = []
    # A 16-GPU PyTorchJob (2 x 8) of team-research on gpu-a-001/002, and a 4 x 2 GPU job.
    for w, node in enumerate(("gpu-a-001", "gpu-a-002")):
        pods.append(_pod(f"llm-pretrain-{'master' if w == 0 else 'worker'}-0", "team-research", node, {"nvidia.com/gpu": "8"},
                         labels={**q("research"), "training.kubeflow.org/job-name": "llm-pretrain"}, priority=100))
    for w in range(4):
        pods.append(_pod(f"vision-ft-worker-{w}", "team-research", "gpu-a-003", {"nvidia.com/gpu": "2"},
                         labels={**q("research"), "training.kubeflow.org/job-name": "vision-ft"}))
    # Batch jobs of team-data on gpu-a-004, one pending.
    for k in range(3):
        pods.append(_pod(f"embed-batch-{k}-x7k2p", "team-data", "gpu-a-004" if k < 2 else None, {"nvidia.com/gpu": "1"},
                         owner=("Job", f"embed-batch-{k}"), labels={**q("data"), "job-name": f"embed-batch-{k}"}))
    # Inference services of team-product on the MIG nodes.
    for svc, replicas in (("ranker", 3), ("asr", 2)):
        for r in range(replicas):
            pods.append(_pod(f"{svc}-6d9f7c8b5-{r}abcd", "team-product", f"gpu-m-00{r % 2 + 1}", {"nvidia.com/mig-2g.20gb": "1"},
                             owner=("ReplicaSet", f"{svc}-6d9f7c8b5"), labels={**q("product"), "app": svc}))
    # HAMi notebooks of team-data.
    for k in range(4):
        pods.append(_pod(f"notebook-{k}", "team-data", f"gpu-s-00{k % 2 + 1}",
                         {"nvidia.com/gpu": "1", "nvidia.com/gpumem": "8000", "nvidia.com/gpucores": "30"},
                         labels=q("data"), scheduler="hami-scheduler"))
    # System pods without GPUs and a finished GPU job are not workloads.
    pods.append(_pod("coredns-7db6d8ff4d-abcde", "kube-system", "cpu-001", {}, owner=("ReplicaSet", "coredns-7db6d8ff4d")))
    done = _pod("old-eval-0", "team-research", "gpu-a-005", {"nvidia.com/gpu": "1"}, labels=q("research"))
    done["status"]["phase"] = "Succeeded"
    pods.append(done)
    queues = {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "a100-80gb"},
         "spec": {"nodeLabels": {t.GPU_PRODUCT: GFD_PRODUCTS["A100-SXM4-80GB"]}}},
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "any"}, "spec": {}},
        *[{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": cq},
           "spec": {"cohortName": "org", "namespaceSelector": {}, "queueingStrategy": "BestEffortFIFO",
                    "preemption": {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"},
                    "resourceGroups": [{"coveredResources": ["nvidia.com/gpu", "nvidia.com/mig-2g.20gb", "nvidia.com/gpumem"],
                                        "flavors": [{"name": "any", "resources": [
                                            {"name": "nvidia.com/gpu", "nominalQuota": gpu},
                                            {"name": "nvidia.com/mig-2g.20gb", "nominalQuota": mig},
                                            {"name": "nvidia.com/gpumem", "nominalQuota": mem}]}]}]}}
          for cq, gpu, mig, mem in (("research", 32, 0, 0), ("product", 8, 48, 0), ("data", 16, 0, 160000))],
        *[{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": lq, "namespace": ns},
           "spec": {"clusterQueue": lq}} for lq, ns in (("research", "team-research"), ("product", "team-product"), ("data", "team-data"))],
    ]}
    listed = lambda items: {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}  # noqa: E731
    return listed(nodes), listed(pods), queues


def large_snapshot(node_count: int = 5000, pods_per_node: float = 4.0, seed: int = 1) -> tuple[dict, dict]:
    """`node_count` GPU nodes in four node classes, ~`pods_per_node` GPU pods per node across 40 teams."""
    rng = random.Random(seed)
    classes = [("A100-SXM4-80GB", 8, None, "none"), ("A100-SXM4-40GB", 8, None, "none"),
               ("A100-SXM4-80GB", 8, "all-1g.10gb", "mixed"), ("A100-PCIE-80GB", 4, None, "none")]
    nodes, pods = [], []
    for i in range(node_count):
        model, gpus, mig, strategy = classes[i % len(classes)]
        name = f"gpu-{i:05d}"
        nodes.append(_node(name, model, gpus, f"rack-{i // 32:03d}", mig_config=mig, strategy=strategy))
        for k in range(int(pods_per_node)):
            team = f"team-{rng.randrange(40):02d}"
            limits = {"nvidia.com/mig-1g.10gb": "1"} if mig else {"nvidia.com/gpu": str(rng.choice((1, 1, 2)))}
            job = f"job-{i:05d}-{k}"
            pods.append(_pod(f"{job}-0", team, name, limits, owner=("Job", job), labels={"job-name": job}))
    listed = lambda items: {"apiVersion": "v1", "kind": "List", "items": items}  # noqa: E731
    return listed(nodes), listed(pods)
