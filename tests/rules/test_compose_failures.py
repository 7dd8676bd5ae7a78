"""Why a compose request has no stack: each failure names the slot or requirement that cannot be met
and the projects the rules removed, in the sentence a user reads (ComposeResult.failures)."""

from __future__ import annotations

from placement.rules import ComposeRequest, Constraints, SlotName, compose

GANG = {"kind": "training", "replicas": 2, "gpus_per_replica": 1, "gpu_memory_gib": 10, "gang": True, "tenants": 2}
# Schedulers that also run queues (Volcano Queue, KAI queues, ...): they reach the admission slot
# through a secondary layer, only next to their own scheduler role.
QUEUEING_SCHEDULERS = ["volcano", "kai-scheduler", "koordinator", "yunikorn", "nos", "slinky"]


def _failure(result, start):
    found = [f for f in result.failures if f.reason.startswith(start)]
    assert len(found) == 1, [f.reason for f in result.failures]
    return found[0]


def test_an_admission_slot_the_constraints_empty_is_named_with_each_exclusion(graph):
    everyone = list(graph.slot_candidates[SlotName.ADMISSION_QUOTA])
    result = compose(graph, ComposeRequest(profile="online_inference", constraints=Constraints(exclude=everyone)))
    assert not result.feasible and not result.stacks
    failure = result.failures[0]
    assert failure.slot == SlotName.ADMISSION_QUOTA
    assert failure.reason == "No catalog project can fill admission and quota under these constraints."
    assert {r.project: r.reason for r in failure.rejected}["kueue"] == "kueue is excluded by the constraints."


def test_an_empty_scheduling_slot_blames_gang_scheduling_only_when_a_class_is_a_gang(graph):
    # Keeping the default scheduler but excluding it and the plugins that run inside it leaves nothing.
    inside = ["kube-scheduler", "coscheduling", "node-resource-topology"]
    result = compose(graph, ComposeRequest(profile="online_inference",
                                           constraints=Constraints(keep_default_scheduler=True, exclude=inside)))
    failure = result.failures[0]
    assert failure.slot == SlotName.SCHEDULING_POLICY
    assert failure.reason == "No catalog project can fill scheduling policy under these constraints."
    reasons = {r.project: r.reason for r in failure.rejected}
    assert reasons["volcano"] == ("volcano replaces the default scheduler (kube-scheduler); the constraints keep it.")


def test_every_gang_class_is_named_when_no_gang_scheduler_is_left(graph):
    classes = [{"name": "pretrain", **GANG}, {"name": "finetune", **GANG}]
    result = compose(graph, ComposeRequest(workloads=classes, pool={"gpu_model": "A100-80GB", "gpu_count": 8},
                                           constraints=Constraints(keep_default_scheduler=True,
                                                                   exclude=["coscheduling", "kubernetes-workload-api"])))
    # (kube-scheduler would gang them through the Workload API, Kubernetes >= 1.37: excluded here too)
    failure = result.failures[0]
    assert failure.slot == SlotName.SCHEDULING_POLICY
    assert failure.reason == ("No catalog project can fill scheduling policy under these constraints. Gang scheduling "
                              "is required: class pretrain, finetune has gang: true.")


def test_a_required_capability_nobody_left_provides_names_its_reason_and_every_provider(graph):
    # Training needs gang scheduling (coscheduling is left) and, multi-tenant, per-team quota
    # (composition.yaml tenancy): exclude every quota provider. Each requirement is checked.
    providers = list(graph.providers["per-team-quota"])
    result = compose(graph, ComposeRequest(profile="training", constraints=Constraints(exclude=providers)))
    assert not result.feasible
    failure = _failure(result, "Per-team quota is required")
    assert failure.slot == SlotName.ADMISSION_QUOTA
    assert failure.reason == ("Per-team quota is required (Several teams share the pool; each needs a quota promise) "
                              "but no remaining admission and quota candidate provides it.")
    assert {r.project: r.reason for r in failure.rejected} == {s: f"{s} is excluded by the constraints." for s in providers}


def test_schedulers_that_bring_their_own_queues_are_not_needed_for_team_quota(graph):
    # Kueue and ResourceQuota give per-team quota in their own right (their primary layer is L1).
    result = compose(graph, ComposeRequest(profile="online_inference", constraints=Constraints(exclude=QUEUEING_SCHEDULERS)))
    assert result.feasible, result.failures
    for stack in result.stacks:
        adm = next(a.project.slug for a in stack.slots if a.slot == SlotName.ADMISSION_QUOTA)
        assert "per-team-quota" in graph.projects[adm].capabilities


