"""How a scenario's MIG spec becomes a layout: explicit placements, bare names created in order by the
driver, and mig-parted labels created in whatever order works (domain-facts §1.1, §1.6)."""

from __future__ import annotations

import pytest

from scheduler_core import mig


@pytest.mark.parametrize("spec", [
    "3g.20gb@4, 4g.20gb@0",
    "3g.20gb@4 4g.20gb@0",
    ["3g.20gb@4", "4g.20gb@0"],
])
def test_explicit_placements_are_taken_as_given_in_any_spelling(spec):
    assert str(mig.layout_from_spec("a100-40gb", spec)) == "4g.20gb@0 3g.20gb@4"


def test_explicit_placements_that_clash_are_refused_not_moved():
    with pytest.raises(mig.MigLayoutError, match="2g.10gb@2 overlaps 3g.20gb@0"):
        mig.layout_from_spec("a100-40gb", ["3g.20gb@0", "2g.10gb@2"])


def test_bare_names_are_created_in_the_order_written_so_a_bad_order_fails():
    with pytest.raises(mig.MigLayoutError, match="cannot create 4g.20gb after \\[3g.20gb@0\\]"):
        mig.layout_from_spec("a100-40gb", "3g.20gb 4g.20gb")
    created = mig.layout_from_spec("A100-SXM4-80GB", ["4g.40gb", "3g.40gb"])
    assert str(created) == "4g.40gb@0 3g.40gb@4" and created.family == "a100-80gb" and created.is_maximal()


def test_bare_names_take_the_driver_chosen_slot():
    assert str(mig.layout_from_spec("a100-40gb", "1g.5gb,1g.5gb")) == "1g.5gb@0 1g.5gb@1"
    assert str(mig.layout_from_spec("a100-40gb", "1g.5gb,1g.5gb", "highest")) == "1g.5gb@5 1g.5gb@6"


def test_mixing_placed_and_bare_entries_is_refused():
    with pytest.raises(mig.MigLayoutError) as exc:
        mig.layout_from_spec("a100-40gb", ["3g.20gb@0", "2g.10gb"])
    assert str(exc.value) == "mix of profile@start and bare profile entries: give every start or none"
    with pytest.raises(mig.MigLayoutError, match="mix of"):
        mig.layout_from_spec("a100-40gb", ["2g.10gb", "3g.20gb@4"])


def test_all_enabled_turns_mig_on_with_no_instances_while_all_disabled_turns_it_off():
    on = mig.layout_from_spec("a100-40gb", "all-enabled")
    assert on is not None and on.placements == () and str(on) == "(empty)"
    assert on.family == "a100-40gb" and not on.is_maximal()
    assert mig.layout_from_spec("a100-40gb", "all-disabled") is None
    assert mig.label_profiles("a100-40gb", "all-disabled") is None
    assert mig.label_profiles("a100-40gb", "all-enabled") == []


def test_balanced_label_uses_each_memory_sizes_own_names():
    assert mig.label_profiles("a100-40gb", "all-balanced") == ["1g.5gb", "1g.5gb", "2g.10gb", "3g.20gb"]
    assert mig.label_profiles("a100-80gb", "all-balanced") == ["1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb"]
    assert str(mig.layout_from_spec("a100-80gb", "all-balanced")) == "1g.10gb@0 1g.10gb@1 2g.20gb@2 3g.40gb@4"


def test_single_profile_label_fills_the_gpu_with_that_profile():
    assert mig.label_profiles("a100-40gb", "all-3g.20gb") == ["3g.20gb", "3g.20gb"]
    assert mig.label_profiles("a100-40gb", "all-1g.5gb+me") == ["1g.5gb+me"]
    assert str(mig.layout_from_spec("a100-40gb", "all-2g.10gb")) == "2g.10gb@0 2g.10gb@2 2g.10gb@4"


def test_labels_follow_the_driver_slot_choice():
    assert str(mig.layout_from_spec("a100-40gb", "all-1g.5gb+me", "highest")) == "1g.5gb+me@6"
    assert str(mig.layout_from_spec("a100-40gb", "all-1g.5gb+me")) == "1g.5gb+me@0"


