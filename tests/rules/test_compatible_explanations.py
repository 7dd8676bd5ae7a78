"""What "compatible with" tells the reader for one project: each project that fits next to it, in
which slot and why (the contract point that holds between them), and each that does not (a
conflict, no unit in common, a VM-only handoff). Hand-built projects, so the expected sentences
are the ones a reviewer checks."""

from __future__ import annotations

import pytest

from placement.rules import RulesInputError, SlotName, build_graph, compatible
from placement.rules.synthetic import make_document

NO_CONTRACT = "no contract point between them to break; they do not conflict."
VM_ONLY = "It hands GPUs to KubeVirt virtual machines, not to containers; the workload profiles run pods."
EXTRA = [
    make_document("queue-m", layer="L1", units=["mig_instance"], roles={"bind": ["mig_instance"]}, capabilities=["per-team-quota"]),
    # a scheduler that also queues from L1: an admission candidate only alongside its scheduling role
    make_document("batch-q", layer="L2", secondary=["L1"], units=["whole_gpu"], roles={"bind": ["whole_gpu"]},
                  capabilities=["pod-binding", "job-queueing"]),
    make_document("vm-plugin", layer="L4", units=["whole_gpu"], roles={"advertise": ["whole_gpu"], "allocate": ["whole_gpu"]},
                  capabilities=["device-discovery", "vm-device-passthrough"]),
]


@pytest.fixture
def graph(small_catalog):
    return build_graph([*small_catalog, *EXTRA])


def _fits(result):
    return [(c.slot, c.project.slug, c.reason) for c in result.compatible]


def _refused(result):
    return [(r.project, r.reason) for r in result.incompatible]


def test_next_to_a_device_plugin_fit_the_schedulers_and_queues_of_its_units_and_the_mechanism_it_advertises(graph):
    result = compatible(graph, "plugin-a", "training")
    assert (result.with_project.slug, result.profile, result.slots_of_project) == ("plugin-a", "training", [SlotName.DEVICE_HANDOFF])
    assert result.stacks and all("plugin-a" in s.components for s in result.stacks) and result.failures == []
    assert _fits(result) == [
        (SlotName.ADMISSION_QUOTA, "batch-q", "Counts Whole GPU in quota. Only alongside its primary role (scheduling_policy)."),
        (SlotName.ADMISSION_QUOTA, "queue-a", "Counts Whole GPU in quota."),
        (SlotName.ADMISSION_QUOTA, "queue-m", "Counts MIG instance in quota."),
        (SlotName.SCHEDULING_POLICY, "batch-q", "Binds Whole GPU, which Plugin A hands out."),
        (SlotName.SCHEDULING_POLICY, "sched-a", "Binds Whole GPU, MIG instance, which Plugin A hands out."),
        (SlotName.SCHEDULING_POLICY, "sched-b", "Binds Whole GPU, which Plugin A hands out."),
        (SlotName.DATA_PLANE_UNIT, "slicer", "Creates MIG instance that Plugin A advertises and allocates."),
        (SlotName.PLATFORM_LIFECYCLE, "suite", f"Platform lifecycle: {NO_CONTRACT}"),
        (SlotName.OBSERVABILITY, "exporter", f"Observability and metering: {NO_CONTRACT}"),
    ]
    assert _refused(result) == [
        ("sharer", "Conflicts with Plugin A (catalog conflicts_with); they cannot share nodes."),
        ("sched-frac", "As scheduling policy: no unit in common with Plugin A, so a contract point cannot hold."),
    ]


def test_next_to_a_scheduler_fit_the_handoffs_and_mechanisms_whose_units_it_binds(graph):
    result = compatible(graph, "sched-a", "training")
    fits = {(slot, slug): reason for slot, slug, reason in _fits(result)}
    assert fits[(SlotName.DEVICE_HANDOFF, "plugin-a")] == "Hands out Whole GPU, MIG instance, which Sched A binds."
    assert fits[(SlotName.DATA_PLANE_UNIT, "slicer")] == "Hands out MIG instance, which Sched A binds."
    assert fits[(SlotName.ADMISSION_QUOTA, "queue-a")] == f"Admission and quota: {NO_CONTRACT}"
    assert dict(_refused(result)) == {
        "sharer": "As device handoff: no unit in common with Sched A, so a contract point cannot hold.",
        "vm-plugin": VM_ONLY,
    }


