"""The cluster half of an export read back into a scenario: pools, data planes and queues come
from the exported objects and values only; the demand (tenants, workloads, events, parameters,
horizon, seed) comes from the scenario it is checked against. Same scenario -> same run."""

from __future__ import annotations

import yaml

from placement.deploy import targets as t
from placement.deploy.bundle import Export
from placement.deploy.queues import kai_queue, kueue_cluster_queue, kueue_cohort, kueue_local_queue, volcano_queue
from scheduler_core import mig as migmod
from scheduler_core.hardware import GPU_SPECS
from scheduler_core.scenario import Scenario


def mig_settings(entries: list[dict], gpu: str, slot_choice: str) -> list[dict]:
    """mig-parted entries -> scenario MIG settings with the placements mig-parted would create."""
    family = GPU_SPECS[gpu].mig_family
    settings = []
    for entry in entries:
        devices = entry.get("devices", "all")
        if not entry.get("mig-enabled"):
            settings.append({"devices": devices, "layout": "all-disabled"})
            continue
        names = [p for p, n in (entry.get("mig-devices") or {}).items() for _ in range(int(n))]
        if not names:
            settings.append({"devices": devices, "layout": "all-enabled"})
            continue
        layout = migmod.create_any_order(family, names, slot_choice)
        settings.append({"devices": devices, "layout": [str(p) for p in layout.placements]})
    return settings


def _by_kind(export: Export) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for obj in export.objects():
        out.setdefault(f"{obj['apiVersion'].split('/')[0]}/{obj['kind']}", []).append(obj)
    return out


def _configmap(objects: dict, name: str) -> dict:
    return next((o["data"] for o in objects.get("v1/ConfigMap", []) if o["metadata"]["name"] == name), {})


def read_export(export: Export, demand: Scenario) -> dict:
    objects = _by_kind(export)
    plan = yaml.safe_load(_configmap(objects, t.EXPORT_CONFIGMAP)["plan.yaml"])
    values = export.helm_values()
    plugin_configs = {k: yaml.safe_load(v) for k, v in _configmap(objects, t.DEVICE_PLUGIN_CONFIGMAP).items()}
    mig_doc = yaml.safe_load(_configmap(objects, t.MIG_PARTED_CONFIGMAP).get("config.yaml", "{}")) or {}
    mig_configs = mig_doc.get("mig-configs", {})
    kai_sharing = bool((values.get("kai-scheduler") or {}).get("global", {}).get("gpuSharing"))
    slot_choice = demand.parameters.driver_slot_choice

    groups, planes = [], {}
    for pool in plan["pools"]:
        labels = pool["labels"]
        group: dict = {"name": pool["pool"], "count": pool["nodes"], "gpu": pool["gpu"], "gpus_per_node": pool["gpusPerNode"],
                       **pool["hardware"]}
        if t.MIG_CONFIG in labels:
            group["mig"] = mig_settings(mig_configs[labels[t.MIG_CONFIG]], pool["gpu"], slot_choice)
        groups.append(group)
        if pool.get("devicePlugin") == t.VOLCANO_VGPU.project:  # HAMi-core through Volcano's vGPU plugin, not HAMi
            planes[pool["pool"]] = {"mechanism": "hami", "hami": {"device_split_count": t.VOLCANO_VGPU.split_count}}
            continue
        planes[pool["pool"]] = _data_plane(labels, plugin_configs, values, kai_sharing, bool(group.get("mig")))

    first = planes[groups[0]["name"]]
    stack: dict = {"name": demand.stack.name, "data_plane": first,
                   "node_group_data_plane": {g: dp for g, dp in planes.items() if dp != first},
                   "control_plane": _control_plane(objects, plan, values, kai_sharing)}
    return {"name": demand.name, "description": demand.description, "seed": demand.seed, "horizon": demand.horizon,
            "pool": {"node_groups": groups}, "stack": stack,
            "tenants": [x.model_dump(mode="json") for x in demand.tenants],
            "workloads": [w.model_dump(mode="json") for w in demand.workloads],
            "events": [e.model_dump(mode="json") for e in demand.events],
            "parameters": demand.parameters.model_dump(mode="json"), "sampling": demand.sampling.model_dump(mode="json")}


