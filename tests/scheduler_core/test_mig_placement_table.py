"""MIG layouts against an independent reading of NVIDIA's placement table (domain-facts §1.1).

The oracle below is written from the facts table alone (not from `scheduler_core.mig`): each
instance is a bit mask of the memory slices it holds, and a layout is valid when every start is an
allowed one, the masks are disjoint, per-profile counts stay within the maximum and compute slices
sum to at most 7. The validator and the enumeration must agree with it on every layout."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler_core import mig

# domain-facts §1.1, A100-40GB names: (compute slices g, memory slices, allowed starts, max instances)
FACTS_TABLE = {
    "1g.5gb": (1, 1, (0, 1, 2, 3, 4, 5, 6), 7),
    "1g.5gb+me": (1, 1, (0, 1, 2, 3, 4, 5, 6), 1),
    "1g.10gb": (1, 2, (0, 2, 4, 6), 4),
    "2g.10gb": (2, 2, (0, 2, 4), 3),
    "3g.20gb": (3, 4, (0, 4), 2),
    "4g.20gb": (4, 4, (0,), 1),
    "7g.40gb": (7, 8, (0,), 1),
}
CANDIDATES = [(name, start) for name, (_, _, starts, _) in FACTS_TABLE.items() for start in starts]


def _mask(name: str, start: int) -> int:
    return ((1 << FACTS_TABLE[name][1]) - 1) << start


def oracle_valid(instances: list[tuple[str, int]]) -> bool:
    used, counts, compute = 0, {}, 0
    for name, start in instances:
        g, size, starts, most = FACTS_TABLE[name]
        if start not in starts or start + size > 8 or used & _mask(name, start):
            return False
        used |= _mask(name, start)
        counts[name] = counts.get(name, 0) + 1
        compute += g
        if counts[name] > most or compute > 7:
            return False
    return True


def oracle_layouts() -> set[frozenset[str]]:
    """Every non-empty valid layout: sets of (profile, start) candidates, searched one by one."""
    found: set[frozenset[str]] = set()

    def walk(i: int, chosen: list[tuple[str, int]]) -> None:
        if i == len(CANDIDATES):
            if chosen:
                found.add(frozenset(f"{n}@{s}" for n, s in chosen))
            return
        walk(i + 1, chosen)
        if oracle_valid(chosen + [CANDIDATES[i]]):
            walk(i + 1, chosen + [CANDIDATES[i]])

    walk(0, [])
    return found


def _is_maximal(layout: frozenset[str]) -> bool:
    instances = [(p.split("@")[0], int(p.split("@")[1])) for p in layout]
    return not any(oracle_valid(instances + [c]) for c in CANDIDATES)


def _as_set(layout: mig.MigLayout) -> frozenset[str]:
    return frozenset(str(p) for p in layout.placements)


def test_the_simulators_table_is_the_facts_table():
    table = mig.PROFILES["a100-40gb"]
    assert {n: (p.compute_slices, p.memory_slices, p.allowed_starts, p.max_instances) for n, p in table.items()} == FACTS_TABLE


def test_enumerated_layouts_are_exactly_the_independently_enumerated_ones():
    expected = oracle_layouts()
    enumerated = [_as_set(x) for x in mig.enumerate_layouts("a100-40gb")]
    assert len(enumerated) == len(set(enumerated))
    assert set(enumerated) == expected
    maximal = {_as_set(x) for x in mig.enumerate_layouts("a100-40gb", maximal_only=True)}
    assert maximal == {x for x in expected if _is_maximal(x)}


@pytest.mark.parametrize(
    "entries",
    [
        ["1g.5gb@0", "1g.5gb@0"],  # the same one-slice instance twice: clashes on its only (last) slice
        ["3g.20gb@0", "1g.5gb@3"],  # the new instance lands on the earlier one's last slice
        ["1g.5gb@3", "3g.20gb@0"],  # the new instance's last slice lands on an earlier one
        ["2g.10gb@2", "1g.5gb@3"],
        ["1g.10gb@4", "1g.5gb@5"],
    ],
)
def test_an_instance_clashing_only_on_a_last_memory_slice_is_rejected(entries):
    assert not oracle_valid([(e.split("@")[0], int(e.split("@")[1])) for e in entries])
    with pytest.raises(mig.MigLayoutError, match="overlaps"):
        mig.validate("a100-40gb", entries)


ANY_PLACEMENT = st.tuples(st.sampled_from(sorted(FACTS_TABLE)), st.integers(min_value=0, max_value=7))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(CANDIDATES), ANY_PLACEMENT), min_size=1, max_size=8))
def test_validator_accepts_exactly_the_layouts_the_placement_table_allows(instances):
    entries = [f"{name}@{start}" for name, start in instances]
    if oracle_valid(instances):
        assert _as_set(mig.validate("a100-40gb", entries)) == frozenset(entries)
    else:
        with pytest.raises(mig.MigLayoutError):
            mig.validate("a100-40gb", entries)
