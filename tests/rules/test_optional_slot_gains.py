"""Optional slots (workload unit, platform lifecycle, observability) take a project that acts there
only through a secondary layer only when its primary role is already in the stack (Volcano's Job API
comes with Volcano the scheduler, never beside KAI)."""

from __future__ import annotations

from placement.rules import ComposeRequest, SlotName, compose
from placement.rules.context import Candidate, PoolOption, resolve
from placement.rules.scoring import evaluate, peripheral_gain
from placement.schemas import ResourceUnit


def _core(graph, scheduler):
    """A checked core stack: the scheduler, Kueue and the device plugin on whole GPUs (training)."""
    ctx = resolve(graph, ComposeRequest(profile="training"))
    option = PoolOption(pool=ctx.pools[0], unit=ResourceUnit.WHOLE_GPU, data_plane=None,
                        handoff="nvidia-device-plugin", local=0.0)
    cand = Candidate(cluster={SlotName.SCHEDULING_POLICY: scheduler, SlotName.ADMISSION_QUOTA: "kueue"}, pools=(option,))
    assert evaluate(ctx, cand, contracts=False) is None
    assert scheduler in cand.members
    return ctx, cand


def test_volcanos_job_api_cannot_fill_the_workload_slot_of_a_stack_without_volcano(graph):
    assert "volcano" in graph.slot_candidates[SlotName.WORKLOAD_UNIT]
    assert "volcano" not in graph.slot_primary[SlotName.WORKLOAD_UNIT]
    ctx, cand = _core(graph, "kai-scheduler")
    assert peripheral_gain(ctx, cand, SlotName.WORKLOAD_UNIT, "volcano") is None


def test_volcanos_job_api_can_fill_the_workload_slot_beside_volcano_the_scheduler(graph):
    ctx, cand = _core(graph, "volcano")
    assert peripheral_gain(ctx, cand, SlotName.WORKLOAD_UNIT, "volcano") is not None


def _stack(result, title):
    return next(s for s in result.stacks if s.title == title)


def _slot(stack, slot):
    return next(a for a in stack.slots if a.slot == slot)


def test_an_optional_slot_stays_empty_when_its_best_project_adds_nothing_and_would_be_one_more(graph):
    # Plain Kubernetes Jobs earn no point for online inference; they are neither in the stack nor shipped
    # by a member, so the workload slot stays empty rather than list them.
    result = compose(graph, ComposeRequest(profile="online_inference", pool={"gpu_model": "A100-80GB"},
                                           slo={"isolation": "hard", "goal": "latency_sensitive", "multi_tenant": True}))
    stack = _stack(result, "NVIDIA Multi-Instance GPU (MIG) + kube-scheduler + Kubernetes ResourceQuota")
    assert stack.rank == 2 and stack.score == 19.5
    assert _slot(stack, SlotName.WORKLOAD_UNIT).project is None
    assert stack.components == ["resource-quota", "kube-scheduler", "nvidia-device-plugin", "mig", "gpu-operator",
                                "dcgm-exporter", "nvidia-container-toolkit"]
    assert [s.title for s in result.stacks][4] == "NVIDIA Multi-Instance GPU (MIG) + KAI Scheduler + Kubernetes ResourceQuota"


def test_of_two_equally_good_workload_units_the_stack_takes_the_first_ranked(graph):
    # JobSet and the Kubeflow Training Operator add the same points to a training stack; the one ranked
    # first for the slot (local score, then name) is placed, so the answer does not depend on a sort's whim.
    result = compose(graph, ComposeRequest(profile="training", limit=10, constraints={"exclude": ["appwrapper"]},
                                           slo={"isolation": "hard", "goal": "latency_sensitive", "multi_tenant": True}))
    stack = _stack(result, "Whole GPU (NVIDIA Kubernetes device plugin) + Apache YuniKorn + Kueue")
    assert _slot(stack, SlotName.WORKLOAD_UNIT).project.slug == "jobset"
    assert "kubeflow-training-operator" not in stack.components


def test_a_workload_unit_that_brings_a_required_capability_is_placed_whatever_its_points(graph):
    # Armada counts no per-team quota and conflicts with every gang scheduler that does (KAI, Volcano,
    # YuniKorn); with Koordinator and nos excluded, only AppWrapper's required Kueue brings the quota a
    # multi-tenant pool requires. The required capability ranks it first: without it, no stack holds.
    result = compose(graph, ComposeRequest(profile="training", limit=10,
                                           constraints={"require": ["armada"], "exclude": ["koordinator", "nos"]}))
    assert [s.title for s in result.stacks] == [
        "Whole GPU (NVIDIA Kubernetes device plugin) + Coscheduling plugin (scheduler-plugins) + Armada"]
    stack = result.stacks[0]
    assert _slot(stack, SlotName.WORKLOAD_UNIT).project.slug == "appwrapper"
    assert [(s.project.slug, s.required_by) for s in stack.supporting if s.project.slug == "kueue"] == [("kueue", "appwrapper")]
    assert "per-team-quota" in stack.capabilities
