"""What a reader of a composed stack sees: the title, why each slot holds its project, every score
item with its reason, why the stack ranks where it does, and why each other project is in no stack.
Hand-built projects (the conftest's small catalog plus a second gang scheduler), so every expected
sentence below is the one a reviewer checks; the reasons quoted after a colon are rules data
(fixtures/rules/profiles.yaml, composition.yaml)."""

from __future__ import annotations

import re

import pytest

from placement.rules import ComposeRequest, Pool, Slo, SlotName, build_graph, compose
from placement.rules.synthetic import make_document

A100 = Pool(gpu_model="A100-80GB", gpu_count=8)
SCHED_Z = make_document("sched-z", layer="L2", units=["whole_gpu", "mig_instance"], roles={"bind": ["whole_gpu", "mig_instance"]},
                        capabilities=["pod-binding", "gang-scheduling"])
COMPONENT = "One more component to install, upgrade and debug."
PLAIN_JOBS = "Plain Jobs and Deployments; no multi-pod workload API is added."


@pytest.fixture
def graph(small_catalog):
    return build_graph([*small_catalog, SCHED_Z])


def _compose(graph, profile, **kwargs):
    return compose(graph, ComposeRequest(profile=profile, pool=A100, limit=5, **kwargs))


def test_a_training_stack_explains_its_title_slots_and_every_point(graph):
    result = _compose(graph, "training")
    first = result.stacks[0]
    assert first.title == "Whole GPU (Plugin A) + Sched A + Queue A"
    assert first.score == 6
    assert first.why_rank == (
        "Ranks first with 6 points; most from Gang scheduling +4, Admission control +3, Whole GPU +2, Plugin A +1; "
        "costs Queue A -1.5, Sched A -1.5, Suite -1.5."
    )
    assert [(a.slot, a.pool, a.project.slug if a.project else None, a.why, a.contributes) for a in first.slots] == [
        (SlotName.WORKLOAD_UNIT, None, None, PLAIN_JOBS, []),
        (SlotName.ADMISSION_QUOTA, None, "queue-a", "Admission and quota: queue-a does its job. Adds: admission control.",
         ["admission-control", "per-team-quota"]),
        (SlotName.SCHEDULING_POLICY, None, "sched-a", "Scheduling policy: sched-a does its job. Adds: gang scheduling.",
         ["gang-scheduling", "pod-binding"]),
        (SlotName.DEVICE_HANDOFF, "training", "plugin-a", "Advertises and allocates Whole GPU on the training pool's nodes.",
         ["device-allocation", "device-discovery"]),
        (SlotName.DATA_PLANE_UNIT, "training", None, "Whole GPUs need no partitioning or sharing mechanism; the device "
         "handoff advertises them as they are (Whole GPU via plugin-a).", []),
        (SlotName.PLATFORM_LIFECYCLE, None, "suite", "Platform lifecycle: suite does its job. Adds: driver and operand "
         "lifecycle, gpu telemetry.", ["driver-lifecycle", "gpu-telemetry"]),
        (SlotName.OBSERVABILITY, None, "exporter", "Observability and metering: exporter does its job.", []),
    ]
    items = {(i.factor, i.subject): (i.points, i.slot, i.project, i.reason) for i in first.score_breakdown}
    # the training classes take whole GPUs, so sharing capabilities are worth nothing and not listed as
    # missing (composition.yaml capability_conditions); nor is hardware partitioning: their replicas fill
    # a card, so MIG would partition nothing (feasibility.discount_whole_card_mig)
    assert ("missing_capability", "hardware-partitioning") not in items
    assert len(items) == len(first.score_breakdown) == 20
    assert sum(i.points for i in first.score_breakdown) == first.score
    assert items[("unit_fit", "whole_gpu")] == (
        2, SlotName.DATA_PLANE_UNIT, "plugin-a", "training pool on Whole GPU: Large jobs use whole GPUs; small jobs strand the "
        "rest of the card.")
    assert items[("native_handoff", "plugin-a")] == (
        1, SlotName.DEVICE_HANDOFF, "plugin-a", "Plugin A for Whole GPU: Delivers this unit natively; no machinery built "
        "for another unit.")
    assert items[("capability", "gang-scheduling")] == (
        4, SlotName.SCHEDULING_POLICY, "sched-a", "Gang scheduling from Sched A: All-or-nothing placement avoids partial starts.")
    assert items[("missing_capability", "fair-sharing")] == (
        0, None, None, "No project in the stack provides fair sharing across tenants (worth 3).")
    # what the stack runs: its own components cost, what a bundle ships does not, a requirement says who needs it
    assert items[("component_cost", "queue-a")] == (-1.5, None, "queue-a", f"Queue A: {COMPONENT}")
    assert items[("component_cost", "plugin-a")] == (0, None, "plugin-a", "Plugin A ships with Suite; no extra component.")
    assert items[("component_cost", "runtime-hook")] == (-1.5, None, "runtime-hook", f"Runtime Hook (required by Plugin A): {COMPONENT}")
    assert items[("empty_slot", "workload_unit")] == (0, SlotName.WORKLOAD_UNIT, None, PLAIN_JOBS)
    assert [(s.project.slug, s.required_by, s.why) for s in first.supporting] == [
        ("runtime-hook", "plugin-a", "plugin-a requires it. runtime-hook does its job.")]
    [pool] = first.pools
    assert (pool.name, pool.unit.value, pool.unit_isolation, pool.gpus, pool.data_plane, pool.device_handoff, pool.workload,
            pool.unit_size) == ("training", "whole_gpu", "hard", 8, None, "plugin-a", "training", "8 whole GPUs per replica")


