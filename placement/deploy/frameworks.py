"""Workload kinds of serving frameworks and batch wrappers, as objects of their own APIs: KubeRay's
RayService, KServe's InferenceService, NVIDIA Dynamo's DynamoGraphDeployment and AppWrapper.

Each takes the pod template the other kinds use (scheduler name, queue labels, the plan's per-pod
requests) and puts it where its operator reads it. The fields are the upstream APIs' own, at the
versions in `OPERATORS` (the tests cite the upstream files each was read from).
"""

from __future__ import annotations

from dataclasses import dataclass

from placement.deploy import targets as t
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
# NVIDIA Dynamo v1.5.0's DynamoGraphDeployment (docs.nvidia.com/dynamo/v1.5.0/reference/api/kubernetes/
# dynamo-graph-deployment.md and dynamo-component-deployment.md, "Shared component spec").
DYNAMO_API = "nvidia.com/v1beta1"
DYNAMO_BACKEND = "vllm"         # spec.backendFramework: sglang | vllm | trtllm; the runtime image is vLLM's
DYNAMO_FRONTEND = "Frontend"    # component names: unique in spec.components, ^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?$
DYNAMO_WORKER = "worker"
DYNAMO_MAIN = "main"            # the podTemplate container the operator injects its defaults into


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
    "DynamoGraphDeployment": Operator("nvidia-dynamo", "NVIDIA Dynamo operator (dynamo-platform chart)", t.DYNAMO_VERSION,
                                      "dynamographdeployments.nvidia.com",
                                      f"https://docs.nvidia.com/dynamo/{t.DYNAMO_VERSION}/kubernetes/installation/install-dynamo"),
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


def dynamo_graph(meta: dict, template: dict, replicas: int, pods_per_replica: int) -> dict:
    """NVIDIA Dynamo DynamoGraphDeployment in nvidia.com/v1beta1, the version Dynamo v1.5.0 serves as
    current (v1alpha1 is its deprecated, converted surface): `backendFramework` vllm and two components.

    - `Frontend` (type frontend): the graph's HTTP entry point, one CPU-only replica of the runtime
      image. Not a plan pod: it asks no GPU and joins no tenant queue.
    - `worker` (type worker): the plan's replicas, `multinode.nodeCount` when a replica spans nodes
      (each pod asks its own share; total GPUs = nodeCount x the container's request), and as
      `podTemplate` the pod template every other kind carries: scheduler name, node selector, resource
      claims, pod labels and annotations, and the container `main` (the name the operator merges its
      defaults into) with the plan's exact per-pod requests and limits.

    v1beta1 has no per-component labels: a podTemplate's metadata reaches the worker pods only, and
    `spec.labels` would reach every child, the Frontend's Deployment too. So the queue labels Kueue
    reads (pod integration: queue-name, priority-class on the pod) go on the worker's pod template,
    beside KAI's queue label; the Frontend stays outside the tenant's quota. The model the worker
    serves is left to the operator, as for the other serving kinds."""
    pod_spec = {k: v for k, v in template["spec"].items() if k != "restartPolicy"}  # a Deployment's pods: Always
    main, *sidecars = pod_spec["containers"]
    pod_spec["containers"] = [{**main, "name": DYNAMO_MAIN, "image": t.DYNAMO_RUNTIME_IMAGE}, *sidecars]
    tmeta = {k: dict(v) for k, v in (template.get("metadata") or {}).items() if v}
    queue_labels = {k: v for k, v in meta.get("labels", {}).items() if k.startswith("kueue.x-k8s.io/")}
    if queue_labels:
        tmeta["labels"] = {**tmeta.get("labels", {}), **queue_labels}
    worker: dict = {"name": DYNAMO_WORKER, "type": "worker", "replicas": replicas}
    if pods_per_replica > 1:
        worker["multinode"] = {"nodeCount": pods_per_replica}
    worker["podTemplate"] = {**({"metadata": tmeta} if tmeta else {}), "spec": pod_spec}
    frontend = {"name": DYNAMO_FRONTEND, "type": "frontend", "replicas": 1,
                "podTemplate": {"spec": {"containers": [{"name": DYNAMO_MAIN, "image": t.DYNAMO_RUNTIME_IMAGE}]}}}
    return {"apiVersion": DYNAMO_API, "kind": "DynamoGraphDeployment", "metadata": meta,
            "spec": {"backendFramework": DYNAMO_BACKEND, "components": [frontend, worker]}}


def app_wrapper(meta: dict, wrapped: dict) -> dict:
    """AppWrapper (workload.codeflare.dev/v1beta2) around the object that runs the pods: the wrapper
    carries the queue labels Kueue admits it by (a built-in Kueue integration); the wrapped object
    keeps its pod template (scheduler, requests) and the wrapper's namespace."""
    inner_meta = {k: v for k, v in wrapped["metadata"].items() if k != "labels"}
    inner_meta["labels"] = {k: v for k, v in wrapped["metadata"].get("labels", {}).items() if not k.startswith("kueue.x-k8s.io/")}
    inner = {**wrapped, "metadata": inner_meta}
    return {"apiVersion": "workload.codeflare.dev/v1beta2", "kind": "AppWrapper", "metadata": meta,
            "spec": {"components": [{"template": inner}]}}