def _data_plane(labels: dict, plugin_configs: dict, values: dict, kai_sharing: bool, mig_on: bool) -> dict:
    if labels.get(t.DEPLOY_DEVICE_PLUGIN) == "false":
        if labels.get(t.HAMI_NODE) == "on":
            plugin = values["hami"]["devicePlugin"]
            policy = values["hami"]["scheduler"]["defaultSchedulerPolicy"]
            return {"mechanism": "hami", "hami": {
                "device_split_count": plugin["deviceSplitCount"], "device_memory_scaling": plugin["deviceMemoryScaling"],
                "gpu_scheduler_policy": policy["gpuSchedulerPolicy"], "node_scheduler_policy": policy["nodeSchedulerPolicy"]}}
        return {"mechanism": "dra"}
    config = plugin_configs[labels[t.DEVICE_PLUGIN_CONFIG]]
    strategy = config["flags"]["migStrategy"]
    sharing = config.get("sharing", {})
    if "timeSlicing" in sharing:
        ts = sharing["timeSlicing"]
        return {"mechanism": "time-slicing", "mig_strategy": strategy, "time_slicing": {
            "replicas": ts["resources"][0]["replicas"], "rename_by_default": ts["renameByDefault"],
            "fail_requests_greater_than_one": ts["failRequestsGreaterThanOne"]}}
    if "mps" in sharing:
        return {"mechanism": "mps", "mig_strategy": strategy, "mps": {"replicas": sharing["mps"]["resources"][0]["replicas"]}}
    if mig_on:
        return {"mechanism": "mig", "mig_strategy": strategy}
    return {"mechanism": "kai-fraction" if kai_sharing else "whole", "mig_strategy": strategy}


