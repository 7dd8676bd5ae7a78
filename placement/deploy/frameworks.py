"""Workload kinds of serving frameworks and batch wrappers, as objects of their own APIs: KubeRay's
RayService, KServe's InferenceService, NVIDIA Dynamo's DynamoGraphDeployment and AppWrapper.

Each takes the pod template the other kinds use (scheduler name, queue labels, the plan's per-pod
requests) and puts it where its operator reads it. The fields are the upstream APIs' own, at the
versions in `OPERATORS` (the tests cite the upstream files each was read from).
"""

from __future__ import annotations

from dataclasses import dataclass

from placement.deploy.bundle import to_yaml

GPU = "nvidia.com/gpu"
KSERVE_CONTAINER = "kserve-container"  # KServe: a custom predictor's container name (constants.InferenceServiceContainerName)
KSERVE_ANNOTATIONS = {
    # Standard (raw Deployment) mode: a Deployment per predictor, no Knative; `RawDeployment` is its older name.
    "serving.kserve.io/deploymentMode": "Standard",
    # The plan fixes the replica count: no HorizontalPodAutoscaler (autoscaler class "none").
    "serving.kserve.io/autoscalerClass": "none",
}
# KubeRay v1.7.0's GPU serving sample (ray-operator/config/samples/ray-service.llm-serve.yaml): Ray 2.52.0.
RAY_VERSION = "2.52.0"
RAY_IMAGE = "rayproject/ray-llm:2.52.0-py311-cu128"
DYNAMO_SERVICE = "worker"  # the graph's GPU service; componentType "worker" (operator consts.ComponentTypeWorker)


@dataclass(frozen=True)
class Operator:
    project: str        # catalog slug
    name: str           # what an operator installs
    version: str        # the release whose API the renderer writes
    crd: str            # the CRD the bundle's objects need, to wait for before applying them
    install: str        # where its install instructions are


# Kind -> the operator that runs it when the bundle does not install it (KubeRay's chart is in the bundle).
OPERATORS: dict[str, Operator] = {
    "InferenceService": Operator("kserve", "KServe controller", "v0.20.0", "inferenceservices.serving.kserve.io",
                                 "https://kserve.github.io/website/ (Standard deployment mode; Knative not needed)"),
    "DynamoGraphDeployment": Operator("nvidia-dynamo", "NVIDIA Dynamo operator (dynamo-platform chart)", "v1.5.0",
                                      "dynamographdeployments.nvidia.com",
                                      "https://docs.nvidia.com/dynamo/latest/kubernetes/installation-guide.html"),
    "AppWrapper": Operator("appwrapper", "AppWrapper controller", "v1.2.1", "appwrappers.workload.codeflare.dev",
                           "kubectl apply --server-side -f "
                           "https://github.com/project-codeflare/appwrapper/releases/download/v1.2.1/install.yaml"),
}


def _gpus_per_pod(container: dict) -> int:
    """Devices one pod's process sees: the whole GPUs it asks, else one (a share, an instance, a claim)."""
    limits = (container.get("resources") or {}).get("limits") or {}
    return int(limits[GPU]) if isinstance(limits.get(GPU), int) and limits[GPU] > 1 else 1


def _ray_image(template: dict) -> dict:
    spec = template["spec"]
    return {**template, "spec": {**spec, "containers": [{**c, "image": RAY_IMAGE} for c in spec["containers"]]}}


def ray_service(meta: dict, name: str, head: dict, worker: dict, replicas: int, pods_per_replica: int) -> dict:
    """KubeRay RayService (ray.io/v1): one worker group of `replicas` replicas of `pods_per_replica`
    hosts each, pinned (min = max = replicas), and a Serve application of that many replicas, one per
    worker; the head carries no GPU (as the RayJob's). Ray's own image, at the version the cluster says."""
    head, worker = _ray_image(head), _ray_image(worker)
    serve = {"applications": [{
        "name": name, "route_prefix": "/", "import_path": "serve_app:app",  # the model's Serve app: the operator's own
        "deployments": [{"name": "model", "num_replicas": replicas,
                         "ray_actor_options": {"num_gpus": _gpus_per_pod(worker["spec"]["containers"][0])}}]}]}
    return {"apiVersion": "ray.io/v1", "kind": "RayService", "metadata": meta, "spec": {
        "serveConfigV2": to_yaml(serve),
        "rayClusterConfig": {
            "rayVersion": RAY_VERSION,
            "headGroupSpec": {"rayStartParams": {}, "template": head},
            "workerGroupSpecs": [{"groupName": "workers", "replicas": replicas, "minReplicas": replicas,
                                  "maxReplicas": replicas, "numOfHosts": pods_per_replica, "rayStartParams": {},
                                  "template": worker}]}}}


