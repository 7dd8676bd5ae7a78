"""Optional slots (workload unit, platform lifecycle, observability) take a project that acts there
only through a secondary layer only when its primary role is already in the stack (Volcano's Job API
comes with Volcano the scheduler, never beside KAI)."""

from __future__ import annotations

from placement.rules import ComposeRequest, SlotName
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
