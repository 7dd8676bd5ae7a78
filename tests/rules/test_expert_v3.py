"""Expert set v3 (issue 32): compare pairs, compose requests and refusals an expert signs at the
edges - integrations, serving, DRA, sharing add-ons. Each case cites the upstream document that
decides it; every case failed on main before the engine change it documents (the integration
contracts of fixtures/rules/integrations.yaml, the role axes of comparison.yaml, the scoring
conditions, batch-only systems, DRA units and enforcement add-ons of composition.yaml/units.yaml),
except the two guards that hold what the change must keep (metering with several tenants, no
routing credit without a latency target)."""

from __future__ import annotations

import pytest

from placement.rules import ComposeRequest, compare, compose

KUEUE_AW = "https://kueue.sigs.k8s.io/docs/tasks/run/appwrappers/; project-codeflare/appwrapper README"
KUEUE_PR = "https://kueue.sigs.k8s.io/docs/admission-check-controllers/provisioning/"
RAY_KAI = "https://docs.ray.io/en/latest/cluster/kubernetes/k8s-ecosystem/kai-scheduler.html"
RAY_YK = "https://docs.ray.io/en/latest/cluster/kubernetes/k8s-ecosystem/yunikorn.html"
RAY_SP = "https://docs.ray.io/en/latest/cluster/kubernetes/k8s-ecosystem/scheduler-plugins.html"
KSERVE_KEDA = "https://kserve.github.io/website/docs/model-serving/predictive-inference/autoscaling/keda-autoscaler"
GPUOP_RDMA = "https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-operator-rdma.html"
NRT_KEP = "kubernetes-sigs/scheduler-plugins kep/119-node-resource-topology-aware-scheduling"
NFD_TU = "https://kubernetes-sigs.github.io/node-feature-discovery/stable/usage/nfd-topology-updater.html"
LLMD = "https://llm-d.ai/docs/architecture (inference scheduler, P/D disaggregation)"
DYNAMO = "https://docs.nvidia.com/dynamo (KV-aware router, disaggregated serving, planner)"
AIBRIX = "https://aibrix.readthedocs.io (gateway routing, distributed KV cache, autoscaler)"
KSERVE = "https://kserve.github.io/website/ (InferenceService, runtimes, autoscaling)"
VLLM_PS = "https://docs.vllm.ai/projects/production-stack (router, LMCache)"
NIM_OP = "https://docs.nvidia.com/nim-operator (NIMService, autoscaling)"
KARPENTER = "https://karpenter.sh/docs/concepts/ (NodePools, disruption and consolidation)"
CA = "kubernetes/autoscaler cluster-autoscaler FAQ (node groups, scale-down)"
JOBSET = "https://jobset.sigs.k8s.io/docs/overview/ (replicatedJobs, failurePolicy)"
LWS = "https://lws.sigs.k8s.io/docs/overview/ (a leader and workers as one unit)"
KUBERAY = "https://docs.ray.io/en/latest/cluster/kubernetes/ (RayCluster head and worker groups)"
KF = "https://www.kubeflow.org/docs/components/trainer/ (training jobs)"
JOB = "https://kubernetes.io/docs/concepts/workloads/controllers/job/"

SERVING_AXES = ["request_routing", "pd_disaggregation", "kv_cache", "autoscaling", "engines"]
PROVISIONER_AXES = ["provisioning_model", "gpu_awareness", "consolidation", "clouds"]
WORKLOAD_AXES = ["pod_group_shape", "failure_policy", "startup_and_gang", "admission_integrations"]