def test_next_to_a_mechanism_fit_the_handoff_that_advertises_its_unit_and_what_binds_and_counts_it(graph):
    result = compatible(graph, "slicer", "online_inference")
    assert result.slots_of_project == [SlotName.DATA_PLANE_UNIT]
    assert [s.title for s in result.stacks] == ["Slicer + Sched A + Queue M"]
    assert _fits(result) == [
        (SlotName.ADMISSION_QUOTA, "queue-m", "Counts MIG instance in quota."),
        (SlotName.SCHEDULING_POLICY, "sched-a", "Binds MIG instance, which Slicer hands out."),
        (SlotName.DEVICE_HANDOFF, "plugin-a", "Advertises and allocates MIG instance that Slicer creates."),
        (SlotName.PLATFORM_LIFECYCLE, "suite", f"Platform lifecycle: {NO_CONTRACT}"),
        (SlotName.OBSERVABILITY, "exporter", f"Observability and metering: {NO_CONTRACT}"),
    ]
    assert _refused(result) == [
        ("batch-q", "As admission and quota: no unit in common with Slicer, so a contract point cannot hold."),
        ("queue-a", "As admission and quota: no unit in common with Slicer, so a contract point cannot hold."),
        ("sched-b", "As scheduling policy: no unit in common with Slicer, so a contract point cannot hold."),
        ("sched-frac", "As scheduling policy: no unit in common with Slicer, so a contract point cannot hold."),
        ("sharer", "As device handoff: no unit in common with Slicer, so a contract point cannot hold."),
        ("vm-plugin", VM_ONLY),
    ]


def test_next_to_a_queue_fit_the_handoffs_and_mechanisms_whose_units_it_counts(graph):
    result = compatible(graph, "queue-m", "online_inference")
    fits = {(slot, slug): reason for slot, slug, reason in _fits(result)}
    assert fits[(SlotName.DEVICE_HANDOFF, "plugin-a")] == "Hands out MIG instance, which Queue M counts in quota."
    assert fits[(SlotName.DATA_PLANE_UNIT, "slicer")] == "Hands out MIG instance, which Queue M counts in quota."
    assert fits[(SlotName.SCHEDULING_POLICY, "sched-frac")] == f"Scheduling policy: {NO_CONTRACT}"
    assert dict(_refused(result)) == {
        "sharer": "As device handoff: no unit in common with Queue M, so a contract point cannot hold.",
        "vm-plugin": VM_ONLY,
    }


def test_a_conflicting_project_is_refused_once_even_where_a_slot_would_take_it(graph):
    result = compatible(graph, "sharer", "online_inference")
    refused = _refused(result)
    assert refused[0] == ("plugin-a", "Conflicts with Sharer (catalog conflicts_with); they cannot share nodes.")
    assert [p for p, _ in refused].count("plugin-a") == 1
    assert "plugin-a" not in {slug for _, slug, _ in _fits(result)}
    assert not result.stacks and result.failures  # nothing binds its unit in this catalog: no stack, and why


def test_an_unknown_project_or_profile_is_bad_input_with_the_known_profiles(graph):
    with pytest.raises(RulesInputError) as exc:
        compatible(graph, "plugin", "serving")
    assert exc.value.errors == {
        "with": ["Unknown project 'plugin'. Did you mean: plugin-a, vm-plugin?"],
        "profile": ["Unknown workload profile 'serving'; known: training, online_inference, batch_inference, interactive, mixed."],
    }


def test_a_project_primary_in_two_slots_names_both_where_it_fits_only_alongside_them(small_catalog):
    # A node agent on L4 that advertises and allocates whole GPUs and exports telemetry (device handoff and
    # observability are both L4 slots), and also queues from L1.
    agent = make_document("agent", layer="L4", secondary=["L1"], units=["whole_gpu"],
                          roles={"advertise": ["whole_gpu"], "allocate": ["whole_gpu"]},
                          capabilities=["device-discovery", "gpu-telemetry", "job-queueing"])
    graph = build_graph([*small_catalog, agent])
    fits = {(slot, slug): reason for slot, slug, reason in _fits(compatible(graph, "sched-a", "training"))}
    assert fits[(SlotName.ADMISSION_QUOTA, "agent")] == (
        f"Admission and quota: {NO_CONTRACT} Only alongside its primary role (device_handoff, observability).")
