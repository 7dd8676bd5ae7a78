"""One example workload per workload class and pool, with the resource names, scheduler, queue
labels and gang settings the simulator ran them with."""

from __future__ import annotations

from placement.deploy import frameworks
from placement.deploy import targets as t
from placement.deploy.bundle import ExportFile
from placement.deploy.control_plane import namespace_of, priority_class
from placement.deploy.data_plane import ExportError
from scheduler_core.hami import SCHEDULER_NAMES, pod_scheduler
from scheduler_core.hardware import MIB_PER_GIB
from scheduler_core.scenario import InferenceWorkload, Scenario, TrainingWorkload

TRAINING_IMAGE = "nvcr.io/nvidia/pytorch:24.05-py3"
SERVING_IMAGE = "nvcr.io/nvidia/tritonserver:24.05-py3"
TOPOLOGY_KEYS = {"node": t.HOSTNAME_LABEL, "rack": t.RACK_LABEL}


def device_requests(scenario: Scenario) -> dict[str, object]:
    """Workload name -> the per-pod device request the simulator made for it (its first instance)."""
    # The simulator's own translation, so the exported resource names are the ones it scheduled.
    from scheduler_core.workloads import expand_workloads

    out: dict[str, object] = {}
    for w in expand_workloads(scenario):
        out.setdefault(w.spec.name, w.request)
    return out


def workload_class(spec, scenario: Scenario) -> str:
    if isinstance(spec, InferenceWorkload):
        groups = [g for g in scenario.pool.node_groups if spec.node_group in (None, g.name)]
        return "LeaderWorkerSet" if spec.gpus_per_replica > max(g.gpus_per_node for g in groups) else "Deployment"
    assert isinstance(spec, TrainingWorkload)
    workers = spec.workers if isinstance(spec.workers, int) else max(spec.workers.values)
    if workers == 1:
        return "Job"
    if spec.topology.required or spec.topology.preferred:
        return "JobSet"
    return "PyTorchJob"


HAMI_RESOURCES = {"gpu": "nvidia.com/gpu", "gpumem": "nvidia.com/gpumem",
                  "gpumem_percentage": "nvidia.com/gpumem-percentage", "gpucores": "nvidia.com/gpucores"}


def _hami_scheduler(scenario: Scenario, spec) -> str:
    dp = scenario.stack.data_plane_for(spec.node_group) if spec.node_group else scenario.stack.data_plane
    return pod_scheduler("kube-default", dp.hami)


def _gpus(spec) -> int:
    if isinstance(spec, InferenceWorkload):
        return spec.gpus_per_replica
    return spec.gpus_per_worker if isinstance(spec.gpus_per_worker, int) else max(spec.gpus_per_worker.values)