def _control_plane(objects: dict, plan: dict, values: dict, kai_sharing: bool) -> dict:
    cp: dict = {"respect_device_plugin_readiness": plan.get("deviceReadinessTaint", False)}
    for text in _configmap(objects, "scheduler-config").values():
        profile = yaml.safe_load(text)["profiles"][0]
        fit = next(c for c in profile["pluginConfig"] if c["name"] == "NodeResourcesFit")
        disabled = profile.get("plugins", {}).get("postFilter", {}).get("disabled", [])
        cp["kube"] = {"scoring": fit["args"]["scoringStrategy"]["type"],
                      "preemption": not any(p["name"] == "DefaultPreemption" for p in disabled)}
    if objects.get("scheduling.k8s.io/PodGroup"):  # kube-scheduler gangs them: the Workload API's gate is on
        cp["kube"] = {**cp.get("kube", {}), "workload_gang": True}
    cos = values.get("scheduler-plugins")
    if cos:
        args = next(c["args"] for c in cos["pluginConfig"] if c["name"] == "Coscheduling")
        cp["scheduler"] = "coscheduling"
        cp["coscheduling"] = {"permit_waiting_timeout": args["permitWaitingTimeSeconds"],
                              "pod_group_backoff": args["podGroupBackoffSeconds"]}
    if objects.get("scheduling.volcano.sh/Queue"):
        conf = yaml.safe_load(values["volcano"]["custom"]["scheduler_config_override"])
        plugins = [p for tier in conf["tiers"] for p in tier["plugins"]]
        volcano: dict = {"actions": [a.strip() for a in conf["actions"].split(",")],
                         # deviceshare binds Volcano's vGPU resources, which the simulator models as HAMi's
                         "plugins": [p["name"] for p in plugins if p["name"] != "deviceshare"],
                         "queues": [volcano_queue(q) for q in objects["scheduling.volcano.sh/Queue"]]}
        factor = next((p["arguments"]["overcommit-factor"] for p in plugins if p["name"] == "overcommit"), None)
        if factor is not None:
            volcano["overcommit_factor"] = factor
        if any(p["name"] == "capacity" and p.get("enableHierarchy") for p in plugins):
            volcano["enable_hierarchy"] = True
        else:  # Volcano ignores spec.parent without the capacity plugin's hierarchy
            for q in volcano["queues"]:
                q.pop("parent", None)
        cp["scheduler"], cp["volcano"] = "volcano", volcano
    if objects.get("scheduling.run.ai/Queue"):
        cp["scheduler"] = "kai"
        cp["kai"] = {"queues": [kai_queue(q) for q in objects["scheduling.run.ai/Queue"]], "gpu_sharing": kai_sharing}
        runtime = next((q["spec"].get("reclaimMinRuntime") for q in objects["scheduling.run.ai/Queue"]), None)
        if runtime:
            cp["kai"]["min_guaranteed_runtime"] = runtime
    if objects.get("kueue.x-k8s.io/ClusterQueue"):
        cp["admission"] = "kueue"
        cp["kueue"] = kueue_section(objects.get("kueue.x-k8s.io/ClusterQueue", []), objects.get("kueue.x-k8s.io/LocalQueue", []),
                                    objects.get("kueue.x-k8s.io/ResourceFlavor", []), plan["pools"],
                                    objects.get("kueue.x-k8s.io/Cohort", []))
        manager = yaml.safe_load(values["kueue"]["managerConfig"]["controllerManagerConfigYaml"])
        ready = manager.get("waitForPodsReady")
        if ready:
            strategy = ready.get("requeuingStrategy", {})
            cp["kueue"]["wait_for_pods_ready"] = {
                "enable": True, "timeout": ready["timeout"], "block_admission": ready["blockAdmission"],
                "backoff_base": strategy["backoffBaseSeconds"], "backoff_max": strategy["backoffMaxSeconds"],
                "backoff_limit_count": strategy.get("backoffLimitCount")}
        cp["kueue"]["fair_sharing"] = "fairSharing" in manager
    return cp


def kueue_section(cluster_queues: list[dict], local_queues: list[dict], flavors: list[dict], pools: list[dict],
                  cohorts: list[dict] = ()) -> dict:
    """Kueue objects -> the scenario's kueue section; a flavor's nodeLabels select node groups."""
    flavor_groups: dict[str, list[str] | None] = {}
    topology = None
    for flavor in flavors:
        labels = (flavor.get("spec") or {}).get("nodeLabels") or {}
        topology = topology or (flavor.get("spec") or {}).get("topologyName")
        chosen = [p["pool"] for p in pools if all(p["labels"].get(k) == v for k, v in labels.items())]
        flavor_groups[flavor["metadata"]["name"]] = sorted(chosen) if labels else None
    queues = [kueue_cluster_queue(cq, flavor_groups) for cq in cluster_queues]
    names = {q["name"] for q in queues}
    local = {}
    for lq in local_queues:
        _ns, name, cq = kueue_local_queue(lq)
        if name != cq or name not in names:
            local[name] = cq
    out = {"cluster_queues": queues, "local_queues": local, "topology_aware_scheduling": bool(topology)}
    # the cohort tree: only Cohorts with a parent, a quota or a weight say more than their name
    tree = [c for c in (kueue_cohort(obj, {}) for obj in cohorts) if set(c) - {"name", "flavors"} or c["flavors"]]
    if tree:
        out["cohorts"] = tree
    if topology:
        out["topology_name"] = topology
    return out


