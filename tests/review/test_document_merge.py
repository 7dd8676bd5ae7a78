"""The three-way merge behind a rebase, on catalog documents with random edits on both sides:
nothing the accepted revision changed is lost, nothing the proposal changed alone is lost, and
only fields both changed differently wait for the author. Pure Python."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from placement.review.merge import ACCEPTED, PROPOSED, merge_documents

CATALOG = Path(__file__).resolve().parents[2] / "fixtures" / "catalog"
BASE = yaml.safe_load((CATALOG / "kueue.yaml").read_text())
FIELDS = [
    ("summary",),
    ("name",),
    ("placement", "promise"),
    ("placement", "costs", "overhead"),
    ("placement", "costs", "reconfiguration"),
    ("placement", "observability"),
    ("placement", "resource_units"),
    ("placement", "maps", "control-plane", "secondary"),
]


def _get(doc, path):
    for key in path:
        doc = doc[key]
    return doc


def _set(doc, path, value):
    for key in path[:-1]:
        doc = doc[key]
    doc[path[-1]] = value


def _edit(draw, doc, label):
    edited = copy.deepcopy(doc)
    changed = draw(st.sets(st.sampled_from(FIELDS)), label=label)
    for path in changed:
        old = _get(doc, path)
        new = draw(st.sampled_from(["one", "two"]), label=f"{label} {'.'.join(path)}")
        _set(edited, path, old + [new] if isinstance(old, list) else f"{old} ({new})")
    return edited, changed


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_a_merge_keeps_every_one_sided_change_and_asks_only_about_two_sided_ones(data):
    accepted, by_accepted = _edit(data.draw, BASE, "accepted")
    proposed, by_proposal = _edit(data.draw, BASE, "proposed")
    result = merge_documents(BASE, accepted, proposed)
    paths = {".".join(p): p for p in FIELDS}
    conflicts = {c.path for c in result.conflicts}
    assert conflicts == {".".join(p) for p in by_accepted & by_proposal if _get(accepted, p) != _get(proposed, p)}
    for name, path in paths.items():
        if name in conflicts:
            continue
        if path in by_accepted and path not in by_proposal:
            assert _get(result.document, path) == _get(accepted, path), name  # accepted, never reverted
        elif path in by_proposal:
            assert _get(result.document, path) == _get(proposed, path), name
        else:
            assert _get(result.document, path) == _get(BASE, path), name
    # each resolution takes exactly the side it names
    for choice, side in ((ACCEPTED, accepted), (PROPOSED, proposed)):
        resolved = result.resolved({c: choice for c in conflicts})
        for name in conflicts:
            assert _get(resolved, paths[name]) == _get(side, paths[name])


def test_without_a_base_every_difference_is_a_conflict():
    accepted = copy.deepcopy(BASE)
    accepted["summary"] = "Accepted summary."
    result = merge_documents(None, accepted, BASE)
    assert [c.path for c in result.conflicts] == ["summary"]
