"""The contract points between a stack's members (placement/rules/contracts.py): which check fails
first and how its sentence names the field or resource, and what each holding check says in a
returned stack. Facts: fixtures/rules/interfaces.yaml (each with its source)."""

from __future__ import annotations

import pytest

from placement.catalog.schemas import ResourceUnit
from placement.rules import ComposeRequest, compose
from placement.rules.context import Candidate, PoolOption, resolve, validated
from placement.rules.contracts import (
    _scheduler_binder,
    binder_conflict,
    binders_of,
    contract_checks,
    contract_failure,
    failed_point,
    integration_conflict,
    peripheral_failure,
    required_binder_conflicts,
    resource_names,
)
from placement.rules.data import SlotName
from placement.rules.models import CheckPoint

HAMI_SOURCE = ("HAMi charts/hami/values.yaml resource names; the mutating webhook sets schedulerName to the HAMi "
               "scheduler, a kube-scheduler with the HAMi extender")
KUEUE_SOURCE = ("Kueue ClusterQueue coveredResources; integrations batch/Job, JobSet, LeaderWorkerSet, "
                "RayJob/RayCluster, Kubeflow jobs, plain Pods/Deployments/StatefulSets (https://kueue.sigs.k8s.io/docs/overview/)")
SHARE = ResourceUnit.MEMORY_COMPUTE_SHARE


@pytest.fixture(scope="module")
def ctx(graph):
    return resolve(graph, validated(ComposeRequest(profile="online_inference")))


def _cand(ctx, sched, adm, unit, handoff, plane=None, **cluster):
    slots = {SlotName.SCHEDULING_POLICY: sched, SlotName.ADMISSION_QUOTA: adm,
             **{SlotName(slot): slug for slot, slug in cluster.items()}}
    return Candidate(cluster=slots, pools=(PoolOption(ctx.pools[0], unit, plane, handoff, 0.0),))


def test_a_handoff_that_does_not_advertise_the_unit_fails_advertise(ctx):
    cand = _cand(ctx, "kube-scheduler", "kueue", SHARE, "nvidia-device-plugin")
    assert contract_failure(ctx, cand) == (
        "Advertise fails: nvidia-device-plugin does not advertise Memory quota + compute share")
    # without an interface entry for the unit, the resource is named by unit and project
    assert resource_names(ctx, cand.pools[0]) == ["Memory quota + compute share via nvidia-device-plugin"]


def test_a_scheduler_that_cannot_bind_the_unit_fails_bind(ctx):
    cand = _cand(ctx, "yunikorn", "kueue", ResourceUnit.DRA_DEVICE, "nvidia-dra-driver")
    assert binders_of(ctx, cand, cand.pools[0]) == []
    assert contract_failure(ctx, cand) == "Bind fails: yunikorn cannot bind DRA device"


def test_a_plugin_inside_kube_scheduler_binds_dra_claims_through_it(ctx):
    # scheduler-plugins builds kube-scheduler with its plugins, DynamicResources included (issue 32)
    cand = _cand(ctx, "coscheduling", "kueue", ResourceUnit.DRA_DEVICE, "nvidia-dra-driver")
    assert binders_of(ctx, cand, cand.pools[0]) == ["coscheduling"]


def test_a_webhook_that_rewrites_the_scheduler_name_gives_the_pods_two_binders(ctx):
    cand = _cand(ctx, "volcano", "kueue", SHARE, "hami", "hami")
    reason = contract_failure(ctx, cand)
    assert reason == ("Bind fails on the serving pool: two binders - hami's mutating webhook rewrites spec.schedulerName "
                      f"of GPU pods to hami-scheduler, so volcano's policy never sees them ({HAMI_SOURCE})")
    assert failed_point(reason) == CheckPoint.BIND
    # ... unless the rewritten binder keeps the stack's scheduler (hami-scheduler is a kube-scheduler)
    assert contract_failure(ctx, _cand(ctx, "kube-scheduler", "kueue", SHARE, "hami", "hami")) is None


