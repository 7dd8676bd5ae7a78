"""A cluster snapshot (kubectl JSON files) as a scenario document, for the import command and the
upload on the stack page. Nothing is saved here: callers write or run the document only when the
whole snapshot was understood."""

from __future__ import annotations

import json

from django.core.exceptions import ValidationError

from placement.deploy.cluster_import import SnapshotInvalid, cluster_scenario

MAX_SNAPSHOT_BYTES = 128 * 1024 * 1024  # a 5,000-node cluster's nodes and pods are ~20 MB each
MAX_ERRORS_SHOWN = 50


def decode_snapshot_file(raw: bytes, field: str):
    if len(raw) > MAX_SNAPSHOT_BYTES:
        raise ValidationError({field: [f"The file is larger than {MAX_SNAPSHOT_BYTES // (1024 * 1024)} MiB."]})
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValidationError({field: [f"Not JSON (the output of kubectl get ... -o json): {exc}"]}) from None
    except RecursionError:
        raise ValidationError({field: ["Nested too deeply to be kubectl output."]}) from None


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
