"""What feasibility removes before the search (placement/rules/feasibility.py) and how a pool nobody
can serve is diagnosed: the slot, the pool and the sentence of each failure, and the rule kept for
every removed candidate (why_not)."""

from __future__ import annotations

from placement.rules import ComposeRequest, SlotName, compose
from placement.rules.context import resolve, validated
from placement.rules.feasibility import cluster_candidates, rejections, slot_for_capability

# every handoff that hands out whole GPUs, MPS shares or memory caps (catalog contract_points)
# (an exclusive DRA claim hands out a whole GPU too: issue 32)
WHOLE_GPU_HANDOFFS = ["nvidia-device-plugin", "hami", "koordinator", "volcano-vgpu-device-plugin", "nvidia-dra-driver"]
GANG_SOURCE = ("Volcano gang plugin (PodGroup minAvailable); scheduler-plugins Coscheduling (Permit stage); KAI Scheduler "
               "PodGroups (gang); kube-scheduler GangScheduling plugin through the Workload API (PodGroup gang policy "
               "minCount, Kubernetes >= 1.37)")


def _ctx(graph, **request):
    return resolve(graph, validated(ComposeRequest(**request)))


def _failures(result, pool):
    return [f for f in result.failures if f.pool == pool]


def test_a_pool_no_remaining_handoff_can_deliver_to_names_the_units_it_accepts(graph):
    result = compose(graph, ComposeRequest(profile="training", constraints={
        "exclude": [*WHOLE_GPU_HANDOFFS, "kubevirt-gpu-device-plugin"]}))
    assert not result.feasible
    (failure,) = result.failures
    assert (failure.slot, failure.pool) == (SlotName.DEVICE_HANDOFF, "training")
    assert failure.reason == ("No remaining device handoff advertises and allocates a unit the training pool accepts "
                              "(Whole GPU, DRA device).")
    rejected = {r.project: r.reason for r in failure.rejected}
    assert rejected["nvidia-device-plugin"] == "nvidia-device-plugin is excluded by the constraints."
    assert rejected["nvidia-dra-driver"] == "nvidia-dra-driver is excluded by the constraints."


def test_a_pool_whose_unit_has_a_handoff_but_no_mechanism_blames_the_data_plane(graph):
    # The isolated pool accepts whole GPUs, MIG and vGPU. kubevirt-gpu-device-plugin still advertises
    # vGPUs (it hands them to VMs, and is removed for that), so the device handoff is not what is missing.
    result = compose(graph, ComposeRequest(profile="mixed", constraints={"exclude": WHOLE_GPU_HANDOFFS}))
    assert not result.feasible
    (isolated,) = _failures(result, "isolated")
    assert isolated.slot == SlotName.DATA_PLANE_UNIT
    assert isolated.reason == ("No remaining data-plane mechanism creates a unit the isolated pool accepts (Whole GPU, "
                               "MIG instance, vGPU, DRA device) together with a device handoff that delivers it.")
    rejected = [r.project for r in isolated.rejected]
    # the data-plane removals (at most 12), then the device-handoff ones
    assert rejected[:3] == ["hami", "koordinator", "nos"]
    assert "mig" in rejected and "kubevirt-gpu-device-plugin" in rejected
    assert len(rejected) == 12 + len(rejections(_ctx_after(graph), SlotName.DEVICE_HANDOFF))
    reasons = {r.project: r.reason for r in isolated.rejected}
    assert reasons["mig"] == "isolated pool: No remaining device handoff advertises and allocates MIG instance to a container."
    assert reasons["time-slicing"] == "Time slice gives none isolation; the isolated pool needs hard."
    # the shared pool (memory caps, MPS) has lost its memory-cap and MPS handoffs, but KAI's fractions
    # enforced by the kai-resource-isolator still isolate memory (composition.yaml enforcement_addons)
    assert _failures(result, "shared") == []


def _ctx_after(graph):
    """The context of the mixed request above after compose has collected its removals."""
    from placement.rules.compose import options_for_pool

    ctx = _ctx(graph, profile="mixed", constraints={"exclude": WHOLE_GPU_HANDOFFS})
    for spec in ctx.pools:
        options_for_pool(ctx, spec, set())
    return ctx


def test_the_removals_listed_per_slot_are_capped(graph):
    ctx = _ctx_after(graph)
    assert len(rejections(ctx, SlotName.DATA_PLANE_UNIT)) == 12
    assert len([1 for (slot, _s) in ctx.why_not if slot == SlotName.DATA_PLANE_UNIT]) > 12
    assert [r.project for r in rejections(ctx, SlotName.DATA_PLANE_UNIT, limit=2)] == ["hami", "koordinator"]