# (a, b, verdict, text the explanation or the joining contract must give, axes or None, source)
COMPARE = [
    # integrations of issue 32: complements, with the interface (both orders)
    ("kueue", "appwrapper", "cross_layer", "spec.suspend: true", None, KUEUE_AW),
    ("appwrapper", "kueue", "cross_layer", "complement each other", None, KUEUE_AW),
    ("kueue", "provisioning-request", "cross_layer", "kueue.x-k8s.io/provisioning-request", None, KUEUE_PR),
    ("provisioning-request", "kueue", "cross_layer", "Provisioned=True", None, KUEUE_PR),
    ("kuberay", "kai-scheduler", "cross_layer", "batchScheduler.name=kai-scheduler", None, RAY_KAI),
    ("kai-scheduler", "kuberay", "cross_layer", "complement each other", None, RAY_KAI),
    ("kserve", "keda", "cross_layer", "serving.kserve.io/autoscalerClass: keda", None, KSERVE_KEDA),
    ("keda", "kserve", "cross_layer", "ScaledObject", None, KSERVE_KEDA),
    ("gpu-operator", "nvidia-network-operator", "cross_layer", "GPUDirect RDMA", None, GPUOP_RDMA),
    ("nvidia-network-operator", "gpu-operator", "cross_layer", "driver.rdma.enabled=true", None, GPUOP_RDMA),
    ("node-resource-topology", "topology-manager", "cross_layer", "topologyManagerPolicy", None, NRT_KEP),
    ("topology-manager", "node-resource-topology", "cross_layer", "single-numa-node", None, NRT_KEP),
    # more integration contracts of the same kinds
    ("kuberay", "yunikorn", "cross_layer", "batchScheduler.name=yunikorn", None, RAY_YK),
    ("kuberay", "coscheduling", "cross_layer", "PodGroup", None, RAY_SP),
    ("nfd-topology-updater", "node-resource-topology", "cross_layer", "podresources", None, NFD_TU),
    # a wrapper and what it wraps are not rivals
    ("appwrapper", "jobset", "cross_layer", "not rivals", None, KUEUE_AW),
    ("appwrapper", "kuberay", "cross_layer", "not rivals", None, KUEUE_AW),
    ("appwrapper", "kubeflow-training-operator", "cross_layer", "not rivals", None, KUEUE_AW),
    # serving frameworks on serving axes, not queues and quota
    ("llm-d", "nvidia-dynamo", "comparable", "serving framework", SERVING_AXES, f"{LLMD}; {DYNAMO}"),
    ("kserve", "aibrix", "comparable", "serving framework", SERVING_AXES, f"{KSERVE}; {AIBRIX}"),
    ("llm-d", "aibrix", "comparable", "request routing", SERVING_AXES, f"{LLMD}; {AIBRIX}"),
    ("nvidia-dynamo", "vllm-production-stack", "comparable", "serving framework", SERVING_AXES, f"{DYNAMO}; {VLLM_PS}"),
    ("kserve", "llm-d", "comparable", "serving framework", SERVING_AXES, f"{KSERVE}; {LLMD}"),
    ("aibrix", "vllm-production-stack", "comparable", "serving framework", SERVING_AXES, f"{AIBRIX}; {VLLM_PS}"),
    ("nim-operator", "kserve", "comparable", "serving framework", SERVING_AXES, f"{NIM_OP}; {KSERVE}"),
    ("nvidia-dynamo", "kserve", "comparable", "serving framework", SERVING_AXES, f"{DYNAMO}; {KSERVE}"),
    ("llm-d", "vllm-production-stack", "comparable", "serving framework", SERVING_AXES, f"{LLMD}; {VLLM_PS}"),
    ("nim-operator", "llm-d", "comparable", "serving framework", SERVING_AXES, f"{NIM_OP}; {LLMD}"),
    ("nim-operator", "nvidia-dynamo", "comparable", "serving framework", SERVING_AXES, f"{NIM_OP}; {DYNAMO}"),
    ("aibrix", "nvidia-dynamo", "comparable", "serving framework", SERVING_AXES, f"{AIBRIX}; {DYNAMO}"),
    ("kserve", "vllm-production-stack", "comparable", "serving framework", SERVING_AXES, f"{KSERVE}; {VLLM_PS}"),
    ("nim-operator", "aibrix", "comparable", "serving framework", SERVING_AXES, f"{NIM_OP}; {AIBRIX}"),
    ("nim-operator", "vllm-production-stack", "comparable", "serving framework", SERVING_AXES, f"{NIM_OP}; {VLLM_PS}"),
    # node provisioners on provisioning axes, not isolation and overhead
    ("karpenter", "cluster-autoscaler", "comparable", "node provisioner", PROVISIONER_AXES, f"{KARPENTER}; {CA}"),
    ("cluster-autoscaler", "karpenter", "comparable", "consolidation", PROVISIONER_AXES, f"{KARPENTER}; {CA}"),
    ("provisioning-request", "karpenter", "comparable", "node provisioner", PROVISIONER_AXES, f"{KUEUE_PR}; {KARPENTER}"),
    ("karpenter", "provisioning-request", "comparable", "provisioning model", PROVISIONER_AXES, f"{KARPENTER}; {KUEUE_PR}"),
    # workload APIs on workload axes
    ("jobset", "lws", "comparable", "workload API", WORKLOAD_AXES, f"{JOBSET}; {LWS}"),
    ("jobset", "kuberay", "comparable", "workload API", WORKLOAD_AXES, f"{JOBSET}; {KUBERAY}"),
    ("lws", "kuberay", "comparable", "workload API", WORKLOAD_AXES, f"{LWS}; {KUBERAY}"),
    ("kubeflow-training-operator", "kuberay", "comparable", "workload API", WORKLOAD_AXES, f"{KF}; {KUBERAY}"),
    ("jobset", "kubernetes-job", "comparable", "workload API", WORKLOAD_AXES, f"{JOBSET}; {JOB}"),
    ("lws", "kubernetes-job", "comparable", "workload API", WORKLOAD_AXES, f"{LWS}; {JOB}"),
    ("kuberay", "kubernetes-job", "comparable", "workload API", WORKLOAD_AXES, f"{KUBERAY}; {JOB}"),
    ("kubeflow-training-operator", "lws", "comparable", "workload API", WORKLOAD_AXES, f"{KF}; {LWS}"),
]