class _Pod:
    """Pod template pieces for one workload."""

    def __init__(self, scenario: Scenario, spec, request, claim_template: str | None, planned=None):
        cp = scenario.stack.control_plane
        tenant = next(x for x in scenario.tenant_list() if x.name == spec.tenant)
        self.queue = tenant.queue_name
        self.labels: dict[str, str] = {"app.kubernetes.io/name": spec.name}
        self.annotations: dict[str, str] = {}
        limits: dict[str, int | str] = {}
        scheduler = SCHEDULER_NAMES[cp.scheduler]
        kind = request.kind
        if kind == "count":
            if request.count:  # a pod without a GPU states no device limit (never a 0: BestEffort stays so)
                limits[request.resource] = request.count
        elif kind == "hami" and spec.unit.hami is not None:
            # The container as the scenario writes it: HAMi's webhook fills in its defaults on the cluster.
            for name, value in spec.unit.hami.model_dump().items():
                if value is not None:
                    limits[HAMI_RESOURCES[name]] = value
            if cp.scheduler == "kube-default":
                scheduler = _hami_scheduler(scenario, spec)
        elif kind == "hami":
            limits["nvidia.com/gpu"] = request.count
            limits["nvidia.com/gpumem"] = int(request.memory_mib)
            if request.cores:
                limits["nvidia.com/gpucores"] = request.cores
            if cp.scheduler == "kube-default":
                scheduler = _hami_scheduler(scenario, spec)  # HAMi's scheduler extender places vGPU pods
        elif kind == "fraction":
            self.annotations["gpu-fraction"] = f"{request.fraction:g}"
        elif kind != "dra":
            raise ExportError(f"workload {spec.name}: no Kubernetes form for request kind {kind!r}")
        if kind == "hami":
            self.annotations.update(spec.unit.annotations)  # nvidia.com/use-gputype and the other card filters
        if cp.scheduler == "kai":
            self.labels["kai.scheduler/queue"] = self.queue
        if cp.scheduler == "volcano":
            self.annotations["scheduling.volcano.sh/queue-name"] = self.queue
        if isinstance(spec, TrainingWorkload) and cp.admission == "kueue":
            if spec.topology.required:
                self.annotations["kueue.x-k8s.io/podset-required-topology"] = TOPOLOGY_KEYS[spec.topology.required]
            elif spec.topology.preferred:
                self.annotations["kueue.x-k8s.io/podset-preferred-topology"] = TOPOLOGY_KEYS[spec.topology.preferred]
            elif spec.topology.unconstrained:
                self.annotations["kueue.x-k8s.io/podset-unconstrained-topology"] = "true"
        resources: dict = {"limits": limits} if limits else {}
        if planned is not None:  # the plan's names and quantities, as each component answers to them
            scheduler = planned.scheduler_name
            gpu = {k: _quantity(v) for k, v in planned.pod.resources.items() if k not in ("cpu", "memory") and v}
            host = {"cpu": _quantity(planned.pod.resources.get("cpu", 0)),
                    "memory": f"{int(round(planned.pod.resources.get('memory', 0) * 1024))}Mi"}
            resources = {"requests": {**host, **gpu}, "limits": gpu} if gpu else {"requests": host}
            self.annotations.update(planned.pod.annotations)
        container: dict = {"name": "main", "image": SERVING_IMAGE if isinstance(spec, InferenceWorkload) else TRAINING_IMAGE,
                           "resources": resources}
        self.pod_spec: dict = {"schedulerName": scheduler}
        if pod_priority_class(scenario, spec):
            self.pod_spec["priorityClassName"] = pod_priority_class(scenario, spec)
        if spec.node_group:
            self.pod_spec["nodeSelector"] = {t.POOL_LABEL: spec.node_group}
        if claim_template:
            container["resources"] = {**{k: v for k, v in resources.items() if k == "requests"}, "claims": [{"name": "gpu"}]}
            ref = ({"resourceClaimName": request.shared_claim} if request.shared_claim
                   else {"resourceClaimTemplateName": claim_template})
            self.pod_spec["resourceClaims"] = [{"name": "gpu", **ref}]
        self.container = container

    def template(self, restart_policy: str | None = None, container_name: str = "main") -> dict:
        spec = {**self.pod_spec, "containers": [{**self.container, "name": container_name}]}
        if restart_policy:
            spec["restartPolicy"] = restart_policy
        meta: dict = {"labels": dict(self.labels)}
        if self.annotations:
            meta["annotations"] = dict(self.annotations)
        return {"metadata": meta, "spec": spec}


def pod_priority_class(scenario: Scenario, spec) -> str | None:
    """The PriorityClass a workload's pods name: without Kueue, kube-scheduler (activeQ order, PostFilter
    preemption) and Volcano read the pods' priority, so a non-zero priority becomes one. Under Kueue the
    priority is a WorkloadPriorityClass (the queue-name's companion label) and pods carry none, so that
    kube-scheduler never preempts around Kueue's quota; the simulator models both the same way."""
    if scenario.stack.control_plane.admission == "kueue" or not spec.priority:
        return None
    return priority_class(spec.priority)


def priority_class_file(scenario: Scenario) -> ExportFile | None:
    """scheduling.k8s.io/v1 PriorityClasses for the priorities the pods name (created before them)."""
    values = sorted({w.priority for w in scenario.workloads if pod_priority_class(scenario, w)})
    if not values:
        return None
    return ExportFile("priorityclasses.yaml", "manifests", note="the workloads' priorities, as their pods name them",
                      objects=[{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                "metadata": {"name": priority_class(v)}, "value": v, "globalDefault": False,
                                "preemptionPolicy": "PreemptLowerPriority",
                                "description": f"Workloads of priority {v} in the Atlas plan"} for v in values])


def _quantity(value: float):
    return int(value) if float(value).is_integer() else f"{int(round(value * 1000))}m"