def test_a_stack_tied_on_points_and_size_says_it_is_ordered_by_name(graph):
    second = _compose(graph, "training").stacks[1]
    assert second.title == "Whole GPU (Plugin A) + Sched Z + Queue A"
    assert second.why_rank == (
        "0 points below #1 (6 vs 6): component Sched Z -1.5, component Sched A +1.5; same score and size, ordered by name."
    )


def test_a_lower_stack_names_the_points_it_loses_against_the_one_above(graph):
    result = _compose(graph, "batch_inference")
    assert result.stacks[0].why_rank.startswith("Ranks first with 2 points; ")
    assert result.stacks[1].why_rank == (
        "1 point below #1 (1 vs 2): component Sched A -1.5, capability Bin-packing and spreading -1, component Sched B +1.5."
    )
    one = _compose(graph, "interactive").stacks[0]  # one point, not "1 points"
    assert one.why_rank.startswith("Ranks first with 1 point; most from Admission control +3, Whole GPU +1")


def test_every_project_in_no_stack_gets_the_rule_that_kept_it_out(graph):
    result = _compose(graph, "training")
    why = {w.project: (w.slot, w.rule, w.reason) for w in result.why_not}
    assert set(why) == {"sched-b", "sched-frac", "sharer", "slicer"}
    assert why["sched-b"] == (
        SlotName.SCHEDULING_POLICY, "feasibility",
        "sched-b does not place a gang all-or-nothing, and class training has gang: true (Volcano gang plugin (PodGroup "
        "minAvailable); scheduler-plugins Coscheduling (Permit stage); KAI Scheduler PodGroups (gang); kube-scheduler "
        "GangScheduling plugin through the Workload API (PodGroup gang policy minCount, Kubernetes >= 1.37)).")
    # (the synthetic sched-b serves no Workload API, so it stays out; the source now names that way of ganging too)
    assert why["slicer"][:2] == (SlotName.DATA_PLANE_UNIT, "feasibility")
    assert why["slicer"][2].startswith("MIG instance cannot serve class 'training': a replica needs 8 GPUs in one process")

    ranked = {w.project: w for w in _compose(graph, "batch_inference").why_not}
    assert (ranked["sharer"].slot, ranked["sharer"].rule, ranked["sharer"].reason) == (
        SlotName.DEVICE_HANDOFF, "ranked_lower",
        "Possible as device handoff, data plane unit, but every stack with it scores below the 3 returned (require "
        "Sharer to see its best stack).")