# ----------------------------------------------------------------------------- every object
# Kinds read_export turns back into the scenario (pools, data planes, queues), by API group/kind.
CLUSTER_KINDS = {"v1/ConfigMap", "v1/Namespace", "kueue.x-k8s.io/ResourceFlavor", "kueue.x-k8s.io/ClusterQueue",
                 "kueue.x-k8s.io/LocalQueue", "kueue.x-k8s.io/Cohort", "kueue.x-k8s.io/WorkloadPriorityClass",
                 "kueue.x-k8s.io/Topology", "scheduling.volcano.sh/Queue", "scheduling.run.ai/Queue",
                 "resource.k8s.io/DeviceClass", "resource.k8s.io/ResourceClaimTemplate",
                 "scheduling.k8s.io/Workload", "scheduling.k8s.io/PodGroup"}
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


def _pod_templates(obj: dict) -> list[tuple[int, dict]] | None:
    """(pods, pod template) per pod set of a workload object; None for a kind with no pods."""
    spec = obj.get("spec") or {}
    kind = obj["kind"]
    if kind in ("Deployment", "StatefulSet"):
        return [(int(spec.get("replicas", 1)), spec.get("template") or {})]
    if kind == "Job" and obj.get("apiVersion", "").startswith("batch.volcano.sh/"):  # Volcano's Job: its tasks
        return [(int(task.get("replicas", 1)), task.get("template") or {}) for task in spec.get("tasks") or []]
    if kind == "Job":
        return [(int(spec.get("parallelism", 1)), spec.get("template") or {})]
    if kind == "JobSet":
        return [(int(rj.get("replicas", 1)) * int(rj["template"]["spec"].get("parallelism", 1)), rj["template"]["spec"]["template"])
                for rj in spec.get("replicatedJobs") or []]
    if kind == "PyTorchJob":
        return [(int(r.get("replicas", 1)), r.get("template") or {}) for r in (spec.get("pytorchReplicaSpecs") or {}).values()]
    if kind == "LeaderWorkerSet":
        lwt = spec.get("leaderWorkerTemplate") or {}
        size, replicas = int(lwt.get("size", 1)), int(spec.get("replicas", 1))
        worker = lwt.get("workerTemplate") or {}
        if lwt.get("leaderTemplate"):
            return [(replicas, lwt["leaderTemplate"]), (replicas * (size - 1), worker)]
        return [(replicas * size, worker)]
    if kind in ("RayJob", "RayService"):
        cluster = spec.get("rayClusterSpec" if kind == "RayJob" else "rayClusterConfig") or {}
        sets = [(1, (cluster.get("headGroupSpec") or {}).get("template") or {})]
        sets += [(int(g.get("replicas", 1)) * int(g.get("numOfHosts", 1)), g.get("template") or {})
                 for g in cluster.get("workerGroupSpecs") or []]
        return sets
    if kind == "InferenceService":  # the predictor inlines its pod spec (KServe Standard mode)
        predictor = dict(spec.get("predictor") or {})
        pods = int(predictor.pop("minReplicas", 1))
        predictor.pop("maxReplicas", None)
        meta = {k: predictor.pop(k) for k in ("labels", "annotations") if k in predictor}
        return [(pods, {"metadata": meta, "spec": predictor})]
    if kind == "DynamoGraphDeployment":  # v1beta1: each component's podTemplate, replicas x nodes (the Frontend's too)
        return [(int(c.get("replicas", 1)) * int((c.get("multinode") or {}).get("nodeCount", 1)), c.get("podTemplate") or {})
                for c in spec.get("components") or []]
    if kind == "AppWrapper":
        sets = []
        for component in spec.get("components") or []:
            sets += _pod_templates(component.get("template") or {}) or []
        return sets
    return None


