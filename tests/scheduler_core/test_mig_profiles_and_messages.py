"""What a user reads about MIG: GPU names accepted, each memory size's profile resources (domain-facts
§1.1, NVML mock tables), the slots still free on a layout, and error messages that point at the exact
instance, slice and limit."""

from __future__ import annotations

import pytest

from scheduler_core import mig

# domain-facts §1.1, per-profile resources: SMs, MiB, copy engines, NVDEC, +me (JPEG/OFA)
RESOURCES_40GB = {
    "1g.5gb": (19, 14, 4864, 1, 0, False), "1g.5gb+me": (20, 14, 4864, 1, 1, True),
    "1g.10gb": (15, 14, 9856, 1, 1, False), "2g.10gb": (14, 28, 9856, 2, 1, False),
    "3g.20gb": (9, 42, 19968, 3, 2, False), "4g.20gb": (5, 56, 19968, 4, 2, False),
    "7g.40gb": (0, 98, 40192, 7, 5, False),
}
RESOURCES_80GB = {
    "1g.10gb": (19, 14, 9856, 1, 1, False), "1g.10gb+me": (20, 14, 9856, 1, 1, True),
    "1g.20gb": (15, 14, 19968, 1, 1, False), "2g.20gb": (14, 28, 19968, 2, 1, False),
    "3g.40gb": (9, 42, 40192, 3, 2, False), "4g.40gb": (5, 56, 40192, 4, 2, False),
    "7g.80gb": (0, 98, 80384, 7, 5, False),
}


@pytest.mark.parametrize("family, expected", [("a100-40gb", RESOURCES_40GB), ("a100-80gb", RESOURCES_80GB)])
def test_each_memory_size_has_its_own_profile_resources(family, expected):
    got = {n: (p.nvml_id, p.sms, p.memory_mib, p.copy_engines, p.decoders, p.media_extensions)
           for n, p in mig.PROFILES[family].items()}
    assert got == expected
    # geometry is the same table for both sizes (facts §1.1: one placement table for 40 and 80 GB)
    geometry = [(p.compute_slices, p.memory_slices, p.allowed_starts, p.max_instances)
                for p in mig.PROFILES[family].values()]
    assert geometry[1] == (1, 1, (0, 1, 2, 3, 4, 5, 6), 1) and geometry[-1] == (7, 8, (0,), 1)


def test_sm_share_is_of_a_full_108_sm_a100():
    assert mig.profile("a100-40gb", "3g.20gb").sm_fraction == pytest.approx(42 / 108)
    assert mig.profile("a100-80gb", "7g.80gb").sm_fraction == pytest.approx(98 / 108)


@pytest.mark.parametrize("gpu, family", [
    ("a100-40gb", "a100-40gb"), (" A100-80GB ", "a100-80gb"), ("A100-SXM4-80GB", "a100-80gb"),
    ("a100-pcie-40gb", "a100-40gb"),
])
def test_a100_model_names_map_to_their_mig_family(gpu, family):
    assert mig.family_of(gpu) == family


@pytest.mark.parametrize("gpu", ["a100", "a30-24gb", "l40s"])
def test_gpus_without_a_mig_table_are_refused_by_name(gpu):
    with pytest.raises(mig.MigLayoutError) as exc:
        mig.family_of(gpu)
    assert str(exc.value) == (f"unknown GPU {gpu!r}: expected one of a100-40gb, a100-80gb, h100-80gb, "
                              "h200-141gb, b200-180gb or a MIG-capable model name")


@pytest.mark.parametrize("gpu, family, seven_g, mib, sms", [
    ("H100-SXM5-80GB", "h100-80gb", "7g.80gb", 80384, 132),
    ("H200-SXM5-141GB", "h200-141gb", "7g.141gb", 143104, 132),
    ("B200-SXM6-180GB", "b200-180gb", "7g.180gb", 181248, 148),
])
def test_hopper_and_blackwell_have_their_own_mig_tables(gpu, family, seven_g, mib, sms):
    assert mig.family_of(gpu) == family
    whole = mig.profile(family, seven_g)
    assert (whole.memory_mib, whole.sms, whole.sm_fraction) == (mib, sms, 1.0)
    assert mig.label_profiles(family, "all-balanced")[3].startswith("3g.")


def test_the_other_sizes_profile_name_gets_the_right_name_as_a_hint():
    with pytest.raises(mig.MigLayoutError) as exc:
        mig.profile("a100-80gb", "1g.5gb")
    assert str(exc.value) == (
        "unknown MIG profile '1g.5gb' for a100-80gb (1g.5gb is the a100-40gb name; on a100-80gb use 1g.10gb); "
        "known: 1g.10gb, 1g.10gb+me, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb")
    with pytest.raises(mig.MigLayoutError, match=r"\(7g.80gb is the a100-80gb name; on a100-40gb use 7g.40gb\)"):
        mig.profile("a100-40gb", "7g.80gb")


