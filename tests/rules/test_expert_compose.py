"""Expert compose set: requests with the properties a platform expert signs - the unit each class
gets, exactly one binder, the resource names quota must count, and gang support. Each case cites
its source (reference/domain-facts.md section, seed, or upstream doc)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from placement.rules import ComposeRequest, compose

LLM = {"name": "llm", "kind": "training", "replicas": 8, "gpus_per_replica": 8, "gpu_memory_gib": 70, "gang": True,
       "peer_to_peer": True, "tenants": 2}
CHAT = {"name": "chat", "kind": "online_inference", "replicas": 16, "gpus_per_replica": 0.25, "gpu_memory_gib": 12,
        "p99_ms": 150, "tenants": 4}
WHOLE = {"whole_gpu", "dra_device"}


@dataclass
class Case:
    id: str
    request: dict
    source: str
    units: dict[str, set[str]] = field(default_factory=dict)  # pool -> units a top stack may use
    schedulers: set[str] | None = None  # the binder of the top stack
    quota_names: dict[str, str] = field(default_factory=dict)  # pool -> a name the quota check must name
    gang: bool | None = None
    bind_field: str | None = None  # text the bind check must name
    contains: set[str] = field(default_factory=set)
    absent: set[str] = field(default_factory=set)
    why_not: dict[str, str] = field(default_factory=dict)  # project -> text in its why_not
    check_text: dict[str, str] = field(default_factory=dict)  # contract point -> text in some check
    infeasible_point: str | None = None


CASES = [
    Case("nvlink-training-never-mig", {"workloads": [LLM], "pool": {"gpu_model": "A100-80GB", "gpu_count": 64}},
         "domain-facts §1.3 (no P2P/NVLink between MIG instances; a process sees one instance)",
         units={"llm": WHOLE}, gang=True, why_not={"mig": "one MIG instance"}),
    Case("multi-node-serving-whole-gpus",
         {"workloads": [{"name": "big", "kind": "online_inference", "replicas": 4, "gpus_per_replica": 8, "gpu_memory_gib": 60,
                         "gang": True, "peer_to_peer": True, "p99_ms": 500}], "pool": {"gpu_model": "H100-80GB"}},
         "domain-facts §1.3; LWS multi-host serving groups need all-or-nothing placement (seeds/003 partial gang)",
         units={"big": WHOLE}, gang=True, absent={"hami", "time-slicing"}),
    Case("small-model-server-hami-one-binder", {"workloads": [CHAT], "pool": {"gpu_model": "A100-80GB"}},
         "domain-facts §3 (HAMi webhook sets schedulerName to the HAMi scheduler, a kube-scheduler with the extender)",
         units={"chat": {"memory_compute_share"}}, schedulers={"kube-scheduler"}, bind_field="hami-scheduler",
         quota_names={"chat": "nvidia.com/gpumem"}),
    Case("training-profile-is-distributed-whole-gpus", {"profile": "training", "pool": {"gpu_model": "A100-80GB", "gpu_count": 64}},
         "issue 11: the training preset is 8-GPU NVLink gangs; domain-facts §1.3 (no P2P between MIG instances)",
         units={"training": WHOLE}, gang=True, why_not={"mig": "one MIG instance"}),
    Case("form-a-training-mig-volcano",
         {"profile": "training", "pool": {"gpu_model": "A100-80GB", "gpu_count": 16},
          "workloads": [{"name": "training", "kind": "training", "replicas": 4, "gpus_per_replica": 0.25,
                         "gpu_memory_gib": 16, "gang": True, "tenants": 3}]},
         "seeds/002 form A (small training jobs on MIG slices); domain-facts §1.5 (mixed strategy advertises "
         "nvidia.com/mig-<profile>); a quarter GPU and 16 GiB take 2g.20gb (a replica asking 1 whole GPU fills the "
         "card and gets whole GPUs: tests/rules/test_whole_card_mig.py)",
         units={"training": {"mig_instance"}}, schedulers={"volcano"}, quota_names={"training": "nvidia.com/mig-2g.20gb"}, gang=True),
    Case("form-b-inference-hami-kueue", {"profile": "online_inference", "pool": {"gpu_model": "A100-80GB", "gpu_count": 8}},
         "seeds/002 form B; domain-facts §4.1 (ClusterQueue coveredResources)",
         units={"serving": {"memory_compute_share"}}, contains={"hami", "kueue"},
         check_text={"quota": "coveredResources"}),
    Case("form-c-volcano-vgpu-not-hami", {"profile": "mixed", "pool": {"gpu_model": "A100-80GB", "gpu_count": 8}},
         "seeds/002 form C; domain-facts §3 (under Volcano the vGPU comes from volcano-vgpu-device-plugin)",
         units={"isolated": {"mig_instance"}, "shared": {"memory_compute_share", "mps_share"}}, schedulers={"volcano"},
         quota_names={"shared": "volcano.sh/vgpu-memory"}, absent={"hami"}, gang=True),
    Case("notebook-gets-smallest-mig-80gb",
         {"workloads": [{"name": "nb", "kind": "interactive", "replicas": 7, "gpus_per_replica": 0.25, "gpu_memory_gib": 18}],
          "slo": {"isolation": "hard", "goal": "latency_sensitive", "multi_tenant": False}, "pool": {"gpu_model": "A100-80GB"}},
         "domain-facts §1.1 (A100-80GB profiles 1g.10gb ... 7g.80gb)",
         units={"nb": {"mig_instance", "whole_gpu", "dra_device"}}, quota_names={}),
    Case("notebook-gets-smallest-mig-40gb",
         {"workloads": [{"name": "nb", "kind": "training", "replicas": 4, "gpus_per_replica": 0.5, "gpu_memory_gib": 18}],
          "slo": {"isolation": "hard", "goal": "throughput_first", "multi_tenant": True}, "pool": {"gpu_model": "A100-40GB"}},
         "domain-facts §1.1 (A100-40GB profiles 1g.5gb ... 7g.40gb; 18 GiB needs a 20 GB profile)",
         units={"nb": {"mig_instance"}}, quota_names={"nb": "nvidia.com/mig-3g.20gb"}),
    Case("mps-share-too-small-for-replica",
         {"workloads": [{"name": "batch", "kind": "batch_inference", "replicas": 8, "gpus_per_replica": 0.25, "gpu_memory_gib": 30}],
          "slo": {"isolation": "none", "goal": "throughput_first", "multi_tenant": False}, "pool": {"gpu_model": "A100-80GB"}},
         "domain-facts §2.2 (MPS pinned memory limit = device memory / replicas)",
         absent={"cuda-mps"}, why_not={"cuda-mps": "equal 0.25 share"}),
    Case("no-mig-on-l40s", {"profile": "training", "pool": {"gpu_model": "L40S", "gpu_count": 8},
                            "workloads": [{"name": "training", "kind": "training", "replicas": 4, "gpus_per_replica": 1,
                                           "gpu_memory_gib": 16, "gang": True}]},
         "fixtures/rules/units.yaml gpu_models (L40S has no MIG); NVIDIA MIG user guide supported GPUs",
         units={"training": WHOLE}, gang=True, why_not={"mig": "not MIG-capable"}),
    Case("gang-inside-the-default-scheduler",
         {"profile": "training", "constraints": {"keep_default_scheduler": True}, "pool": {"gpu_model": "A100-80GB", "gpu_count": 8}},
         "domain-facts §6.4 (Coscheduling Permit plugin inside kube-scheduler); since Kubernetes 1.37 kube-scheduler's "
         "GangScheduling plugin places a PodGroup with a gang policy all-or-nothing (KEP-4671, scheduling.k8s.io/v1beta1)",
         schedulers={"kube-scheduler", "coscheduling"}, contains={"kubernetes-workload-api"}, gang=True),
    Case("hami-under-volcano-is-two-binders",
         {"profile": "mixed", "constraints": {"require": ["hami", "volcano"]}, "pool": {"gpu_model": "A100-80GB", "gpu_count": 8}},
         "domain-facts §3 (webhook rewrites schedulerName to hami-scheduler); volcano.yaml compatibility",
         infeasible_point="bind"),
    Case("volcano-vgpu-needs-volcano",
         {"profile": "online_inference", "constraints": {"require": ["volcano-vgpu-device-plugin"]}, "pool": {"gpu_model": "A100-80GB", "gpu_count": 8}},
         "Project-HAMi/volcano-vgpu-device-plugin README (bound by Volcano's deviceshare plugin)",
         schedulers={"volcano"}, quota_names={"serving": "volcano.sh/vgpu-number"}),
    Case("kueue-admits-rayjobs-by-suspend",
         {"profile": "training", "constraints": {"require": ["kueue", "kuberay"]}, "pool": {"gpu_model": "A100-80GB", "gpu_count": 8}},
         "https://kueue.sigs.k8s.io/docs/overview/ (RayJob integration; jobs created suspended)",
         contains={"kueue", "kuberay"}, check_text={"workload_admission": "spec.suspend"}, gang=True),
    Case("dra-quota-counts-device-classes",
         {"profile": "training", "constraints": {"require": ["nvidia-dra-driver", "resource-quota"]},
          "slo": {"isolation": "none", "goal": "throughput_first", "multi_tenant": True},  # a DRA claim alone promises no isolation (units.yaml)
          "pool": {"gpu_model": "A100-80GB", "gpu_count": 8}},
         "domain-facts §6.2; https://kubernetes.io/docs/concepts/policy/resource-quotas/ (device-class quota)",
         units={"training": {"dra_device"}}, check_text={"quota": "deviceclass.resource.k8s.io/devices", "advertise": "DeviceClass gpu.nvidia.com"}),
    Case("gpu-operator-plugin-disabled-under-hami",
         {"profile": "online_inference", "constraints": {"require": ["hami", "gpu-operator"]}, "pool": {"gpu_model": "A100-80GB", "gpu_count": 8}},
         "domain-facts §6.6 (device plugin operand can be disabled); hami.yaml compatibility",
         contains={"hami", "gpu-operator"}, check_text={"allocate": "devicePlugin.enabled=false"}),
    Case("single-team-whole-gpus-native",
         {"profile": "batch_inference", "slo": {"isolation": "hard", "goal": "throughput_first", "multi_tenant": False},
          "pool": {"gpu_model": "L40S", "gpu_count": 2}},
         "seeds/000 paradigm A (native Kubernetes for one team)",
         schedulers={"kube-scheduler"}, contains={"resource-quota"}, quota_names={"batch": "requests.nvidia.com/gpu"}),
    Case("two-classes-two-pools",
         {"workloads": [LLM, CHAT], "pool": {"gpu_model": "A100-80GB", "gpu_count": 72}},
         "DESIGN.md §4 (pools derived from classes); domain-facts §1.3, §3",
         units={"llm": WHOLE, "chat": {"memory_compute_share", "mig_instance", "mps_share"}}, gang=True),
]


def _slot(stack, slot):
    return next((a.project.slug for a in stack.slots if a.slot.value == slot and a.project), None)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_expert_compose_case(graph, case: Case):
    assert case.source
    result = compose(graph, ComposeRequest.model_validate(case.request))
    if case.infeasible_point:
        assert not result.feasible
        assert any(f.contract_point and f.contract_point.value == case.infeasible_point for f in result.failures), result.failures
        return
    assert result.feasible, result.failures
    top = result.stacks[0]
    for stack in result.stacks:  # every returned stack: one binder per pool, every check holds
        assert all(c.holds for c in stack.contracts)
        for pool in stack.pools:
            binds = [c for c in stack.contracts if c.point.value == "bind" and c.pool == pool.name]
            assert len(binds) == 1 and binds[0].interface[0].startswith("spec.schedulerName")
        if case.gang:  # the scheduler gangs itself, or through the API it serves (Workload API, Kubernetes >= 1.37)
            sched = _slot(stack, "scheduling_policy")
            api = graph.served_api(sched, "gang-scheduling")
            assert "gang-scheduling" in graph.projects[sched].capabilities or (api and api.ref.slug in stack.components)
    pools = {p.name: p for p in top.pools}
    for name, units in case.units.items():
        assert pools[name].unit.value in units, (name, pools[name].unit)
    if case.schedulers:
        assert _slot(top, "scheduling_policy") in case.schedulers
    for name, quota_name in case.quota_names.items():
        quota = next(c for c in top.contracts if c.point.value == "quota" and c.pool == name)
        assert quota_name in quota.reason, quota.reason
    if case.bind_field:
        assert any(case.bind_field in c.interface[0] for c in top.contracts if c.point.value == "bind")
    assert case.contains <= set(top.components)
    assert not case.absent & {slug for s in result.stacks for slug in s.components}
    why_not = {w.project: w.reason for w in result.why_not}
    for slug, text in case.why_not.items():
        assert text in why_not[slug], why_not.get(slug)
    for point, text in case.check_text.items():
        assert any(text in c.reason for c in top.contracts if c.point.value == point), [c.reason for c in top.contracts if c.point.value == point]


def test_the_expert_compose_set_is_large_enough():
    assert len(CASES) >= 15


def test_a_scheduler_plugin_is_composed_only_with_the_scheduler_that_runs_it(graph):
    # CapacityScheduling (ElasticQuota) is a plugin of the scheduler-plugins kube-scheduler: beside Volcano,
    # KAI, Koordinator or YuniKorn nobody enforces its quota (scheduler-plugins CapacityScheduling README).
    result = compose(graph, {"profile": "training", "limit": 10, "constraints": {"require": ["capacity-scheduling"]}})
    assert result.feasible, result.failures
    assert {_slot(s, "scheduling_policy") for s in result.stacks} <= {"kube-scheduler", "coscheduling"}
    assert ("capacity-scheduling requires the scheduler kube-scheduler, but this stack's scheduler is volcano "
            "(1 combination)") in result.excluded, result.excluded


def test_resource_quota_earns_no_whole_workload_admission_since_it_admits_pod_by_pod(graph):
    # ResourceQuota rejects each pod that would exceed the quota when it is created; it never holds a
    # workload back as a whole (its own non-promises), so beside KAI it adds nothing a gang could use.
    result = compose(graph, {"profile": "training", "limit": 10})
    for stack in result.stacks:
        assert not [p for p in stack.score_breakdown if p.project == "resource-quota" and p.subject == "admission-control"]
    rank = {s.title: s.rank for s in result.stacks}
    kai_alone = "Whole GPU (NVIDIA Kubernetes device plugin) + KAI Scheduler"
    assert rank[kai_alone] < rank.get(kai_alone + " + Kubernetes ResourceQuota", 99)
