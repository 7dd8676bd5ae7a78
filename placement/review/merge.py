"""Three-way merge of template documents, for rebasing a proposal onto a version accepted after
it was made. Pure Python.

A field is a path of dictionary keys down to a value that is not a dictionary (a text, a choice or
a whole list: `placement.costs.overhead`, `placement.sources`). Lists are fields as a whole because
their order is data (the first resource unit is the primary one) and records in them have no
identity to match on. For each field:

- changed only by the accepted revision (ours == base): keep the accepted value;
- changed only by the proposal (theirs == base): keep the proposal's value;
- changed by both to the same value: keep it;
- changed by both differently: a conflict the author resolves, seeing base, accepted and proposed.

So nothing accepted is lost silently: it is either kept or shown beside the proposal's value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ACCEPTED = "accepted"  # resolve a conflict by keeping the value accepted meanwhile
PROPOSED = "proposed"  # resolve it by keeping the proposal's value
RESOLUTIONS = (ACCEPTED, PROPOSED)


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


MISSING: Any = _Missing()


@dataclass(frozen=True)
class FieldConflict:
    path: str
    base: Any
    accepted: Any
    proposed: Any


@dataclass
class MergeResult:
    document: dict  # the merge with every conflict still at the proposal's value
    conflicts: list[FieldConflict] = field(default_factory=list)
    kept_from_accepted: list[str] = field(default_factory=list)  # fields only the accepted revision changed
    kept_from_proposal: list[str] = field(default_factory=list)  # fields only the proposal changed

    def resolved(self, resolutions: dict[str, str]) -> dict:
        """The merged document with each conflict resolved; raises KeyError naming unresolved paths
        and ValueError for a resolution that is neither 'accepted' nor 'proposed'."""
        missing = [c.path for c in self.conflicts if c.path not in resolutions]
        if missing:
            raise KeyError(missing)
        document = _copy(self.document)
        for conflict in self.conflicts:
            choice = resolutions[conflict.path]
            if choice not in RESOLUTIONS:
                raise ValueError(f"{conflict.path}: choose {' or '.join(RESOLUTIONS)}, not {choice!r}")
            _set(document, conflict.path.split("."), conflict.accepted if choice == ACCEPTED else conflict.proposed)
        return document


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _set(document: dict, keys: list[str], value: Any) -> None:
    for key in keys[:-1]:
        document = document.setdefault(key, {})
    if value is MISSING:
        document.pop(keys[-1], None)
    else:
        document[keys[-1]] = _copy(value)


def _keys(*values: Any) -> list[str]:
    keys: list[str] = []
    for value in values:
        if isinstance(value, dict):
            keys.extend(k for k in value if k not in keys)
    return keys


def _merge(base: Any, accepted: Any, proposed: Any, path: str, result: MergeResult) -> Any:
    if isinstance(accepted, dict) and isinstance(proposed, dict) and (base is MISSING or isinstance(base, dict)):
        merged = {}
        for key in _keys(accepted, proposed):
            sub = f"{path}.{key}" if path else str(key)
            value = _merge(
                base.get(key, MISSING) if isinstance(base, dict) else MISSING,
                accepted.get(key, MISSING),
                proposed.get(key, MISSING),
                sub,
                result,
            )
            if value is not MISSING:
                merged[key] = value
        return merged
    if proposed == accepted:
        return _copy(proposed)
    if base is not MISSING and proposed == base:
        result.kept_from_accepted.append(path)
        return _copy(accepted)
    if base is not MISSING and accepted == base:
        result.kept_from_proposal.append(path)
        return _copy(proposed)
    result.conflicts.append(FieldConflict(path, base, accepted, proposed))
    return _copy(proposed)


def merge_documents(base: dict | None, accepted: dict, proposed: dict) -> MergeResult:
    """Merge `proposed` (made from `base`) onto `accepted` (the current version). Without a base
    every difference is a conflict: nothing is assumed."""
    result = MergeResult(document={})
    result.document = _merge(MISSING if base is None else base, accepted, proposed, "", result)
    return result
