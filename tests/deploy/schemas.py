"""Validate exported objects against the upstream schemas of the exact versions the export names.

CRD-backed kinds: the released CRD manifests in ../shared/schemas/<project>/<tag>/ (read in place,
never copied), strict (additionalProperties false where the CRD is structural and closed) so typos
fail. Core kinds: kubernetes-validate's bundled OpenAPI for the targeted Kubernetes version, strict.
Helm values: checked against the upstream charts in ../shared/charts/ (tests/deploy/charts.py).
"""

from __future__ import annotations

import copy
import re
from functools import lru_cache
from pathlib import Path

import jsonschema
import kubernetes_validate
import yaml

from placement.deploy import targets

ROOT = Path(__file__).resolve().parents[2]


def schemas_dir() -> Path:
    # CI: a fresh clone beside shared/ (../shared); a worktree under /work/wt/<name>: ../../shared.
    for candidate in (ROOT.parent / "shared" / "schemas", ROOT.parent.parent / "shared" / "schemas"):
        if (candidate / "sources.json").exists():
            return candidate
    raise FileNotFoundError(f"upstream schemas not found beside the repository ({ROOT.parent}/shared/schemas)")


# (apiVersion, kind) -> (project, CRD file name); the tag comes from targets.UPSTREAM.
CRDS = {
    ("kueue.x-k8s.io/v1beta2", "ResourceFlavor"): ("kueue", "kueue.x-k8s.io_resourceflavors.yaml"),
    ("kueue.x-k8s.io/v1beta2", "ClusterQueue"): ("kueue", "kueue.x-k8s.io_clusterqueues.yaml"),
    ("kueue.x-k8s.io/v1beta2", "LocalQueue"): ("kueue", "kueue.x-k8s.io_localqueues.yaml"),
    ("kueue.x-k8s.io/v1beta2", "Cohort"): ("kueue", "kueue.x-k8s.io_cohorts.yaml"),
    ("kueue.x-k8s.io/v1beta2", "WorkloadPriorityClass"): ("kueue", "kueue.x-k8s.io_workloadpriorityclasses.yaml"),
    ("kueue.x-k8s.io/v1beta2", "Topology"): ("kueue", "kueue.x-k8s.io_topologies.yaml"),
    ("scheduling.volcano.sh/v1beta1", "Queue"): ("volcano", "scheduling.volcano.sh_queues.yaml"),
    ("scheduling.run.ai/v2", "Queue"): ("kai-scheduler", "scheduling.run.ai_queues.yaml"),
    ("kubeflow.org/v1", "PyTorchJob"): ("kubeflow-trainer", "kubeflow.org_pytorchjobs.yaml"),
    ("jobset.x-k8s.io/v1alpha2", "JobSet"): ("jobset", "jobset.x-k8s.io_jobsets.yaml"),
    ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet"): ("lws", "leaderworkerset.x-k8s.io_leaderworkersets.yaml"),
    ("batch.volcano.sh/v1alpha1", "Job"): ("volcano", "batch.volcano.sh_jobs.yaml"),
    ("ray.io/v1", "RayJob"): ("kuberay", "ray.io_rayjobs.yaml"),
    ("ray.io/v1", "RayService"): ("kuberay", "ray.io_rayservices.yaml"),
}
CORE_GROUPS = {"v1", "apps/v1", "batch/v1", "resource.k8s.io/v1"}


def _close(schema):
    """additionalProperties: false on every closed object schema, so unknown fields are errors."""
    if isinstance(schema, dict):
        if (schema.get("type") == "object" and "properties" in schema and "additionalProperties" not in schema
                and not schema.get("x-kubernetes-preserve-unknown-fields")):
            schema["additionalProperties"] = False
        for value in schema.values():
            _close(value)
    elif isinstance(schema, list):
        for value in schema:
            _close(value)
    return schema


