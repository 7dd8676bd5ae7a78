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
from placement.deploy.quantity import parse_quantity
from placement.deploy.queues import ObjectInvalid, kai_queue, kueue_cluster_queue, kueue_local_queue, volcano_queue
from scheduler_core import mig as migmod
from scheduler_core.hardware import GPU_SPECS

PRODUCTS = {v.lower(): k for k, v in GFD_PRODUCTS.items()}
SHARING_STRATEGY = "nvidia.com/gpu.sharing-strategy"   # GFD: none | time-slicing | mps
GPU_REPLICAS = "nvidia.com/gpu.replicas"
ACTIVE_PHASES = ("Pending", "Running")
# Objects that own GPU pods and may carry the queue label (kubectl get jobs,jobsets,... -A -o json), in the
# pods or the queues file: (API group, kind).
OWNER_KINDS = {("batch", "Job"), ("jobset.x-k8s.io", "JobSet"), ("ray.io", "RayJob"), ("ray.io", "RayCluster"),
               ("ray.io", "RayService"), ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"), ("apps", "Deployment"),
               ("apps", "StatefulSet"), ("apps", "ReplicaSet"), ("kubeflow.org", "PyTorchJob"), ("kubeflow.org", "MPIJob"),
               ("batch.volcano.sh", "Job")}
# Pod label -> the kind of object it names (when that object is not in the snapshot).
OWNER_LABELS = (("jobset.sigs.k8s.io/jobset-name", "JobSet"), ("training.kubeflow.org/job-name", "PyTorchJob"),
                ("leaderworkerset.sigs.k8s.io/name", "LeaderWorkerSet"), ("volcano.sh/job-name", "VolcanoJob"),
                ("ray.io/cluster", "RayCluster"), ("job-name", "Job"), ("batch.kubernetes.io/job-name", "Job"))
SERVICE_KINDS = {"Deployment", "StatefulSet", "ReplicaSet", "LeaderWorkerSet", "RayService"}
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
VOLCANO_QUEUE = "scheduling.volcano.sh/queue-name"
KAI_QUEUE = "kai.scheduler/queue"
# A snapshot holds no traffic: services are imported with no requests and a loose SLO; set
# arrival_rate, service_time and slo in the scenario to study latency.
SERVICE_DEFAULTS = {"arrival_rate": 0.0, "service_time": {"mean": "50ms"}, "slo": {"p99": "1s"}}


class UnknownGpu(ValueError):
    """A GPU product the hardware model does not know: the node is left out and reported."""


class SnapshotInvalid(ValueError):
    def __init__(self, errors: list[str]):
        self.errors = errors
        super().__init__(f"{len(errors)} problem(s) in the cluster snapshot:\n" + "\n".join(f"  {e}" for e in errors))


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


# Fields whose JSON type kubectl always prints the same way; an object that lies about one is
# refused by name instead of failing deep in the reader.
_OBJECT_FIELDS = ("metadata", "metadata.labels", "metadata.annotations", "spec", "status",
                  "status.capacity", "status.allocatable")
_STRING_FIELDS = ("metadata.name", "metadata.namespace", "spec.nodeName", "status.phase", "kind", "apiVersion")
_STRING_MAPS = ("metadata.labels", "metadata.annotations")


def _field(obj: dict, path: str):
    for part in path.split("."):
        obj = obj.get(part) if isinstance(obj, dict) else None
    return obj


def shape_problem(obj: dict) -> str | None:
    """The first field whose JSON type is not the one Kubernetes prints, as 'field: expected ...'."""
    for path in _OBJECT_FIELDS:
        value = _field(obj, path)
        if value is not None and not isinstance(value, dict):
            return f"{path}: expected an object, got {type(value).__name__}"
    for path in _STRING_FIELDS:
        value = _field(obj, path)
        if value is not None and not isinstance(value, str):
            return f"{path}: expected a string, got {type(value).__name__}"
    for path in _STRING_MAPS:
        for key, value in (_field(obj, path) or {}).items():
            if not isinstance(value, str):
                return f"{path}.{key}: expected a string, got {type(value).__name__}"
    containers = _field(obj, "spec.containers")
    if containers is not None:
        if not isinstance(containers, list) or not all(isinstance(c, dict) for c in containers):
            return "spec.containers: expected a list of objects"
        for n, container in enumerate(containers):
            resources = container.get("resources")
            if resources is not None and not isinstance(resources, dict):
                return f"spec.containers[{n}].resources: expected an object, got {type(resources).__name__}"
            for part in ("requests", "limits"):
                value = (resources or {}).get(part)
                if value is not None and not isinstance(value, dict):
                    return f"spec.containers[{n}].resources.{part}: expected an object, got {type(value).__name__}"
    refs = _field(obj, "metadata.ownerReferences")
    if refs is not None and (not isinstance(refs, list) or not all(isinstance(r, dict) for r in refs)):
        return "metadata.ownerReferences: expected a list of objects"
    return None