def _claim_template(name: str, namespace: str, request) -> dict:
    exactly: dict = {"deviceClassName": "mig.nvidia.com" if request.profile else "gpu.nvidia.com",
                     "allocationMode": "ExactCount", "count": request.count}
    if request.device_class is not None:  # unit.dra as the scenario states it
        exactly = {"deviceClassName": request.device_class, "allocationMode": "All" if request.all_devices
                   else "ExactCount", **({} if request.all_devices else {"count": request.count})}
        if request.selectors:
            exactly["selectors"] = [{"cel": {"expression": e}} for e in request.selectors]
        devices = {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}
        if request.shared_claim:  # one ResourceClaim for every pod naming it
            return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                    "metadata": {"name": request.shared_claim, "namespace": namespace}, "spec": devices}
        return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": name, "namespace": namespace}, "spec": {"spec": devices}}
    if request.profile:
        exactly["selectors"] = [{"cel": {"expression": f"device.attributes['gpu.nvidia.com'].profile == '{request.profile}'"}}]
    elif request.memory_mib:
        gib = int(-(-request.memory_mib // MIB_PER_GIB))
        exactly["selectors"] = [{"cel": {"expression":
                                 f"device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('{gib}Gi')) >= 0"}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": name, "namespace": namespace},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}}


def _per_node(scenario: Scenario, spec) -> int:
    groups = [g for g in scenario.pool.node_groups if spec.node_group in (None, g.name)]
    return max(g.gpus_per_node for g in groups)


def _pods_per_replica(scenario: Scenario, spec, planned) -> int:
    """Pods one replica runs: the plan's, else as many nodes as the replica's GPUs fill."""
    if planned is not None:
        return planned.pods_per_replica
    return max(1, -(-_gpus(spec) // _per_node(scenario, spec)))


def _headless(pod: _Pod) -> dict:
    head = pod.template()
    head["spec"]["containers"][0]["resources"] = {}
    return head


def _serving_object(scenario: Scenario, spec, klass: str, pod: _Pod, meta: dict, planned) -> dict:
    """A serving framework's own resource for an inference class: its replicas, pods per replica and
    the pod template every other kind carries (placement/deploy/frameworks.py)."""
    replicas, per_replica = spec.replicas, _pods_per_replica(scenario, spec, planned)
    if klass == "RayService":
        return frameworks.ray_service(meta, spec.name, _headless(pod), pod.template(), replicas, per_replica)
    if klass == "InferenceService":
        if per_replica > 1:
            raise NotRendered(f"workload {spec.name}: a replica spanning {per_replica} nodes needs KServe's multi-node "
                              "serving runtime (predictor.workerSpec), which the export does not write")
        return frameworks.inference_service(meta, pod.template(), replicas)
    assert klass == "DynamoGraphDeployment", klass
    return frameworks.dynamo_graph(meta, pod.template(), replicas, per_replica)


# The pod-group template each gang's Workload names; its PodGroup is `<workload>-<template>`.
GANG_TEMPLATE = "workers"
# The object whose pods the gang is (the Workload's controllerRef): (apiGroup, kind) per exported kind. An
# AppWrapper's pods belong to the Job it wraps (same name), which its controller creates once Kueue admits it.
_CONTROLLERS = {"Job": ("batch", "Job"), "VolcanoJob": ("batch.volcano.sh", "Job"), "JobSet": ("jobset.x-k8s.io", "JobSet"),
                "PyTorchJob": ("kubeflow.org", "PyTorchJob"), "RayJob": ("ray.io", "RayJob"), "AppWrapper": ("batch", "Job")}


def gang_min_count(scenario: Scenario, spec, planned=None) -> int | None:
    """minCount of the PodGroup kube-scheduler places `spec`'s pods as (the Workload API's gang, scenario
    stack.control_plane.kube.workload_gang), None when it places them one by one: a training job of more
    than one pod in a gang (the simulator's KubeWorkloadGangScheduler.is_gang). The plan's minCount for
    the tenant when there is one (the same number the scenario's min_available carries)."""
    cp = scenario.stack.control_plane
    if cp.scheduler != "kube-default" or not cp.kube.workload_gang or not isinstance(spec, TrainingWorkload) or spec.roles:
        return None
    workers = spec.workers if isinstance(spec.workers, int) else max(spec.workers.values)
    least = min(workers, spec.min_available if spec.min_available is not None else workers)
    if planned is not None and planned.pod_group is not None:
        least = planned.pod_group.min_count.get(spec.tenant, least)
    return least if least > 1 else None


def pod_group_objects(spec, klass: str, namespace: str, min_count: int) -> list[dict]:
    """The Workload (one pod-group template with a gang policy) and the PodGroup made from it, field by field
    as k8s.io/api v0.37.2 scheduling/v1beta1/types.go names them: WorkloadSpec.podGroupTemplates[]
    {name, schedulingPolicy.gang.minCount}, controllerRef {apiGroup, kind, name}; PodGroupSpec.workloadRef
    {workloadName, templateName} and its own schedulingPolicy, which controllers copy from the template.
    WorkloadWithJob (the Job controller making both itself) is alpha and off in 1.37, so the bundle writes them."""
    labels = {"app.kubernetes.io/name": spec.name}
    policy = {"gang": {"minCount": min_count}}
    workload = {"apiVersion": t.WORKLOAD_API_VERSION, "kind": "Workload",
                "metadata": {"name": spec.name, "namespace": namespace, "labels": dict(labels)},
                "spec": {"controllerRef": {"apiGroup": _CONTROLLERS[klass][0], "kind": _CONTROLLERS[klass][1], "name": spec.name},
                         "podGroupTemplates": [{"name": GANG_TEMPLATE, "schedulingPolicy": policy}]}}
    group = {"apiVersion": t.WORKLOAD_API_VERSION, "kind": "PodGroup",
             "metadata": {"name": pod_group_name(spec), "namespace": namespace, "labels": dict(labels)},
             "spec": {"workloadRef": {"workloadName": spec.name, "templateName": GANG_TEMPLATE},
                      "schedulingPolicy": {"gang": {"minCount": min_count}}}}
    return [workload, group]


def pod_group_name(spec) -> str:
    return f"{spec.name}-{GANG_TEMPLATE}"


def _workload_object(scenario: Scenario, spec, klass: str, pod: _Pod, namespace: str,
                     planned_replicas: int | None = None, planned=None) -> dict:
    cp = scenario.stack.control_plane
    meta: dict = {"name": spec.name, "namespace": namespace, "labels": {"app.kubernetes.io/name": spec.name}}
    if cp.admission == "kueue":
        meta["labels"]["kueue.x-k8s.io/queue-name"] = pod.queue
        meta["labels"]["kueue.x-k8s.io/priority-class"] = priority_class(spec.priority)
    if cp.scheduler == "kai":
        meta["labels"]["kai.scheduler/queue"] = pod.queue
    if klass == "Deployment":
        replicas = spec.replicas if isinstance(spec, InferenceWorkload) else (planned_replicas or 1)
        return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": {
            "replicas": replicas, "selector": {"matchLabels": {"app.kubernetes.io/name": spec.name}},
            "template": pod.template()}}
    if klass == "LeaderWorkerSet":
        per_node = _per_node(scenario, spec)
        # size = pods per replica; each pod carries only its own share of the replica's GPUs
        return {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet", "metadata": meta, "spec": {
            "replicas": spec.replicas,
            "leaderWorkerTemplate": {"size": -(-spec.gpus_per_replica // per_node), "workerTemplate": pod.template()}}}
    if isinstance(spec, InferenceWorkload) and klass in ("RayService", "InferenceService", "DynamoGraphDeployment"):
        return _serving_object(scenario, spec, klass, pod, meta, planned)
    if klass == "AppWrapper":  # the wrapper around the Job the class runs as without one
        return frameworks.app_wrapper(meta, _workload_object(scenario, spec, "Job", pod, namespace, planned_replicas, planned))
    if isinstance(spec, InferenceWorkload) and klass != "Deployment":
        raise NotRendered(f"workload {spec.name}: {klass} is not rendered yet; the plan names it, the export does not")
    workers = (spec.workers if isinstance(spec.workers, int) else max(spec.workers.values)) if hasattr(spec, "workers") else 1
    min_member = min(workers, spec.min_available or workers)
    backoff = scenario.parameters.max_restarts
    if klass == "Job":
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": {
            "parallelism": workers, "completions": workers, "backoffLimit": backoff,
            **({"completionMode": "Indexed"} if workers > 1 else {}), "template": pod.template("Never")}}
    if klass == "VolcanoJob":
        return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": meta, "spec": {
            "schedulerName": "volcano", "queue": pod.queue, "minAvailable": min_member, "maxRetry": backoff,
            **({"priorityClassName": pod.pod_spec["priorityClassName"]} if "priorityClassName" in pod.pod_spec else {}),
            "tasks": [{"name": "worker", "replicas": workers, "template": pod.template("Never")}]}}
    if klass == "RayJob":
        head = _headless(pod)
        return {"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": meta, "spec": {
            "entrypoint": "python main.py", "rayClusterSpec": {
                "headGroupSpec": {"rayStartParams": {}, "template": head},
                "workerGroupSpecs": [{"groupName": "workers", "replicas": workers, "minReplicas": workers,
                                      "maxReplicas": workers, "rayStartParams": {}, "template": pod.template()}]}}}
    if klass not in ("JobSet", "PyTorchJob"):
        raise NotRendered(f"workload {spec.name}: {klass} is not rendered yet; the plan names it, the export does not")
    if klass == "JobSet":
        return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": meta, "spec": {
            "replicatedJobs": [{"name": "workers", "replicas": 1, "template": {"spec": {
                "parallelism": workers, "completions": workers, "backoffLimit": 0,
                "template": pod.template("Never")}}}]}}
    replica_specs = {"Master": {"replicas": 1, "restartPolicy": "OnFailure", "template": pod.template(container_name="pytorch")}}
    if workers > 1:
        replica_specs["Worker"] = {"replicas": workers - 1, "restartPolicy": "OnFailure", "template": pod.template(container_name="pytorch")}
    run_policy: dict = {"backoffLimit": backoff}
    if cp.scheduler in ("volcano", "coscheduling", "kai"):
        # The training operator creates the PodGroup (gang of minAvailable) for these gang schedulers.
        policy: dict = {"minAvailable": min_member}
        if cp.scheduler == "volcano":
            policy["queue"] = pod.queue
        run_policy["schedulingPolicy"] = policy
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": meta,
            "spec": {"runPolicy": run_policy, "pytorchReplicaSpecs": replica_specs}}