@pytest.mark.parametrize("a, b, verdict, text, axes, source", COMPARE, ids=[f"{c[0]}-{c[1]}" for c in COMPARE])
def test_expert_v3_compare(graph, a, b, verdict, text, axes, source):
    assert source
    pair = compare(graph, [a, b]).pairs[0]
    assert pair.verdict.value == verdict, pair.explanation
    assert text in pair.explanation or any(text in j.summary for j in pair.contracts), pair.explanation
    if axes:
        assert [x.axis for x in pair.axes] == axes
        assert not {"queues", "quota_model", "isolation", "overhead"} & {x.axis for x in pair.axes}
    if verdict == "cross_layer":
        assert "nothing to compare" not in pair.explanation and "rivals" in pair.explanation


H100 = {"gpu_model": "H100-80GB", "gpu_count": 16}
LLM70 = {"name": "llm70b", "kind": "online_inference", "replicas": 2, "gpus_per_replica": 8, "gpu_memory_gib": 70,
         "p99_ms": 300, "peer_to_peer": True}
CHAT = {"name": "chat", "kind": "online_inference", "replicas": 4, "gpus_per_replica": 1, "gpu_memory_gib": 40, "p99_ms": 200}
SHARED_ONE_TENANT = {"name": "svc", "kind": "online_inference", "replicas": 8, "gpus_per_replica": 0.5, "gpu_memory_gib": 10}
TRAIN = {"name": "train", "kind": "training", "replicas": 4, "gpus_per_replica": 8, "gpu_memory_gib": 60, "gang": True,
         "peer_to_peer": True, "tenants": 3}
DRA_DOC = "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/ (one claim per pod from a template)"
SCHED_DOC = "https://kubernetes.io/docs/tasks/extend-kubernetes/configure-multiple-schedulers/ (spec.schedulerName)"
ARMADA = "https://armadaproject.io/ (multi-cluster batch job scheduler)"
ROUTING = "gateway-api-inference-extension README (endpoint picker by queue and KV-cache); llm-d.ai"


def _top(graph, body):
    result = compose(graph, ComposeRequest.model_validate(body))
    assert result.feasible, [f.reason for f in result.failures]
    return result, result.stacks[0]


def _slots(stack):
    return {(a.slot.value, a.project.slug) for a in stack.slots if a.project}


def _credited(stack, subject):
    return [i for i in stack.score_breakdown if i.subject == subject and i.points > 0]


def test_70b_tensor_parallel_serving_on_h100s_is_not_won_by_sharing_middleware(graph):
    # source: https://github.com/Project-HAMi/HAMi README (HAMi is GPU sharing middleware); issue 32 example
    _, top = _top(graph, {"workloads": [LLM70], "pool": H100})
    assert "hami" not in top.components
    assert top.pools[0].unit.value == "whole_gpu"