def _where(source: str, index: int, obj) -> str:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    meta = meta if isinstance(meta, dict) else {}
    name, namespace = meta.get("name"), meta.get("namespace")
    name = name if isinstance(name, str) else None
    namespace = namespace if isinstance(namespace, str) else None
    kind = obj.get("kind", "object") if isinstance(obj, dict) else "object"
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


def _data_plane(labels: dict, annotations: dict, mig: list[dict]) -> dict:
    strategy = labels.get(t.MIG_STRATEGY)
    sharing = labels.get(SHARING_STRATEGY, "none")
    if labels.get(t.HAMI_NODE) == "on" or any(k.startswith("hami.io/node-nvidia") for k in annotations):
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
    for i, node in enumerate(_items(doc, source, errors)):
        where = _Where(source, i, node)
        if not isinstance(node, dict) or node.get("kind", "Node") != "Node" or not str(node.get("apiVersion", "v1")).startswith("v1"):
            errors.append(f"{where}: kind: expected a v1 Node")
            continue
        if problem := shape_problem(node):
            errors.append(f"{where}: {problem}")
            continue
        meta = node.get("metadata") or {}
        labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
        name = meta.get("name")
        if not name:
            errors.append(f"{where}: metadata.name: missing")
            continue
        capacity = (node.get("status") or {}).get("capacity") or {}
        gpu_capacity = any(k.startswith("nvidia.com/") for k in capacity)
        if t.GPU_PRODUCT not in labels and labels.get(t.GPU_PRESENT) != "true" and not gpu_capacity:
            cpu_only += 1
            continue
        try:
            if t.GPU_PRODUCT not in labels:
                raise ObjectInvalid(f"metadata.labels.{t.GPU_PRODUCT}", "missing on a GPU node (is GPU Feature Discovery running?)")
            model = _product(labels[t.GPU_PRODUCT])
            count = _int_label(labels, t.GPU_COUNT)
            mig, physical = _mig_from_labels(labels, model, count)
            if physical > 16:
                raise ObjectInvalid(f"metadata.labels.{t.GPU_COUNT}", f"{physical} GPUs per node (at most 16 modelled)")
            plane = _data_plane(labels, annotations, mig)
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


@dataclass
class _PodRequest:
    gpus: int = 0
    mig_profile: str | None = None
    memory_mib: float | None = None
    cores: int | None = None
    fraction: float | None = None
    dra: bool = False


def _pod_request(pod: dict) -> _PodRequest | None:
    """The pod's GPU request (largest container), None for a pod that asks for no GPU."""
    spec = pod.get("spec") or {}
    req = _PodRequest()
    found = False
    for container in spec.get("containers") or []:
        resources = container.get("resources") or {}
        asked = {**(resources.get("requests") or {}), **(resources.get("limits") or {})}
        for key, value in asked.items():
            if not key.startswith("nvidia.com/"):
                continue
            try:
                amount = parse_quantity(value)
            except ValueError:
                raise ObjectInvalid(f"spec.containers.{container.get('name')}.resources.{key}", f"{value!r} is not a quantity") from None
            found = True
            if key in ("nvidia.com/gpu", "nvidia.com/gpu.shared"):
                req.gpus += int(amount)
            elif key.startswith("nvidia.com/mig-"):
                req.mig_profile = key[len("nvidia.com/mig-"):]
                req.gpus += int(amount)
            elif key == "nvidia.com/gpumem":
                req.memory_mib = amount
            elif key == "nvidia.com/gpucores":
                req.cores = int(amount)
        if resources.get("claims"):
            found, req.dra = True, True
    fraction = ((pod.get("metadata") or {}).get("annotations") or {}).get("gpu-fraction")
    if fraction is not None:
        try:
            req.fraction = float(fraction)
        except ValueError:
            raise ObjectInvalid("metadata.annotations.gpu-fraction", f"{fraction!r} is not a number") from None
        found, req.gpus = True, max(req.gpus, 1)
    if not found:
        return None
    if req.gpus < 1:
        req.gpus = 1  # a HAMi pod that names memory only still takes one vGPU
    return req


def _group_kind(obj) -> tuple[str, str]:
    return str(obj.get("apiVersion", "")).split("/")[0] if "/" in str(obj.get("apiVersion", "")) else "", obj.get("kind", "")


def owner_index(items: list) -> dict[tuple[str, str, str], dict]:
    """(namespace, kind, name) -> owner object (Job, JobSet, RayJob, LWS, Deployment, ...)."""
    out = {}
    for obj in items:
        if isinstance(obj, dict) and _group_kind(obj) in OWNER_KINDS and not shape_problem(obj):
            meta = obj.get("metadata") or {}
            kind = "VolcanoJob" if _group_kind(obj) == ("batch.volcano.sh", "Job") else obj["kind"]
            if meta.get("name"):
                out[(meta.get("namespace") or "default", kind, meta["name"])] = obj
    return out


