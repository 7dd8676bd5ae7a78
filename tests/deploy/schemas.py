"""Validate exported objects against the upstream schemas of the exact versions the export names.

CRD-backed kinds: the released CRD manifests in ../shared/schemas/<project>/<tag>/ (read in place,
never copied), strict (additionalProperties false where the CRD is structural and closed) so typos
fail. Core kinds: kubernetes-validate's bundled OpenAPI for the targeted Kubernetes version, strict.
Helm values: checked against the upstream charts in ../shared/charts/ (tests/deploy/charts.py).
"""

from __future__ import annotations

import copy
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
    if api_version in CORE_GROUPS or api_version == targets.WORKLOAD_API_VERSION:
        # the Workload API's objects, and pods that name a PodGroup, exist from its Kubernetes version on
        version = targets.WORKLOAD_API_KUBERNETES if _uses_workload_api(obj) else targets.KUBERNETES_VERSION
        try:
            kubernetes_validate.validate(obj, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            return [f"{label}: {'.'.join(map(str, exc.path))}: {exc.message}"]
        return []
    return [f"{label}: no stored schema for {api_version} {kind}"]


def _uses_workload_api(obj) -> bool:
    if isinstance(obj, dict):
        return obj.get("apiVersion") == targets.WORKLOAD_API_VERSION or "schedulingGroup" in obj or any(
            _uses_workload_api(v) for v in obj.values())
    return isinstance(obj, list) and any(_uses_workload_api(v) for v in obj)


# Helm values are checked against the charts themselves (tests/deploy/charts.py: ../shared/charts/).
from tests.deploy.charts import chart_defaults, values_errors  # noqa: E402,F401
