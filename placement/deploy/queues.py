"""Queue objects (Kueue ClusterQueue / LocalQueue, Volcano Queue, KAI Queue) -> scenario sections.

Shared by the export's round trip and the cluster import, so both read a queue the same way.
Each reader raises ObjectInvalid naming the field and the reason.
"""

from __future__ import annotations

from placement.deploy.quantity import parse_quantity


class ObjectInvalid(ValueError):
    def __init__(self, field: str, reason: str):
        self.field = field
        super().__init__(f"{field}: {reason}")


def _dig(obj: dict, *keys, default=None):
    for key in keys:
        if not isinstance(obj, dict):
            return default
        obj = obj.get(key, default)
    return obj


def _quantity(value, field: str) -> float:
    try:
        number = parse_quantity(value)
    except ValueError as exc:
        raise ObjectInvalid(field, str(exc)) from None
    if number < 0:
        raise ObjectInvalid(field, "must not be negative")
    return number


def expect_kind(obj, api_group: str, kind: str) -> str:
    if not isinstance(obj, dict):
        raise ObjectInvalid("(object)", "not a JSON object")
    api_version = str(obj.get("apiVersion", ""))
    if obj.get("kind") != kind or not api_version.startswith(api_group + "/"):
        raise ObjectInvalid("kind", f"expected {api_group} {kind}, got {api_version or '?'} {obj.get('kind') or '?'}")
    name = _dig(obj, "metadata", "name")
    if not isinstance(name, str) or not name:
        raise ObjectInvalid("metadata.name", "missing")
    return name


def kueue_cluster_queue(obj: dict, flavor_groups: dict[str, list[str] | None]) -> dict:
    """A kueue.x-k8s.io ClusterQueue -> scenario cluster_queues entry (v1beta2 cohortName or v1beta1 cohort)."""
    name = expect_kind(obj, "kueue.x-k8s.io", "ClusterQueue")
    spec = obj.get("spec") or {}
    groups = spec.get("resourceGroups")
    if not isinstance(groups, list) or not groups:
        raise ObjectInvalid("spec.resourceGroups", "a ClusterQueue needs at least one resource group")
    flavors = _flavor_quotas(groups, flavor_groups)
    if not flavors:
        raise ObjectInvalid("spec.resourceGroups", "no flavors")
    return _kueue_preemption_and_rest(name, spec, flavors)


def _flavor_quotas(groups: list, flavor_groups: dict[str, list[str] | None]) -> list[dict]:
    """spec.resourceGroups (a ClusterQueue's or a Cohort's) -> the scenario's flavors with their quotas."""
    flavors: dict[str, dict] = {}
    for gi, group in enumerate(groups):
        for fi, flavor in enumerate(_dig(group, "flavors", default=[]) or []):
            fname = flavor.get("name")
            if not fname:
                raise ObjectInvalid(f"spec.resourceGroups.{gi}.flavors.{fi}.name", "missing")
            entry = flavors.setdefault(fname, {"name": fname, "quotas": {}})
            if flavor_groups.get(fname) is not None:
                entry["node_groups"] = flavor_groups[fname]
            for ri, resource in enumerate(flavor.get("resources") or []):
                where = f"spec.resourceGroups.{gi}.flavors.{fi}.resources.{ri}"
                if "name" not in resource or "nominalQuota" not in resource:
                    raise ObjectInvalid(where, "needs name and nominalQuota")
                scale = 1 / 2**30 if resource["name"] == "memory" else 1.0  # the scenario's memory is in GiB
                quota = {"nominal": _quantity(resource["nominalQuota"], f"{where}.nominalQuota") * scale}
                for key, field in (("borrowingLimit", "borrowing_limit"), ("lendingLimit", "lending_limit")):
                    if resource.get(key) is not None:
                        quota[field] = _quantity(resource[key], f"{where}.{key}") * scale
                entry["quotas"][resource["name"]] = quota
    return list(flavors.values())


def kueue_cohort(obj: dict, flavor_groups: dict[str, list[str] | None] | None = None) -> dict:
    """A kueue.x-k8s.io Cohort -> scenario kueue.cohorts entry (parent, own quota, fair-sharing weight)."""
    name = expect_kind(obj, "kueue.x-k8s.io", "Cohort")
    spec = obj.get("spec") or {}
    groups = spec.get("resourceGroups") or []
    if not isinstance(groups, list):
        raise ObjectInvalid("spec.resourceGroups", "expected a list")
    out: dict = {"name": name, "flavors": _flavor_quotas(groups, flavor_groups or {})}
    if spec.get("parentName"):
        out["parent_name"] = spec["parentName"]
    weight = _dig(spec, "fairSharing", "weight")
    if weight is not None:
        out["fair_sharing_weight"] = _quantity(weight, "spec.fairSharing.weight")
    return out