def _parent(meta: dict, namespace: str) -> tuple[str, str] | None:
    """The (kind, name) that controls an object: its controller ownerReference, else its labels."""
    labels = meta.get("labels") or {}
    refs = [r for r in meta.get("ownerReferences") or [] if r.get("name")]
    ref = next((r for r in refs if r.get("controller")), refs[0] if refs else None)
    if ref is not None:
        kind, name = ref.get("kind", ""), ref["name"]
        if kind == "Job" and str(ref.get("apiVersion", "")).startswith("batch.volcano.sh"):
            kind = "VolcanoJob"
        return kind, name
    if labels.get("ray.io/originated-from-cr-name") and labels.get("ray.io/originated-from-crd"):
        return labels["ray.io/originated-from-crd"], labels["ray.io/originated-from-cr-name"]
    for key, kind in OWNER_LABELS:
        if labels.get(key) and not (kind == "Job" and labels.get(key) == meta.get("name")):
            return kind, labels[key]
    return None


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


def owner_chain(pod: dict, index: dict) -> list[tuple[str, str, dict]]:
    """The pod's owners from the nearest up: (kind, name, metadata, {} when not in the snapshot)."""
    meta = pod.get("metadata") or {}
    labels = meta.get("labels") or {}
    namespace = meta.get("namespace") or "default"
    chain: list[tuple[str, str, dict]] = []
    parent = _parent(meta, namespace)
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
        owner_meta = (obj.get("metadata") or {}) if obj else {}
        chain.append((kind, name, owner_meta))
        parent = _parent(owner_meta, namespace) if obj else _above_from_labels(kind, labels)
    return chain


def _queues_on(meta: dict, spec: dict | None = None) -> dict[str, str]:
    labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
    out = {}
    if labels.get(QUEUE_LABEL):
        out["kueue"] = labels[QUEUE_LABEL]
    if annotations.get(VOLCANO_QUEUE):
        out["volcano"] = annotations[VOLCANO_QUEUE]
    if labels.get(KAI_QUEUE):
        out["kai"] = labels[KAI_QUEUE]
    return out


def _host_request(pod: dict) -> tuple[float, float]:
    """(CPU cores, host memory GiB) the pod requests (requests, else limits, summed over containers)."""
    cpu = memory = 0.0
    for container in (pod.get("spec") or {}).get("containers") or []:
        resources = container.get("resources") or {}
        asked = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
        for key, value in (("cpu", asked.get("cpu")), ("memory", asked.get("memory"))):
            if value is None:
                continue
            try:
                amount = parse_quantity(value)
            except ValueError:
                raise ObjectInvalid(f"spec.containers.{container.get('name')}.resources.{key}", f"{value!r} is not a quantity") from None
            if key == "cpu":
                cpu += amount
            else:
                memory += amount / 2**30
    return round(cpu, 3), round(memory, 3)


