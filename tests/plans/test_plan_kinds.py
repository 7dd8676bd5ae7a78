"""Issue 29: the workload kinds of serving frameworks and batch wrappers the plan names are exported as
objects of their own APIs, with the plan's replicas and each pod's exact requests (failed on main:
the bundle wrote workloads/<name>.NOT-RENDERED.md instead); a Run:ai stack has a plan (failed on main:
"runai has no simulator model yet").

Shapes were read upstream (the files are named where each shape is asserted; tests/deploy/schemas.py
validates the objects against them and against ../shared/schemas for KubeRay)."""

import yaml

from placement.deploy.export import export_scenario
from placement.deploy.targets import WORKLOAD_API_VERSION
from placement.plans.scenario import scenario_document
from placement.rules.compose import compose
from scheduler_core import simulate
from scheduler_core.scenario import parse_scenario


def _plan(graph, project, kind="online_inference", gpus=1.0, want=lambda p: True, **extra):
    body = {"workloads": [{"name": "w", "kind": kind, "replicas": 6, "gpus_per_replica": gpus, "gpu_memory_gib": 30,
                           "gang": kind == "training", "tenants": 2}],
            "constraints": {"require": project.split("+")}, "limit": 10, **extra}
    return next(s.plan for s in compose(graph, body).stacks if s.plan and want(s.plan))


def _workload(plan):
    export = export_scenario(parse_scenario(scenario_document(plan)), plan=plan)
    assert not [f.path for f in export.files if f.path.endswith(".NOT-RENDERED.md")]
    objects = [o for f in export.files if f.path.startswith("workloads/") for o in f.objects
               if o["kind"] != "ResourceClaimTemplate" and o["apiVersion"] != WORKLOAD_API_VERSION]
    assert len(objects) == 1, [o["kind"] for o in objects]
    return export, objects[0]


def _gang_objects(export) -> list[dict]:
    """The Workload API's Workload and PodGroup a kube-scheduler gang stands on (issue 33), if any."""
    return [o for f in export.files if f.path.startswith("workloads/") for o in f.objects if o["apiVersion"] == WORKLOAD_API_VERSION]


def _container_requests(plan) -> dict:
    w = plan.workloads[0]
    gpu = {k: v for k, v in w.pod.resources.items() if k not in ("cpu", "memory")}
    return {"cpu": int(w.pod.resources["cpu"]), "memory": f"{int(w.pod.resources['memory'] * 1024)}Mi", **gpu}


def test_a_kserve_stack_exports_an_inference_service_with_the_plans_replicas_and_pod_requests(graph):
    plan = _plan(graph, "kserve", want=lambda p: "nvidia.com/gpu" in p.workloads[0].pod.resources)
    w = plan.workloads[0]
    _export, isvc = _workload(plan)
    # kserve v0.20.0 config/crd/full/serving.kserve.io_inferenceservices.yaml (predictor inlines the PodSpec,
    # minReplicas/maxReplicas, labels/annotations); pkg/constants/constants.go (deploymentMode Standard,
    # autoscalerClass none, container kserve-container).
    assert (isvc["apiVersion"], isvc["kind"]) == ("serving.kserve.io/v1beta1", "InferenceService") == (w.api_version, w.object_kind)
    assert isvc["metadata"]["annotations"]["serving.kserve.io/deploymentMode"] == "Standard"
    assert isvc["metadata"]["annotations"]["serving.kserve.io/autoscalerClass"] == "none"
    predictor = isvc["spec"]["predictor"]
    n = w.replicas_per_tenant[isvc["metadata"]["namespace"]]
    assert predictor["minReplicas"] == predictor["maxReplicas"] == n
    assert predictor["schedulerName"] == w.scheduler_name
    container = predictor["containers"][0]
    assert container["name"] == "kserve-container"
    assert container["resources"]["requests"] == _container_requests(plan)