@lru_cache(maxsize=None)
def crd_validator(api_version: str, kind: str) -> jsonschema.Draft7Validator:
    project, filename = CRDS[(api_version, kind)]
    tag = targets.UPSTREAM[project][0]
    crd = yaml.safe_load((schemas_dir() / project / tag / filename).read_text())
    assert crd["spec"]["names"]["kind"] == kind and api_version.startswith(crd["spec"]["group"] + "/")
    version = api_version.split("/", 1)[1]
    schema = next(v["schema"]["openAPIV3Schema"] for v in crd["spec"]["versions"] if v["name"] == version)
    schema = _close(copy.deepcopy(schema))
    # metadata is only `type: object` in CRDs; names are checked by the core metadata rules below.
    schema["properties"]["metadata"] = {"type": "object"}
    return jsonschema.Draft7Validator(schema)


def object_errors(obj: dict) -> list[str]:
    """Every schema error for one object, prefixed with its kind/name; [] when it validates."""
    api_version, kind = obj.get("apiVersion", ""), obj.get("kind", "")
    label = f"{kind}/{obj.get('metadata', {}).get('name')}"
    if (api_version, kind) in CRDS:
        return [f"{label}: {'.'.join(map(str, e.absolute_path))}: {e.message}"
                for e in crd_validator(api_version, kind).iter_errors(obj)]
    if (api_version, kind) in SHAPES:
        return [f"{label}: {e}" for e in SHAPES[(api_version, kind)](obj)]
    if api_version in CORE_GROUPS or api_version == targets.WORKLOAD_API_VERSION:
        # the Workload API's objects, and pods that name a PodGroup, exist from its Kubernetes version on
        version = targets.WORKLOAD_API_KUBERNETES if _uses_workload_api(obj) else targets.KUBERNETES_VERSION
        try:
            kubernetes_validate.validate(obj, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            return [f"{label}: {'.'.join(map(str, exc.path))}: {exc.message}"]
        return []
    return [f"{label}: no stored schema for {api_version} {kind}"]


# ----------------------------------------------------------------------------- kinds with no stored CRD
# KServe, NVIDIA Dynamo and AppWrapper CRDs are not in ../shared/schemas. Their objects are checked
# against the fields read upstream (each checker names the file), and every pod spec and container
# they embed is validated strictly as core Kubernetes, so a typo in either fails.
POD_SPEC_FIELDS = {"schedulerName", "nodeSelector", "resourceClaims", "containers", "restartPolicy", "tolerations",
                   "affinity", "priorityClassName", "serviceAccountName", "volumes"}


def _pod_spec_errors(where: str, pod_spec: dict, labels=None, annotations=None) -> list[str]:
    meta: dict = {"name": "check"}
    if labels:
        meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    template = {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "check"},
                "template": {"metadata": meta, "spec": pod_spec}}
    try:
        kubernetes_validate.validate(template, targets.KUBERNETES_VERSION, strict=True)
    except kubernetes_validate.ValidationError as exc:
        return [f"{where}: {'.'.join(map(str, exc.path))}: {exc.message}"]
    return []


def _unknown(where: str, found: dict, allowed: set[str]) -> list[str]:
    return [f"{where}: unknown field {k!r}" for k in sorted(set(found) - allowed)]


def _string_map(where: str, value) -> list[str]:
    ok = isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
    return [] if ok else [f"{where}: not a map of strings"]


# kserve/kserve v0.20.0 config/crd/full/serving.kserve.io_inferenceservices.yaml: spec.{predictor, transformer,
# explainer}; the predictor inlines the core PodSpec with minReplicas, maxReplicas, labels, annotations
# (ComponentExtensionSpec); pkg/constants/constants.go: deploymentMode Standard|RawDeployment|Knative, autoscalerClass
# hpa|external|keda|none, custom container name kserve-container.
KSERVE_PREDICTOR = {"minReplicas", "maxReplicas", "labels", "annotations"}