def _kueue_preemption_and_rest(name: str, spec: dict, flavors: list[dict]) -> dict:
    """The rest of a ClusterQueue entry: cohort, queueing strategy, preemption, fungibility, weight."""
    preemption = spec.get("preemption") or {}
    out: dict = {
        "name": name,
        "cohort": spec.get("cohortName") or spec.get("cohort"),
        "queueing_strategy": spec.get("queueingStrategy", "BestEffortFIFO"),
        "flavors": flavors,
        "preemption": {
            "within_cluster_queue": preemption.get("withinClusterQueue", "Never"),
            "reclaim_within_cohort": preemption.get("reclaimWithinCohort", "Never"),
            "borrow_within_cohort": _dig(preemption, "borrowWithinCohort", "policy", default="Never"),
        },
    }
    fungibility = spec.get("flavorFungibility") or {}
    if not isinstance(fungibility, dict):
        raise ObjectInvalid("spec.flavorFungibility", "expected an object")
    kept = {field: fungibility[key] for key, field in (("whenCanBorrow", "when_can_borrow"),
                                                     ("whenCanPreempt", "when_can_preempt")) if fungibility.get(key)}
    for field, value in kept.items():
        if value not in ("MayStopSearch", "TryNextFlavor", "Borrow", "Preempt"):
            key = "whenCanBorrow" if field == "when_can_borrow" else "whenCanPreempt"
            raise ObjectInvalid(f"spec.flavorFungibility.{key}", f"unknown policy {value!r}")
    if kept:
        out["flavor_fungibility"] = kept
    weight = _dig(spec, "fairSharing", "weight")
    if weight is not None:
        out["fair_sharing_weight"] = _quantity(weight, "spec.fairSharing.weight")
    return out


def kueue_local_queue(obj: dict) -> tuple[str, str, str]:
    """(namespace, LocalQueue name, ClusterQueue name)."""
    name = expect_kind(obj, "kueue.x-k8s.io", "LocalQueue")
    cq = _dig(obj, "spec", "clusterQueue")
    if not cq:
        raise ObjectInvalid("spec.clusterQueue", "missing")
    return _dig(obj, "metadata", "namespace", default="default"), name, cq


def _queue_resources(resources, field: str):
    """A Volcano ResourceList -> the scenario's queue resources (GPUs alone as a number; memory in GiB)."""
    if not resources:
        return None
    if not isinstance(resources, dict):
        raise ObjectInvalid(field, "expected a resource map")
    out: dict = {}
    for name, scale in (("nvidia.com/gpu", 1.0), ("cpu", 1.0), ("memory", 1 / 2**30)):
        if resources.get(name) is not None:
            out[name] = _quantity(resources[name], f"{field}.{name}") * scale
    if set(out) == {"nvidia.com/gpu"}:
        gpus = out["nvidia.com/gpu"]
        return int(gpus) if gpus.is_integer() else gpus
    return out or None


def _kai_resource(resources: dict, name: str, per_unit: float) -> dict | None:
    """spec.resources.cpu / .memory of a KAI Queue in the scenario's units (cores, GiB); None when absent."""
    entry = _dig(resources, name)
    if not entry:
        return None
    scale = lambda v: v if v < 0 else round(v / per_unit, 6)  # noqa: E731 - -1 stays "unlimited"
    return {"quota": scale(float(entry.get("quota", -1))), "limit": scale(float(entry.get("limit", -1))),
            "over_quota_weight": float(entry.get("overQuotaWeight", 1))}


def volcano_queue(obj: dict) -> dict:
    name = expect_kind(obj, "scheduling.volcano.sh", "Queue")
    spec = obj.get("spec") or {}
    weight = spec.get("weight", 1)
    if not isinstance(weight, int) or isinstance(weight, bool) or not 1 <= weight <= 65535:
        raise ObjectInvalid("spec.weight", "a whole number between 1 and 65535")
    out: dict = {"name": name, "weight": weight, "reclaimable": bool(spec.get("reclaimable", True))}
    capability = _queue_resources(spec.get("capability"), "spec.capability")
    if capability is not None:
        out["capability"] = capability
    guarantee = _queue_resources(_dig(spec, "guarantee", "resource"), "spec.guarantee.resource")
    if guarantee:
        out["guarantee"] = guarantee
    deserved = _queue_resources(spec.get("deserved"), "spec.deserved")
    if deserved is not None:
        out["deserved"] = deserved
    if spec.get("priority"):
        out["priority"] = int(spec["priority"])
    if spec.get("parent"):
        out["parent"] = str(spec["parent"])
    return out


def kai_queue(obj: dict) -> dict:
    name = expect_kind(obj, "scheduling.run.ai", "Queue")
    spec = obj.get("spec") or {}
    gpu = _dig(spec, "resources", "gpu", default={}) or {}
    out: dict = {"name": name, "quota": float(gpu.get("quota", 0)), "over_quota_weight": float(gpu.get("overQuotaWeight", 1)),
                 "limit": float(gpu.get("limit", -1))}
    for name, per_unit in (("cpu", 1000.0), ("memory", 2**30 / 1e6)):
        host = _kai_resource(spec.get("resources") or {}, name, per_unit)
        if host is not None:
            out[name] = host
    if spec.get("parentQueue"):
        out["parent"] = spec["parentQueue"]
    if spec.get("priority"):
        out["priority"] = int(spec["priority"])
    return out
