"""A cluster snapshot -> a scenario document.

Input: ``kubectl get nodes -o json``, ``kubectl get pods -A -o json`` and optionally a list of
Kueue ClusterQueues / LocalQueues / ResourceFlavors or Volcano Queues. GPU nodes are grouped by
what GPU Feature Discovery says about them (nvidia.com/gpu.product, gpu.count, mig.config,
mig.strategy, sharing labels); running and pending GPU pods become workloads of their namespace
(the tenant) with the requests they make; queues and quotas become the stack's control plane.

Every problem is reported per object (file, index, name, field, reason) and nothing is returned
unless the whole snapshot is understood: callers save nothing partial.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from placement.deploy import targets as t
from placement.deploy.data_plane import GFD_PRODUCTS
from placement.deploy.queues import (
    ObjectInvalid,
    kai_queue,
    kueue_cluster_queue,
    kueue_local_queue,
    volcano_queue,
)
from placement.deploy.snapshot_objects import (
    LWS_GROUP_INDEX,
    OWNER_KINDS,
    QUEUE_KINDS,
    Kept,
    NodeItem,
    OwnerItem,
    PodItem,
    group_kind,
    identity,
    node_item,
    owner_item,
    pod_item,
    shape_problem,
)
from scheduler_core import mig as migmod
from scheduler_core.hardware import GPU_SPECS

PRODUCTS = {v.lower(): k for k, v in GFD_PRODUCTS.items()}
SHARING_STRATEGY = "nvidia.com/gpu.sharing-strategy"   # GFD: none | time-slicing | mps
GPU_REPLICAS = "nvidia.com/gpu.replicas"
SERVICE_KINDS = {"Deployment", "StatefulSet", "ReplicaSet", "LeaderWorkerSet", "RayService"}
# A snapshot holds no traffic: services are imported with no requests and a loose SLO; set
# arrival_rate, service_time and slo in the scenario to study latency.
SERVICE_DEFAULTS = {"arrival_rate": 0.0, "service_time": {"mean": "50ms"}, "slo": {"p99": "1s"}}


class UnknownGpu(ValueError):
    """A GPU product the hardware model does not know: the node is left out and reported."""


class Problems(list):
    """The problems found, the first MAX_KEPT of them as text (a file of 150,000 broken pods would
    otherwise hold 150,000 messages); `total` counts them all."""

    MAX_KEPT = 1000

    def __init__(self):
        super().__init__()
        self.total = 0

    def append(self, problem: str) -> None:
        self.total += 1
        if len(self) < self.MAX_KEPT:
            super().append(problem)


class SnapshotInvalid(ValueError):
    def __init__(self, errors: list[str]):
        self.errors = list(errors)
        self.total = max(getattr(errors, "total", 0), len(self.errors))  # problems found, kept as text or not
        super().__init__(f"{self.total} problem(s) in the cluster snapshot:\n" + "\n".join(f"  {e}" for e in self.errors))


@dataclass
class _Group:
    name: str
    gpu: str
    gpus_per_node: int
    mig: list[dict]
    data_plane: dict
    nodes: list[str] = field(default_factory=list)
    racks: set[str] = field(default_factory=set)
    labels: dict[str, str] | None = None  # the labels every node of the group carries (what flavors select)


def _items(doc, source: str, errors: list[str]) -> list:
    if isinstance(doc, dict) and isinstance(doc.get("items"), list):
        return doc["items"]
    if isinstance(doc, list):
        return doc
    if isinstance(doc, dict) and doc.get("kind") and doc.get("kind") != "List":
        return [doc]  # a single object, as `kubectl get <kind> <name> -o json` prints it
    errors.append(f"{source}: expected a Kubernetes List (kubectl get ... -o json), got {type(doc).__name__}")
    return []


def _where(source: str, index: int, obj) -> str:
    kind, namespace, name = identity(obj)
    kind = kind or "object"
    return f"{source}: items[{index}] ({kind} {namespace + '/' if namespace else ''}{name or '?'})"


class _Where:
    """An object's place in the snapshot, rendered only when there is an error to report."""

    __slots__ = ("source", "index", "obj")

    def __init__(self, source: str, index: int, obj):
        self.source, self.index, self.obj = source, index, obj

    def __str__(self) -> str:
        return _where(self.source, self.index, self.obj)


