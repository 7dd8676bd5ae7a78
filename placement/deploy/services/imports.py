"""A cluster snapshot (kubectl JSON files) as a scenario document, for the import command and the
upload on the stack page. Nothing is saved here: callers write or run the document only when the
whole snapshot was understood."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError

from placement.common.parsing import ParseProblem, load_json_stream
from placement.deploy.cluster_import import SnapshotInvalid, cluster_scenario
from placement.deploy.snapshot_objects import (
    Kept,
    ReadTooLong,
    TooMuchKept,
    identity,
    node_item,
    pod_item,
    queue_object,
)

MAX_SNAPSHOT_BYTES = 128 * 1024 * 1024  # a 5,000-node cluster's nodes and pods are ~20 MB each
MAX_ERRORS_SHOWN = 50
# Kubernetes' scalability envelope ("Considerations for large clusters": at most 5,000 nodes and
# 150,000 pods per cluster), as scheduler_core.scenario.limits; queues: far more than any cluster defines.
MAX_ITEMS = {"nodes": 5_000, "pods": 150_000, "queues": 10_000}
# One object of a snapshot file: kubectl prints a pod or a node in a few KiB (etcd refuses objects
# past 1.5 MiB). The parser refuses a longer one before building its tree, which for 1 MiB of the
# most wasteful JSON ([[],[],...]) is ~22 MiB: the most an upload holds besides what it keeps.
MAX_OBJECT_CHARS = 1 << 20
# What one upload (nodes, pods and queues files together) keeps after each object is reduced to
# what the import reads (placement.deploy.snapshot_objects), each distinct string once: a cluster
# at Kubernetes' limits (5,000 GFD-labelled nodes, 150,000 pods with unique 20-character names, each
# its own Job) keeps 69 MiB. With the Django process (~70 MiB), one object's tree, 1 MiB outside
# `items` and the import's own tables (~200 bytes per GPU pod), the worst upload accepted peaks at
# 212 MiB = 222 MB, under 256 MB (benchmarks/upload_memory_bench.py, docs/production.md).
MAX_KEPT_BYTES = 96 * 1024 * 1024


def snapshot_limits() -> dict:
    """What the import page states it accepts."""
    return {"file_mib": MAX_SNAPSHOT_BYTES // 2**20, "nodes": f"{MAX_ITEMS['nodes']:,}", "pods": f"{MAX_ITEMS['pods']:,}"}


def upload_budget() -> Kept:
    """What one upload may keep, and how long it may take to read: share it between the files of
    one snapshot (settings.ATLAS_SNAPSHOT_READ_SECONDS)."""
    return Kept(MAX_KEPT_BYTES, settings.ATLAS_SNAPSHOT_READ_SECONDS)


_READERS = {"nodes": node_item, "pods": pod_item, "queues": queue_object}


def decode_snapshot_file(source, field: str, kind: str = "pods", kept: Kept | None = None):
    """One kubectl JSON file (bytes or a binary file object), read with bounded memory: its items one
    at a time, each reduced to what the import reads (placement.deploy.snapshot_objects) before the
    next is read. A problem is {field: ["items[N]: reason"]}; `kept` is the upload's budget
    (upload_budget(), shared by its files)."""
    import io

    size = len(source) if isinstance(source, bytes) else getattr(source, "size", None)
    if size is None:
        source.seek(0, io.SEEK_END)
        size = source.tell()
        source.seek(0)
    if size > MAX_SNAPSHOT_BYTES:
        raise ValidationError({field: [f"The file is larger than {MAX_SNAPSHOT_BYTES // (1024 * 1024)} MiB."]})
    kept = upload_budget() if kept is None else kept
    reader = _READERS[kind]
    try:
        return load_json_stream(io.BytesIO(source) if isinstance(source, bytes) else source,
                                prune=lambda item: reader(item, kept), max_items=MAX_ITEMS[kind],
                                what=f"{kind} (a cluster has at most {MAX_ITEMS[kind]:,})",
                                max_value_chars=MAX_OBJECT_CHARS)
    except ParseProblem as exc:
        problem = f"Not JSON (the output of kubectl get ... -o json): {exc}" if exc.syntax else str(exc)
        raise ValidationError({field: [problem]}) from None
    except TooMuchKept as exc:
        raise ValidationError({field: [(f"This snapshot is too large to import: {exc} (a cluster at Kubernetes' "
                                        "limits, 5,000 nodes and 150,000 pods, keeps about 70 MiB).")]}) from None
    except ReadTooLong as exc:
        raise ValidationError({field: [(f"This snapshot is too slow to import: {exc} (a cluster at Kubernetes' "
                                        "limits reads in under 10 s); nothing was imported.")]}) from None


def snapshot_scenario(nodes, pods, queues=None, *, name: str = "imported-cluster", horizon: str = "24h") -> dict:
    """The scenario document; ValidationError {"snapshot": [one message per object]} otherwise."""
    if not name or len(name) > 200:
        raise ValidationError({"name": ["A scenario name has 1 to 200 characters."]})
    try:
        return cluster_scenario(nodes, pods, queues, name=name, horizon=horizon)
    except SnapshotInvalid as exc:
        shown = exc.errors[:MAX_ERRORS_SHOWN]
        if exc.total > MAX_ERRORS_SHOWN:
            shown.append(f"... and {exc.total - MAX_ERRORS_SHOWN:,} more problems")
        raise ValidationError({"snapshot": shown}) from None
    except (AttributeError, TypeError, ValueError, KeyError) as exc:
        # A field deeper than the shape check (a queue's quotas, say) of an unexpected type.
        raise ValidationError({"snapshot": [f"an object has a field of an unexpected type ({exc})"]}) from None


def _kinds(doc) -> set[str]:
    items = doc.get("items") if isinstance(doc, dict) else doc if isinstance(doc, list) else None
    if isinstance(doc, dict) and items is None and isinstance(doc.get("kind"), str):
        return {doc["kind"]}
    return {kind for kind, _ns, _name in map(identity, items or []) if kind is not None}


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
