"""Expert compare set: pairs with the verdict a platform expert signs and the reason it must give.
Each case cites its source: a reference/domain-facts.md section, a seed, or an upstream doc."""

from __future__ import annotations

import pytest

from placement.rules import compare

F = "reference/domain-facts.md"
CASES = [
    # overlap on a shared layer: two owners of the same governance
    ("kueue", "volcano", "overlapping", "job queueing", f"{F} §4, §5; seeds/000 paradigms B and C"),
    ("kai-scheduler", "kueue", "overlapping", "per-team quota", f"{F} §4, §6.5 (KAI queues with quota and fair share)"),
    ("yunikorn", "kueue", "overlapping", "fair sharing", "https://yunikorn.apache.org/docs/ (hierarchical queues with quota)"),
    ("kueue", "yunikorn", "overlapping", "two sets of queues", "https://yunikorn.apache.org/docs/"),
    # alternative hand-offs: same contract points, one per device
    ("device-plugin-framework", "dra", "alternative_handoff", "only one of them", f"{F} §6.1, §6.2; dra.yaml compatibility"),
    ("nvidia-device-plugin", "nvidia-dra-driver", "alternative_handoff", "never both for one GPU", f"{F} §6.2"),
    ("nvidia-device-plugin", "hami", "alternative_handoff", "conflicts_with", f"{F} §3 (the stock NVIDIA plugin is not compatible)"),
    ("volcano-vgpu-device-plugin", "hami", "alternative_handoff", "Advertise and Allocate", "Project-HAMi/volcano-vgpu-device-plugin README"),
    ("volcano-vgpu-device-plugin", "nvidia-device-plugin", "alternative_handoff", "one per device", "volcano-vgpu-device-plugin README"),
    # admission joined to workload APIs by suspend/admit
    ("kuberay", "kueue", "cross_layer", "spec.suspend", "https://kueue.sigs.k8s.io/docs/overview/ (RayJob, RayCluster)"),
    ("jobset", "kueue", "cross_layer", "spec.suspend", "https://kueue.sigs.k8s.io/docs/overview/ (JobSet)"),
    ("lws", "kueue", "cross_layer", "spec.suspend", "https://kueue.sigs.k8s.io/docs/overview/ (LeaderWorkerSet)"),
    ("kubeflow-training-operator", "kueue", "cross_layer", "spec.suspend", "https://kueue.sigs.k8s.io/docs/overview/ (Kubeflow jobs)"),
    ("kuberay", "volcano", "cross_layer", "PodGroups", f"{F} §5; kuberay.yaml compatibility (batchScheduler volcano)"),
    ("kubeflow-training-operator", "volcano", "cross_layer", "PodGroups", f"{F} §5 (Kubeflow creates PodGroups)"),
    # cross-layer pairs and the contract that joins them
    ("hami", "volcano", "cross_layer", "two binders", f"{F} §3 (webhook rewrites schedulerName); volcano.yaml compatibility"),
    ("hami", "volcano", "cross_layer", "volcano-vgpu-device-plugin", f"{F} §3 (Volcano integration via volcano-vgpu-device-plugin)"),
    ("hami", "kueue", "cross_layer", "Bind", "seeds/002 form B (HAMi for declarable sharing, Kueue for quota)"),
    ("volcano-vgpu-device-plugin", "volcano", "cross_layer", "Bind", "Volcano vGPU user guide (deviceshare binds)"),
    ("kai-scheduler", "hami", "cross_layer", "two binders", f"{F} §3 (HAMi webhook); §6.5 (KAI is its own scheduler)"),
    ("kueue", "kube-scheduler", "cross_layer", "not rivals", f"{F} §4.5 (Kueue admits, kube-scheduler binds)"),
    ("coscheduling", "kube-scheduler", "cross_layer", "not rivals", f"{F} §6.4 (a plugin inside kube-scheduler)"),
    ("mig", "nvidia-device-plugin", "cross_layer", "Advertise", f"{F} §1.5 (mixed strategy advertises MIG profiles)"),
    ("time-slicing", "nvidia-device-plugin", "cross_layer", "Advertise", f"{F} §2.1 (sharing config of the device plugin)"),
    ("cuda-mps", "nvidia-device-plugin", "cross_layer", "Advertise", f"{F} §2.2 (MPS in the device plugin)"),
    ("nvidia-dra-driver", "dra", "cross_layer", "built on", f"{F} §6.2 (drivers publish ResourceSlices)"),
    ("device-plugin-framework", "nvidia-device-plugin", "cross_layer", "built on", f"{F} §6.1"),
    ("mig-manager", "mig", "cross_layer", "built on", f"{F} §1.6 (mig-parted configures MIG)"),
    ("node-feature-discovery", "gpu-feature-discovery", "cross_layer", "built on", "https://github.com/NVIDIA/gpu-feature-discovery (NFD labels)"),
    ("topology-manager", "node-resource-topology", "cross_layer", "not rivals", "scheduler-plugins NodeResourceTopology README"),
    ("kai-scheduler", "time-slicing", "cross_layer", "not rivals", f"{F} §6.5, §2.1"),
    # same layer, same unit: like with like (control-plane pairs get control-plane axes)
    ("volcano", "kai-scheduler", "comparable", "queues, quota model", f"{F} §5, §6.5 (both batch schedulers on L2)"),
    ("volcano", "yunikorn", "comparable", "gang", "seeds/000 (batch schedulers on L2)"),
    ("kueue", "resource-quota", "comparable", "quota model", f"{F} §4.1; https://kubernetes.io/docs/concepts/policy/resource-quotas/"),
    ("capacity-scheduling", "kueue", "comparable", "quota model", "scheduler-plugins CapacityScheduling ElasticQuota"),
    ("kube-scheduler", "volcano", "comparable", "preemption", "seeds/000 paradigm A vs B (native vs batch scheduler)"),
    # same layer, different units: fix the workload and SLO first
    ("mig", "time-slicing", "unit_mismatch", "fix the workload and SLO first", f"seeds/002; {F} §1.3, §2.1"),
    ("hami", "time-slicing", "unit_mismatch", "isolation ceiling", f"seeds/002; {F} §2.1, §3"),
    ("cuda-mps", "time-slicing", "unit_mismatch", "isolation ceiling", f"{F} §2.1, §2.2"),
    ("hami", "cuda-mps", "unit_mismatch", "isolation ceiling", f"{F} §2.2, §3"),
    ("hami", "mig", "unit_mismatch", "choose the unit", "seeds/002 (resource unit decides isolation and granularity)"),
    # bundles and platforms
    ("gpu-operator", "nvidia-device-plugin", "overlapping", "ships", f"{F} §6.6 (device plugin is an operand)"),
    ("hami", "hami-core", "overlapping", "ships", f"{F} §3 (HAMi-core is HAMi's in-container library)"),
    ("gpustack", "hami", "platform_vs_mechanism", "decompose", "seeds/002 (platform vs mechanism)"),
    ("gpustack", "volcano", "platform_vs_mechanism", "decompose", "seeds/002 (platform vs mechanism)"),
]
CONTROL_AXES = {"queues", "quota_model", "fairness", "preemption", "gang", "topology", "integrations"}


# plain ids: pytest escapes "§" in an id, and mutmut cannot select a test by an escaped id
@pytest.mark.parametrize("a, b, verdict, reason, source", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_expert_verdict(graph, a, b, verdict, reason, source):
    assert source
    pair = compare(graph, [a, b]).pairs[0]
    assert pair.verdict.value == verdict, pair.explanation
    assert reason in pair.explanation or any(reason in j.summary for j in pair.contracts), pair.explanation
    axes = {x.axis for x in pair.axes}
    control = all(graph.projects[s].control_layer != "L4" and not graph.projects[s].is_platform for s in (a, b))
    if verdict in ("comparable", "overlapping") and control and "ships" not in reason:
        assert axes == CONTROL_AXES  # control-plane pairs are compared on control-plane axes
    if verdict == "comparable" and not control:
        assert "isolation" in axes


def test_the_expert_compare_set_is_large_enough():
    assert len(CASES) >= 40
