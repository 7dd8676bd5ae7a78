"""A cluster snapshot (kubectl JSON files) as a scenario document, for the import command and the
upload on the stack page. Nothing is saved here: callers write or run the document only when the
whole snapshot was understood."""

from __future__ import annotations

import sys

from django.core.exceptions import ValidationError

from placement.common.parsing import ParseProblem, load_json_stream
from placement.deploy.cluster_import import SnapshotInvalid, cluster_scenario

MAX_SNAPSHOT_BYTES = 128 * 1024 * 1024  # a 5,000-node cluster's nodes and pods are ~20 MB each
MAX_ERRORS_SHOWN = 50


# What the importer never reads, dropped from each object as it is parsed: a real snapshot's pods
# are mostly managedFields, env, volumes, probes and container statuses.
_POD_SPEC_KEPT = ("nodeName", "priority", "priorityClassName", "schedulerName", "containers")
_STATUS_KEPT = ("phase", "capacity", "allocatable")
_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


# Kubernetes' scalability envelope ("Considerations for large clusters": at most 5,000 nodes and
# 150,000 pods per cluster), as scheduler_core.scenario.limits; queues: far more than any cluster defines.
MAX_ITEMS = {"nodes": 5_000, "pods": 150_000, "queues": 10_000}


def _interned(value):
    """Each item is decoded on its own, so its keys are not shared with the other items' as one
    json.loads would share them: intern them (a pod's keys are most of its small strings)."""
    if isinstance(value, dict):
        return {sys.intern(k): _interned(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_interned(v) for v in value]
    return value


def prune_object(obj):
    """A kubectl object with only the fields the cluster import reads (placement.deploy.cluster_import)."""
    if not isinstance(obj, dict):
        return obj
    meta, spec, status = obj.get("metadata"), obj.get("spec"), obj.get("status")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
        if isinstance(meta.get("annotations"), dict):
            meta["annotations"].pop(_LAST_APPLIED, None)
    if isinstance(status, dict):
        obj["status"] = {k: v for k, v in status.items() if k in _STATUS_KEPT}
    if obj.get("kind", "Pod") == "Pod" and isinstance(spec, dict):
        spec = obj["spec"] = {k: v for k, v in spec.items() if k in _POD_SPEC_KEPT}
        if isinstance(spec.get("containers"), list):
            spec["containers"] = [{k: v for k, v in c.items() if k in ("name", "resources")} if isinstance(c, dict) else c
                                  for c in spec["containers"]]
    return _interned(obj)


def decode_snapshot_file(source, field: str, kind: str = "pods"):
    """One kubectl JSON file (bytes or a binary file object), read with bounded memory: its items one
    at a time, each pruned to what the import reads (placement.common.parsing.load_json_stream). A problem
    is {field: ["items[N]: reason"]}."""
    import io

    size = len(source) if isinstance(source, bytes) else getattr(source, "size", None)
    if size is None:
        source.seek(0, io.SEEK_END)
        size = source.tell()
        source.seek(0)
    if size > MAX_SNAPSHOT_BYTES:
        raise ValidationError({field: [f"The file is larger than {MAX_SNAPSHOT_BYTES // (1024 * 1024)} MiB."]})
    try:
        return load_json_stream(io.BytesIO(source) if isinstance(source, bytes) else source, prune=prune_object,
                                max_items=MAX_ITEMS[kind], what=f"{kind} (a cluster has at most {MAX_ITEMS[kind]:,})")
    except ParseProblem as exc:
        problem = f"Not JSON (the output of kubectl get ... -o json): {exc}" if exc.syntax else str(exc)
        raise ValidationError({field: [problem]}) from None


def snapshot_scenario(nodes, pods, queues=None, *, name: str = "imported-cluster", horizon: str = "24h") -> dict:
    """The scenario document; ValidationError {"snapshot": [one message per object]} otherwise."""
    if not name or len(name) > 200:
        raise ValidationError({"name": ["A scenario name has 1 to 200 characters."]})
    try:
        return cluster_scenario(nodes, pods, queues, name=name, horizon=horizon)
    except SnapshotInvalid as exc:
        shown = exc.errors[:MAX_ERRORS_SHOWN]
        if len(exc.errors) > MAX_ERRORS_SHOWN:
            shown.append(f"... and {len(exc.errors) - MAX_ERRORS_SHOWN} more problems")
        raise ValidationError({"snapshot": shown}) from None
    except (AttributeError, TypeError, ValueError, KeyError) as exc:
        # A field deeper than the shape check (a queue's quotas, say) of an unexpected type.
        raise ValidationError({"snapshot": [f"an object has a field of an unexpected type ({exc})"]}) from None


def _kinds(doc) -> set[str]:
    items = doc.get("items") if isinstance(doc, dict) else doc if isinstance(doc, list) else None
    if isinstance(doc, dict) and items is None and isinstance(doc.get("kind"), str):
        return {doc["kind"]}
    return {i.get("kind") for i in items or [] if isinstance(i, dict) and isinstance(i.get("kind"), str)}


def check_file_roles(nodes, pods) -> None:
    """One clear line when the nodes and pods files were given the wrong way round (or a file of
    another kind altogether), instead of one error per object."""
    node_kinds, pod_kinds = _kinds(nodes), _kinds(pods)
    if "Pod" in node_kinds and "Node" in pod_kinds:
        raise ValidationError({"snapshot": ["The nodes and pods files are swapped: the nodes file holds Pods and the pods file holds Nodes."]})
    for field, kinds, wanted, command in (
        ("nodes_file", node_kinds, "Node", "kubectl get nodes -o json"),
        ("pods_file", pod_kinds, "Pod", "kubectl get pods -A -o json"),
    ):
        other = sorted(k for k in kinds if k != wanted)
        if other and wanted not in kinds:
            raise ValidationError({field: [f"This file holds {', '.join(other)} objects, not {wanted}s: upload the output of {command}."]})


def snapshot_summary(document: dict) -> dict:
    """What an imported scenario holds and what a run of it can and cannot tell."""
    groups = document.get("pool", {}).get("node_groups", [])
    workloads = document.get("workloads", [])
    services = [w for w in workloads if w.get("kind") == "inference"]
    silent = [w["name"] for w in services if not w.get("arrival_rate") and not w.get("rate_schedule")]
    control = (document.get("stack") or {}).get("control_plane") or {}
    return {
        "node_groups": [
            {"name": g["name"], "count": g["count"], "gpu": g["gpu"], "gpus_per_node": g["gpus_per_node"],
             "mig": ", ".join(m.get("layout", "") for m in g.get("mig", []) if isinstance(m.get("layout"), str))}
            for g in groups
        ],
        "nodes": sum(g["count"] for g in groups),
        "gpus": sum(g["count"] * g["gpus_per_node"] for g in groups),
        "tenants": [t["name"] for t in document.get("tenants", [])],
        "jobs": sum(w.get("count", 1) for w in workloads if w.get("kind") != "inference"),
        "services": len(services),
        "silent_services": silent,
        "scheduler": control.get("scheduler", ""),
        "admission": control.get("admission", "") or "none",
        "description": document.get("description", ""),
    }