def test_70b_tensor_parallel_serving_with_hard_isolation_is_not_won_by_sharing_middleware(graph):
    # source: HAMi README; domain facts: a whole GPU already isolates (units.yaml whole_gpu)
    result, top = _top(graph, {"workloads": [LLM70], "pool": H100, "slo": {"isolation": "hard"}})
    assert all("hami" not in s.components for s in result.stacks[:2])


def test_whole_gpu_replicas_earn_no_per_gpu_utilisation_or_sharing_points(graph):
    # source: https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-sharing.html (sharing is for replicas below a GPU)
    result, _ = _top(graph, {"workloads": [LLM70], "pool": H100})
    for stack in result.stacks:
        for cap in ("raise-per-gpu-utilisation", "gpu-sharing", "gpu-memory-isolation", "compute-isolation"):
            assert not _credited(stack, cap), (stack.title, cap)


def test_metering_earns_nothing_for_one_tenant(graph):
    # source: https://github.com/NVIDIA/dcgm-exporter (per-pod metrics exist to split usage between tenants)
    result, _ = _top(graph, {"workloads": [SHARED_ONE_TENANT]})
    assert all(not _credited(s, "metering") for s in result.stacks)


def test_metering_still_counts_with_several_tenants(graph):
    # source: dcgm-exporter README (per-pod GPU metrics for chargeback); the condition only drops single-tenant credit
    body = {"workloads": [{**SHARED_ONE_TENANT, "tenants": 4}]}
    result, _ = _top(graph, body)
    assert any(_credited(s, "metering") for s in result.stacks)


def test_serving_with_a_latency_target_brings_a_request_router(graph):
    # source: ROUTING; issue 32: serving with a latency target credits request routing
    result, top = _top(graph, {"workloads": [CHAT]})
    routers = {s for s, f in graph.projects.items() if "request-routing" in f.capabilities}
    assert routers & set(top.components), top.components
    assert _credited(top, "request-routing")


def test_serving_without_a_latency_target_credits_no_request_routing(graph):
    # source: ROUTING (routing by queue depth pays off against a latency target)
    result, _ = _top(graph, {"workloads": [{**CHAT, "p99_ms": None}]})
    assert all(not _credited(s, "request-routing") for s in result.stacks)


@pytest.mark.parametrize("body", [{"workloads": [LLM70], "pool": H100}, {"workloads": [CHAT]},
                                  {"profile": "online_inference"}], ids=["llm70b", "chat", "profile"])
def test_a_batch_system_never_serves(graph, body):
    # source: ARMADA (Armada schedules batch jobs that run to completion)
    result = compose(graph, ComposeRequest.model_validate(body))
    assert all("armada" not in s.components for s in result.stacks)
    armada = next(w for w in result.why_not if w.project == "armada")
    assert "batch system" in armada.reason


def test_an_exclusive_dra_claim_isolates_like_a_whole_gpu(graph):
    # source: DRA_DOC; issue 32 example (DRA refused for any pool needing isolation)
    body = {"profile": "training", "slo": {"isolation": "hard"}, "constraints": {"require": ["nvidia-dra-driver"]}}
    _, top = _top(graph, body)
    assert top.pools[0].unit.value == "dra_device"


def test_a_gang_of_whole_gpu_replicas_can_take_dra_claims(graph):
    # source: DRA_DOC; https://github.com/NVIDIA/k8s-dra-driver-gpu README (GPU claims)
    body = {"workloads": [TRAIN], "constraints": {"require": ["nvidia-dra-driver"]}}
    _, top = _top(graph, body)
    assert ("device_handoff", "nvidia-dra-driver") in _slots(top)


def test_coscheduling_binds_dra_claims_through_kube_scheduler(graph):
    # source: scheduler-plugins README (plugins are built into kube-scheduler, whose DynamicResources plugin allocates claims); DRA_DOC
    body = {"profile": "training", "constraints": {"require": ["nvidia-dra-driver", "coscheduling"]}}
    _, top = _top(graph, body)
    assert ("scheduling_policy", "coscheduling") in _slots(top) and top.pools[0].unit.value == "dra_device"


