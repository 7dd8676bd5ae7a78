"""A cluster snapshot (kubectl JSON files) as a scenario document, for the import command and the
upload on the stack page. Nothing is saved here: callers write or run the document only when the
whole snapshot was understood."""

from __future__ import annotations

from django.core.exceptions import ValidationError

from placement.deploy.cluster_import import SnapshotInvalid, cluster_scenario
from placement.parsing import ParseProblem, load_json

MAX_SNAPSHOT_BYTES = 128 * 1024 * 1024  # a 5,000-node cluster's nodes and pods are ~20 MB each
MAX_ERRORS_SHOWN = 50


def decode_snapshot_file(raw: bytes, field: str):
    """One kubectl JSON file, read through the bounded parser (placement.parsing): a problem is
    {field: ["line L column C: reason"]}."""
    if len(raw) > MAX_SNAPSHOT_BYTES:
        raise ValidationError({field: [f"The file is larger than {MAX_SNAPSHOT_BYTES // (1024 * 1024)} MiB."]})
    try:
        return load_json(raw)
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