def _planned_kind(planned) -> str:
    if planned.object_kind == "Job" and planned.api_version.startswith("batch.volcano.sh"):
        return "VolcanoJob"
    return planned.object_kind


class NotRendered(ExportError):
    """The plan names a workload kind, or a shape of one, the export cannot write (e.g. an InferenceService
    replica over several nodes, which needs KServe's multi-node serving runtime)."""


def _not_rendered_note(spec, klass: str, request, problem: NotRendered) -> ExportFile:
    """What an operator writes by hand for a workload kind the export does not render: everything
    else of the bundle (components, data plane, queues) still applies."""
    body = (f"# {spec.name}: {klass} (not rendered)\n\n{problem}.\n\n"
            f"Write the {klass} from the plan (`GET /api/v1/stacks/<id>/plan/`, workload `{spec.name}`): each pod "
            f"requests {request.describe()}; the rest of this bundle (components, data plane, queues and quotas) "
            f"is complete and installs as the README says.\n")
    return ExportFile(f"workloads/{spec.name}.NOT-RENDERED.md", "text", body=body,
                      note=f"{klass} is named by the plan but not rendered: write it by hand from the plan")


def workload_files(scenario: Scenario, plan=None) -> list[ExportFile]:
    """One object per workload class and pool: of the plan's kind, with the plan's per-pod requests
    (without a plan: the kind guessed from the scenario's shape, as before plans)."""
    requests = device_requests(scenario)
    planned_by_group = {w.node_group: w for w in plan.workloads} if plan is not None else {}
    files, seen = [], set()
    for spec in scenario.workloads:
        planned = planned_by_group.get(spec.node_group)
        klass = _planned_kind(planned) if planned else workload_class(spec, scenario)
        key = (klass, spec.node_group)
        if key in seen or spec.name not in requests:
            continue
        seen.add(key)
        namespace = namespace_of(spec.tenant)
        request = requests[spec.name]
        claim = f"{spec.name}-gpu" if request.kind == "dra" else None
        pod = _Pod(scenario, spec, request, claim, planned)
        min_count = gang_min_count(scenario, spec, planned)
        if min_count is not None:  # every pod of the job names its PodGroup (core/v1 PodSpec.schedulingGroup)
            pod.pod_spec["schedulingGroup"] = {"podGroupName": pod_group_name(spec)}
        replicas = planned.replicas_per_tenant.get(spec.tenant) if planned else None
        try:
            objects = [_workload_object(scenario, spec, klass, pod, namespace, replicas, planned)]
        except NotRendered as problem:
            files.append(_not_rendered_note(spec, klass, request, problem))
            continue
        if claim:
            objects.insert(0, _claim_template(claim, namespace, request))
        gang = ""
        if min_count is not None:
            objects[:0] = pod_group_objects(spec, klass, namespace, min_count)
            gang = f"; PodGroup {pod_group_name(spec)} (gang minCount {min_count}, {t.WORKLOAD_API_VERSION})"
        pool = f" on pool {spec.node_group}" if spec.node_group else ""
        files.append(ExportFile(f"workloads/{spec.name}.yaml", "manifests", objects=objects,
                                note=f"{klass}{pool}: {request.describe()} per pod, {_gpus(spec)} GPU(s) asked{gang}"))
    return files