def test_kai_fractions_with_the_resource_isolator_are_not_refused_as_accounting_only(graph):
    # source: NVIDIA/KAI-Scheduler docs/gpu-sharing (the resource isolator enforces fractions' memory)
    body = {"profile": "interactive", "slo": {"isolation": "soft"}, "constraints": {"require": ["kai-resource-isolator"]}}
    result = compose(graph, ComposeRequest.model_validate(body))
    assert not any("gives none isolation" in f.reason for f in result.failures), [f.reason for f in result.failures]


@pytest.mark.parametrize("a, b", [("volcano", "kai-scheduler"), ("kai-scheduler", "yunikorn"), ("volcano", "yunikorn")])
def test_two_required_schedulers_are_refused_with_the_one_scheduler_name_rule(graph, a, b):
    # source: SCHED_DOC (a pod names one scheduler); issue 32 example ("does not fit next to the rest (3x)")
    result = compose(graph, ComposeRequest(profile="training", constraints={"require": [a, b]}))
    assert not result.feasible
    reasons = [f.reason for f in result.failures]
    assert any("spec.schedulerName" in r and a in r and b in r for r in reasons), reasons
    assert not any("does not fit next to the rest" in r for r in reasons)


def test_tensor_parallel_serving_with_a_latency_target_brings_a_request_router(graph):
    # source: ROUTING (disaggregated/prefix-aware routing for large-model serving); issue 32 example
    _, top = _top(graph, {"workloads": [LLM70], "pool": H100})
    assert _credited(top, "request-routing")


def test_an_exclusive_dra_claim_serves_a_hard_isolation_h100_pool(graph):
    # source: DRA_DOC (an allocated device belongs to one claim)
    body = {"workloads": [LLM70], "pool": H100, "slo": {"isolation": "hard"}, "constraints": {"require": ["nvidia-dra-driver"]}}
    _, top = _top(graph, body)
    assert top.pools[0].unit.value == "dra_device"


def test_a_gang_under_coscheduling_can_take_dra_claims(graph):
    # source: scheduler-plugins README (Coscheduling runs inside kube-scheduler); DRA_DOC
    body = {"workloads": [TRAIN], "constraints": {"require": ["nvidia-dra-driver", "coscheduling"]}}
    _, top = _top(graph, body)
    assert {("scheduling_policy", "coscheduling"), ("device_handoff", "nvidia-dra-driver")} <= _slots(top)


def test_a_tie_goes_to_fewer_components_and_the_answer_says_so(graph):
    # issue 32: "ties are broken by adding a component"; the stack with one more project ranks below
    # and its why_rank names the rule and what it adds (source: the scoring rules)
    result = compose(graph, ComposeRequest(profile="training"))
    first, second = result.stacks[:2]
    assert first.score == second.score and len(first.components) < len(second.components)
    assert "ties go to fewer" in second.why_rank and "Kubernetes ResourceQuota" in second.why_rank


def test_notebooks_under_kueue_are_told_to_use_the_plain_pod_integration(graph):
    # source: https://kueue.sigs.k8s.io/docs/tasks/run/plain_pods/ (issue 32 item 6)
    result = compose(graph, ComposeRequest(profile="interactive", constraints={"require": ["kueue"]}))
    assert result.feasible
    assert any("pod integration" in n and "kueue.x-k8s.io/queue-name" in n for n in result.notes), result.notes


def test_several_teams_under_kueue_are_offered_cohorts_with_borrowing_and_lending_limits(graph):
    # source: https://kueue.sigs.k8s.io/docs/concepts/cluster_queue/ (cohort, borrowingLimit, lendingLimit)
    body = {"workloads": [TRAIN], "constraints": {"require": ["kueue"]}}
    result = compose(graph, ComposeRequest.model_validate(body))
    assert any("borrowingLimit" in n and "lendingLimit" in n for n in result.notes), result.notes


def test_excluded_says_a_reason_shared_by_several_schedulers_once(graph):
    # issue 32: "`excluded` repeats one reason per scheduler six times" (HAMi's webhook vs each scheduler);
    # source: HAMi charts/hami values (the webhook sets schedulerName: hami-scheduler)
    result = compose(graph, ComposeRequest(profile="online_inference"))
    webhook = [e for e in result.excluded if "two binders - hami's" in e]
    assert len(webhook) == 1 and "volcano" in webhook[0] and "kai-scheduler" in webhook[0]
