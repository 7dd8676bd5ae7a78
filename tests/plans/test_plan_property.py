"""Issue 29's done-when: for generated compose requests, every ranked stack's simulated scenario and
exported objects agree with its plan, every requested resource is advertised and covered by quota,
and demand beyond the pool is reported."""

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from placement.deploy.data_plane import ExportError
from placement.deploy.export import export_scenario
from placement.deploy.readback import read_workload
from placement.deploy.targets import WORKLOAD_API_VERSION
from placement.plans.scenario import SIMULATED_NAME, scenario_document
from placement.rules.compose import compose
from placement.rules.errors import RulesInputError
from scheduler_core.scenario import parse_scenario

MODELS = ["A100-40GB", "A100-80GB", "H100-80GB", "H200", "B200", "L40S"]
MEMORY = {"A100-40GB": 40, "A100-80GB": 80, "H100-80GB": 80, "H200": 141, "B200": 180, "L40S": 48}
# Projects a request may require, so that the serving frameworks and batch wrappers (RayService,
# InferenceService, DynamoGraphDeployment, AppWrapper) and Run:ai come up as often as the built-in kinds.
REQUIRED = [None, None, "kuberay", "kserve", "nvidia-dynamo", "appwrapper", "runai", "jobset", "lws"]


@st.composite
def requests(draw):
    model = draw(st.sampled_from(MODELS))
    n = draw(st.integers(1, 3))
    classes = []
    for i in range(n):
        kind = draw(st.sampled_from(["training", "online_inference", "batch_inference", "interactive"]))
        gpus = draw(st.sampled_from([0.1, 0.25, 0.5, 1, 2, 4, 8]))
        classes.append({"name": f"c{i}", "kind": kind, "replicas": draw(st.integers(1, 24)), "gpus_per_replica": gpus,
                        "gpu_memory_gib": draw(st.sampled_from([2, 8, 20, 30, 39.5])) * MEMORY[model] / 80,
                        "gang": kind == "training" and draw(st.booleans()), "tenants": draw(st.integers(1, 20))})
    req = {"workloads": classes, "pool": {"gpu_model": model}, "limit": 3}
    required = draw(st.sampled_from(REQUIRED))
    if required:
        req["constraints"] = {"require": [required]}
    if draw(st.booleans()):
        req["pool"]["gpu_count"] = draw(st.sampled_from([8, 16, 64]))
    return req


