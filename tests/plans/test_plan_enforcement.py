"""Issue 32, Build 3: the plan of a KAI-fractions stack carries the kai-resource-isolator.

Sources: https://github.com/kai-scheduler/KAI-Scheduler/blob/main/docs/gpu-sharing/hami/README.md
(KAI >= v0.17.0 with global.gpuSharing=true and binder.plugins.hamicore.enabled=true; the isolator
deploys HAMi-core, whose cap fails only the allocation past the pod's limit). Failed on main: compose
returned no such stack, and the isolator had no simulator model.
"""

from __future__ import annotations

from placement.plans.scenario import scenario_document
from placement.rules import ComposeRequest, compose
from scheduler_core.scenario import parse_scenario

BODY = {"workloads": [{"name": "nb", "kind": "interactive", "replicas": 8, "gpus_per_replica": 0.5,
                       "gpu_memory_gib": 20, "tenants": 2}],
        "slo": {"isolation": "soft"}, "constraints": {"require": ["kai-resource-isolator"]}}


def _plan(graph):
    stack = compose(graph, ComposeRequest.model_validate(BODY)).stacks[0]
    assert stack.plan is not None, stack.plan_error
    return stack.plan


def test_the_plan_carries_the_isolator_hami_core_and_the_kai_settings_they_need(graph):
    plan = _plan(graph)
    components = {c.project: c for c in plan.components}
    assert components["kai-resource-isolator"].role == "data_plane_unit"
    assert components["hami-core"].role == "required by kai-resource-isolator"
    assert components["kai-scheduler"].settings == {"global.gpuSharing": "true", "binder.plugins.hamicore.enabled": "true"}
    (group,) = plan.node_groups
    assert (group.data_plane.mechanism, group.data_plane.project) == ("kai-fraction", "kai-resource-isolator")
    (workload,) = plan.workloads
    assert workload.pod.annotations == {"gpu-fraction": "0.5"} and workload.scheduler_name == "kai-scheduler"


def test_the_simulated_fractions_fail_only_the_pod_past_its_cap(graph):
    # without the isolator a KAI fraction's OOM takes the card (scheduler_core kai_oom_scope "gpu")
    document = scenario_document(_plan(graph))
    assert document["parameters"] == {"kai_oom_scope": "pod"}
    scenario = parse_scenario(document)
    assert scenario.parameters.kai_oom_scope == "pod"
    assert scenario.stack.control_plane.kai.gpu_sharing