def read_pods(doc, node_group: dict[str, str], groups: dict[str, _Group], errors: list[str],
              source: str = "pods.json", owners_index: dict | None = None,
              left_out: dict[str, str] | None = None) -> tuple[list[dict], dict[str, dict[str, str]], int]:
    """(workloads, namespace -> {'kueue'|'volcano'|'kai': queue}, GPU pods read) from the active GPU pods.

    The queue is read from the pod or from the object that owns it (Kueue's queue-name sits on the
    Job, JobSet, RayJob, LeaderWorkerSet or Deployment); a workload is named after its top owner."""
    items = _items(doc, source, errors)
    index = dict(owners_index or {})
    index.update(owner_index(items))
    left_out = left_out or {}
    owners: dict[tuple[str, str], dict] = {}
    tenant_queue: dict[str, dict[str, str]] = {}
    pods_read = 0
    for i, pod in enumerate(items):
        where = _Where(source, i, pod)
        if isinstance(pod, dict) and _group_kind(pod) in OWNER_KINDS:
            continue  # an owner object listed with the pods (kubectl get pods,jobs,... -o json)
        if not isinstance(pod, dict) or pod.get("kind", "Pod") != "Pod" or not str(pod.get("apiVersion", "v1")).startswith("v1"):
            errors.append(f"{where}: kind: expected a v1 Pod")
            continue
        if problem := shape_problem(pod):
            errors.append(f"{where}: {problem}")
            continue
        meta = pod.get("metadata") or {}
        if not meta.get("name") or not meta.get("namespace"):
            errors.append(f"{where}: metadata: a pod needs a name and a namespace (use kubectl get pods -A -o json)")
            continue
        if (pod.get("status") or {}).get("phase", "Pending") not in ACTIVE_PHASES:
            continue
        try:
            request = _pod_request(pod)
            host = _host_request(pod) if request is not None else (0.0, 0.0)
        except ObjectInvalid as exc:
            errors.append(f"{where}: {exc}")
            continue
        if request is None:
            continue
        if problem := _too_many_gpus(request, groups):  # a bound, see _too_many_gpus
            errors.append(f"{where}: {problem}")
            continue
        node = (pod.get("spec") or {}).get("nodeName")
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
        namespace = meta["namespace"]
        chain = owner_chain(pod, index)
        queues = _queues_on(meta)
        for _kind, _name, owner_meta in chain:
            queues = {**_queues_on(owner_meta), **queues}
        for system, queue in queues.items():
            tenant_queue.setdefault(namespace, {}).setdefault(system, queue)
        top_kind, top_name = (chain[-1][0], chain[-1][1]) if chain else ("Pod", meta["name"])
        entry = owners.setdefault((namespace, top_name), {"kind": top_kind, "pods": [],
                                                          "priority": (pod.get("spec") or {}).get("priority") or 0})
        entry["pods"].append((request, group.name if group else None, host))
        entry.setdefault("groups", set()).add((meta.get("labels") or {}).get("leaderworkerset.sigs.k8s.io/group-index", "0"))
    workloads = []
    for (namespace, name), entry in owners.items():
        request, group_name, (cpu, host_gib) = entry["pods"][0]
        groups_used = {g for _, g, _h in entry["pods"]}
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
        common: dict = {"name": f"{namespace}-{name}"[:120], "tenant": namespace, "priority": int(entry["priority"]), "unit": unit}
        if cpu:
            common["cpu"] = cpu
        if host_gib:
            common["host_memory_gib"] = host_gib
        if len(groups_used) == 1 and group_name:
            common["node_group"] = group_name
        count = len(entry["pods"])
        if entry["kind"] in SERVICE_KINDS:
            # A MIG instance holds the model and its cache: the profile's memory, not a 16 GiB default.
            model = (memory_gib - 1.0) if profile_gib and not request.memory_mib else memory_gib
            # A LeaderWorkerSet replica is a group of pods (leader and workers) that serves as one.
            replicas = len(entry["groups"]) if entry["kind"] == "LeaderWorkerSet" else count
            workload = {"kind": "inference", **common, "replicas": replicas,
                        "gpus_per_replica": request.gpus * max(1, count // replicas),
                        "model_memory_gib": model or 16.0, **SERVICE_DEFAULTS}
        else:
            # A batch/v1 Job (or a bare pod) is independent pods, not a gang: batch with no gang minimum.
            batch = entry["kind"] in ("Job", "Pod") or count == 1
            workload = {"kind": "batch" if batch else "training", **common, "workers": count,
                        "gpus_per_worker": request.gpus, "duration": "horizon"}
            if batch and count > 1:
                workload["min_available"] = 0
            if memory_gib:
                workload["memory_gib"] = memory_gib
        workloads.append(workload)
    return _merge_identical_jobs(workloads), tenant_queue, pods_read


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


QUEUE_KINDS = {("kueue.x-k8s.io", "ClusterQueue"), ("kueue.x-k8s.io", "LocalQueue"), ("kueue.x-k8s.io", "ResourceFlavor"),
               ("scheduling.volcano.sh", "Queue"), ("scheduling.run.ai", "Queue")}


def read_queues(items: list, pools: list[dict], errors: list[str], source: str = "queues.json") -> dict:
    """Kueue ClusterQueues, LocalQueues (by namespace) and ResourceFlavors, Volcano Queues and KAI
    Queues -> control plane parts; owner objects listed with them are skipped here (read with the pods)."""
    kinds = defaultdict(list)
    for i, obj in enumerate(items):
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


def duplicate_names(doc, source: str) -> list[str]:
    """Two objects of one kind, namespace and name: Kubernetes never lists such a pair, and the
    second would silently replace the first. One message per duplicate, naming it."""
    items = doc.get("items") if isinstance(doc, dict) else doc
    seen: dict[tuple, int] = {}
    problems = []
    for i, obj in enumerate(items if isinstance(items, list) else []):
        meta = obj.get("metadata") if isinstance(obj, dict) else None
        name = meta.get("name") if isinstance(meta, dict) else None
        if not isinstance(name, str):
            continue  # the shape checks name it
        namespace = meta.get("namespace") if isinstance(meta.get("namespace"), str) else ""
        kind = obj.get("kind") if isinstance(obj.get("kind"), str) else "object"
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

    errors = [p for doc, source in ((nodes, "nodes.json"), (pods, "pods.json"), (queues, "queues.json"))
              for p in duplicate_names(doc, source)]
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