def test_a_dynamo_stack_exports_a_v1beta1_graph_with_a_frontend_and_a_worker_of_the_plans_pods_at_the_pinned_runtime(graph):
    # Failed on main: the graph was nvidia.com/v1alpha1 (deprecated in Dynamo v1.5.0) with one `worker` service in
    # Dynamo's own resource items, no Frontend (a graph that serves nothing) and the Triton server image.
    plan = _plan(graph, "nvidia-dynamo", gpus=0.5)
    w = plan.workloads[0]
    _export, dgd = _workload(plan)
    # docs.nvidia.com/dynamo/v1.5.0/reference/api/kubernetes/dynamo-graph-deployment.md (v1beta1, the served current
    # version: spec.backendFramework, spec.components) and dynamo-component-deployment.md, "Shared component spec"
    # (name, type frontend|worker|..., replicas, podTemplate whose container `main` carries image and GPU requests).
    assert (dgd["apiVersion"], dgd["kind"]) == ("nvidia.com/v1beta1", "DynamoGraphDeployment") == (w.api_version, w.object_kind)
    assert dgd["spec"]["backendFramework"] == "vllm"
    by_type = {c["type"]: c for c in dgd["spec"]["components"]}
    assert sorted(by_type) == ["frontend", "worker"] and len(dgd["spec"]["components"]) == 2
    frontend, worker = by_type["frontend"], by_type["worker"]
    assert frontend["replicas"] == 1
    front = frontend["podTemplate"]["spec"]["containers"]
    assert [c["name"] for c in front] == ["main"] and not front[0].get("resources")  # CPU only: no GPU, no plan pod
    assert worker["replicas"] == w.replicas_per_tenant[dgd["metadata"]["namespace"]]
    assert "multinode" not in worker  # one pod per replica here (a replica over nodes: tests/deploy)
    pod = worker["podTemplate"]["spec"]
    assert pod["schedulerName"] == w.scheduler_name
    main = pod["containers"][0]
    assert main["name"] == "main"
    assert main["resources"]["requests"] == _container_requests(plan)
    assert main["resources"]["limits"] == {k: v for k, v in _container_requests(plan).items() if k not in ("cpu", "memory")}
    # the pinned release's vLLM runtime image, tagged with the bare version as the v1.5.0 docs' examples are
    assert main["image"] == front[0]["image"] == "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.5.0"


def test_an_appwrapper_stack_exports_an_appwrapper_around_an_indexed_job_of_the_plans_workers(graph):
    plan = _plan(graph, "appwrapper", kind="training", gpus=8)
    w = plan.workloads[0]
    export, aw = _workload(plan)
    # project-codeflare/appwrapper v1.2.1 config/crd/bases/workload.codeflare.dev_appwrappers.yaml (spec.components
    # [].template) and samples/wrapped-gpu-job.yaml (a batch/v1 Job wrapped; queue label on the AppWrapper).
    assert (aw["apiVersion"], aw["kind"]) == ("workload.codeflare.dev/v1beta2", "AppWrapper") == (w.api_version, w.object_kind)
    job = aw["spec"]["components"][0]["template"]
    assert (job["apiVersion"], job["kind"]) == ("batch/v1", "Job")
    n = w.replicas_per_tenant[aw["metadata"]["namespace"]]
    assert job["spec"]["parallelism"] == job["spec"]["completions"] == n
    pod = job["spec"]["template"]["spec"]
    assert pod["schedulerName"] == w.scheduler_name
    assert pod["containers"][0]["resources"]["requests"] == _container_requests(plan)
    assert not any(k.startswith("kueue.x-k8s.io/") for k in job["metadata"].get("labels", {}))
    # A kube-scheduler gang's Workload names the wrapped Job as the pods' controller, and the pods its PodGroup.
    gangs = _gang_objects(export)
    assert sorted(g["kind"] for g in gangs) == (["PodGroup", "Workload"] if w.pod_group is not None else [])
    for gang in gangs:
        if gang["kind"] == "Workload":
            assert gang["spec"]["controllerRef"] == {"apiGroup": "batch", "kind": "Job", "name": job["metadata"]["name"]}
        else:
            assert pod["schedulingGroup"] == {"podGroupName": gang["metadata"]["name"]}