def test_a_provider_removed_from_its_primary_slot_says_which_rule_removed_it(graph):
    # Volcano, KAI, YuniKorn and Koordinator queue only what they schedule; keeping the default
    # scheduler removes them, and the quota failure must say so rather than "cannot fill the slot".
    primary_quota = ["capacity-scheduling", "kueue", "resource-quota", "runai"]
    result = compose(graph, ComposeRequest(profile="online_inference",
                                           constraints=Constraints(keep_default_scheduler=True, exclude=primary_quota)))
    failure = _failure(result, "Per-team quota is required")
    reasons = {r.project: r.reason for r in failure.rejected}
    for slug in ("volcano", "kai-scheduler", "yunikorn", "koordinator"):
        assert reasons[slug] == f"{slug} replaces the default scheduler (kube-scheduler); the constraints keep it."
    assert reasons["kueue"] == "kueue is excluded by the constraints."
    assert "archived upstream" in reasons["nos"]


def test_a_required_project_no_slot_takes_is_refused_with_that_reason(graph):
    # Karpenter provisions nodes: no stack slot takes it and no member requires it.
    result = compose(graph, ComposeRequest(profile="training", constraints=Constraints(require=["karpenter"])))
    failure = _failure(result, "karpenter is required")
    assert failure.slot is None
    reason = "Its placement matches no slot's layer, kind and contract role."
    assert failure.reason == f"karpenter is required but cannot take part: {reason}"
    assert [(r.project, r.reason) for r in failure.rejected] == [("karpenter", reason)]


def test_a_required_project_removed_from_two_slots_for_one_reason_says_it_once(graph):
    # The GPU-share extender is both the device handoff and the data plane of fractions, and a
    # training replica needs 8 GPUs in one process: one reason, said once.
    result = compose(graph, ComposeRequest(profile="training", constraints=Constraints(require=["gpushare-scheduler-extender"])))
    failure = _failure(result, "gpushare-scheduler-extender is required")
    assert failure.slot == SlotName.DEVICE_HANDOFF
    assert failure.reason.startswith("gpushare-scheduler-extender is required but cannot take part: Fraction (accounting "
                                     "only) cannot serve class 'training'")
    assert failure.reason.count("cannot serve") == 1


def test_a_required_mechanism_no_handoff_delivers_is_refused_with_that_reason(graph):
    # NVIDIA vGPU creates vGPUs for virtual machines; the only handoff that advertises them
    # (kubevirt-gpu-device-plugin) hands GPUs to VMs, not pods, so no container ever gets one.
    result = compose(graph, ComposeRequest(profile="online_inference", constraints=Constraints(require=["nvidia-vgpu"])))
    failure = _failure(result, "nvidia-vgpu is required")
    reason = "No remaining device handoff advertises and allocates vGPU to a container."
    assert failure.reason == f"nvidia-vgpu is required but cannot take part: {reason}"
    why = next(w for w in result.why_not if w.project == "nvidia-vgpu")
    assert (why.rule, why.reason) == ("feasibility", reason)


def test_two_required_projects_that_conflict_on_one_pool_are_named_with_the_pool(graph):
    # HAMi and the NVIDIA device plugin both register the node's GPUs (catalog conflicts_with); Kueue,
    # required too, conflicts with neither.
    result = compose(graph, ComposeRequest(profile="online_inference",
                                           constraints=Constraints(require=["kueue", "hami", "nvidia-device-plugin"])))
    failure = _failure(result, "hami and nvidia-device-plugin are both required")
    assert failure.slot == SlotName.DEVICE_HANDOFF
    assert failure.reason == ("hami and nvidia-device-plugin are both required but conflict (catalog conflicts_with); they "
                              "could only run on different node pools, and this stack has one pool (serving).")
    assert [(r.project, r.reason) for r in failure.rejected] == [("nvidia-device-plugin", "Conflicts with hami.")]


def test_two_required_cluster_wide_projects_that_conflict_cannot_be_split_over_pools(graph):
    # Armada and Volcano both queue and place the same pods; the mixed profile's two pools do not
    # help, since neither runs per pool.
    result = compose(graph, ComposeRequest(profile="mixed", constraints=Constraints(require=["volcano", "armada"])))
    failure = _failure(result, "volcano and armada are both required")
    assert failure.slot == SlotName.ADMISSION_QUOTA
    assert failure.reason.endswith("they could only run on different node pools, and this stack has no pool slot for both.")
    assert [(r.project, r.reason) for r in failure.rejected] == [("armada", "Conflicts with volcano.")]
