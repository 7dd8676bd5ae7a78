"""compatible(with, profile): the stacks and projects that work together with one project."""

from __future__ import annotations

import pytest

from placement.rules import RulesInputError, SlotName, compatible


def test_projects_compatible_with_hami_for_inference(graph):
    result = compatible(graph, "hami", "online_inference")
    assert SlotName.DEVICE_HANDOFF in result.slots_of_project
    assert result.stacks and all("hami" in s.components for s in result.stacks)
    by_slot = {}
    for c in result.compatible:
        by_slot.setdefault(c.slot, set()).add(c.project.slug)
    assert {"kube-scheduler", "volcano"} <= by_slot[SlotName.SCHEDULING_POLICY]
    assert "kueue" in by_slot[SlotName.ADMISSION_QUOTA]
    assert "nvidia-device-plugin" in {r.project for r in result.incompatible}


def test_schedulers_that_cannot_bind_a_handoffs_units_are_incompatible(graph):
    result = compatible(graph, "nvidia-dra-driver", "training")
    incompatible = {r.project: r.reason for r in result.incompatible}
    assert "coscheduling" in incompatible  # it binds no DRA device
    assert "kube-scheduler" in {c.project.slug for c in result.compatible if c.slot == SlotName.SCHEDULING_POLICY}


def test_compatible_with_a_scheduler_lists_handoffs_for_its_units(graph):
    result = compatible(graph, "volcano", "training")
    handoffs = {c.project.slug for c in result.compatible if c.slot == SlotName.DEVICE_HANDOFF}
    assert {"nvidia-device-plugin", "hami"} <= handoffs
    assert all(s.components and "volcano" in s.components for s in result.stacks)


def test_unknown_project_or_profile_are_field_errors(graph):
    with pytest.raises(RulesInputError) as exc:
        compatible(graph, "hamii", "serving")
    assert set(exc.value.errors) == {"with", "profile"}


def test_vm_handoffs_are_not_offered_for_pod_workloads(graph):
    result = compatible(graph, "volcano", "training")
    assert "kubevirt-gpu-device-plugin" not in {c.project.slug for c in result.compatible}
    assert "kubevirt-gpu-device-plugin" in {r.project for r in result.incompatible}


def test_an_explicit_slo_replaces_the_profiles_default(graph):
    # Online inference defaults to soft isolation, where HAMi's memory/compute shares lead; asked for hard
    # isolation, every stack with HAMi hands out MIG instances, whole GPUs or exclusive DRA claims, in pools
    # that accept only hard.
    from placement.rules.models import Slo

    soft = compatible(graph, "hami", "online_inference")
    hard = compatible(graph, "hami", "online_inference", slo=Slo(isolation="hard"))
    assert soft.stacks[0].pools[0].unit == "memory_compute_share"
    assert hard.stacks and all("hami" in s.components for s in hard.stacks)
    assert {p.unit.value for s in hard.stacks for p in s.pools} <= {"mig_instance", "whole_gpu", "dra_device"}
    assert "memory_compute_share" not in {p.unit.value for s in hard.stacks for p in s.pools}
    assert all([i.value for i in p.isolation] == ["hard"] for s in hard.stacks for p in s.pools)


def test_at_most_five_stacks_are_offered(graph):
    # Six stacks with HAMi exist for online inference; the page lists the best five.
    assert len(compatible(graph, "hami", "online_inference").stacks) == 5


def test_a_project_with_no_primary_slot_fits_only_alongside_none(graph):
    # Slinky's primary layer is L2 but it binds no pod, so it is a candidate only through its secondary
    # layers (L0, L1): no slot is its primary role.
    result = compatible(graph, "aibrix", "training")
    reasons = {(c.slot, c.project.slug): c.reason for c in result.compatible}
    assert reasons[(SlotName.ADMISSION_QUOTA, "slinky")] == (
        "Admission and quota: no contract point between them to break; they do not conflict. "
        "Only alongside its primary role (none).")
