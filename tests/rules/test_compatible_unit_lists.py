""""Compatible with" when two projects meet over more than one unit: every unit is named, in the
catalog's unit order (Whole GPU before MIG instance), the same in every process. Hand-built
projects: a quota layer and a partitioner that both handle whole GPUs and MIG instances."""

from __future__ import annotations

import pytest

from placement.rules import SlotName, build_graph, compatible
from placement.rules.synthetic import make_document

WM = ["whole_gpu", "mig_instance"]
EXTRA = [
    make_document("queue-w", layer="L1", units=WM, roles={"bind": WM}, capabilities=["per-team-quota"]),
    make_document("part-w", kind="mechanism", layer="L4", units=["mig_instance", "whole_gpu"], capabilities=["hardware-partitioning"]),
]


@pytest.fixture
def graph(small_catalog):
    return build_graph([*small_catalog, *EXTRA])


def _fits(result):
    return {(c.slot, c.project.slug): c.reason for c in result.compatible}


def test_a_quota_layer_and_a_handoff_name_every_unit_they_meet_over_in_unit_order(graph):
    assert _fits(compatible(graph, "plugin-a", "training"))[(SlotName.ADMISSION_QUOTA, "queue-w")] == (
        "Counts Whole GPU, MIG instance in quota.")
    assert _fits(compatible(graph, "queue-w", "training"))[(SlotName.DEVICE_HANDOFF, "plugin-a")] == (
        "Hands out Whole GPU, MIG instance, which Queue W counts in quota.")


def test_a_mechanism_and_a_handoff_name_the_units_in_unit_order_whatever_the_hash_seed(graph):
    # the units are a set: before the fix their order followed PYTHONHASHSEED (MIG instance first under seed 1)
    assert _fits(compatible(graph, "plugin-a", "training"))[(SlotName.DATA_PLANE_UNIT, "part-w")] == (
        "Creates Whole GPU, MIG instance that Plugin A advertises and allocates.")
    assert _fits(compatible(graph, "part-w", "training"))[(SlotName.DEVICE_HANDOFF, "plugin-a")] == (
        "Advertises and allocates Whole GPU, MIG instance that Part W creates.")