def test_a_gang_class_removes_every_scheduler_that_cannot_place_all_or_nothing(graph):
    ctx = _ctx(graph, profile="training")
    # kube-scheduler stays since Kubernetes 1.37: it places a PodGroup with a gang policy all-or-nothing through
    # the Workload API it serves (kubernetes-workload-api requires it and provides gang scheduling); a plugin
    # that runs inside it without gang (NodeResourceTopology) is still removed.
    assert cluster_candidates(ctx, SlotName.SCHEDULING_POLICY) == [
        "coscheduling", "kai-scheduler", "koordinator", "kube-scheduler", "volcano", "yunikorn"]
    assert (SlotName.SCHEDULING_POLICY, "kube-scheduler") not in ctx.why_not
    assert ctx.why_not[(SlotName.SCHEDULING_POLICY, "node-resource-topology")] == (
        f"node-resource-topology does not place a gang all-or-nothing, and class training has gang: true ({GANG_SOURCE}).")
    assert ctx.why_not_rule[(SlotName.SCHEDULING_POLICY, "node-resource-topology")] == "feasibility"
    # without the Workload API kube-scheduler has no gang: a constraint removed it
    ctx = _ctx(graph, profile="training", constraints={"exclude": ["kubernetes-workload-api"]})
    assert "kube-scheduler" not in cluster_candidates(ctx, SlotName.SCHEDULING_POLICY)
    assert ctx.why_not[(SlotName.SCHEDULING_POLICY, "kube-scheduler")] == (
        "kube-scheduler places a gang all-or-nothing only through kubernetes-workload-api (Kubernetes >= 1.37), which "
        "the constraints exclude; class training has gang: true.")
    assert ctx.why_not_rule[(SlotName.SCHEDULING_POLICY, "kube-scheduler")] == "constraint"
    # an archived project is removed unless required
    assert "nos" not in cluster_candidates(ctx, SlotName.ADMISSION_QUOTA)
    assert ctx.why_not[(SlotName.ADMISSION_QUOTA, "nos")] == (
        "nos is archived upstream (no longer maintained); require it to see its stack.")
    assert ctx.why_not_rule[(SlotName.ADMISSION_QUOTA, "nos")] == "constraint"


def test_without_a_gang_the_default_scheduler_stays_and_a_required_archived_project_too(graph):
    ctx = _ctx(graph, profile="online_inference", constraints={"keep_default_scheduler": True, "require": ["nos"]})
    assert cluster_candidates(ctx, SlotName.SCHEDULING_POLICY) == ["coscheduling", "kube-scheduler", "node-resource-topology"]
    assert "nos" in cluster_candidates(ctx, SlotName.ADMISSION_QUOTA)
    assert ctx.why_not[(SlotName.SCHEDULING_POLICY, "volcano")] == (
        "volcano replaces the default scheduler (kube-scheduler); the constraints keep it.")
    assert ctx.why_not_rule[(SlotName.SCHEDULING_POLICY, "volcano")] == "constraint"
    # nothing else removed the default scheduler's plugins
    assert (SlotName.SCHEDULING_POLICY, "coscheduling") not in ctx.why_not


def test_a_project_serving_virtual_machines_is_removed_with_the_reason_from_the_rules(graph):
    result = compose(graph, ComposeRequest(profile="online_inference"))
    why = {w.project: w for w in result.why_not}
    assert why["kubevirt-gpu-device-plugin"].reason == (
        "kubevirt-gpu-device-plugin: It hands GPUs to KubeVirt virtual machines, not to containers; the workload "
        "profiles run pods.")
    assert why["kubevirt-gpu-device-plugin"].rule == "feasibility"
    excluded = compose(graph, ComposeRequest(profile="online_inference", constraints={"exclude": ["kueue"]}))
    assert {w.project: (w.rule, w.reason) for w in excluded.why_not}["kueue"] == (
        "constraint", "kueue is excluded by the constraints.")


def test_a_required_capability_is_looked_for_in_the_slot_of_its_layer(graph):
    ctx = _ctx(graph, profile="training")
    assert slot_for_capability(ctx, "gang-scheduling") == SlotName.SCHEDULING_POLICY
    assert slot_for_capability(ctx, "per-team-quota") == SlotName.ADMISSION_QUOTA
    assert slot_for_capability(ctx, "no-such-capability") is None


def test_a_pool_of_gpus_without_mig_lists_only_the_units_it_can_have(graph):
    result = compose(graph, ComposeRequest(profile="training", pool={"gpu_model": "L40S"}, constraints={
        "exclude": [*WHOLE_GPU_HANDOFFS, "kubevirt-gpu-device-plugin"]}))
    (failure,) = result.failures
    assert failure.reason == ("No remaining device handoff advertises and allocates a unit the training pool accepts "
                              "(Whole GPU, DRA device).")


def test_every_gang_class_is_named_in_the_removal_of_a_scheduler(graph):
    gang = {"kind": "training", "replicas": 2, "gpus_per_replica": 1, "gpu_memory_gib": 10, "gang": True}
    ctx = _ctx(graph, workloads=[{"name": "pretrain", **gang}, {"name": "finetune", **gang}])
    cluster_candidates(ctx, SlotName.SCHEDULING_POLICY)
    # (kube-scheduler gangs through the Workload API since 1.37; NodeResourceTopology, a plugin without gang, is removed)
    assert ctx.why_not[(SlotName.SCHEDULING_POLICY, "node-resource-topology")] == (
        f"node-resource-topology does not place a gang all-or-nothing, and class pretrain, finetune has gang: true "
        f"({GANG_SOURCE}).")
