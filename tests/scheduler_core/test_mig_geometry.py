"""MIG geometry matches NVIDIA's placement table (domain-facts §1.1) and explains conflicts."""

import pytest

from scheduler_core import mig


def test_placement_table_rows_for_40gb_and_80gb_names():
    p40, p80 = mig.PROFILES["a100-40gb"], mig.PROFILES["a100-80gb"]
    assert list(p40) == ["1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"]
    assert list(p80) == ["1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"]
    assert p40["1g.10gb"].allowed_starts == (0, 2, 4, 6) and p40["1g.10gb"].max_instances == 4
    assert p40["2g.10gb"].allowed_starts == (0, 2, 4) and p40["3g.20gb"].allowed_starts == (0, 4)
    assert p40["4g.20gb"].allowed_starts == (0,) and p40["7g.40gb"].memory_slices == 8
    assert [p.sms for p in p40.values()] == [14, 14, 14, 28, 42, 56, 98]
    assert p80["3g.40gb"].memory_mib == 40192 and p40["3g.20gb"].memory_mib == 19968
    assert p40["3g.20gb"].resource_name == "nvidia.com/mig-3g.20gb"
    assert p40["1g.5gb+me"].resource_name == "nvidia.com/mig-1g.5gb.me"


def test_valid_layout_reports_slices():
    lay = mig.validate("a100-40gb", ["3g.20gb@0", "2g.10gb@4", "1g.5gb@6"])
    # slot 7 is reachable by no 1g start, so nothing more fits: the 7th compute slice is lost
    assert lay.compute_slices == 6 and len(lay.used_slices) == 7 and lay.is_maximal()
    assert not mig.validate("a100-40gb", ["3g.20gb@0"]).is_maximal()


@pytest.mark.parametrize("entries, words", [
    (["3g.20gb@2"], ["3g.20gb@2", "start slot 2", "0, 4"]),
    (["3g.20gb@0", "2g.10gb@2"], ["2g.10gb@2 overlaps 3g.20gb@0", "2-3"]),
    (["1g.5gb+me@0", "1g.5gb+me@1"], ["1g.5gb+me@1", "at most 1"]),
    (["4g.20gb@0", "3g.20gb@0"], ["3g.20gb@0 overlaps 4g.20gb@0"]),
])
def test_errors_name_the_offending_instance_and_the_conflict(entries, words):
    with pytest.raises(mig.MigLayoutError) as exc:
        mig.validate("a100-40gb", entries)
    for w in words:
        assert w in str(exc.value)


def test_80gb_profile_name_on_40gb_gpu_suggests_the_right_name():
    with pytest.raises(mig.MigLayoutError, match="use 3g.20gb"):
        mig.profile("a100-40gb", "3g.40gb")


def test_creation_order_matters_and_mig_parted_permutations_recover():
    with pytest.raises(mig.MigLayoutError, match="cannot create 4g.20gb after"):
        mig.create_in_order("a100-40gb", ["3g.20gb", "4g.20gb"])
    assert str(mig.create_any_order("a100-40gb", ["3g.20gb", "4g.20gb"])) == "4g.20gb@0 3g.20gb@4"
    with pytest.raises(mig.MigLayoutError, match="all orderings failed"):
        mig.create_any_order("a100-40gb", ["4g.20gb", "4g.20gb"])


def test_mig_parted_labels():
    assert str(mig.layout_from_spec("a100-40gb", "all-balanced")) == "1g.5gb@0 1g.5gb@1 2g.10gb@2 3g.20gb@4"
    assert len(mig.layout_from_spec("a100-40gb", "all-1g.10gb").placements) == 4  # 2 memory slices each
    assert len(mig.layout_from_spec("a100-80gb", "all-1g.10gb").placements) == 7
    assert mig.layout_from_spec("a100-80gb", "all-disabled") is None


def test_enumeration_is_exactly_the_rule_based_set():
    layouts = list(mig.enumerate_layouts("a100-40gb"))
    assert len(layouts) == len({str(x) for x in layouts})
    for lay in layouts:  # every enumerated layout validates
        mig.validate("a100-40gb", lay.placements)
    maximal = list(mig.enumerate_layouts("a100-40gb", maximal_only=True))
    assert all(x.is_maximal() for x in maximal)
    assert "4g.20gb@0 3g.20gb@4" in {str(x) for x in maximal}
    assert "7g.40gb@0" in {str(x) for x in maximal}
    assert len(layouts) == 2318 and len(maximal) == 239
