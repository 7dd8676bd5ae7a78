"""Small readers of compare() answers shared by the compare test files."""

from __future__ import annotations

from placement.rules import compare


def pair_of(graph, a: str, b: str):
    """The one pair compare() gives for two projects."""
    return compare(graph, [a, b]).pairs[0]


def axis_values(pair, axis: str) -> dict[str, str]:
    """slug -> value on one axis of a pair."""
    return {v.slug: v.value for x in pair.axes if x.axis == axis for v in x.values}