def inference_service(meta: dict, template: dict, replicas: int) -> dict:
    """KServe InferenceService (serving.kserve.io/v1beta1), Standard mode: a custom predictor whose
    pod spec fields are inline in `spec.predictor` (schedulerName, nodeSelector, resourceClaims,
    containers), its pod labels and annotations in predictor.labels/annotations, min = max replicas.
    The InferenceService's own labels reach the Deployment KServe creates (Kueue's queue label)."""
    pod_spec = dict(template["spec"])
    pod_spec["containers"] = [{**c, "name": KSERVE_CONTAINER} for c in pod_spec["containers"]]
    pod_spec.pop("restartPolicy", None)
    predictor: dict = {"minReplicas": replicas, "maxReplicas": replicas, **pod_spec}
    tmeta = template.get("metadata") or {}
    if tmeta.get("labels"):
        predictor["labels"] = dict(tmeta["labels"])
    if tmeta.get("annotations"):
        predictor["annotations"] = dict(tmeta["annotations"])
    meta = {**meta, "annotations": {**meta.get("annotations", {}), **KSERVE_ANNOTATIONS}}
    return {"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService", "metadata": meta,
            "spec": {"predictor": predictor}}


def _quantity_text(value) -> str:
    return str(value)


def _dynamo_item(resources: dict[str, object]) -> dict:
    """A ResourceList as Dynamo's ResourceItem: cpu, memory, one GPU resource as gpu (+ gpuType when
    it is not nvidia.com/gpu), every other extended resource under custom; quantities as strings."""
    item: dict = {}
    rest = {k: v for k, v in resources.items() if k not in ("cpu", "memory")}
    for key in ("cpu", "memory"):
        if key in resources:
            item[key] = _quantity_text(resources[key])
    gpu = GPU if GPU in rest else next((k for k in rest if k.startswith("nvidia.com/mig-") or k == "volcano.sh/vgpu-number"), None)
    if gpu is not None:
        item["gpu"] = _quantity_text(rest.pop(gpu))
        if gpu != GPU:
            item["gpuType"] = gpu
    if rest:
        item["custom"] = {k: _quantity_text(v) for k, v in rest.items()}
    return item


def dynamo_resources(resources: dict) -> dict:
    """A container's resources (requests, limits, claims) in Dynamo's Resources shape."""
    out: dict = {}
    for side in ("requests", "limits"):
        if resources.get(side):
            out[side] = _dynamo_item(resources[side])
    if resources.get("claims"):
        out["claims"] = [dict(c) for c in resources["claims"]]
    return out


def kubernetes_resources(resources: dict) -> dict:
    """Dynamo's Resources back as a container's ResourceRequirements (the operator's GetResourcesConfig)."""
    out: dict = {}
    for side in ("requests", "limits"):
        item = resources.get(side)
        if not item:
            continue
        values = {k: item[k] for k in ("cpu", "memory") if k in item}
        if "gpu" in item:
            values[item.get("gpuType") or GPU] = item["gpu"]
        values.update(item.get("custom") or {})
        out[side] = values
    if resources.get("claims"):
        out["claims"] = resources["claims"]
    return out


def dynamo_graph(meta: dict, template: dict, replicas: int, pods_per_replica: int) -> dict:
    """NVIDIA Dynamo DynamoGraphDeployment (nvidia.com/v1alpha1): the graph's GPU worker service with
    the plan's replicas and per-pod resources (Dynamo's Resources: gpu/gpuType/custom), its pod labels
    and annotations in extraPodMetadata and the pod spec (scheduler, node selector, claims, image) in
    extraPodSpec; multinode.nodeCount when a replica spans nodes. The graph's Frontend (CPU only, not
    in the plan) is left to the operator, as is the model the worker runs."""
    container = template["spec"]["containers"][0]
    pod_spec = {k: v for k, v in template["spec"].items() if k not in ("containers", "restartPolicy")}
    service: dict = {"componentType": DYNAMO_SERVICE, "replicas": replicas,
                     "resources": dynamo_resources(container.get("resources") or {})}
    tmeta = template.get("metadata") or {}
    extra_meta = {k: dict(tmeta[k]) for k in ("labels", "annotations") if tmeta.get(k)}
    if extra_meta:
        service["extraPodMetadata"] = extra_meta
    queue_labels = {k: v for k, v in meta.get("labels", {}).items() if k.startswith("kueue.x-k8s.io/")}
    if queue_labels:  # labels of the component's generated objects: the Deployment Kueue admits
        service["labels"] = queue_labels
    if pods_per_replica > 1:
        service["multinode"] = {"nodeCount": pods_per_replica}
    service["extraPodSpec"] = {**pod_spec, "mainContainer": {"name": "main", "image": container["image"]}}
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment", "metadata": meta,
            "spec": {"services": {DYNAMO_SERVICE: service}}}


def app_wrapper(meta: dict, wrapped: dict) -> dict:
    """AppWrapper (workload.codeflare.dev/v1beta2) around the object that runs the pods: the wrapper
    carries the queue labels Kueue admits it by (a built-in Kueue integration); the wrapped object
    keeps its pod template (scheduler, requests) and the wrapper's namespace."""
    inner_meta = {k: v for k, v in wrapped["metadata"].items() if k != "labels"}
    inner_meta["labels"] = {k: v for k, v in wrapped["metadata"].get("labels", {}).items() if not k.startswith("kueue.x-k8s.io/")}
    inner = {**wrapped, "metadata": inner_meta}
    return {"apiVersion": "workload.codeflare.dev/v1beta2", "kind": "AppWrapper", "metadata": meta,
            "spec": {"components": [{"template": inner}]}}
