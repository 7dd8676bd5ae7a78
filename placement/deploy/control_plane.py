"""Control plane: Kueue (flavors, ClusterQueues, cohorts, LocalQueues, priorities, topology),
Volcano queues and scheduler configuration, KAI queues, or the coscheduling profile."""

from __future__ import annotations

import re

from placement.deploy import targets as t
from placement.deploy.bundle import ExportFile, to_yaml
from placement.deploy.data_plane import ExportError, PoolPlan
from placement.deploy.quantity import to_quantity
from scheduler_core.scenario import Scenario
from scheduler_core.scenario.stack import resource_groups

KUEUE = "kueue.x-k8s.io/v1beta2"
VOLCANO = "scheduling.volcano.sh/v1beta1"
KAI = "scheduling.run.ai/v2"
COSCHEDULING_SCHEDULER = "scheduler-plugins-scheduler"  # the chart's scheduler.name default
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def namespace_of(tenant: str) -> str:
    if not _DNS_LABEL.match(tenant) or len(tenant) > 63:
        raise ExportError(f"tenant {tenant!r} is not a valid namespace name (lower-case letters, digits and '-')")
    return tenant


def priority_class(priority: int) -> str:
    return f"priority-{priority}" if priority >= 0 else f"priority-minus-{-priority}"


def _meta(name: str, namespace: str | None = None) -> dict:
    return {"name": name, **({"namespace": namespace} if namespace else {})}


def tenant_queues(scenario: Scenario) -> list[tuple[str, str]]:
    """(namespace, queue name) per tenant: the queue a tenant's workloads name."""
    return [(namespace_of(tenant.name), tenant.queue_name) for tenant in scenario.tenant_list()]


