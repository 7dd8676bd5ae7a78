"""Field-by-field diff of two template documents, nested lists included. Pure Python."""

from __future__ import annotations

import json
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any


@dataclass(frozen=True)
class Change:
    path: str  # e.g. placement.sources[1].url
    kind: str  # added | removed | changed
    old: Any = None
    new: Any = None


def _is_scalar_list(value: Any) -> bool:
    return isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value)


def diff_documents(old: Any, new: Any, path: str = "") -> list[Change]:
    """Changes from `old` to `new`. Lists of scalars diff as sets of items (order changes are
    reported as a change of the whole list); lists of records are aligned first (records present in
    both are unchanged wherever they moved to), then a record replaced in place diffs field by field."""
    if isinstance(old, dict) and isinstance(new, dict):
        changes: list[Change] = []
        for key in list(old) + [k for k in new if k not in old]:
            sub = f"{path}.{key}" if path else str(key)
            if key not in new:
                changes.append(Change(sub, "removed", old=old[key]))
            elif key not in old:
                changes.append(Change(sub, "added", new=new[key]))
            else:
                changes.extend(diff_documents(old[key], new[key], sub))
        return changes
    if isinstance(old, list) and isinstance(new, list):
        if old == new:
            return []
        if _is_scalar_list(old) and _is_scalar_list(new):
            removed = [v for v in old if v not in new]
            added = [v for v in new if v not in old]
            if not removed and not added:
                return [Change(path, "changed", old=old, new=new)]  # reordered
            return [Change(f"{path}[]", "removed", old=v) for v in removed] + [
                Change(f"{path}[]", "added", new=v) for v in added
            ]
        return _diff_records(old, new, path)
    if old != new:
        return [Change(path, "changed", old=old, new=new)]
    return []


def _diff_records(old: list, new: list, path: str) -> list[Change]:
    key = [json.dumps(v, sort_keys=True, default=str) for v in old]
    new_key = [json.dumps(v, sort_keys=True, default=str) for v in new]
    changes: list[Change] = []
    for op, i1, i2, j1, j2 in SequenceMatcher(a=key, b=new_key, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        paired = min(i2 - i1, j2 - j1) if op == "replace" else 0
        for k in range(paired):
            changes.extend(diff_documents(old[i1 + k], new[j1 + k], f"{path}[{j1 + k}]"))
        changes.extend(Change(f"{path}[{i}]", "removed", old=old[i]) for i in range(i1 + paired, i2))
        changes.extend(Change(f"{path}[{j}]", "added", new=new[j]) for j in range(j1 + paired, j2))
    return changes