def test_resources_only_one_scheduler_understands_fail_bind_with_any_other(ctx):
    opt = _cand(ctx, "kube-scheduler", "kueue", SHARE, "volcano-vgpu-device-plugin", "hami-core").pools[0]
    source = "Project-HAMi/volcano-vgpu-device-plugin README (HAMi not installed; Volcano deviceshare plugin with VGPUEnable binds)"
    assert binder_conflict(ctx, "koordinator", ["volcano-vgpu-device-plugin", "hami-core"], opt) == (
        "Bind fails on the serving pool: volcano.sh/vgpu-number, volcano.sh/vgpu-memory, volcano.sh/vgpu-cores from "
        f"volcano-vgpu-device-plugin are bound only by volcano, not by koordinator ({source})")
    assert binder_conflict(ctx, "volcano", ["volcano-vgpu-device-plugin"], opt) is None
    # members that are not binder-sensitive never conflict
    assert binder_conflict(ctx, "koordinator", ["hami-core", None], opt) is None
    # a handoff without bound_by has no binder restriction: only the webhook rule applies
    kube = _cand(ctx, "kube-scheduler", "kueue", SHARE, "hami", "hami").pools[0]
    assert binder_conflict(ctx, "kube-scheduler", ["hami"], kube) is None
    # a scheduler binds through its own binder process: coscheduling runs inside kube-scheduler
    assert _scheduler_binder(ctx, "coscheduling") == "kube-scheduler"
    assert _scheduler_binder(ctx, "armada") == "armada"  # no interface entry: itself
    assert _scheduler_binder(ctx, None) is None


def test_a_quota_layer_that_cannot_count_the_unit_fails_quota_naming_the_resources(ctx):
    cand = _cand(ctx, "kube-scheduler", "runai", SHARE, "hami", "hami")
    reason = contract_failure(ctx, cand)
    assert reason == ("Quota fails: runai cannot count Memory quota + compute share (nvidia.com/gpu, nvidia.com/gpumem, "
                      "nvidia.com/gpucores) in quota")
    assert failed_point(reason) == CheckPoint.QUOTA


def test_the_reason_prefix_names_the_contract_point(ctx):
    assert failed_point("Advertise fails: x") == CheckPoint.ADVERTISE
    assert failed_point("Allocate fails on the a pool: x") == CheckPoint.ALLOCATE
    assert failed_point("Workload admission fails: x") == CheckPoint.WORKLOAD_ADMISSION
    assert failed_point("lacks required volcano") is None
    assert failed_point("x Bind fails") is None  # only a prefix counts


def test_a_workload_api_the_admission_layer_does_not_integrate_runs_unadmitted(ctx):
    assert integration_conflict(ctx, "kueue", "aibrix") == (
        "Workload admission fails: kueue has no integration for AIBrix workloads (it admits jobset, lws, kuberay, "
        f"kubeflow-training-operator), so they would run without being admitted ({KUEUE_SOURCE})")
    assert integration_conflict(ctx, "kueue", "kuberay") is None
    assert integration_conflict(ctx, "volcano", "volcano") is None  # its own jobs
    assert integration_conflict(ctx, "resource-quota", "aibrix") is None  # counts pods at creation
    assert integration_conflict(ctx, "kueue", None) is None
    cand = _cand(ctx, "kube-scheduler", "kueue", ResourceUnit.WHOLE_GPU, "nvidia-device-plugin", workload_unit="aibrix")
    assert contract_failure(ctx, cand) == integration_conflict(ctx, "kueue", "aibrix")
    assert peripheral_failure(ctx, cand) == integration_conflict(ctx, "kueue", "aibrix")


def test_an_optional_member_with_a_rewriting_webhook_breaks_the_bind_of_another_scheduler(ctx):
    cand = _cand(ctx, "volcano", "kueue", ResourceUnit.WHOLE_GPU, "nvidia-device-plugin", observability="hami")
    expected = ("Bind fails on the serving pool: two binders - hami's mutating webhook rewrites spec.schedulerName of "
                f"GPU pods to hami-scheduler, so volcano's policy never sees them ({HAMI_SOURCE})")
    assert peripheral_failure(ctx, cand) == expected
    assert contract_failure(ctx, cand) == expected
    assert peripheral_failure(ctx, _cand(ctx, "volcano", "kueue", ResourceUnit.WHOLE_GPU, "nvidia-device-plugin")) is None


def test_an_operator_shipping_the_pools_own_device_plugin_adds_no_second_allocator(ctx):
    cand = _cand(ctx, "kube-scheduler", "kueue", ResourceUnit.WHOLE_GPU, "nvidia-device-plugin",
                 platform_lifecycle="gpu-operator")
    assert contract_failure(ctx, cand) is None
    allocate = next(c for c in contract_checks(ctx, cand) if c.point == CheckPoint.ALLOCATE)
    assert "One allocator per resource" not in allocate.reason