def inference_service_errors(obj: dict) -> list[str]:
    errors = _unknown("", obj, {"apiVersion", "kind", "metadata", "spec"}) + _unknown("spec", obj["spec"], {"predictor"})
    predictor = obj["spec"]["predictor"]
    errors += _unknown("spec.predictor", predictor, KSERVE_PREDICTOR | POD_SPEC_FIELDS)
    for key in ("minReplicas", "maxReplicas"):
        if not isinstance(predictor.get(key), int) or predictor[key] < 0:
            errors.append(f"spec.predictor.{key}: {predictor.get(key)!r} is not a non-negative integer")
    for key in ("labels", "annotations"):
        if key in predictor:
            errors += _string_map(f"spec.predictor.{key}", predictor[key])
    annotations = obj["metadata"].get("annotations", {})
    if annotations.get("serving.kserve.io/deploymentMode") not in (None, "Standard", "RawDeployment", "Knative"):
        errors.append("metadata.annotations: unknown serving.kserve.io/deploymentMode")
    if annotations.get("serving.kserve.io/autoscalerClass") not in (None, "hpa", "external", "keda", "none"):
        errors.append("metadata.annotations: unknown serving.kserve.io/autoscalerClass")
    if [c["name"] for c in predictor.get("containers", [])][:1] != ["kserve-container"]:
        errors.append("spec.predictor.containers: a custom predictor's container is named kserve-container")
    pod_spec = {k: v for k, v in predictor.items() if k in POD_SPEC_FIELDS}
    return errors + _pod_spec_errors("spec.predictor", pod_spec, predictor.get("labels"), predictor.get("annotations"))


# NVIDIA Dynamo v1.5.0, nvidia.com/v1beta1 (its served, current version; v1alpha1 is deprecated):
# https://docs.nvidia.com/dynamo/v1.5.0/reference/api/kubernetes/dynamo-graph-deployment.md and
# .../dynamo-component-deployment.md, "Shared component spec". Graph: components (at most 25), backendFramework
# sglang|vllm|trtllm, env, annotations and labels propagated to every child (DCDs, Deployments, pod templates),
# priorityClassName, restart, topologyConstraint, experimental. Component: name ^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?$
# of 1-63, type frontend|worker|prefill|decode|planner|epp, replicas >= 0, podTemplate a core PodTemplateSpec whose
# container `main` takes the image and the GPU requests, multinode.nodeCount >= 2 (worker|prefill|decode only),
# sharedMemorySize, globalDynamoNamespace, modelRef, scalingAdapter, frontendSidecar, compilationCache, eppConfig,
# topologyConstraint, experimental; no per-component labels, annotations or resources any more. The stored copies of
# the v1.5.0 pages give their openings (v1beta1 current; the minimal example's backendFramework, components, type,
# podTemplate, container main and its vllm-runtime:<bare version> image); the field lists were read on the same
# pages at v1.4.2 and on the dev branch, and only fields on both are accepted here. Later v1beta1 types (ai-dynamo/
# dynamo deploy/operator/api/v1beta1/dynamocomponentdeployment_types.go) add runtimeVersionOverride, minAvailable,
# roles and providerOverride, not accepted: the export writes none of them.
DYNAMO_GRAPH = {"components", "backendFramework", "env", "annotations", "labels", "priorityClassName", "restart",
                "topologyConstraint", "experimental"}
DYNAMO_COMPONENT = {"name", "type", "replicas", "podTemplate", "multinode", "sharedMemorySize", "globalDynamoNamespace",
                    "modelRef", "scalingAdapter", "frontendSidecar", "compilationCache", "eppConfig", "topologyConstraint",
                    "experimental"}
DYNAMO_TYPES = {"frontend", "worker", "prefill", "decode", "planner", "epp"}
DYNAMO_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?$")


