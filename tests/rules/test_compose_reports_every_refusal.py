"""Compose reports every refusal a reader needs: each required project that cannot take part (not only
the first), the slot a conflict kept a handoff out of, and how many combinations each reason excluded."""

from __future__ import annotations

from placement.rules import SlotName, compose


def test_a_required_project_that_fits_no_slot_is_reported_after_one_that_fits(graph):
    result = compose(graph, {"profile": "training",
                             "constraints": {"require": ["nvidia-device-plugin", "nvidia-container-toolkit"]}})
    assert not result.feasible
    assert [f.reason for f in result.failures] == [
        "nvidia-container-toolkit is required but cannot take part: "
        "Its placement matches no slot's layer, kind and contract role."
    ]


def test_a_handoff_kept_out_by_a_conflicting_data_plane_is_refused_in_the_handoff_slot(graph):
    # volcano-vgpu-device-plugin and HAMi both manage the same GPUs' shares: one per node
    result = compose(graph, {"profile": "batch_inference", "slo": {"isolation": "soft"}})
    why = {w.project: w for w in result.why_not}["volcano-vgpu-device-plugin"]
    assert (why.slot, why.rule, why.reason) == (
        SlotName.DEVICE_HANDOFF, "conflict", "volcano-vgpu-device-plugin conflicts with hami.")


def test_each_exclusion_counts_every_combination_it_removed(graph):
    result = compose(graph, {"profile": "mixed", "slo": {"isolation": "hard", "goal": "latency_sensitive"}})
    assert ("runai requires the scheduler kai-scheduler, but this stack's scheduler is volcano (2 combinations)"
            in result.excluded), result.excluded