def test_unknown_labels_are_named_in_the_error():
    with pytest.raises(mig.MigLayoutError) as exc:
        mig.label_profiles("a100-40gb", "balanced")
    assert str(exc.value) == ("unknown mig-parted label 'balanced': expected all-disabled, all-enabled, all-balanced "
                              "or all-<profile>")
    with pytest.raises(mig.MigLayoutError, match="unknown MIG profile '3g.40gb' for a100-40gb .*use 3g.20gb"):
        mig.layout_from_spec("a100-40gb", "all-3g.40gb")


def test_mig_parted_tries_the_other_orders_even_when_profiles_repeat():
    # 1g first strands the 4g (start 0 only); 4g first then both 1g instances fit after it
    assert str(mig.create_any_order("a100-40gb", ["1g.5gb", "1g.5gb", "4g.20gb"])) == "4g.20gb@0 1g.5gb@4 1g.5gb@5"
    assert str(mig.create_any_order("a100-40gb", ["1g.5gb", "4g.20gb"], "highest")) == "4g.20gb@0 1g.5gb@6"


def test_mig_parted_failure_names_the_profiles_the_gpu_and_the_last_reason():
    with pytest.raises(mig.MigLayoutError) as exc:
        mig.create_any_order("a100-80gb", ["4g.40gb", "4g.40gb"])
    assert str(exc.value) == ("all orderings failed for [4g.40gb, 4g.40gb] on a100-80gb: cannot create 4g.40gb "
                              "after [4g.40gb@0]: 4g.40gb allows at most 1 instance(s) per GPU (creation order matters)")
    with pytest.raises(mig.MigLayoutError) as exc:
        mig.create_any_order("a100-40gb", ["3g.20gb", "3g.20gb", "1g.5gb"])  # 9 memory slices wanted
    assert str(exc.value).endswith(": cannot create 3g.20gb after [1g.5gb@0 3g.20gb@4]: allowed starts 0, 4 "
                                   "blocked by 1g.5gb@0, 3g.20gb@4 (creation order matters)")


def test_mig_parted_rejects_an_unknown_profile_before_trying_orders():
    with pytest.raises(mig.MigLayoutError, match="unknown MIG profile '5g.30gb' for a100-40gb"):
        mig.create_any_order("a100-40gb", ["1g.5gb", "5g.30gb"])


def test_a_blocked_creation_names_only_the_instances_in_the_way():
    with pytest.raises(mig.MigLayoutError) as exc:
        mig.create_in_order("a100-40gb", ["1g.5gb", "1g.5gb", "1g.5gb", "1g.5gb", "3g.20gb", "3g.20gb"])
    # slots 0-3 hold the 1g instances, 4-7 the first 3g; the second 3g (starts 0, 4) is blocked by all five
    assert "allowed starts 0, 4 blocked by 1g.5gb@0, 1g.5gb@1, 1g.5gb@2, 1g.5gb@3, 3g.20gb@4" in str(exc.value)
    with pytest.raises(mig.MigLayoutError) as exc:
        mig.create_in_order("a100-40gb", ["2g.10gb", "1g.10gb", "4g.20gb"])
    assert "allowed starts 0 blocked by 1g.10gb@2, 2g.10gb@0 " in str(exc.value)
    with pytest.raises(mig.MigLayoutError) as exc:  # 3g@4 sits outside the 4g's slices 0-3: not a blocker
        mig.create_in_order("a100-40gb", ["1g.5gb", "3g.20gb", "4g.20gb"])
    assert str(exc.value) == ("cannot create 4g.20gb after [1g.5gb@0 3g.20gb@4]: allowed starts 0 blocked by "
                              "1g.5gb@0 (creation order matters)")


def test_a_creation_refused_by_the_instance_limit_names_the_limit_not_free_slots_as_blockers():
    # slots 1-6 are free: the +me profile is refused because only one may exist per GPU
    with pytest.raises(mig.MigLayoutError) as exc:
        mig.create_in_order("a100-40gb", ["1g.5gb+me", "1g.5gb+me"])
    assert str(exc.value) == ("cannot create 1g.5gb+me after [1g.5gb+me@0]: 1g.5gb+me allows at most 1 instance(s) "
                              "per GPU (creation order matters)")
