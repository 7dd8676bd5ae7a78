"""One object of a cluster snapshot (kubectl JSON), reduced to what the import reads (issue 37.6).

Held as parsed JSON, a pod pruned to the fields the import reads is still ten small dicts, about
2.4 KiB: 150,000 of them took ~350 MiB. As a record a GPU pod is a few hundred bytes, and its
request, host request, owner and queue names are shared with every pod that asks the same. The
records are made while a file is parsed (placement.common.parsing.load_json_stream calls
`node_item` / `pod_item` / `queue_object` on each item before reading the next), so the trees never
pile up; cluster_import's readers make them from dicts when handed parsed documents instead.

`Kept` counts the bytes the records of one upload hold (each distinct string once) and refuses past
its limit: with the parser's bound on one object's size, that bounds an upload's memory.
"""

from __future__ import annotations

import sys
import time
from typing import NamedTuple

from placement.deploy import targets as t
from placement.deploy.quantity import parse_quantity
from placement.deploy.queues import ObjectInvalid

ACTIVE_PHASES = ("Pending", "Running")
# Objects that own GPU pods and may carry the queue label (kubectl get jobs,jobsets,... -A -o json), in the
# pods or the queues file: (API group, kind).
OWNER_KINDS = {("batch", "Job"), ("jobset.x-k8s.io", "JobSet"), ("ray.io", "RayJob"), ("ray.io", "RayCluster"),
               ("ray.io", "RayService"), ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"), ("apps", "Deployment"),
               ("apps", "StatefulSet"), ("apps", "ReplicaSet"), ("kubeflow.org", "PyTorchJob"), ("kubeflow.org", "MPIJob"),
               ("batch.volcano.sh", "Job")}
QUEUE_KINDS = {("kueue.x-k8s.io", "ClusterQueue"), ("kueue.x-k8s.io", "LocalQueue"), ("kueue.x-k8s.io", "ResourceFlavor"),
               ("scheduling.volcano.sh", "Queue"), ("scheduling.run.ai", "Queue")}
# Pod label -> the kind of object it names (when that object is not in the snapshot).
OWNER_LABELS = (("jobset.sigs.k8s.io/jobset-name", "JobSet"), ("training.kubeflow.org/job-name", "PyTorchJob"),
                ("leaderworkerset.sigs.k8s.io/name", "LeaderWorkerSet"), ("volcano.sh/job-name", "VolcanoJob"),
                ("ray.io/cluster", "RayCluster"), ("job-name", "Job"), ("batch.kubernetes.io/job-name", "Job"))
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
VOLCANO_QUEUE = "scheduling.volcano.sh/queue-name"
KAI_QUEUE = "kai.scheduler/queue"
LWS_GROUP_INDEX = "leaderworkerset.sigs.k8s.io/group-index"
# The pod labels the owner chain reads past the pod's own owner (owner_chain in cluster_import).
CHAIN_LABELS = ("pod-template-hash", "leaderworkerset.sigs.k8s.io/name", "jobset.sigs.k8s.io/jobset-name",
                "ray.io/originated-from-crd", "ray.io/originated-from-cr-name", LWS_GROUP_INDEX)
_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


# --- the budget ---------------------------------------------------------------------------------

class TooMuchKept(ValueError):
    """What one upload keeps passed the limit of its Kept."""


class ReadTooLong(ValueError):
    """Reading one upload passed the seconds of its Kept."""


_SLOT = 48  # a table entry: hash, key and value pointers, its share of the index and the spare room


def _size(value) -> int:
    """Bytes of a shared value, strings left out (Kept.text counts each once)."""
    if isinstance(value, str):
        return 0
    if isinstance(value, tuple):
        return sys.getsizeof(value) + sum(_size(v) for v in value)
    return sys.getsizeof(value)