def dynamo_graph_errors(obj: dict) -> list[str]:
    errors = _unknown("", obj, {"apiVersion", "kind", "metadata", "spec"})
    spec = obj["spec"]
    errors += _unknown("spec", spec, DYNAMO_GRAPH)
    if spec.get("backendFramework") not in (None, "sglang", "vllm", "trtllm"):
        errors.append(f"spec.backendFramework: {spec['backendFramework']!r} is not sglang, vllm or trtllm")
    for key in ("labels", "annotations"):
        if key in spec:
            errors += _string_map(f"spec.{key}", spec[key])
    components = spec.get("components") or []
    if not components or len(components) > 25:
        errors.append("spec.components: 1 to 25 components")
    names = [str(c.get("name", "")).lower() for c in components]
    if len(set(names)) != len(names):
        errors.append("spec.components: names are not unique")
    for i, component in enumerate(components):
        where = f"spec.components[{i}]"
        errors += _unknown(where, component, DYNAMO_COMPONENT)
        if not (isinstance(component.get("name"), str) and len(component["name"]) <= 63 and DYNAMO_NAME.match(component["name"])):
            errors.append(f"{where}.name: {component.get('name')!r} is not a component name")
        if component.get("type") not in (None, *DYNAMO_TYPES):
            errors.append(f"{where}.type: {component['type']!r} is not one of {sorted(DYNAMO_TYPES)}")
        if "replicas" in component and (not isinstance(component["replicas"], int) or component["replicas"] < 0):
            errors.append(f"{where}.replicas: not a non-negative integer")
        if "multinode" in component:
            multinode = component["multinode"]
            if set(multinode) != {"nodeCount"} or not isinstance(multinode["nodeCount"], int) or multinode["nodeCount"] < 2:
                errors.append(f"{where}.multinode: nodeCount >= 2 only")
            if component.get("type") not in ("worker", "prefill", "decode"):
                errors.append(f"{where}.multinode: only a worker, prefill or decode component spans nodes")
        template = component.get("podTemplate")
        if template is None:
            errors.append(f"{where}.podTemplate: required (its container main carries the image)")
            continue
        errors += _unknown(f"{where}.podTemplate", template, {"metadata", "spec"})
        tmeta = template.get("metadata") or {}
        errors += _unknown(f"{where}.podTemplate.metadata", tmeta, {"labels", "annotations"})
        pod_spec = template.get("spec") or {}
        errors += _unknown(f"{where}.podTemplate.spec", pod_spec, POD_SPEC_FIELDS)
        main = next((c for c in pod_spec.get("containers") or [] if c.get("name") == "main"), None)
        if not (main and main.get("image")):
            errors.append(f"{where}.podTemplate.spec.containers: no container main with an image")
        errors += _pod_spec_errors(f"{where}.podTemplate.spec", pod_spec, tmeta.get("labels"), tmeta.get("annotations"))
    return errors


# project-codeflare/appwrapper v1.2.1 config/crd/bases/workload.codeflare.dev_appwrappers.yaml (spec: components
# [{template, podSets, podSetInfos, annotations}], suspend, managedBy; template an embedded resource) and
# internal/webhook/appwrapper_webhook.go (no nested AppWrapper, components in the wrapper's namespace, 1 to 8
# pod sets; pkg/utils/utils.go infers them for batch/v1 Job, JobSet, PyTorchJob, RayCluster, RayJob, ...).
def app_wrapper_errors(obj: dict) -> list[str]:
    errors = _unknown("", obj, {"apiVersion", "kind", "metadata", "spec"})
    errors += _unknown("spec", obj["spec"], {"components", "suspend", "managedBy"})
    components = obj["spec"].get("components") or []
    if not components:
        errors.append("spec.components: required")
    for i, component in enumerate(components):
        where = f"spec.components[{i}]"
        errors += _unknown(where, component, {"template", "podSets", "podSetInfos", "annotations"})
        inner = component["template"]
        if inner.get("kind") == "AppWrapper":
            errors.append(f"{where}.template: nested AppWrappers are forbidden")
        if inner["metadata"].get("namespace") not in (None, obj["metadata"].get("namespace")):
            errors.append(f"{where}.template.metadata.namespace: not the wrapper's namespace")
        errors += [f"{where}.template: {e}" for e in object_errors(inner)]
    return errors


SHAPES = {
    ("serving.kserve.io/v1beta1", "InferenceService"): inference_service_errors,
    ("nvidia.com/v1beta1", "DynamoGraphDeployment"): dynamo_graph_errors,
    ("workload.codeflare.dev/v1beta2", "AppWrapper"): app_wrapper_errors,
}


def _uses_workload_api(obj) -> bool:
    if isinstance(obj, dict):
        return obj.get("apiVersion") == targets.WORKLOAD_API_VERSION or "schedulingGroup" in obj or any(
            _uses_workload_api(v) for v in obj.values())
    return isinstance(obj, list) and any(_uses_workload_api(v) for v in obj)


# Helm values are checked against the charts themselves (tests/deploy/charts.py: ../shared/charts/).
from tests.deploy.charts import chart_defaults, values_errors  # noqa: E402,F401