def test_a_required_scheduler_and_a_required_rewriting_webhook_are_refused_before_the_search(graph):
    ctx = resolve(graph, validated(ComposeRequest(profile="online_inference", constraints={"require": ["volcano", "hami"]})))
    (failure,) = required_binder_conflicts(ctx)
    assert (failure.slot, failure.contract_point) == (SlotName.SCHEDULING_POLICY, CheckPoint.BIND)
    assert failure.reason == (
        "Bind fails: volcano and hami are both required, and hami's mutating webhook rewrites spec.schedulerName of GPU "
        f"pods to hami-scheduler: two binders claim the pool's pods ({HAMI_SOURCE}).")
    assert [(r.project, r.reason) for r in failure.rejected] == [
        ("hami", "Its webhook sets spec.schedulerName: hami-scheduler.")]
    result = compose(graph, ComposeRequest(profile="online_inference", constraints={"require": ["volcano", "hami"]}))
    assert not result.feasible and failure.reason in [f.reason for f in result.failures]
    # the scheduler the webhook keeps is no conflict
    kept = resolve(graph, validated(ComposeRequest(profile="online_inference",
                                                   constraints={"require": ["kube-scheduler", "hami"]})))
    assert required_binder_conflicts(kept) == []


def _checks(ctx, *cand, **cluster):
    return {c.point: c for c in contract_checks(ctx, _cand(ctx, *cand, **cluster))}


def test_a_holding_stack_names_each_interface_and_who_holds_it(ctx):
    checks = _checks(ctx, "kube-scheduler", "kueue", SHARE, "hami", "hami", platform_lifecycle="gpu-operator")
    names = ["nvidia.com/gpu", "nvidia.com/gpumem", "nvidia.com/gpucores"]
    advertise = checks[CheckPoint.ADVERTISE]
    assert (advertise.pool, advertise.unit, advertise.holds, advertise.by, advertise.interface) == (
        "serving", SHARE, True, ["hami"], names)
    assert advertise.reason.startswith("HAMi advertises nvidia.com/gpu, nvidia.com/gpumem, nvidia.com/gpucores on the "
                                       "serving pool's nodes: ")
    assert advertise.source == HAMI_SOURCE
    bind = checks[CheckPoint.BIND]
    field = "spec.schedulerName: hami-scheduler (set by hami's mutating webhook)"
    assert (bind.by, bind.interface) == (["hami"], [field])
    assert bind.reason.startswith(f"One binder ({field}): HAMi binds nvidia.com/gpu, nvidia.com/gpumem, nvidia.com/gpucores: ")
    assert bind.reason.endswith(" hami-scheduler is a kube-scheduler with hami's extender, so the pool's pods still have one binder.")
    assert bind.source == "Pods without spec.schedulerName are bound by default-scheduler"
    allocate = checks[CheckPoint.ALLOCATE]
    assert allocate.by == ["hami"] and allocate.interface == names
    assert allocate.reason.endswith(
        " One allocator per resource: gpu-operator's own device plugin is disabled on these nodes (ClusterPolicy "
        "devicePlugin.enabled=false, or label the pool's nodes nvidia.com/gpu.deploy.device-plugin=false).")
    quota = checks[CheckPoint.QUOTA]
    assert (quota.by, quota.interface, quota.source) == (["kueue"], names, KUEUE_SOURCE)
    assert quota.reason == ("Kueue counts the advertised names: ClusterQueue spec.resourceGroups[].coveredResources and "
                            "flavors[].resources[] must list nvidia.com/gpu, nvidia.com/gpumem, nvidia.com/gpucores.")
    admission = checks[CheckPoint.WORKLOAD_ADMISSION]
    assert (admission.pool, admission.unit, admission.by, admission.interface, admission.source) == (
        "all", SHARE, ["kueue"], [], KUEUE_SOURCE)
    assert admission.reason == ("Kueue admits batch/Job and plain Pods/Deployments: Kueue creates the job suspended "
                                "(spec.suspend: true) and unsuspends it once the Workload's quota is reserved.")


def test_the_bind_field_is_the_schedulers_own_scheduler_name(ctx):
    bind = _checks(ctx, "kube-scheduler", "resource-quota", ResourceUnit.DRA_DEVICE, "nvidia-dra-driver")[CheckPoint.BIND]
    assert bind.interface == ["spec.schedulerName: default-scheduler"]
    assert bind.by == ["kube-scheduler"]
    assert bind.reason.startswith("One binder (spec.schedulerName: default-scheduler): kube-scheduler binds DeviceClass "
                                  "gpu.nvidia.com: ")
    # a scheduler without an interface entry is named as the field value
    bind = _checks(ctx, "armada", "kueue", ResourceUnit.WHOLE_GPU, "nvidia-device-plugin")[CheckPoint.BIND]
    assert bind.interface == ["spec.schedulerName: armada"]
    assert bind.source == "catalog contract_points"