class Kept:
    """The records one upload keeps, in bytes, each distinct string and shared value counted once;
    `limit` None counts without refusing (documents handed over already parsed). With `seconds`,
    reading the upload is refused once it has taken that long (checked as each record is kept)."""

    def __init__(self, limit: int | None = None, seconds: float | None = None):
        self.limit, self.bytes, self.seconds = limit, 0, seconds
        self._deadline = None if seconds is None else time.monotonic() + seconds
        self._strings: dict[str, str] = {}
        self._shared: dict = {}

    def add(self, size: int) -> None:
        self.bytes += size
        if self._deadline is not None and time.monotonic() > self._deadline:
            raise ReadTooLong(f"reading it took longer than {self.seconds:g} s")
        if self.limit is not None and self.bytes > self.limit:
            raise TooMuchKept(f"the names, labels and requests the import keeps from it pass {self.limit // 2**20} MiB")

    def text(self, value):
        """The one copy of a string every record shares."""
        if not isinstance(value, str):
            return value
        kept = self._strings.get(value)
        if kept is None:
            kept = self._strings[value] = value
            self.add(sys.getsizeof(value) + _SLOT)
        return kept

    def shared(self, value):
        """The one instance of an equal hashable value (a request, a host request, an owner)."""
        kept = self._shared.get(value)
        if kept is None:
            kept = self._shared[value] = value
            self.add(_size(value) + _SLOT)
        return kept

    def tree(self, value):
        """A JSON tree kept whole (a queue object, a node's labels), its strings shared, its size counted."""
        if isinstance(value, dict):
            out = {self.text(k): self.tree(v) for k, v in value.items()}
        elif isinstance(value, list):
            out = [self.tree(v) for v in value]
        elif isinstance(value, str):
            return self.text(value)
        else:
            out = value
        self.add(sys.getsizeof(out) + 8)  # and its pointer in the container
        return out


# --- reading one object -------------------------------------------------------------------------

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
    for n, ref in enumerate(refs or []):
        for key in ("apiVersion", "kind", "name"):
            if ref.get(key) is not None and not isinstance(ref[key], str):
                return f"metadata.ownerReferences[{n}].{key}: expected a string, got {type(ref[key]).__name__}"
    return None


def group_kind(obj: dict) -> tuple[str, str]:
    return str(obj.get("apiVersion", "")).split("/")[0] if "/" in str(obj.get("apiVersion", "")) else "", obj.get("kind", "")


class PodRequest(NamedTuple):
    gpus: int = 0
    mig_profile: str | None = None
    memory_mib: float | None = None
    cores: int | None = None
    fraction: float | None = None
    dra: bool = False


def pod_request(pod: dict) -> PodRequest | None:
    """The pod's GPU request (largest container), None for a pod that asks for no GPU."""
    spec = pod.get("spec") or {}
    gpus, mig_profile, memory_mib, cores, fraction, dra = 0, None, None, None, None, False
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
                gpus += int(amount)
            elif key.startswith("nvidia.com/mig-"):
                mig_profile = key[len("nvidia.com/mig-"):]
                gpus += int(amount)
            elif key == "nvidia.com/gpumem":
                memory_mib = amount
            elif key == "nvidia.com/gpucores":
                cores = int(amount)
        if resources.get("claims"):
            found, dra = True, True
    asked_fraction = ((pod.get("metadata") or {}).get("annotations") or {}).get("gpu-fraction")
    if asked_fraction is not None:
        try:
            fraction = float(asked_fraction)
        except ValueError:
            raise ObjectInvalid("metadata.annotations.gpu-fraction", f"{asked_fraction!r} is not a number") from None
        found, gpus = True, max(gpus, 1)
    if not found:
        return None
    # A HAMi pod that names memory only still takes one vGPU.
    return PodRequest(max(gpus, 1), mig_profile, memory_mib, cores, fraction, dra)


def host_request(pod: dict) -> tuple[float, float]:
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


def parent(meta: dict) -> tuple[str, str] | None:
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


def queues_on(meta: dict) -> dict[str, str]:
    labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
    out = {}
    if labels.get(QUEUE_LABEL):
        out["kueue"] = labels[QUEUE_LABEL]
    if annotations.get(VOLCANO_QUEUE):
        out["volcano"] = annotations[VOLCANO_QUEUE]
    if labels.get(KAI_QUEUE):
        out["kai"] = labels[KAI_QUEUE]
    return out


# --- the records --------------------------------------------------------------------------------

def _identity(obj: dict, kept: Kept) -> tuple[str | None, str | None, str | None]:
    """(kind, namespace, name) when they are strings, each kept once."""
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    return tuple(kept.text(v) if isinstance(v, str) else None
                 for v in (obj.get("kind"), meta.get("namespace"), meta.get("name")))