def test_a_rayservice_under_kueue_carries_the_queue_label_and_kueue_enables_its_integration(graph):
    # (compose pairs AppWrapper with no Kueue stack of the catalog; its integration is tested in tests/deploy)
    plan = _plan(graph, "kuberay+kueue", want=lambda p: p.workloads[0].object_kind == "RayService")
    export, rs = _workload(plan)
    assert rs["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == plan.workloads[0].queues[rs["metadata"]["namespace"]]
    config = yaml.safe_load(export.file("kueue/values.yaml").values["managerConfig"]["controllerManagerConfigYaml"])
    assert "ray.io/rayservice" in config["integrations"]["frameworks"]


def test_a_kuberay_serving_stack_exports_a_rayservice_with_a_pinned_worker_group(graph):
    plan = _plan(graph, "kuberay", want=lambda p: p.workloads[0].object_kind == "RayService")
    w = plan.workloads[0]
    _export, rs = _workload(plan)
    # ray-project/kuberay v1.7.0 ray-operator/config/crd/bases/ray.io_rayservices.yaml (../shared/schemas/kuberay)
    assert (rs["apiVersion"], rs["kind"]) == ("ray.io/v1", "RayService")
    n = w.replicas_per_tenant[rs["metadata"]["namespace"]]
    group = rs["spec"]["rayClusterConfig"]["workerGroupSpecs"][0]
    assert group["replicas"] == group["minReplicas"] == group["maxReplicas"] == n
    assert group["numOfHosts"] == w.pods_per_replica
    # the GPU serving sample of the same tag (ray-operator/config/samples/ray-service.llm-serve.yaml): Ray 2.52.0
    assert rs["spec"]["rayClusterConfig"]["rayVersion"] == "2.52.0"
    assert group["template"]["spec"]["containers"][0]["image"].startswith("rayproject/ray-llm:2.52.0")
    assert group["template"]["spec"]["containers"][0]["resources"]["requests"] == _container_requests(plan)
    assert yaml.safe_load(rs["spec"]["serveConfigV2"])["applications"][0]["deployments"][0]["num_replicas"] == n


def test_a_bundle_names_and_waits_for_the_operator_it_does_not_install(graph):
    for project, kind, crd in [("kserve", "online_inference", "inferenceservices.serving.kserve.io"),
                               ("nvidia-dynamo", "online_inference", "dynamographdeployments.nvidia.com"),
                               ("appwrapper", "training", "appwrappers.workload.codeflare.dev")]:
        export, _obj = _workload(_plan(graph, project, kind=kind, gpus=8 if kind == "training" else 1))
        readme = export.file("README.md").body
        missing = readme.split("## Not installed by this bundle")[1].split("## Files")[0]
        assert f"- `{project}` (the " in missing, project
        script = export.file("install.sh").body
        wait = f"kubectl wait --for=condition=Established crd/{crd}"
        assert wait in script and script.index(wait) < script.index("kubectl apply --server-side -f workloads/")


def test_a_runai_stack_is_planned_and_simulated_as_kai_scheduler_and_says_so(graph):
    body = {"workloads": [{"name": "t", "kind": "training", "replicas": 4, "gpus_per_replica": 1, "gpu_memory_gib": 30,
                           "gang": True, "tenants": 2}], "constraints": {"require": ["runai"]}, "limit": 5}
    stacks = [s for s in compose(graph, body).stacks if "runai" in {a.project.slug for a in s.slots if a.project}]
    assert stacks
    for stack in stacks:
        assert stack.plan is not None, stack.plan_error
        assert (stack.plan.scheduler, stack.plan.admission) == ("kai", "none")
        assert any(a.startswith("NVIDIA Run:ai is planned and simulated as KAI Scheduler") for a in stack.plan.assumptions)
    scenario = parse_scenario(scenario_document(stacks[0].plan))
    assert scenario.stack.control_plane.scheduler == "kai" and simulate(scenario).model_dump()
    readme = export_scenario(scenario, plan=stacks[0].plan).file("README.md").body
    assert "- `runai` (" in readme.split("## Not installed by this bundle")[1]