def namespaces_file(scenario: Scenario) -> ExportFile:
    names = sorted({ns for ns, _ in tenant_queues(scenario)} - {"default"})
    return ExportFile("namespaces.yaml", "manifests", note="one namespace per tenant",
                      objects=[{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in names])


def flavor_labels(scenario: Scenario, plans: list[PoolPlan]) -> dict[str, dict[str, str]]:
    """ResourceFlavor name -> nodeLabels; adds a flavor label to the pools a multi-pool flavor selects.
    With Topology-Aware Scheduling a flavor over every pool names them too: Kueue's CRD refuses a flavor
    with a topologyName and no nodeLabels ("at least one nodeLabel is required when topology is set")."""
    out: dict[str, dict[str, str]] = {}
    seen: dict[str, list[str] | None] = {}
    by_name = {p.name: p for p in plans}
    kueue = scenario.stack.control_plane.kueue
    every_pool = sorted(g.name for g in scenario.pool.node_groups) if kueue.topology_aware_scheduling else None
    for cq in kueue.cluster_queues:
        for flavor in cq.flavors:
            groups = sorted(flavor.node_groups) if flavor.node_groups else every_pool
            if flavor.name in seen and seen[flavor.name] != groups:
                raise ExportError(f"ResourceFlavor {flavor.name!r} selects different node groups in different "
                                  "ClusterQueues; one flavor has one set of node labels")
            seen[flavor.name] = groups
    for name, groups in seen.items():
        if groups is None:
            out[name] = {}
        elif len(groups) == 1:
            out[name] = {t.POOL_LABEL: groups[0]}
        else:
            key = f"flavor.placement-atlas.io/{name}"
            for g in groups:
                by_name[g].labels[key] = "true"
            out[name] = {key: "true"}
    return out


def _has_racks(scenario: Scenario) -> bool:
    """Whether the Topology has a rack level: Kueue counts only nodes that carry every level's label as
    topology domains, and the bundle asks operators for the rack label only on pools of several racks
    (README), so a rack level over unracked pools left no domain at all (the real Kueue: "couldn't assign
    flavors to pod set main: no topology domains at level: kubernetes.io/hostname")."""
    return any(g.racks > 1 or g.rack for g in scenario.pool.node_groups)


def kueue_files(scenario: Scenario, plans: list[PoolPlan], workload_kinds=()) -> list[ExportFile]:
    kueue = scenario.stack.control_plane.kueue
    tas = kueue.topology_aware_scheduling
    flavors = []
    for name, labels in flavor_labels(scenario, plans).items():
        spec: dict = {}
        if labels:
            spec["nodeLabels"] = labels
        if tas:
            spec["topologyName"] = kueue.topology_name
        flavors.append({"apiVersion": KUEUE, "kind": "ResourceFlavor", "metadata": _meta(name), "spec": spec})
    files = [ExportFile("kueue/resourceflavors.yaml", "manifests", objects=flavors, note="one flavor per node class")]
    if tas:
        racks = _has_racks(scenario)
        levels = ([{"nodeLabel": t.RACK_LABEL}] if racks else []) + [{"nodeLabel": t.HOSTNAME_LABEL}]
        files.append(ExportFile("kueue/topology.yaml", "manifests",
                                note=("racks, then nodes" if racks else "nodes") + " (Topology-Aware Scheduling)", objects=[{
            "apiVersion": KUEUE, "kind": "Topology", "metadata": _meta(kueue.topology_name), "spec": {"levels": levels}}]))

    cluster_queues, cohorts = [], []
    for cq in kueue.cluster_queues:
        spec: dict = {
            "namespaceSelector": {},
            "queueingStrategy": cq.queueing_strategy,
            "resourceGroups": _resource_groups(cq.flavors),
            "preemption": {
                "withinClusterQueue": cq.preemption.within_cluster_queue,
                "reclaimWithinCohort": cq.preemption.reclaim_within_cohort,
                "borrowWithinCohort": {"policy": cq.preemption.borrow_within_cohort},
            },
            "flavorFungibility": {"whenCanBorrow": cq.flavor_fungibility.when_can_borrow,
                                  "whenCanPreempt": cq.flavor_fungibility.when_can_preempt},
            "fairSharing": {"weight": to_quantity(cq.fair_sharing_weight)},
        }
        if cq.cohort:
            spec = {"cohortName": cq.cohort, **spec}
            if cq.cohort not in cohorts:
                cohorts.append(cq.cohort)
        cluster_queues.append({"apiVersion": KUEUE, "kind": "ClusterQueue", "metadata": _meta(cq.name), "spec": spec})
    files.append(ExportFile("kueue/clusterqueues.yaml", "manifests", objects=cluster_queues,
                            note="quotas per tenant, every advertised resource name covered"))
    stated = {c.name: c for c in kueue.cohorts}
    for c in kueue.cohorts:  # the tree: parents, and Cohorts no ClusterQueue names directly
        for name in (c.name, c.parent_name):
            if name and name not in cohorts:
                cohorts.append(name)
    if cohorts:
        files.append(ExportFile("kueue/cohorts.yaml", "manifests", objects=[
            {"apiVersion": KUEUE, "kind": "Cohort", "metadata": _meta(c), "spec": _cohort_spec(stated.get(c))}
            for c in cohorts], note="the cohort tree: parents, own quotas and fair-sharing weights"))
    cq_names = {cq.name for cq in kueue.cluster_queues}
    local = []
    for namespace, queue in tenant_queues(scenario):
        target = kueue.local_queues.get(queue, queue if queue in cq_names else None)
        if target is None:  # parse_scenario already refuses this; keep the export honest anyway
            raise ExportError(f"queue {queue!r} is neither a LocalQueue nor a ClusterQueue")
        local.append({"apiVersion": KUEUE, "kind": "LocalQueue", "metadata": _meta(queue, namespace),
                      "spec": {"clusterQueue": target}})
    files.append(ExportFile("kueue/localqueues.yaml", "manifests", objects=local, note="one per tenant namespace"))
    priorities = sorted({w.priority for w in scenario.workloads})
    files.append(ExportFile("kueue/workloadpriorityclasses.yaml", "manifests", objects=[
        {"apiVersion": KUEUE, "kind": "WorkloadPriorityClass", "metadata": _meta(priority_class(p)), "value": p}
        for p in priorities]))
    files.append(_kueue_values(scenario, workload_kinds))
    return files


def _resource_groups(flavors) -> list[dict]:
    """spec.resourceGroups of a ClusterQueue or Cohort from the scenario's flavors and quotas."""
    groups = []
    for covered, group in resource_groups(flavors):
        flavor_specs = []
        for f in group:
            entries = []
            for r in covered:  # every flavor of a group lists the group's covered resources, in the same order
                quota = f.quotas.get(r)
                amount = _gib_quantity if r == "memory" else to_quantity  # the scenario's memory is in GiB
                entry: dict = {"name": r, "nominalQuota": amount(quota.nominal if quota else 0)}
                if quota is not None and quota.borrowing_limit is not None:
                    entry["borrowingLimit"] = amount(quota.borrowing_limit)
                if quota is not None and quota.lending_limit is not None:
                    entry["lendingLimit"] = amount(quota.lending_limit)
                entries.append(entry)
            flavor_specs.append({"name": f.name, "resources": entries})
        groups.append({"coveredResources": covered, "flavors": flavor_specs})
    return groups


def _cohort_spec(cohort) -> dict:
    """A Cohort's spec (v1beta2: parentName, resourceGroups, fairSharing); {} for one only named."""
    if cohort is None:
        return {}
    spec: dict = {}
    if cohort.parent_name:
        spec["parentName"] = cohort.parent_name
    if cohort.flavors:
        spec["resourceGroups"] = _resource_groups(cohort.flavors)
    if cohort.fair_sharing_weight != 1.0:
        spec["fairSharing"] = {"weight": to_quantity(cohort.fair_sharing_weight)}
    return spec


# Kueue v0.19.2 chart's managerConfig.controllerManagerConfigYaml (charts/kueue/values.yaml): the chart
# writes this string into its manager ConfigMap whole, so the bundle keeps every default and adds its own.
KUEUE_CHART_CONFIG: dict = {
    "apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration",
    "health": {"healthProbeBindAddress": ":8081"},
    "metrics": {"bindAddress": ":8443"},
    "webhook": {"port": 9443},
    "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
    "controller": {"groupKindConcurrency": {"Job.batch": 5, "Pod": 5, "Workload.kueue.x-k8s.io": 10,
                                            "LocalQueue.kueue.x-k8s.io": 5, "ClusterQueue.kueue.x-k8s.io": 5,
                                            "ResourceFlavor.kueue.x-k8s.io": 1}},
    "clientConnection": {"qps": 300, "burst": 500},
    "integrations": {"frameworks": ["batch/job", "kubeflow.org/mpijob", "ray.io/rayjob", "ray.io/rayservice",
                                    "ray.io/raycluster", "jobset.x-k8s.io/jobset", "workload.codeflare.dev/appwrapper",
                                    "trainer.kubeflow.org/trainjob", "pod", "deployment", "statefulset",
                                    "leaderworkerset.x-k8s.io/leaderworkerset"]},
}
# Workload kind -> the Kueue integrations that must be enabled for Kueue to manage it (Deployments,
# StatefulSets and LeaderWorkerSets are managed through their pods: they need "pod" too).
KUEUE_FRAMEWORKS: dict[str, tuple[str, ...]] = {
    "Job": ("batch/job",), "JobSet": ("jobset.x-k8s.io/jobset",), "PyTorchJob": ("kubeflow.org/pytorchjob",),
    "MPIJob": ("kubeflow.org/mpijob",), "RayJob": ("ray.io/rayjob",), "RayCluster": ("ray.io/raycluster",),
    "Deployment": ("pod", "deployment"), "StatefulSet": ("pod", "statefulset"), "Pod": ("pod",),
    "LeaderWorkerSet": ("pod", "leaderworkerset.x-k8s.io/leaderworkerset"),
    "RayService": ("ray.io/rayservice",), "AppWrapper": ("workload.codeflare.dev/appwrapper",),
    # No Kueue integration of their own: KServe (Standard mode) creates Deployments carrying the queue labels and
    # the Dynamo operator (without Grove) Deployments whose worker pods carry them (the DGD's worker podTemplate);
    # Kueue manages both through their pods.
    "InferenceService": ("pod", "deployment"), "DynamoGraphDeployment": ("pod", "deployment"),
}


def kueue_frameworks(workload_kinds) -> list[str]:
    """The chart's integrations plus every one the bundle's workload kinds need."""
    frameworks = list(KUEUE_CHART_CONFIG["integrations"]["frameworks"])
    for kind in workload_kinds:
        frameworks += [f for f in KUEUE_FRAMEWORKS.get(kind, ()) if f not in frameworks]
    return frameworks


def kueue_manager_config(scenario: Scenario, workload_kinds=()) -> dict:
    kueue = scenario.stack.control_plane.kueue
    config: dict = {**KUEUE_CHART_CONFIG, "integrations": {"frameworks": kueue_frameworks(workload_kinds)}}
    ready = kueue.wait_for_pods_ready
    if ready.enable:
        strategy: dict = {"timestamp": "Eviction", "backoffBaseSeconds": int(ready.backoff_base),
                          "backoffMaxSeconds": int(ready.backoff_max)}
        if ready.backoff_limit_count is not None:
            strategy["backoffLimitCount"] = ready.backoff_limit_count
        config["waitForPodsReady"] = {"timeout": f"{int(ready.timeout)}s", "blockAdmission": ready.block_admission,
                                      "requeuingStrategy": strategy}
    if kueue.fair_sharing:
        config["fairSharing"] = {"preemptionStrategies": list(kueue.fair_sharing_preemption_strategies)}
    excluded = _uncovered_hami_resources(scenario)
    if excluded:
        config["resources"] = {"excludeResourcePrefixes": excluded}
    return config


# HAMi's per-pod resources beside nvidia.com/gpu (workloads.HAMI_RESOURCES), longest first so a prefix
# never hides a covered longer name.
HAMI_POD_RESOURCES = ("nvidia.com/gpumem-percentage", "nvidia.com/gpucores", "nvidia.com/gpumem")


def _uncovered_hami_resources(scenario: Scenario) -> list[str]:
    """HAMi resources the pods may ask that no ClusterQueue covers. The simulator's Kueue ignores a
    resource no queue covers; the real one refuses the workload ("couldn't assign flavors to pod set main:
    resource nvidia.com/gpucores unavailable in ClusterQueue", seen on the local plane) unless the
    manager's resources.excludeResourcePrefixes names it (quotaCheckStrategy: IgnoreUndeclared would say
    it for all, but is behind a feature gate in Kueue v0.19.2)."""
    stack = scenario.stack
    planes = [stack.data_plane, *[stack.data_plane_for(g.name) for g in scenario.pool.node_groups]]
    if not any(dp.mechanism == "hami" for dp in planes):
        return []
    covered = {r for cq in stack.control_plane.kueue.cluster_queues for f in cq.flavors for r in f.quotas}
    out = []
    for name in HAMI_POD_RESOURCES:
        if name not in covered and not any(c.startswith(name) for c in covered):
            out.append(name)
    return out


def _kueue_values(scenario: Scenario, workload_kinds) -> ExportFile:
    # The chart renders this into its own manager ConfigMap and rolls the manager on a change
    # (config-checksum annotation), so `helm upgrade` applies it; a replaced ConfigMap would be reverted.
    return ExportFile("kueue/values.yaml", "helm-values", chart="kueue",
                      note="the manager configuration (integrations, waitForPodsReady, fair sharing) through the chart",
                      values={"managerConfig": {"controllerManagerConfigYaml": to_yaml(kueue_manager_config(scenario, workload_kinds))}})


def _gib_quantity(gib: float) -> str:
    return f"{int(gib)}Gi" if float(gib).is_integer() else f"{round(gib * 1024)}Mi"


def _volcano_resources(resources: dict[str, float]) -> dict:
    """A scenario's queue resources as a Volcano ResourceList (memory from GiB to a Gi quantity)."""
    return {name: (_gib_quantity(amount) if name == "memory" else to_quantity(amount))
            for name, amount in resources.items()}


def _kai_resource(quota, per_unit: float = 1.0) -> dict:
    scale = lambda v: v if v < 0 else round(v * per_unit, 3)  # noqa: E731 - -1 stays "unlimited"
    return {"quota": scale(quota.quota), "limit": scale(quota.limit), "overQuotaWeight": quota.over_quota_weight}


def volcano_files(scenario: Scenario, vgpu: bool = False) -> list[ExportFile]:
    """``vgpu``: pods request Volcano's vGPU resources, which its deviceshare plugin binds only with VGPUEnable."""
    volcano = scenario.stack.control_plane.volcano
    queues = []
    for q in volcano.queues:
        spec: dict = {"weight": q.weight, "reclaimable": q.reclaimable}
        if q.capability is not None:
            spec["capability"] = _volcano_resources(q.capability)
        if q.guarantee:
            spec["guarantee"] = {"resource": _volcano_resources(q.guarantee)}
        if q.deserved is not None:
            spec["deserved"] = _volcano_resources(q.deserved)
        if q.priority:
            spec["priority"] = q.priority
        if q.parent:
            spec["parent"] = q.parent
        queues.append({"apiVersion": VOLCANO, "kind": "Queue", "metadata": _meta(q.name), "spec": spec})
    tier1 = [p for p in volcano.plugins if p in ("priority", "gang", "conformance")]
    tier2 = [p for p in volcano.plugins if p not in tier1]
    def plugin(name: str) -> dict:
        if name == "overcommit":
            return {"name": name, "arguments": {"overcommit-factor": volcano.overcommit_factor}}
        if name == "capacity" and volcano.enable_hierarchy:
            return {"name": name, "enableHierarchy": True}  # the plugin option (conf.PluginOption)
        return {"name": name}

    conf = {"actions": ", ".join(volcano.actions),
            "tiers": [{"plugins": [plugin(p) for p in tier]} for tier in (tier1, tier2) if tier]}
    if vgpu:
        conf["tiers"][-1]["plugins"].append({"name": "deviceshare", "arguments": {t.VOLCANO_VGPU_ARGUMENT: True}})
    return [
        ExportFile("volcano/queues.yaml", "manifests", objects=queues, note="one queue per tenant (weight, capability, guarantee, deserved in GPUs)"),
        # The chart's own override of its scheduler ConfigMap (custom.scheduler_config_override).
        ExportFile("volcano/values.yaml", "helm-values", chart="volcano", note="scheduler actions and plugins the simulation ran",
                   values={"custom": {"scheduler_config_override": to_yaml(conf)}}),
    ]


def kai_files(scenario: Scenario) -> list[ExportFile]:
    kai = scenario.stack.control_plane.kai
    queues = []
    for q in kai.queues:
        # KAI counts CPU in millicores and memory in MB (10^6 bytes); the scenario in cores and GiB.
        spec: dict = {"resources": {"gpu": {"quota": q.quota, "overQuotaWeight": q.over_quota_weight, "limit": q.limit},
                                    "cpu": _kai_resource(q.cpu, 1000.0),
                                    "memory": _kai_resource(q.memory, 2**30 / 1e6)}}
        if q.parent:
            spec = {"parentQueue": q.parent, **spec}
        if q.priority:
            spec["priority"] = q.priority
        if kai.min_guaranteed_runtime:
            spec["reclaimMinRuntime"] = f"{int(kai.min_guaranteed_runtime)}s"
        queues.append({"apiVersion": KAI, "kind": "Queue", "metadata": _meta(q.name), "spec": spec})
    return [ExportFile("kai/queues.yaml", "manifests", objects=queues, note="GPU quota, over-quota weight and limit per queue"),
            ExportFile("kai/values.yaml", "helm-values", chart="kai-scheduler", values={"global": {"gpuSharing": kai.gpu_sharing}},
                       note="gpu-fraction requests need global.gpuSharing")]


def kube_scheduler_files(scenario: Scenario) -> list[ExportFile]:
    """The default scheduler's profile: NodeResourcesFit scoring GPUs with the simulation's strategy, and
    preemption as simulated. Written for LeastAllocated too: upstream's default scores cpu and memory only
    (pkg/scheduler/apis/config/v1/defaults.go), so for pods that ask for GPUs alone an unconfigured
    kube-scheduler ties every node whose GPUs differ, where the simulation spreads by free GPUs."""
    kube = scenario.stack.control_plane.kube
    if scenario.stack.control_plane.scheduler != "kube-default" and kube.scoring == "LeastAllocated" and kube.preemption:
        return []  # the workloads' scheduler is another one; the default scheduler keeps its defaults
    profile: dict = {"schedulerName": "default-scheduler", "pluginConfig": [{"name": "NodeResourcesFit", "args": {
        "scoringStrategy": {"type": kube.scoring, "resources": [{"name": "nvidia.com/gpu", "weight": 1}]}}}]}
    if not kube.preemption:
        profile["plugins"] = {"postFilter": {"disabled": [{"name": "DefaultPreemption"}]}}
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": [profile]}
    return [ExportFile("kube-scheduler/scheduler-config.yaml", "manifests", note="NodeResourcesFit scoring the simulation used",
                       objects=[{"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta("scheduler-config", "kube-system"),
                                 "data": {"scheduler-config.yaml": to_yaml(config)}}])]


def coscheduling_files(scenario: Scenario) -> list[ExportFile]:
    """scheduler-plugins as a second scheduler through its chart's values: Coscheduling only, the
    chart's leaderElect false kept (a single replica; with true it would wait on a lease)."""
    cos = scenario.stack.control_plane.coscheduling
    values = {
        "scheduler": {"name": COSCHEDULING_SCHEDULER, "leaderElect": False},
        "plugins": {"enabled": ["Coscheduling"], "disabled": ["PrioritySort"]},
        "pluginConfig": [{"name": "Coscheduling", "args": {
            "permitWaitingTimeSeconds": int(cos.permit_waiting_timeout),
            "podGroupBackoffSeconds": int(cos.pod_group_backoff)}}],
    }
    return [ExportFile("coscheduling/values.yaml", "helm-values", chart="scheduler-plugins",
                       note="scheduler-plugins second scheduler with the Coscheduling plugin", values=values)]


def control_plane_files(scenario: Scenario, plans: list[PoolPlan], workload_kinds=()) -> list[ExportFile]:
    """``workload_kinds``: kinds of the bundle's workload objects (the Kueue integrations they need); a pool on
    Volcano's vGPU device plugin turns on the scheduler's deviceshare VGPUEnable."""
    cp = scenario.stack.control_plane
    files = kube_scheduler_files(scenario)
    if cp.admission == "kueue":
        files += kueue_files(scenario, plans, workload_kinds)
    if cp.scheduler == "volcano":
        files += volcano_files(scenario, vgpu=any(p.device_plugin == t.VOLCANO_VGPU.project for p in plans))
    elif cp.scheduler == "kai":
        files += kai_files(scenario)
    elif cp.scheduler == "coscheduling":
        files += coscheduling_files(scenario)
    return files