def read_workload(obj: dict) -> dict:
    """A workload object as the cluster sees it: pods, per-pod requests, scheduler, queue."""
    meta = obj.get("metadata") or {}
    sets = _pod_templates(obj) or []
    pods, requests, schedulers, queues = 0, [], set(), set()
    if (meta.get("labels") or {}).get(QUEUE_LABEL):
        queues.add(meta["labels"][QUEUE_LABEL])
    for count, template in sets:
        pods += count
        pod_spec = template.get("spec") or {}
        tmeta = template.get("metadata") or {}
        schedulers.add(pod_spec.get("schedulerName", "default-scheduler"))
        for key in ("kai.scheduler/queue", QUEUE_LABEL):  # Kueue's pod integration reads a pod's own label
            if (tmeta.get("labels") or {}).get(key):
                queues.add(tmeta["labels"][key])
        if (tmeta.get("annotations") or {}).get("scheduling.volcano.sh/queue-name"):
            queues.add(tmeta["annotations"]["scheduling.volcano.sh/queue-name"])
        for container in pod_spec.get("containers") or []:
            resources = container.get("resources") or {}
            requests.append({**(resources.get("requests") or {}), **(resources.get("limits") or {}),
                             **({"claims": len(resources["claims"])} if resources.get("claims") else {}),
                             **({"gpu-fraction": tmeta["annotations"]["gpu-fraction"]}
                                if (tmeta.get("annotations") or {}).get("gpu-fraction") else {})})
    return {"kind": obj["kind"], "name": meta.get("name"), "namespace": meta.get("namespace", "default"), "pods": pods,
            "requests": requests, "schedulers": sorted(schedulers), "queues": sorted(queues)}


def read_objects(export: Export) -> dict:
    """Every object of the export read: {"workloads": [...], "read": {kind: count}, "unread": [why]}.

    Cluster objects are what read_export turns into the scenario; workload objects are read into
    their pods and requests; anything else is listed as unread with the reason."""
    out: dict = {"workloads": [], "read": {}, "unread": []}
    for obj in export.objects():
        key = f"{obj.get('apiVersion', '').split('/')[0]}/{obj.get('kind')}"
        name = (obj.get("metadata") or {}).get("name")
        if key in CLUSTER_KINDS:
            out["read"][obj["kind"]] = out["read"].get(obj["kind"], 0) + 1
            continue
        if _pod_templates(obj) is None:
            out["unread"].append(f"{obj.get('apiVersion')} {obj.get('kind')} {name}: no reader for this kind")
            continue
        try:
            workload = read_workload(obj)
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            out["unread"].append(f"{obj.get('kind')} {name}: {exc}")
            continue
        if not workload["pods"] or not any(workload["requests"]):
            out["unread"].append(f"{obj.get('kind')} {name}: no pod asks for a device")
            continue
        out["workloads"].append(workload)
        out["read"][obj["kind"]] = out["read"].get(obj["kind"], 0) + 1
    return out


def workload_mismatches(export: Export, scenario: Scenario) -> list[str]:
    """Each exported workload against the scenario workload it stands for: namespace (tenant),
    queue and the number of pods it runs; one line per difference."""
    specs = {w.name: w for w in scenario.workloads}
    tenants = {x.name: x for x in scenario.tenant_list()}
    cp = scenario.stack.control_plane
    queued = cp.admission == "kueue" or cp.scheduler in ("volcano", "kai")
    problems = []
    for w in read_objects(export)["workloads"]:
        spec = specs.get(w["name"])
        if spec is None:
            problems.append(f"{w['kind']} {w['name']}: no scenario workload of that name")
            continue
        where = f"{w['kind']} {w['namespace']}/{w['name']}"
        if w["namespace"] != spec.tenant:
            problems.append(f"{where}: namespace {w['namespace']!r}, the tenant is {spec.tenant!r}")
        queue = tenants[spec.tenant].queue_name
        if queued and w["queues"] != [queue]:
            problems.append(f"{where}: queue {w['queues']}, the tenant submits to {queue!r}")
        if hasattr(spec, "replicas"):
            if w["pods"] % spec.replicas:
                problems.append(f"{where}: {w['pods']} pods for {spec.replicas} replicas")
        else:
            workers = spec.workers if isinstance(spec.workers, int) else max(spec.workers.values)
            if w["pods"] != workers:
                problems.append(f"{where}: {w['pods']} pods for {workers} workers")
    return problems