def _product(label: str) -> str:
    base = re.sub(r"-MIG-.*$", "", label)             # single strategy: <product>-MIG-<profile>
    base = re.sub(r"-SHARED$", "", base)               # shared replicas without renaming
    model = PRODUCTS.get(base.lower())
    if model is None:
        raise UnknownGpu(f"GPU product {label!r} is not modelled (the simulator models "
                         f"{', '.join(sorted(GFD_PRODUCTS.values()))})")
    return model


def _int_label(labels: dict, key: str) -> int:
    value = labels.get(key)
    if value is None:
        raise ObjectInvalid(f"metadata.labels.{key}", "missing (GPU Feature Discovery sets it on GPU nodes)")
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ObjectInvalid(f"metadata.labels.{key}", f"{value!r} is not a whole number") from None
    if number < 1:
        raise ObjectInvalid(f"metadata.labels.{key}", f"{number} GPUs")
    return number


def _mig_from_labels(labels: dict, model: str, count: int) -> tuple[list[dict], int]:
    """(scenario MIG settings, physical GPUs per node) from mig.config and GFD's MIG labels."""
    config = labels.get(t.MIG_CONFIG)
    strategy = labels.get(t.MIG_STRATEGY, "none")
    family = GPU_SPECS[model].mig_family
    if not config or config == "all-disabled":
        return [], count
    if config.startswith("all-"):
        try:
            names = migmod.label_profiles(family, config)
        except migmod.MigLayoutError as exc:
            raise ObjectInvalid(f"metadata.labels.{t.MIG_CONFIG}", str(exc)) from None
        per_gpu = len(names or []) or 1
        # Under the single strategy GFD counts MIG devices in gpu.count, not physical GPUs.
        physical = count // per_gpu if strategy == "single" and names else count
        if strategy == "single" and names and count % per_gpu:
            raise ObjectInvalid(f"metadata.labels.{t.GPU_COUNT}", f"{count} MIG devices is not a multiple of {per_gpu} per GPU ({config})")
        return [{"devices": "all", "layout": config}], physical
    # A custom mig-parted config: the mixed strategy's per-profile counts tell the layout.
    counts = {}
    for key, value in labels.items():
        match = re.fullmatch(r"nvidia\.com/mig-(.+)\.count", key)
        if match:
            counts[match.group(1)] = int(value)
    if strategy != "mixed" or not counts:
        raise ObjectInvalid(f"metadata.labels.{t.MIG_CONFIG}",
                            f"custom MIG config {config!r} needs the mixed strategy's nvidia.com/mig-<profile>.count labels to be read")
    per_gpu = []
    for profile, total in counts.items():
        if total % count:
            raise ObjectInvalid(f"metadata.labels.nvidia.com/mig-{profile}.count",
                                f"{total} instances do not spread evenly over {count} GPUs; give the node a uniform config")
        per_gpu += [profile] * (total // count)
    try:
        layout = migmod.create_any_order(family, per_gpu)
    except migmod.MigLayoutError as exc:
        raise ObjectInvalid(f"metadata.labels.{t.MIG_CONFIG}", str(exc)) from None
    return [{"devices": "all", "layout": [str(p) for p in layout.placements]}], count


def _data_plane(labels: dict, hami_registered: bool, mig: list[dict]) -> dict:
    strategy = labels.get(t.MIG_STRATEGY)
    sharing = labels.get(SHARING_STRATEGY, "none")
    if labels.get(t.HAMI_NODE) == "on" or hami_registered:
        return {"mechanism": "hami"}
    if sharing in ("time-slicing", "mps"):
        replicas = int(labels.get(GPU_REPLICAS, "2"))
        section = "time_slicing" if sharing == "time-slicing" else "mps"
        plane = {"mechanism": sharing, section: {"replicas": max(2, replicas)}}
        if strategy:
            plane["mig_strategy"] = strategy
        return plane
    if mig and mig[0]["layout"] != "all-disabled":
        return {"mechanism": "mig", "mig_strategy": strategy or "mixed"}
    return {"mechanism": "whole"}


def _group_name(model: str, gpus: int, mig: list[dict], plane: dict, taken: set[str]) -> str:
    parts = [model.lower(), f"{gpus}g"]
    if mig:
        layout = mig[0]["layout"]
        parts.append(layout if isinstance(layout, str) else "mig-custom")
    if plane["mechanism"] not in ("whole", "mig"):
        parts.append(plane["mechanism"])
    base = re.sub(r"[^a-z0-9]+", "-", "-".join(parts)).strip("-")[:50]
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    return name


MIG_CONFIG_STATE = "nvidia.com/mig.config.state"  # mig-manager: pending | rebooting | success | failed


def read_nodes(doc, errors: list[str], source: str = "nodes.json", left_out: dict[str, str] | None = None,
               reconfiguring: list[str] | None = None) -> tuple[list[_Group], dict[str, str], int]:
    """(GPU node groups, node name -> group name, CPU-only nodes skipped); ``left_out`` collects the
    GPU nodes whose model the simulator does not know (node name -> reason)."""
    groups: dict[tuple, _Group] = {}
    node_group: dict[str, str] = {}
    left_out = {} if left_out is None else left_out
    cpu_only = 0
    kept = Kept()
    for i, node in enumerate(_items(doc, source, errors)):
        node = node if isinstance(node, NodeItem) else node_item(node, kept)
        where = _Where(source, i, node)
        if node.problem:
            errors.append(f"{where}: {node.problem}")
            continue
        if node.labels is None:
            cpu_only += 1
            continue
        labels, name = node.labels, node.name
        try:
            if t.GPU_PRODUCT not in labels:
                raise ObjectInvalid(f"metadata.labels.{t.GPU_PRODUCT}", "missing on a GPU node (is GPU Feature Discovery running?)")
            model = _product(labels[t.GPU_PRODUCT])
            count = _int_label(labels, t.GPU_COUNT)
            mig, physical = _mig_from_labels(labels, model, count)
            if physical > 16:
                raise ObjectInvalid(f"metadata.labels.{t.GPU_COUNT}", f"{physical} GPUs per node (at most 16 modelled)")
            plane = _data_plane(labels, node.hami, mig)
        except UnknownGpu as exc:
            left_out[name] = str(exc)
            continue
        except ObjectInvalid as exc:
            errors.append(f"{where}: {exc}")
            continue
        state = labels.get(MIG_CONFIG_STATE)
        if reconfiguring is not None and mig and state not in (None, "success"):
            # mig-manager is applying mig.config: the node is imported with the layout being applied.
            reconfiguring.append(f"{name} ({labels.get(t.MIG_CONFIG)}, {MIG_CONFIG_STATE}={state})")
        key = (model, physical, repr(mig), repr(sorted(plane.items(), key=str)))
        group = groups.get(key)
        if group is None:
            group = groups[key] = _Group(_group_name(model, physical, mig, plane, {g.name for g in groups.values()}),
                                         model, physical, mig, plane)
        group.nodes.append(name)
        group.labels = dict(labels) if group.labels is None else {k: v for k, v in group.labels.items() if labels.get(k) == v}
        group.racks.add(labels.get(t.RACK_LABEL) or labels.get("topology.kubernetes.io/zone") or "")
        node_group[name] = group.name
    return list(groups.values()), node_group, cpu_only


def owner_index(items: list, kept: Kept | None = None) -> dict[tuple[str, str, str], OwnerItem]:
    """(namespace, kind, name) -> owner (Job, JobSet, RayJob, LWS, Deployment, ...)."""
    kept = kept or Kept()
    out = {}
    for obj in items:
        if isinstance(obj, dict) and group_kind(obj) in OWNER_KINDS:
            obj = owner_item(obj, kept)
        if isinstance(obj, OwnerItem) and not obj.problem and obj.name:
            out[(obj.namespace or "default", obj.index_kind, obj.name)] = obj
    return out


def _above_from_labels(kind: str, labels: dict) -> tuple[str, str] | None:
    """The owner above a ``kind`` that is not in the snapshot, as the pod's labels name it."""
    if kind == "StatefulSet" and labels.get("leaderworkerset.sigs.k8s.io/name"):
        return "LeaderWorkerSet", labels["leaderworkerset.sigs.k8s.io/name"]
    if kind == "Job" and labels.get("jobset.sigs.k8s.io/jobset-name"):
        return "JobSet", labels["jobset.sigs.k8s.io/jobset-name"]
    if kind == "RayCluster" and labels.get("ray.io/originated-from-crd") in ("RayJob", "RayService") \
            and labels.get("ray.io/originated-from-cr-name"):
        return labels["ray.io/originated-from-crd"], labels["ray.io/originated-from-cr-name"]
    return None


def owner_chain(pod: PodItem, index: dict) -> list[tuple[str, str, dict[str, str]]]:
    """The pod's owners from the nearest up: (kind, name, the queues it names; {} when not in the snapshot)."""
    labels = dict(pod.labels or ())
    namespace = pod.namespace or "default"
    chain: list[tuple[str, str, dict[str, str]]] = []
    parent = pod.parent
    while parent is not None and len(chain) < 5:  # Pod <- ReplicaSet <- Deployment, Pod <- Job <- JobSet, ...
        kind, name = parent
        obj = index.get((namespace, kind, name))
        if kind == "ReplicaSet" and obj is None:
            hash_ = labels.get("pod-template-hash")
            chain.append((kind, name, {}))
            # A Deployment's ReplicaSet is named <deployment>-<pod-template-hash>.
            parent = ("Deployment", name[: -len(hash_) - 1] if hash_ and name.endswith("-" + hash_)
                      else re.sub(r"-[a-z0-9]{5,10}$", "", name))
            continue
        chain.append((kind, name, dict(obj.queues or ()) if obj else {}))
        parent = obj.parent if obj else _above_from_labels(kind, labels)
    return chain


class _Owner:
    """The GPU pods of one top owner as its workload reads them: the first pod's request, node group,
    host request and priority, how many pods, whether all share the first one's node group, and a
    LeaderWorkerSet's replica groups (one small record per owner, not a list of its pods)."""

    __slots__ = ("kind", "priority", "request", "group", "host", "count", "one_group", "lws_groups")

    def __init__(self, kind: str, priority: int, request, group: str | None, host: tuple[float, float]):
        self.kind, self.priority, self.request, self.group, self.host = kind, priority, request, group, host
        self.count, self.one_group = 0, True
        self.lws_groups: set[str] | None = set() if kind == "LeaderWorkerSet" else None

    def add(self, group: str | None, lws_group: str) -> None:
        self.count += 1
        self.one_group = self.one_group and group == self.group
        if self.lws_groups is not None:
            self.lws_groups.add(lws_group)


def read_pods(doc, node_group: dict[str, str], groups: dict[str, _Group], errors: list[str],
              source: str = "pods.json", owners_index: dict | None = None,
              left_out: dict[str, str] | None = None) -> tuple[list[dict], dict[str, dict[str, str]], int]:
    """(workloads, namespace -> {'kueue'|'volcano'|'kai': queue}, GPU pods read) from the active GPU pods.

    The queue is read from the pod or from the object that owns it (Kueue's queue-name sits on the
    Job, JobSet, RayJob, LeaderWorkerSet or Deployment); a workload is named after its top owner."""
    items = _items(doc, source, errors)
    kept = Kept()
    index = dict(owners_index or {})
    index.update(owner_index(items, kept))
    left_out = left_out or {}
    owners: dict[tuple[str, str], _Owner] = {}
    tenant_queue: dict[str, dict[str, str]] = {}
    pods_read = 0
    for i, pod in enumerate(items):
        if isinstance(pod, OwnerItem) or isinstance(pod, dict) and group_kind(pod) in OWNER_KINDS:
            continue  # an owner object listed with the pods (kubectl get pods,jobs,... -o json)
        pod = pod if isinstance(pod, PodItem) else pod_item(pod, kept)
        where = _Where(source, i, pod)
        if pod.problem:
            errors.append(f"{where}: {pod.problem}")
            continue
        request = pod.request
        if request is None:
            continue  # no GPU asked, or finished
        if problem := _too_many_gpus(request, groups):  # a bound, see _too_many_gpus
            errors.append(f"{where}: {problem}")
            continue
        node = pod.node
        if node in left_out:
            continue  # on a node left out (a GPU model not modelled): reported with the node
        if node and node not in node_group:
            errors.append(f"{where}: spec.nodeName: {node!r} is not a GPU node of nodes.json")
            continue
        group = groups[node_group[node]] if node else None
        if request.mig_profile and group is not None:
            family = GPU_SPECS[group.gpu].mig_family
            if request.mig_profile.replace(".me", "+me") not in migmod.PROFILES[family]:
                errors.append(f"{where}: resources: nvidia.com/mig-{request.mig_profile} is not a MIG profile of {group.gpu}")
                continue
        pods_read += 1
        namespace = pod.namespace
        chain = owner_chain(pod, index)
        queues = dict(pod.queues or ())
        for _kind, _name, owner_queues in chain:
            queues = {**owner_queues, **queues}
        for system, queue in queues.items():
            tenant_queue.setdefault(namespace, {}).setdefault(system, queue)
        top_kind, top_name = (chain[-1][0], chain[-1][1]) if chain else ("Pod", pod.name)
        group_name = group.name if group else None
        entry = owners.get((namespace, top_name))
        if entry is None:
            entry = owners[(namespace, top_name)] = _Owner(top_kind, pod.priority, request, group_name, pod.host)
        entry.add(group_name, dict(pod.labels or ()).get(LWS_GROUP_INDEX, "0"))
    workloads = (_workload(namespace, name, entry, groups) for (namespace, name), entry in owners.items())
    return _merge_identical_jobs(workloads), tenant_queue, pods_read


def _workload(namespace: str, name: str, entry: _Owner, groups: dict[str, _Group]) -> dict:
    """The scenario workload of one top owner's pods."""
    request, group_name, (cpu, host_gib), count = entry.request, entry.group, entry.host, entry.count
    unit: dict = {}
    profile_gib = None
    if request.mig_profile:
        unit["mig_profile"] = request.mig_profile.replace(".me", "+me")
        family = GPU_SPECS[groups[group_name].gpu].mig_family if group_name else "a100-80gb"
        known = migmod.PROFILES[family].get(unit["mig_profile"])
        profile_gib = known.memory_mib / 1024 if known else None
    if request.cores is not None:
        unit["gpucores"] = max(0, min(100, request.cores))
    if request.fraction is not None and request.fraction < 1:
        unit["gpu_fraction"] = request.fraction
    memory_gib = request.memory_mib / 1024 if request.memory_mib else profile_gib
    common: dict = {"name": f"{namespace}-{name}"[:120], "tenant": namespace, "priority": entry.priority, "unit": unit}
    if cpu:
        common["cpu"] = cpu
    if host_gib:
        common["host_memory_gib"] = host_gib
    if entry.one_group and group_name:
        common["node_group"] = group_name
    if entry.kind in SERVICE_KINDS:
        # A MIG instance holds the model and its cache: the profile's memory, not a 16 GiB default.
        model = (memory_gib - 1.0) if profile_gib and not request.memory_mib else memory_gib
        # A LeaderWorkerSet replica is a group of pods (leader and workers) that serves as one.
        replicas = len(entry.lws_groups or ()) if entry.kind == "LeaderWorkerSet" else count
        workload = {"kind": "inference", **common, "replicas": replicas,
                    "gpus_per_replica": request.gpus * max(1, count // replicas),
                    "model_memory_gib": model or 16.0, **SERVICE_DEFAULTS}
    else:
        # A batch/v1 Job (or a bare pod) is independent pods, not a gang: batch with no gang minimum.
        batch = entry.kind in ("Job", "Pod") or count == 1
        workload = {"kind": "batch" if batch else "training", **common, "workers": count,
                    "gpus_per_worker": request.gpus, "duration": "horizon"}
        if batch and count > 1:
            workload["min_available"] = 0
        if memory_gib:
            workload["memory_gib"] = memory_gib
    return workload


def _too_many_gpus(request, groups: dict[str, _Group]) -> str | None:
    """A pod runs on one node: a whole-GPU request above the largest GPU node of the snapshot can
    never be placed (its run would "succeed" with the job never started)."""
    most = max((g.gpus_per_node for g in groups.values()), default=0)
    if request.mig_profile or request.gpus <= most:
        return None
    return (f"resources: nvidia.com/gpu: {request.gpus:,} GPUs; a pod runs on one node and the largest GPU node "
            f"of nodes.json has {most}")


def _merge_identical_jobs(workloads: list[dict]) -> list[dict]:
    """Jobs of one shape (tenant, pool, size, request, priority) become one entry with `count`: a
    5,000-node cluster runs tens of thousands of jobs, a scenario lists at most 2,000 entries."""
    merged: dict[str, dict] = {}
    out: list[dict] = []
    for workload in workloads:
        if workload["kind"] == "inference":
            out.append(workload)
            continue
        shape = repr(sorted((k, repr(v)) for k, v in workload.items() if k != "name"))
        if shape in merged:
            merged[shape]["count"] = merged[shape].get("count", 1) + 1
            continue
        merged[shape] = workload
        out.append(workload)
    return out


def read_queues(items: list, pools: list[dict], errors: list[str], source: str = "queues.json") -> dict:
    """Kueue ClusterQueues, LocalQueues (by namespace) and ResourceFlavors, Volcano Queues and KAI
    Queues -> control plane parts; owner objects listed with them are skipped here (read with the pods)."""
    kinds = defaultdict(list)
    for i, obj in enumerate(items):
        if isinstance(obj, OwnerItem):
            continue  # read with the pods
        kind = obj.get("kind") if isinstance(obj, dict) else None
        group = str(obj.get("apiVersion", "")).split("/")[0] if isinstance(obj, dict) else ""
        if (group, kind) in OWNER_KINDS:
            continue
        if (group, kind) not in QUEUE_KINDS:
            errors.append(f"{_where(source, i, obj)}: kind: expected a Kueue ClusterQueue, LocalQueue or ResourceFlavor, "
                          "a Volcano or KAI Queue, or an object that owns pods (Job, JobSet, RayJob, LeaderWorkerSet, "
                          "Deployment, ...)")
            continue
        if problem := shape_problem(obj):
            errors.append(f"{_where(source, i, obj)}: {problem}")
            continue
        kinds[f"{group}/{kind}"].append((i, obj))
    out: dict = {}
    flavor_groups: dict[str, list[str] | None] = {}
    for i, flavor in kinds["kueue.x-k8s.io/ResourceFlavor"]:
        labels = (flavor.get("spec") or {}).get("nodeLabels") or {}
        chosen = sorted(p["pool"] for p in pools if all(p["labels"].get(k) == v for k, v in labels.items()))
        if labels and not chosen:
            errors.append(f"{_where(source, i, flavor)}: spec.nodeLabels: select no GPU node of nodes.json")
        flavor_groups[flavor["metadata"]["name"]] = chosen if labels else None
    cluster_queues = []
    for i, obj in kinds["kueue.x-k8s.io/ClusterQueue"]:
        try:
            cluster_queues.append(kueue_cluster_queue(obj, flavor_groups))
        except ObjectInvalid as exc:
            errors.append(f"{_where(source, i, obj)}: {exc}")
    local: dict[tuple[str, str], str] = {}
    for i, obj in kinds["kueue.x-k8s.io/LocalQueue"]:
        try:
            namespace, name, cq = kueue_local_queue(obj)
        except ObjectInvalid as exc:
            errors.append(f"{_where(source, i, obj)}: {exc}")
            continue
        local[(namespace, name)] = cq
    if cluster_queues:
        out["kueue"] = {"cluster_queues": cluster_queues, "local_queues_by_namespace": local}
    for key, reader, section in (("scheduling.volcano.sh/Queue", volcano_queue, "volcano"),
                                 ("scheduling.run.ai/Queue", kai_queue, "kai")):
        queues = []
        for i, obj in kinds[key]:
            try:
                queues.append(reader(obj))
            except (ObjectInvalid, TypeError, ValueError) as exc:
                errors.append(f"{_where(source, i, obj)}: {exc}")
        if queues:
            out[section] = queues
    return out


def _kueue_tenant_queues(local: dict[tuple[str, str], str], tenant_queue: dict[str, dict[str, str]],
                         errors: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    """(scenario local_queues, tenant -> its LocalQueue name in the scenario).

    A LocalQueue lives in a namespace: a tenant's workloads name one of its own namespace. One name
    that points at different ClusterQueues in different namespaces becomes <name>-<namespace>."""
    targets: dict[str, set[str]] = defaultdict(set)
    for (_ns, name), cq in local.items():
        targets[name].add(cq)
    scenario_name = {key: (key[1] if len(targets[key[1]]) == 1 else f"{key[1]}-{key[0]}") for key in local}
    local_queues = {scenario_name[key]: cq for key, cq in local.items()}
    tenants = {}
    for namespace, queues in tenant_queue.items():
        name = queues.get("kueue")
        if name is None:
            continue
        if (namespace, name) not in local:
            errors.append(f"pods.json: namespace {namespace}: workloads name the LocalQueue {name!r}, which namespace "
                          f"{namespace} does not have (queues.json: "
                          f"{', '.join(sorted(f'{ns}/{n}' for ns, n in local)) or 'no LocalQueue'})")
            continue
        tenants[namespace] = scenario_name[(namespace, name)]
    return local_queues, tenants


def duplicate_names(doc, source: str) -> Problems:
    """Two objects of one kind, namespace and name: Kubernetes never lists such a pair, and the
    second would silently replace the first. One message per duplicate, naming it."""
    items = doc.get("items") if isinstance(doc, dict) else doc
    seen: dict[tuple, int] = {}
    problems = Problems()
    for i, obj in enumerate(items if isinstance(items, list) else []):
        kind, namespace, name = identity(obj)
        if name is None:
            continue  # the shape checks name it
        kind, namespace = kind or "object", namespace or ""
        key = (kind, namespace, name)
        if key in seen:
            label = f"{namespace}/{name}" if namespace else name
            problems.append(f"{source}: items[{i}]: metadata.name: duplicate {kind.lower()} name {label!r} "
                            f"(also items[{seen[key]}]); nothing is counted twice")
        else:
            seen[key] = i
    return problems


def cluster_scenario(nodes, pods, queues=None, *, name: str = "imported-cluster", horizon: str = "24h") -> dict:
    """The snapshot as a scenario document; SnapshotInvalid lists every problem."""
    from scheduler_core.scenario import ScenarioError, parse_scenario

    errors = Problems()
    for doc, source in ((nodes, "nodes.json"), (pods, "pods.json"), (queues, "queues.json")):
        for problem in duplicate_names(doc, source):
            errors.append(problem)
    if errors:
        raise SnapshotInvalid(errors)
    left_out: dict[str, str] = {}
    reconfiguring: list[str] = []
    groups, node_group, cpu_only = read_nodes(nodes, errors, left_out=left_out, reconfiguring=reconfiguring)
    if not groups and not errors:
        errors.append("nodes.json: no GPU node of a modelled GPU (no node carries nvidia.com/gpu.product or GPU capacity"
                      + (f"; left out: {'; '.join(f'{n}: {r}' for n, r in sorted(left_out.items()))}" if left_out else "") + ")")
    by_name = {g.name: g for g in groups}
    queue_items = _items(queues, "queues.json", errors) if queues is not None else []
    workloads, tenant_queue, pods_read = read_pods(pods, node_group, by_name, errors,
                                                   owners_index=owner_index(queue_items), left_out=left_out)
    pools = [{"pool": g.name, "labels": g.labels or {}} for g in groups]
    control = read_queues(queue_items, pools, errors)
    kueue_tenants: dict[str, str] = {}
    if "kueue" in control:
        local, kueue_tenants = _kueue_tenant_queues(control["kueue"].pop("local_queues_by_namespace"), tenant_queue, errors)
        control["kueue"]["local_queues"] = local
    if errors:
        raise SnapshotInvalid(errors)

    first = groups[0].data_plane
    stack: dict = {"name": f"{name} (as found)", "data_plane": first,
                   "node_group_data_plane": {g.name: g.data_plane for g in groups if g.data_plane != first},
                   "control_plane": {"scheduler": "kube-default"}}
    tenants = sorted({w["tenant"] for w in workloads})

    def queue_of(tenant: str) -> str | None:
        found = tenant_queue.get(tenant, {})
        if "kueue" in control and tenant in kueue_tenants:
            return kueue_tenants[tenant]
        return found.get("volcano") if "volcano" in control else found.get("kai") if "kai" in control else (
            found.get("kueue") or found.get("volcano") or found.get("kai"))

    tenant_docs = [{"name": x, **({"queue": queue_of(x)} if queue_of(x) else {})} for x in tenants]
    cp = stack["control_plane"]
    if "kueue" in control:
        cp["admission"], cp["kueue"] = "kueue", control["kueue"]
    if "volcano" in control:
        known = {q["name"] for q in control["volcano"]}
        extra = [{"name": q} for q in sorted({d.get("queue", d["name"]) for d in tenant_docs} - known) if q == "default"]
        cp["scheduler"], cp["volcano"] = "volcano", {"queues": control["volcano"] + extra}
    elif "kai" in control:
        cp["scheduler"], cp["kai"] = "kai", {"queues": control["kai"],
                                             "gpu_sharing": any(w["unit"].get("gpu_fraction") for w in workloads)}
    for w in workloads:
        if w.get("duration") == "horizon":
            w["duration"] = horizon  # running jobs hold their GPUs for the whole horizon: a snapshot has no end times
    document = {
        "name": name,
        "description": (f"Imported cluster snapshot: {sum(len(g.nodes) for g in groups)} GPU nodes in {len(groups)} groups "
                        f"({cpu_only} CPU-only nodes skipped), {pods_read} active GPU pods as {len(workloads)} workloads "
                        f"of {len(tenants)} tenants. Jobs hold their GPUs for the horizon and services carry no "
                        "traffic until arrival_rate, service_time and slo are set."
                        + (f" Left out, with their pods: {len(left_out)} node(s) of a GPU model the simulator does not "
                           f"model: {'; '.join(f'{n}: {r}' for n, r in sorted(left_out.items())[:20])}"
                           + (" ..." if len(left_out) > 20 else "") + "." if left_out else "")
                        + (f" Imported with the MIG layout being applied: {', '.join(reconfiguring[:20])}."
                           if reconfiguring else "")),
        "horizon": horizon,
        "pool": {"node_groups": [{"name": g.name, "count": len(g.nodes), "gpu": g.gpu, "gpus_per_node": g.gpus_per_node,
                                  "racks": max(1, min(len(g.nodes), len(g.racks))), **({"mig": g.mig} if g.mig else {})}
                                 for g in groups]},
        "stack": stack,
        "tenants": tenant_docs,
        "workloads": workloads,
    }
    try:
        parse_scenario(document, source="cluster snapshot")
    except ScenarioError as exc:
        raise SnapshotInvalid([f"scenario {loc}: {msg}" for loc, msg in exc.errors]) from None
    return document
