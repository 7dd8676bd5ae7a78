"""Export renders the plan (issue 29 item 2; issue 30 item 2's object correctness)."""

import yaml

from placement.deploy.export import export_scenario
from placement.plans.scenario import scenario_document
from placement.rules.compose import compose
from scheduler_core.scenario import parse_scenario


def _export(plan):
    return export_scenario(parse_scenario(scenario_document(plan)), plan=plan)


def _objects(export, prefix):
    return [o for f in export.files if f.path.startswith(prefix) for o in f.objects or []]


def _first(graph, request, want):
    return next(s.plan for s in compose(graph, request).stacks if s.plan and want(s.plan))


def test_a_jobset_stack_exports_a_jobset_not_a_pytorchjob(graph):
    plan = _first(graph, {"workloads": [{"name": "t", "kind": "training", "replicas": 4, "gpus_per_replica": 8,
                                         "gpu_memory_gib": 60, "gang": True}], "constraints": {"require": ["jobset"]}},
                  lambda p: True)
    assert {o["kind"] for o in _objects(_export(plan), "workloads/")} == {"JobSet"}


def test_an_lws_stack_exports_leaderworkersets_with_each_pods_own_gpus(graph):
    plan = _first(graph, {"workloads": [{"name": "s", "kind": "online_inference", "replicas": 4, "gpus_per_replica": 4,
                                         "gpu_memory_gib": 60}], "constraints": {"require": ["lws"]}},
                  lambda p: p.workloads[0].object_kind == "LeaderWorkerSet")
    lws = _objects(_export(plan), "workloads/")[0]
    assert lws["kind"] == "LeaderWorkerSet" and lws["spec"]["leaderWorkerTemplate"]["size"] == 1
    limits = lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["resources"]["limits"]
    assert limits.get("nvidia.com/gpu", limits.get("volcano.sh/vgpu-number")) == 4  # not 16 per pod


def test_a_dra_stack_exports_claims_and_no_device_plugin(graph):
    plan = _first(graph, {"workloads": [{"name": "inf", "kind": "online_inference", "replicas": 4, "gpus_per_replica": 1,
                                         "gpu_memory_gib": 30}], "slo": {"isolation": "none"},
                          "constraints": {"require": ["nvidia-dra-driver"]}, "limit": 10},
                  lambda p: p.node_groups[0].data_plane.mechanism == "dra")
    export = _export(plan)
    kinds = [o["kind"] for o in _objects(export, "workloads/")]
    assert "ResourceClaimTemplate" in kinds
    values = next(f for f in export.files if f.path == "gpu-operator/values.yaml")
    assert "devicePlugin: {enabled: false}" in yaml.safe_dump(values.values, default_flow_style=None) or \
        values.values["devicePlugin"]["enabled"] is False


def test_time_sliced_and_mps_pods_ask_one_shared_replica(graph):
    plan = _first(graph, {"workloads": [{"name": "s", "kind": "online_inference", "replicas": 8, "gpus_per_replica": 0.25,
                                         "gpu_memory_gib": 10}], "constraints": {"require": ["cuda-mps"]}},
                  lambda p: p.node_groups[0].data_plane.mechanism == "mps")
    assert plan.workloads[0].pod.resources["nvidia.com/gpu"] == 1
    dp = plan.node_groups[0].data_plane
    assert dp.mps_replicas == 4 and dp.mps_thread_percentage == 25
    deployment = _objects(_export(plan), "workloads/")[0]
    assert deployment["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == 1


def test_mig_parted_entries_carry_the_gpu_models_device_filter(graph):
    plan = _first(graph, {"workloads": [{"name": "nb", "kind": "interactive", "replicas": 8, "gpus_per_replica": 0.1,
                                         "gpu_memory_gib": 4}], "pool": {"gpu_model": "H100-80GB"}},
                  lambda p: p.node_groups[0].data_plane.mig is not None)
    config = _objects(_export(plan), "gpu-operator/mig-parted-config.yaml")[0]
    document = yaml.safe_load(config["data"]["config.yaml"])
    entries = document["mig-configs"][plan.node_groups[0].data_plane.mig.config]
    assert entries[0]["device-filter"] == "0x233010DE" and entries[0]["mig-devices"] == {"1g.10gb": 7}


def test_a_kai_fractions_pool_exports_a_gpu_fraction_pod_instead_of_refusing(graph):
    from placement.catalog.schemas import ResourceUnit
    from placement.plans.build import build_plan

    result = compose(graph, {"workloads": [{"name": "nb", "kind": "interactive", "replicas": 8, "gpus_per_replica": 0.5,
                                            "gpu_memory_gib": 8, "tenants": 2}], "slo": {"isolation": "none"},
                             "constraints": {"require": ["kai-scheduler"]}})
    stack = result.stacks[0]  # its pool switched to KAI's own fractions
    pool = stack.pools[0].model_copy(update={"data_plane": "kai-scheduler", "unit": ResourceUnit("fraction")})
    plan = build_plan(stack.model_copy(update={"pools": [pool]}), result.workloads, result.pool, pool_given=False)
    assert plan.node_groups[0].data_plane.mechanism == "kai-fraction"
    pod = _objects(_export(plan), "workloads/")[0]["spec"]["template"]
    assert pod["metadata"]["annotations"]["gpu-fraction"] == "0.5" and pod["spec"]["schedulerName"] == "kai-scheduler"