def _shared_pairs(mapping: dict, kept: Kept) -> tuple | None:
    return kept.shared(tuple((kept.text(k), kept.text(v)) for k, v in mapping.items())) if mapping else None


def _shared_parent(meta: dict, kept: Kept) -> tuple[str, str] | None:
    found = parent(meta)
    if found is None:
        return None
    kind, name = found
    return kept.shared((kept.text(kind), kept.text(name)))


class NodeItem:
    """A node: `problem` ("field: reason") when it cannot be read; `labels` None for a node without
    GPUs (counted, not read further); `hami` when HAMi's device plugin registered it."""

    __slots__ = ("kind", "namespace", "name", "problem", "labels", "hami", "gpu_capacity")

    def __init__(self, kind, namespace, name, problem=None, labels=None, hami=False, gpu_capacity=False):
        self.kind, self.namespace, self.name, self.problem = kind, namespace, name, problem
        self.labels, self.hami, self.gpu_capacity = labels, hami, gpu_capacity


class PodItem:
    """A pod: `problem` ("field: reason") when it cannot be read, `request` None when it is no GPU
    workload (asks for no GPU, or has finished); `labels` and `queues` are (key, value) pairs."""

    __slots__ = ("kind", "namespace", "name", "problem", "request", "host", "node", "priority", "parent",
                 "queues", "labels")

    def __init__(self, kind, namespace, name, problem=None, request=None, host=(0.0, 0.0), node=None, priority=0,
                 parent=None, queues=None, labels=None):
        self.kind, self.namespace, self.name, self.problem = kind, namespace, name, problem
        self.request, self.host, self.node, self.priority = request, host, node, priority
        self.parent, self.queues, self.labels = parent, queues, labels


class OwnerItem:
    """An object that owns pods (Job, JobSet, Deployment, ...): who owns it and the queues it names."""

    __slots__ = ("kind", "namespace", "name", "problem", "api_group", "parent", "queues")

    def __init__(self, kind, namespace, name, problem=None, api_group="", parent=None, queues=None):
        self.kind, self.namespace, self.name, self.problem = kind, namespace, name, problem
        self.api_group, self.parent, self.queues = api_group, parent, queues

    @property
    def index_kind(self) -> str:
        """The kind pods' ownerReferences and labels name it by (a Volcano Job is a VolcanoJob)."""
        return "VolcanoJob" if (self.api_group, self.kind) == ("batch.volcano.sh", "Job") else self.kind


RECORDS = (NodeItem, PodItem, OwnerItem)


def identity(obj) -> tuple[str | None, str | None, str | None]:
    """(kind, namespace, name) of a record or a parsed object, None where it has none (or not a string)."""
    if isinstance(obj, RECORDS):
        return obj.kind, obj.namespace, obj.name
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    meta = meta if isinstance(meta, dict) else {}
    kind = obj.get("kind") if isinstance(obj, dict) else None
    return tuple(v if isinstance(v, str) else None for v in (kind, meta.get("namespace"), meta.get("name")))


def _record(cls, obj: dict, kept: Kept, **fields):
    record = cls(*_identity(obj, kept), **fields)
    kept.add(sys.getsizeof(record) + 8)
    return record


def node_item(obj, kept: Kept) -> NodeItem:
    """A `kubectl get nodes -o json` item as cluster_import.read_nodes reads it."""
    if not isinstance(obj, dict):
        return _record(NodeItem, {}, kept, problem="kind: expected a v1 Node")
    if obj.get("kind", "Node") != "Node" or not str(obj.get("apiVersion", "v1")).startswith("v1"):
        return _record(NodeItem, obj, kept, problem="kind: expected a v1 Node")
    if problem := shape_problem(obj):
        return _record(NodeItem, obj, kept, problem=problem)
    meta = obj.get("metadata") or {}
    if not meta.get("name"):
        return _record(NodeItem, obj, kept, problem="metadata.name: missing")
    labels = meta.get("labels") or {}
    capacity = (obj.get("status") or {}).get("capacity") or {}
    gpu_capacity = any(k.startswith("nvidia.com/") for k in capacity)
    if t.GPU_PRODUCT not in labels and labels.get(t.GPU_PRESENT) != "true" and not gpu_capacity:
        return _record(NodeItem, obj, kept)  # CPU only: counted, its labels are never read
    hami = any(k.startswith("hami.io/node-nvidia") for k in meta.get("annotations") or {})
    return _record(NodeItem, obj, kept, labels=kept.tree(labels), hami=hami, gpu_capacity=gpu_capacity)