def _fit(w, group) -> int:
    dp = group.data_plane
    if dp.mig is not None:
        return next(iter(dp.mig.devices.values())) * group.gpus
    if w.gpus_per_replica < 1 and dp.mechanism not in ("whole", "dra"):
        per_gpu = dp.time_slicing_replicas or dp.mps_replicas or (
            min(math.floor(1 / w.gpus_per_replica + 1e-9), math.floor(group_memory(group) / (w.gpu_memory_gib * 1024))))
        return per_gpu * group.gpus
    return (group.gpus_per_node // max(1, math.ceil(w.gpus_per_replica))) * group.count


def group_memory(group) -> float:
    from scheduler_core.hardware import gpu_spec
    return gpu_spec(group.simulated_gpu).memory_mib


def _check(plan):
    scenario = parse_scenario(scenario_document(plan))
    # node groups: names, whole nodes, GPU model, MIG layout
    sim = {g.name: g for g in scenario.pool.node_groups}
    for g in plan.node_groups:
        s = sim[g.name]
        assert (s.count, s.gpus_per_node, s.gpu) == (g.count, g.gpus_per_node, g.simulated_gpu)
        assert [m.layout for m in s.mig] == ([g.data_plane.mig.config] if g.data_plane.mig else [])
        assert scenario.stack.data_plane_for(g.name).mechanism == g.data_plane.mechanism
    queues = {q.name: q for q in plan.queues}
    for w in plan.workloads:
        group = plan.node_group(w.node_group)
        simulated = [x for x in scenario.workloads if x.node_group == w.node_group]
        assert sum(x.replicas if x.kind == "inference" else x.workers if x.kind == "training" else x.count // 3
                   for x in simulated) == w.replicas
        if group.data_plane.mig:
            assert {x.unit.mig_profile for x in simulated} == set(group.data_plane.mig.devices)
        # every resource a pod requests is advertised on its node group and covered by its queue
        asked = dict(w.pod.resources)
        if w.pod.claim_device_class:
            asked[f"claim:{w.pod.claim_device_class}"] = w.pod.claim_count
        for r in asked:
            assert r in group.data_plane.advertised, (r, group.data_plane.advertised)
        for tenant, queue in w.queues.items():
            assert set(asked) <= set(queues[queue].quota), (asked, queues[queue].quota)
        # the plan's demand fits the pool or the shortfall is reported
        if _fit(w, group) < w.replicas:
            assert any(s.pool == w.node_group for s in plan.shortfalls)
    # export renders the same plan: kinds, schedulers and per-pod resource names
    try:
        export = export_scenario(scenario, plan=plan)
    except ExportError as exc:
        assert "HAMi" in str(exc), str(exc)
        return
    assert not [f.path for f in export.files if f.path.endswith(".NOT-RENDERED.md")]
    objects = [o for f in export.files if f.path.startswith("workloads/") for o in f.objects or []]
    for w in plan.workloads:
        # the Workload API's Workload and PodGroup of a gang (issue 33) stand beside the workload object
        gang = [o for o in objects if o["metadata"]["name"].startswith(w.name) and o["apiVersion"] == WORKLOAD_API_VERSION]
        if w.pod_group is None:
            assert not gang, w.name
        else:  # each PodGroup's minCount is one the plan gives a tenant's job (a minCount of 1 is no gang)
            counts = {o["spec"]["schedulingPolicy"]["gang"]["minCount"] for o in gang if o["kind"] == "PodGroup"}
            assert counts <= set(w.pod_group.min_count.values()), (counts, w.pod_group)
        mine = [o for o in objects if o["metadata"]["name"].startswith(w.name)
                and o["kind"] != "ResourceClaimTemplate" and o["apiVersion"] != WORKLOAD_API_VERSION]
        assert mine, w.name
        kind = mine[0]["kind"]
        assert kind == w.object_kind
        assert f"'schedulerName': '{w.scheduler_name}'" in str(mine[0])
        _check_pods(w, mine[0])  # resource names and quantities, as the operator hands them to the pods


def _quantity(name: str, value: float) -> str:
    if name == "memory":  # the plan's host memory is in GiB
        return f"{int(round(value * 1024))}Mi"
    return str(int(value)) if float(value).is_integer() else f"{int(round(value * 1000))}m"


def _check_pods(w, obj):
    """The object's pods as its operator creates them (readback): as many as the plan's replicas of
    the tenant times its pods per replica (workers for training), each with exactly the plan's requests."""
    read = read_workload(obj)
    n = w.replicas_per_tenant[read["namespace"]]
    gpu_pods = [r for r in read["requests"] if r]
    # a Ray head and a Dynamo graph's Frontend (one replica each) ask nothing: not plan pods, not counted
    pods_with_requests = read["pods"] - (len(read["requests"]) - len(gpu_pods))
    if w.kind in ("online_inference", "interactive") or (w.kind == "training" and obj["kind"] != "Deployment"):
        per_replica = w.pods_per_replica if w.kind != "training" else 1
        assert pods_with_requests == n * per_replica, (obj["kind"], read["pods"], n, w.pods_per_replica)
    want = {r: _quantity(r, v) for r, v in w.pod.resources.items()}
    for asked in gpu_pods:
        got = {k: str(v) for k, v in asked.items() if k not in ("claims", "gpu-fraction")}
        assert got == want, (obj["kind"], got, want)
        assert ("claims" in asked) == bool(w.pod.claim_device_class), obj["kind"]
        assert asked.get("gpu-fraction") == w.pod.annotations.get("gpu-fraction"), obj["kind"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(req=requests())
def test_every_ranked_stack_is_simulated_and_exported_as_its_plan(graph, req):
    try:
        result = compose(graph, req)
    except RulesInputError:
        return
    for stack in result.stacks:
        if stack.plan is None:
            assert stack.plan_error and "no simulator model" in stack.plan_error
            continue
        _check(stack.plan)


def test_simulated_names_map_volcano_vgpu_onto_the_hami_model():
    assert set(SIMULATED_NAME.values()) == {"nvidia.com/gpu", "nvidia.com/gpumem", "nvidia.com/gpucores"}