def test_dra_devices_are_counted_by_the_admission_layers_device_class_quota(ctx):
    checks = _checks(ctx, "kube-scheduler", "resource-quota", ResourceUnit.DRA_DEVICE, "nvidia-dra-driver")
    assert checks[CheckPoint.QUOTA].reason == ("Kubernetes ResourceQuota counts the advertised names: ResourceQuota "
                                               "spec.hard gpu.nvidia.com.deviceclass.resource.k8s.io/devices.")
    assert checks[CheckPoint.QUOTA].interface == ["DeviceClass gpu.nvidia.com"]
    assert checks[CheckPoint.WORKLOAD_ADMISSION].reason == (
        "Kubernetes ResourceQuota counts pods at creation; no suspend/admit step is needed.")
    # whole GPUs go through the plain quota text with the names filled in
    checks = _checks(ctx, "kube-scheduler", "resource-quota", ResourceUnit.WHOLE_GPU, "nvidia-device-plugin")
    assert checks[CheckPoint.QUOTA].reason == (
        "Kubernetes ResourceQuota counts the advertised names: ResourceQuota spec.hard requests.nvidia.com/gpu "
        "(extended resources only with the requests. prefix).")


def test_an_admission_layer_without_quota_text_counts_the_names_in_its_own_words(ctx):
    checks = _checks(ctx, "koordinator", "koordinator", SHARE, "koordinator", "koordinator")
    assert checks[CheckPoint.QUOTA].reason == ("Koordinator counts the advertised names: Koordinator counts "
                                               "koordinator.sh/gpu-core, koordinator.sh/gpu-memory-ratio in quota.")
    assert checks[CheckPoint.BIND].interface == ["spec.schedulerName: koord-scheduler"]


def test_podgroup_admission_names_what_it_admits(ctx):
    volcano = _checks(ctx, "volcano", "volcano", ResourceUnit.WHOLE_GPU, "nvidia-device-plugin")
    assert volcano[CheckPoint.WORKLOAD_ADMISSION].reason == (
        "Volcano admits pods with its schedulerName (a PodGroup per pod) through PodGroups in its queues.")
    assert volcano[CheckPoint.QUOTA].reason == "Volcano counts the advertised names: Queue spec.capability / deserved over nvidia.com/gpu."
    own = _checks(ctx, "volcano", "volcano", ResourceUnit.WHOLE_GPU, "nvidia-device-plugin", workload_unit="volcano")
    assert own[CheckPoint.WORKLOAD_ADMISSION].reason == "Volcano admits its own Jobs through PodGroups in its queues."
    ray = _checks(ctx, "volcano", "volcano", ResourceUnit.WHOLE_GPU, "nvidia-device-plugin", workload_unit="kuberay")
    assert ray[CheckPoint.WORKLOAD_ADMISSION].by == ["kuberay", "volcano"]
    assert ray[CheckPoint.WORKLOAD_ADMISSION].reason.startswith("Volcano admits KubeRay")
    kueue = _checks(ctx, "kube-scheduler", "kueue", ResourceUnit.WHOLE_GPU, "nvidia-device-plugin", workload_unit="kuberay")
    assert kueue[CheckPoint.WORKLOAD_ADMISSION].reason.startswith("Kueue admits KubeRay: Kueue creates the job suspended")


def test_the_mig_resource_name_carries_the_profile_one_replica_gets(ctx):
    cand = _cand(ctx, "kube-scheduler", "kueue", ResourceUnit.MIG_INSTANCE, "nvidia-device-plugin", "mig")
    # the serving preset: a quarter GPU with 8 GiB gets 2g.20gb (1g has 1/7 of the SMs)
    assert resource_names(ctx, cand.pools[0]) == ["nvidia.com/mig-2g.20gb"]
    assert contract_failure(ctx, cand) is None
    # names without the {mig} placeholder are returned as listed
    hami = _cand(ctx, "kube-scheduler", "kueue", ResourceUnit.MIG_INSTANCE, "hami", "mig")
    assert resource_names(ctx, hami.pools[0]) == ["nvidia.com/gpu", "nvidia.com/gpumem"]
