"""Issue 29's examples: the plan sizes from facts, and evidence simulates the plan it was given."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from placement.plans.scenario import scenario_document
from placement.plans.sizing import mig_profile
from placement.rules.compose import compose
from scheduler_core.hardware import gpu_spec
from scheduler_core.scenario import parse_scenario


def _one(kind="online_inference", replicas=4, gpus=0.25, mem=18.0, tenants=1, **extra):
    return {"name": "svc", "kind": kind, "replicas": replicas, "gpus_per_replica": gpus, "gpu_memory_gib": mem,
            "tenants": tenants, **extra}


def _mig_stack(result):
    return next(s for s in result.stacks if s.plan and any(g.data_plane.mig for g in s.plan.node_groups))


@pytest.mark.parametrize("model, gib, expected", [
    ("A100-80GB", 20, "3g.40gb"),   # 2g.20gb / 1g.20gb hold 19.5 GiB
    ("A100-80GB", 19.5, "1g.20gb"),
    ("H200", 70, "7g.141gb"),       # 3g.71gb holds 69.5 GiB
    ("A100-80GB", 40, "7g.80gb"),   # 3g.40gb holds 39.25 GiB
])
def test_mig_profiles_are_sized_by_usable_memory_not_by_name(model, gib, expected):
    assert mig_profile(gpu_spec(model), gib, 0.1).name == expected


def test_a_whole_gpu_request_gets_the_whole_card_never_a_partial_profile():
    spec = gpu_spec("A100-80GB")
    assert mig_profile(spec, 10, 1).name == "7g.80gb"
    assert mig_profile(spec, 10, 0.99).name == "7g.80gb"


@settings(max_examples=200, deadline=None)
@given(model=st.sampled_from(["A100-40GB", "A100-80GB", "H100-80GB", "H200", "B200"]),
       a=st.floats(0.0625, 180), b=st.floats(0.0625, 180), s=st.floats(0.01, 1), t=st.floats(0.01, 1))
def test_mig_sizing_is_monotone_in_memory_and_compute(model, a, b, s, t):
    spec = gpu_spec(model)
    small = mig_profile(spec, min(a, b), min(s, t))
    large = mig_profile(spec, max(a, b), max(s, t))
    if large is not None:
        assert small is not None
        assert (small.memory_mib, small.compute_slices) <= (large.memory_mib, large.compute_slices)
        assert small.memory_mib <= large.memory_mib and small.compute_slices <= large.compute_slices


def test_evidence_simulates_the_profile_compose_chose(graph):
    result = compose(graph, {"workloads": [_one(replicas=6, gpus=0.25, mem=18)]})
    stack = _mig_stack(result)
    pool = stack.pools[0]
    assert pool.unit_size == "MIG 2g.20gb per replica"
    scenario = parse_scenario(scenario_document(stack.plan))
    assert scenario.pool.node_groups[0].mig[0].layout == "all-2g.20gb"
    assert {w.unit.mig_profile for w in scenario.workloads} == {"2g.20gb"}


@pytest.mark.parametrize("model, simulated", [("H100-80GB", "H100-SXM5-80GB"), ("H200", "H200-SXM5-141GB"),
                                              ("L40S", "L40S-PCIE-48GB"), ("B200", "B200-SXM6-180GB")])
def test_other_gpu_models_are_simulated_as_themselves(graph, model, simulated):
    result = compose(graph, {"workloads": [_one(replicas=4, gpus=1, mem=30)], "pool": {"gpu_model": model}})
    for stack in [s for s in result.stacks if s.plan]:
        scenario = parse_scenario(scenario_document(stack.plan))
        assert {g.gpu for g in scenario.pool.node_groups} == {simulated}


def test_pools_are_whole_nodes(graph):
    request = {"workloads": [_one("training", replicas=4, gpus=8, mem=60, gang=True),
                             _one("online_inference", replicas=12, gpus=1, mem=30) | {"name": "chat"}],
               "pool": {"gpu_model": "A100-80GB", "gpu_count": 64}}
    for stack in [s for s in compose(graph, request).stacks if s.plan]:
        groups = stack.plan.node_groups
        assert all(g.gpus_per_node == 8 for g in groups)
        assert sum(g.count for g in groups) == 8


def test_demand_beyond_the_pool_is_reported_in_numbers(graph):
    request = {"workloads": [_one(replicas=24, gpus=0.25, mem=30, tenants=2)],
               "pool": {"gpu_model": "A100-80GB", "gpu_count": 8}}
    for stack in [s for s in compose(graph, request).stacks if s.plan]:
        shortfalls = stack.plan.shortfalls
        assert shortfalls, stack.title
        assert shortfalls[0].needed == 24 and shortfalls[0].available == 16, stack.title


def test_a_notebook_share_is_not_a_whole_gpu_of_quota(graph):
    request = {"workloads": [_one("interactive", replicas=10, gpus=0.1, mem=4, tenants=5)]}
    stack = next(s for s in compose(graph, request).stacks if s.plan.admission == "kueue"
                 and s.plan.node_groups[0].data_plane.mechanism == "hami")
    quota = stack.plan.queues[0].quota
    assert quota["nvidia.com/gpucores"] == 20  # 2 notebooks x 10 %
    assert set(stack.plan.workloads[0].pod.resources) <= set(quota)


def test_volcano_vgpu_pods_ask_for_volcano_resources(graph):
    result = compose(graph, {"workloads": [_one(replicas=6, gpus=0.25, mem=18)], "constraints": {"require": ["volcano-vgpu-device-plugin"]}})
    stack = next(s for s in result.stacks if any(g.data_plane.project == "volcano-vgpu-device-plugin"
                                                 for g in s.plan.node_groups))
    resources = stack.plan.workloads[0].pod.resources
    assert {"volcano.sh/vgpu-number", "volcano.sh/vgpu-memory", "volcano.sh/vgpu-cores"} <= set(resources)
    assert not any(r.startswith("nvidia.com/gpumem") for r in resources)