def test_a_name_of_neither_size_gets_no_hint():
    with pytest.raises(mig.MigLayoutError) as exc:
        mig.profile("a100-40gb", "5g.30gb")
    assert str(exc.value).startswith("unknown MIG profile '5g.30gb' for a100-40gb; known: 1g.5gb, ")


@pytest.mark.parametrize("text, words", [
    ("3g.20gb", "'3g.20gb': expected profile@start, e.g. 3g.20gb@4"),
    ("3g.20gb@x", "'3g.20gb@x': start slot 'x' is not an integer"),
    ("3g.20gb@4@5", "'3g.20gb@4@5': start slot '4@5' is not an integer"),
])
def test_a_placement_without_a_usable_start_is_refused_by_name(text, words):
    with pytest.raises(mig.MigLayoutError) as exc:
        mig.parse_placement("a100-40gb", text)
    assert str(exc.value) == words


def test_a_placement_parses_with_surrounding_spaces():
    p = mig.parse_placement("a100-40gb", " 2g.10gb@4 ")
    assert (p.start, p.profile.name, list(p.slices), str(p)) == (4, "2g.10gb", [4, 5], "2g.10gb@4")


@pytest.mark.parametrize("entries, message", [
    (["3g.20gb@0", "1g.5gb@3"], "1g.5gb@3 overlaps 3g.20gb@0 on memory slice(s) 3"),
    (["1g.10gb@4", "3g.20gb@4"], "3g.20gb@4 overlaps 1g.10gb@4 on memory slice(s) 4-5"),
    (["1g.5gb@1", "4g.20gb@0"], "4g.20gb@0 overlaps 1g.5gb@1 on memory slice(s) 1"),
    (["1g.5gb@2", "1g.5gb@1", "4g.20gb@0"], "4g.20gb@0 overlaps 1g.5gb@1 on memory slice(s) 1"),
    (["3g.20gb@4", "7g.40gb@0"], "7g.40gb@0 overlaps 3g.20gb@4 on memory slice(s) 4-7"),
    (["1g.5gb+me@0", "1g.5gb+me@3"], "1g.5gb+me@3: 1g.5gb+me allows at most 1 instance(s) per GPU "
                                     "(1g.5gb+me@0, 1g.5gb+me@3)"),
    (["7g.40gb@1"], "7g.40gb@1: start slot 1 is not allowed for 7g.40gb (allowed starts: 0)"),
])
def test_a_refused_layout_names_the_instance_the_slices_and_the_limit(entries, message):
    with pytest.raises(mig.MigLayoutError) as exc:
        mig.validate("a100-40gb", entries)
    assert str(exc.value) == message


def test_a_full_gpu_uses_all_seven_compute_slices():
    lay = mig.validate("a100-40gb", ["4g.20gb@0", "2g.10gb@4", "1g.10gb@6"])
    assert lay.compute_slices == 7 and lay.sms == 56 + 28 + 14 and lay.used_slices == frozenset(range(8))
    assert mig.validate("a100-80gb", ["7g.80gb@0"]).compute_slices == 7


def test_a_layout_reports_its_instances_per_profile_and_in_slot_order():
    lay = mig.validate("a100-40gb", ["1g.5gb@6", "3g.20gb@0", "1g.5gb@4"])
    assert lay.counts() == {"3g.20gb": 1, "1g.5gb": 2}
    assert str(lay) == "3g.20gb@0 1g.5gb@4 1g.5gb@6" and lay.family == "a100-40gb"
    assert mig.validate("A100-SXM4-80GB", []).family == "a100-80gb"


def test_free_slots_for_one_more_instance():
    lay = mig.validate("a100-40gb", ["3g.20gb@0", "1g.5gb@5"])
    prof = lambda n: mig.profile("a100-40gb", n)  # noqa: E731
    assert lay.can_add(prof("1g.5gb")) == [4, 6]
    assert lay.can_add(prof("1g.10gb")) == [6]
    assert lay.can_add(prof("2g.10gb")) == []
    assert lay.can_add(prof("3g.20gb")) == []  # slots 4-7 are not all free
    assert not lay.is_maximal()
    with_me = mig.validate("a100-40gb", ["1g.5gb+me@0"])
    assert with_me.can_add(prof("1g.5gb+me")) == []  # one +me per GPU even with six free starts
    assert with_me.can_add(prof("1g.5gb")) == [1, 2, 3, 4, 5, 6]


def test_a_gpu_with_only_unreachable_slices_left_is_maximal():
    assert mig.validate("a100-40gb", [f"1g.5gb@{s}" for s in range(7)]).is_maximal()  # slot 7 has no 1-slice start
    assert not mig.validate("a100-40gb", [f"1g.5gb@{s}" for s in range(6)]).is_maximal()