def test_when_no_stack_holds_the_others_are_not_said_to_rank_lower(graph):
    result = _compose(graph, "mixed")
    assert not result.feasible and result.stacks == []
    why = {w.project: w for w in result.why_not}
    assert why["exporter"].reason == "Possible as observability, but no stack holds under this request (see the failures)."
    # a project no slot takes (by layer, kind and contract role) is told so
    assert (why["runtime-hook"].slot, why["runtime-hook"].rule, why["runtime-hook"].reason) == (
        None, "no_slot",
        "Runtime Hook (component on L4) fills no stack slot: no slot takes its layer, kind and contract role; it enters a "
        "stack only when a member requires or bundles it.")
    # the workload's shape is the first reason given (feasibility before contracts)
    assert why["sharer"].rule == "feasibility"


def test_a_partitioned_pool_names_the_mechanism_that_creates_its_unit(catalog_documents):
    catalog_graph = build_graph(catalog_documents)
    small_gangs = [{"name": "training", "kind": "training", "replicas": 4, "gpus_per_replica": 0.25, "gpu_memory_gib": 16,
                    "gang": True, "tenants": 3}]
    stack = compose(catalog_graph, ComposeRequest(profile="training", slo=Slo(isolation="hard", goal="throughput_first"),
                                                  pool=A100, workloads=small_gangs)).stacks[0]
    mig = catalog_graph.rules.unit["mig_instance"]
    [data_plane] = [a for a in stack.slots if a.slot == SlotName.DATA_PLANE_UNIT]
    assert data_plane.project.slug == "mig"
    assert data_plane.why.startswith(f"Creates MIG instance for the training pool (hard isolation: {mig.note.rstrip('.')}")
    assert stack.title.startswith("NVIDIA Multi-Instance GPU (MIG) + ")  # a pool with a mechanism is titled by it


def test_stacks_that_would_share_a_title_say_what_they_add_or_leave_out(small_catalog):
    # A MIG data plane that is its own device handoff, beside Slicer (data plane) + Plugin A (handoff):
    # "Mig Slicer + ..." names two stacks, one with Plugin A as the handoff and one without it.
    mig_slicer = make_document("mig-slicer", layer="L4", units=["mig_instance"],
                               roles={"advertise": ["mig_instance"], "allocate": ["mig_instance"]},
                               capabilities=["hardware-partitioning", "gpu-memory-isolation"])
    queue_m = make_document("queue-m", layer="L1", units=["whole_gpu", "mig_instance"],
                            roles={"bind": ["whole_gpu", "mig_instance"]}, capabilities=["per-team-quota", "admission-control"])
    documents = [d for d in small_catalog if d.slug != "queue-a"] + [mig_slicer, queue_m]
    result = compose(build_graph(documents), ComposeRequest(profile="online_inference", pool=A100, limit=4))
    assert [(s.title, s.score) for s in result.stacks] == [
        ("Mig Slicer + Sched A + Queue M without Plugin A, Runtime Hook", 6),
        ("Slicer + Sched A + Queue M with Mig Slicer", 6),
        ("Slicer + Sched A + Queue M with Plugin A, Runtime Hook", 5),
        ("Mig Slicer + Sched A + Queue M with Plugin A, Runtime Hook", 3.5),
    ]


def test_why_a_stack_ranks_names_units_capabilities_and_projects_in_words_and_sums_repeats(catalog_documents):
    """Issue 36: 'memory_compute_share +3, memory_compute_share +3' read as API words, twice."""
    shared = {"kind": "online_inference", "replicas": 8, "gpus_per_replica": 0.25, "gpu_memory_gib": 18}
    result = compose(build_graph(catalog_documents), {"workloads": [{"name": "chat", **shared}, {"name": "embed", **shared}],
                                                      "pool": {"gpu_model": "A100-80GB", "gpu_count": 16}})
    assert result.stacks[0].why_rank.count("Memory quota + compute share +") == 1, result.stacks[0].why_rank
    for stack in result.stacks:
        text = stack.why_rank
        assert not re.search(r"\b[a-z]+_[a-z_]+\b", text), text  # no enum value (whole_gpu, default_scheduler)
        named = re.findall(r"(?:from|costs|;|,) ([^,;]+?) [+-]\d", text)
        assert len(named) == len(set(named)), f"an item said twice: {text}"