def owner_item(obj: dict, kept: Kept) -> OwnerItem:
    """An owner object (OWNER_KINDS) as the owner chain reads it."""
    api_group = kept.text(group_kind(obj)[0])
    if problem := shape_problem(obj):
        return _record(OwnerItem, obj, kept, problem=problem, api_group=api_group)
    meta = obj.get("metadata") or {}
    return _record(OwnerItem, obj, kept, api_group=api_group, parent=_shared_parent(meta, kept),
                   queues=_shared_pairs(queues_on(meta), kept))


def pod_item(obj, kept: Kept) -> PodItem | OwnerItem:
    """A `kubectl get pods -A -o json` item as cluster_import.read_pods reads it (an owner object
    listed with the pods as an OwnerItem)."""
    if isinstance(obj, dict) and group_kind(obj) in OWNER_KINDS:
        return owner_item(obj, kept)
    if not isinstance(obj, dict):
        return _record(PodItem, {}, kept, problem="kind: expected a v1 Pod")
    if obj.get("kind", "Pod") != "Pod" or not str(obj.get("apiVersion", "v1")).startswith("v1"):
        return _record(PodItem, obj, kept, problem="kind: expected a v1 Pod")
    if problem := shape_problem(obj):
        return _record(PodItem, obj, kept, problem=problem)
    meta = obj.get("metadata") or {}
    if not meta.get("name") or not meta.get("namespace"):
        return _record(PodItem, obj, kept, problem="metadata: a pod needs a name and a namespace (use kubectl get pods -A -o json)")
    if (obj.get("status") or {}).get("phase", "Pending") not in ACTIVE_PHASES:
        return _record(PodItem, obj, kept)  # finished: not a workload
    try:
        request = pod_request(obj)
        host = host_request(obj) if request is not None else (0.0, 0.0)
    except ObjectInvalid as exc:
        return _record(PodItem, obj, kept, problem=str(exc))
    if request is None:
        return _record(PodItem, obj, kept)
    spec = obj.get("spec") or {}
    priority = spec.get("priority") or 0
    if not isinstance(priority, (int, float)) or isinstance(priority, bool) or priority != int(priority):
        return _record(PodItem, obj, kept, problem=f"spec.priority: expected a whole number, got {priority!r:.40}")
    labels = meta.get("labels") or {}
    return _record(PodItem, obj, kept, request=kept.shared(request._replace(mig_profile=kept.text(request.mig_profile))),
                   host=kept.shared(host), node=kept.text(spec.get("nodeName")), priority=int(priority),
                   parent=_shared_parent(meta, kept), queues=_shared_pairs(queues_on(meta), kept),
                   labels=_shared_pairs({k: labels[k] for k in CHAIN_LABELS if k in labels}, kept))


def queue_object(obj, kept: Kept):
    """A queues-file item: a queue object kept whole but for what no reader reads (managedFields,
    the last-applied annotation, status), an owner object as an OwnerItem, anything else by its
    kind and name only (it is reported, never read)."""
    if not isinstance(obj, dict):
        return None  # reported as an object of no kind, whatever it held
    kind = group_kind(obj)
    if kind in OWNER_KINDS:
        return owner_item(obj, kept)
    meta = obj.get("metadata")
    if kind not in QUEUE_KINDS:
        meta = meta if isinstance(meta, dict) else {}
        return kept.tree({k: v for k, v in (("apiVersion", obj.get("apiVersion")), ("kind", obj.get("kind")),
                                            ("metadata", {k: meta[k] for k in ("name", "namespace")
                                                          if isinstance(meta.get(k), str)}))
                          if isinstance(v, (str, dict))})
    obj = {k: v for k, v in obj.items() if k != "status"}
    if isinstance(meta, dict):
        obj["metadata"] = meta = {k: v for k, v in meta.items() if k != "managedFields"}
        if isinstance(meta.get("annotations"), dict):
            meta["annotations"] = {k: v for k, v in meta["annotations"].items() if k != _LAST_APPLIED}
    return kept.tree(obj)
