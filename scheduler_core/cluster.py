"""Runtime hardware and the device handoff (L4): nodes, GPUs, device contexts.

A :class:`DeviceContext` is the unit that holds tenants and shares compute
and memory among them: a whole GPU (MIG off) or one MIG instance.  What the
node *advertises* to the scheduler (extended resources, facts §6.1: integer
counts) is derived from its contexts and the node's data plane:

* whole GPU  -> ``nvidia.com/gpu``, one unit per context;
* MIG        -> per the device plugin's strategy (§1.5): ``none`` advertises
  MIG-enabled GPUs as plain ``nvidia.com/gpu`` (pods get a device CUDA cannot
  use), ``single`` advertises instances as ``nvidia.com/gpu`` when every GPU
  is MIG-enabled with one profile (else nothing: MIG-INVALID), ``mixed``
  advertises ``nvidia.com/mig-<profile>``;
* time-slicing / MPS -> ``replicas`` units per context under the same name
  (``.shared`` with renameByDefault), handed out with no accounting of which
  GPU is busier (§2.1);
* HAMi -> ``deviceSplitCount`` vGPU slots per GPU plus memory and core
  accounting, chosen by the HAMi scheduler extender (§3);
* KAI fractions -> whole GPUs plus scheduler-side fraction accounting (§6.5);
* DRA -> devices (whole GPUs and MIG instances) published in ResourceSlices,
  allocated to claims by the scheduler itself (§6.2).

The scheduler only sees ``free`` counts (and, for HAMi/KAI/DRA, the
per-device accounting those schedulers keep); the kubelet's ``Allocate``
picks concrete contexts and fails with UnexpectedAdmissionError when the
device plugin is not registered.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Iterable

from scheduler_core import dra as dramod
from scheduler_core import mig as migmod
from scheduler_core.hami import CardUsage, card_memory, check_type, check_uuid, card_order_key, card_score, node_score
from scheduler_core.hardware import MIB_PER_GIB, GpuSpec

if TYPE_CHECKING:  # pragma: no cover
    from scheduler_core.scenario import DataPlane

GPU = "nvidia.com/gpu"
# "No bound" on a pod count (a node without maxPods, devices for a pod that asks for none): above any maxPods.
UNBOUNDED_PODS = 1 << 30


@dataclass(frozen=True)
class DeviceRequest:
    """What one pod asks of the node, after the mechanism's translation.

    ``kind`` says which accounting applies: ``count`` (integer extended
    resource: whole GPUs, MIG instances, time-slicing/MPS replicas), ``hami``
    (slots + memory + cores), ``fraction`` (KAI), ``dra`` (device claim).
    """

    kind: str
    resource: str
    count: int = 1
    memory_mib: float = 0.0
    cores: int = 0
    fraction: float = 0.0
    profile: str | None = None
    mem_percentage: int = 0  # HAMi gpumem-percentage (memory_mib 0): each card's memory x pct / 100
    cpu: float = 0.0  # host CPU cores per pod (0: not requested)
    host_gib: float = 0.0  # host memory per pod, GiB
    card_filter: tuple[tuple[str, str], ...] = ()  # HAMi's use/nouse-gputype and -gpuuuid annotations
    device_class: str | None = None  # DRA deviceClassName (None: the model's memory-sized device, below)
    selectors: tuple[str, ...] = ()  # DRA request CEL selectors
    all_devices: bool = False  # DRA allocationMode All
    shared_claim: str | None = None  # DRA ResourceClaim shared by the pods naming it

    def __hash__(self) -> int:
        """The dataclass's own hash (of the fields' tuple), computed once: every bucket key of the policies'
        queues holds a request, and a tuple rehashes its items at every dictionary lookup."""
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash((self.kind, self.resource, self.count, self.memory_mib, self.cores, self.fraction, self.profile,
                      self.mem_percentage, self.cpu, self.host_gib, self.card_filter, self.device_class,
                      self.selectors, self.all_devices, self.shared_claim))
            self.__dict__["_hash"] = h
        return h

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_hash", None)  # string hashes differ between processes: never carry one over
        return state

    def quota_usage(self) -> dict[str, float]:
        """Per-pod quota consumption, keyed by resource name (Kueue's accounting per flavor)."""
        if self.kind == "hami":
            out = {GPU: float(self.count), "nvidia.com/gpumem": float(self.memory_mib)}
        elif self.kind == "fraction":
            out = {GPU: self.fraction}
        else:
            out = {self.resource: float(self.count)}
        return self._with_host(out)

    @cached_property
    def share(self) -> dict[str, float]:
        """Per-pod usage in GPU-denominated queues (Volcano, KAI): GPU units plus host cpu/memory.

        Computed once per request (pods share it: never mutate the returned vector)."""
        return self._with_host({GPU: self.gpu_units()})

    def _with_host(self, out: dict[str, float]) -> dict[str, float]:
        if self.cpu:
            out["cpu"] = self.cpu
        if self.host_gib:
            out["memory"] = self.host_gib
        return out

    @property
    def best_effort(self) -> bool:
        """A pod that requests nothing (no device, no cpu, no memory): QoS BestEffort.  Only a node's pod
        count bounds where it goes; Volcano leaves it to the backfill action."""
        return self.kind == "count" and self.count == 0 and not self.cpu and not self.host_gib

    def gpu_units(self) -> float:
        """Size in GPU-equivalents for GPU-denominated policies (Volcano/KAI queues, fairness).

        A MIG instance counts as its compute slices / 7 - a one-dimensional stand-in for the
        per-resource accounting those schedulers do on ``nvidia.com/mig-<profile>``.
        """
        if self.kind == "fraction":
            return self.fraction
        if self.profile is not None and self.profile[0].isdigit():
            return self.count * int(self.profile.split("g", 1)[0]) / migmod.COMPUTE_SLICES
        return float(self.count)

    def describe(self) -> str:
        host = (f" + {self.cpu:g} CPU" if self.cpu else "") + (f" + {self.host_gib:g} GiB host" if self.host_gib else "")
        return self._describe_device() + host

    def _describe_device(self) -> str:
        if self.kind == "count" and self.count == 0:
            return "no GPU"
        if self.kind == "hami":
            mem = f"{self.memory_mib / MIB_PER_GIB:.0f} GiB" if self.memory_mib or not self.mem_percentage \
                else f"{self.mem_percentage}% memory"
            return f"{self.count}x vGPU ({mem}, {self.cores}% cores)"
        if self.kind == "fraction":
            return f"gpu-fraction {self.fraction:g}"
        if self.kind == "dra" and self.device_class is not None:
            n = "all" if self.all_devices else f"{self.count}x"
            shared = f", shared claim {self.shared_claim}" if self.shared_claim else ""
            return f"{n} DRA {self.device_class}{shared}"
        if self.kind == "dra":
            return f"{self.count}x DRA {self.profile or 'gpu'} (>= {self.memory_mib / MIB_PER_GIB:.0f} GiB)"
        return f"{self.count}x {self.resource}"


class DeviceContext:
    """A whole GPU or a MIG instance: where tenants share compute and memory."""

    __slots__ = ("node", "gpu", "placement", "capacity", "bandwidth", "memory_mib", "resource", "isolation", "slots",
                 "used_slots", "mem_declared", "cores_used", "fraction_used", "tenants", "oom_event",
                 "unusable", "index", "equiv_per_slot", "published")

    def __init__(self, node: "Node", gpu: "Gpu", placement: migmod.MigPlacement | None, index: int) -> None:
        self.node = node
        self.gpu = gpu
        self.placement = placement
        self.index = index
        if placement is None:
            self.capacity = 1.0
            self.bandwidth = 1.0
            self.memory_mib = float(gpu.spec.memory_mib)
        else:
            self.capacity = placement.profile.sm_fraction
            # A GPU instance owns its memory slices' controllers and L2: n/8 of HBM bandwidth (§7.2).
            self.bandwidth = placement.profile.memory_slices / 8.0
            self.memory_mib = float(placement.profile.memory_mib)
        self.resource = GPU
        self.isolation = "exclusive"
        self.slots = 1
        self.used_slots = 0
        self.mem_declared = 0.0
        self.cores_used = 0
        self.fraction_used = 0.0
        self.tenants: list = []  # pods (workloads.Pod): the device layer keeps them, never looks inside
        self.oom_event = None
        self.unusable = False  # MIG-enabled GPU handed out whole under strategy none
        self.equiv_per_slot = 1.0
        self.published = None  # the DRA device this context is published as (dra_device, cached)

    @property
    def name(self) -> str:
        where = f"{self.node.name}/gpu{self.gpu.index}"
        return where if self.placement is None else f"{where}/{self.placement}"

    @property
    def free_slots(self) -> int:
        return self.slots - self.used_slots


class Gpu:
    __slots__ = ("node", "index", "spec", "numa", "layout", "mig_enabled", "contexts", "healthy", "partitionable")

    def __init__(self, node: "Node", index: int, spec: GpuSpec, numa: int) -> None:
        self.node = node
        self.index = index
        self.spec = spec
        self.numa = numa
        self.layout: migmod.MigLayout | None = None
        self.mig_enabled = False
        self.contexts: list[DeviceContext] = []
        self.healthy = True
        self.partitionable = False  # DRA partitionable devices: the whole GPU and its MIG partitions published

    def idle(self) -> bool:
        return all(not c.tenants for c in self.contexts)


class Node:
    """One Kubernetes node with its GPUs and its view as the scheduler sees it."""

    def set_nics(self, count: int, gbs: float | None, numa: str | int) -> None:
        """Place ``count`` NICs: per NUMA node (or all on socket ``numa``), each NIC local to an even
        share of that socket's GPUs (same PCIe switch), as in DGX-class servers."""
        self.nic_gbs = gbs
        sockets = list(range(self.numa_nodes)) if numa == "spread" else [int(numa)]
        per_socket = [count * (k + 1) // len(sockets) - count * k // len(sockets) for k in range(len(sockets))]
        local: list[frozenset[int]] = []
        for sock, m in zip(sockets, per_socket):
            gpus = [g.index for g in self.gpus if g.numa == sock]
            for t in range(m):
                if not gpus:
                    local.append(frozenset())
                elif m <= len(gpus):
                    local.append(frozenset(gpus[t * len(gpus) // m:(t + 1) * len(gpus) // m]))
                else:
                    local.append(frozenset([gpus[t * len(gpus) // m]]))
        self.nic_gpus = local

    def __init__(self, name: str, group: str, index: int, rack: str, spec: GpuSpec, gpus: int, link: str,
                 numa_nodes: int, data_plane: "DataPlane", mig_layouts: dict[int, migmod.MigLayout | None]) -> None:
        self.name = name
        self.group = group
        self.index = index
        self.rack = rack
        self.spec = spec
        self.link = link
        self.numa_nodes = numa_nodes
        self.data_plane = data_plane
        self.mechanism = data_plane.mechanism
        per_numa = max(1, math.ceil(gpus / numa_nodes))
        self.gpus = [Gpu(self, i, spec, min(i // per_numa, numa_nodes - 1)) for i in range(gpus)]
        for i, g in enumerate(self.gpus):
            if i in mig_layouts:
                g.mig_enabled = True
                g.layout = mig_layouts[i]
        self.nic_gpus: list[frozenset[int]] = [frozenset([i]) for i in range(gpus)]  # GPUs local to each NIC
        self.nic_gbs: float | None = None  # GB/s per NIC; None: the inter_node_bandwidth_gbs parameter
        self.up = True
        self.plugin_ready = True
        self.cordoned = False
        self.reconfiguring = False
        self.pods: list = []  # pods bound here (opaque to the device layer)
        self.cpu_free: float | None = None  # host CPU cores / memory GiB left (None: not modelled)
        self.host_gib_free: float | None = None
        self.max_pods: int | None = None  # kubelet maxPods, the node's allocatable pods (None: not modelled)
        self.advertised: dict[str, int] = {}
        self.free: dict[str, int] = {}
        self.inventory_warnings: list[str] = []
        # DRA ResourceClaims shared by several pods: name -> [node, devices, consumers]. One dict for all the
        # nodes of a simulation (a claim allocated on one node is unavailable on the others).
        self.shared_claims: dict[str, list] = {}
        self.rebuild_contexts()

    # -- exposure ------------------------------------------------------------
    def rebuild_contexts(self, only_gpus: Iterable[int] | None = None) -> None:
        """Derive contexts and advertised resources from MIG layouts and the data plane.

        With ``only_gpus`` only those GPUs get new contexts (they must be idle:
        MIG reconfiguration); the other GPUs keep theirs and their tenants.
        """
        dp = self.data_plane
        mech = dp.mechanism
        strategy = dp.strategy
        self.inventory_warnings = []
        targets = set(range(len(self.gpus))) if only_gpus is None else set(only_gpus)
        for g in self.gpus:
            if g.index not in targets:
                continue
            g.contexts = []
            g.partitionable = (mech == "dra" and dp.dra.partitionable_devices and g.spec.mig_capable
                               and not g.mig_enabled)
            if g.partitionable:  # the whole GPU, then every partition at every start it may take
                g.contexts.append(DeviceContext(self, g, None, 0))
                for prof in migmod.PROFILES[g.spec.mig_family].values():
                    for start in prof.allowed_starts:
                        g.contexts.append(DeviceContext(self, g, migmod.MigPlacement(start, prof), 0))
            elif g.mig_enabled and strategy != "none":
                for p in (g.layout.placements if g.layout else ()):
                    g.contexts.append(DeviceContext(self, g, p, 0))
            else:
                ctx = DeviceContext(self, g, None, 0)
                ctx.unusable = g.mig_enabled  # strategy none hands out a MIG-mode GPU as a whole device
                g.contexts.append(ctx)
        contexts = [c for g in self.gpus for c in g.contexts]
        for i, c in enumerate(contexts):
            c.index = i
        self.contexts = contexts

        single_ok = True
        if strategy == "single" and any(g.mig_enabled for g in self.gpus):
            profiles = {c.placement.profile.name for c in contexts if c.placement is not None}
            if not all(g.mig_enabled for g in self.gpus):
                single_ok = False
                self.inventory_warnings.append(
                    "MIG-INVALID: all devices on the node must be configured with the same migEnabled value")
            elif len(profiles) != 1 or any(not g.contexts for g in self.gpus):
                single_ok = False
                self.inventory_warnings.append("MIG-INVALID: single strategy needs one MIG profile on every GPU")
        rename = mech == "time-slicing" and dp.time_slicing.rename_by_default
        for c in contexts:
            c.resource = GPU
            c.isolation = "exclusive"
            c.slots = 1
            c.equiv_per_slot = 1.0
            if c.placement is not None:
                c.resource = GPU if strategy == "single" else c.placement.profile.resource_name
                c.equiv_per_slot = c.placement.profile.compute_slices / migmod.COMPUTE_SLICES
            if mech == "time-slicing":
                c.isolation = "timeslice"
                c.slots = dp.time_slicing.replicas
                if rename:
                    c.resource += ".shared"
                c.equiv_per_slot /= c.slots
            elif mech == "mps":
                c.isolation = "mps"
                c.slots = dp.mps.replicas
                c.equiv_per_slot /= c.slots
            elif mech == "hami":
                c.isolation = "hami"
                c.slots = dp.hami.device_split_count
                c.resource = "hami/" + GPU
            elif mech == "kai-fraction":
                c.isolation = "kai"
            elif mech == "dra":
                c.resource = "dra/" + ("gpu" if c.placement is None else c.placement.profile.name)
            if strategy == "single" and not single_ok:
                c.slots = 0
        self.advertised = {}
        for c in contexts:
            if c.slots:
                self.advertised[c.resource] = self.advertised.get(c.resource, 0) + (1 if mech == "dra" else c.slots)
        self.free = {}
        for c in contexts:
            if c.slots:
                used = (1 if c.tenants else 0) if mech == "dra" else c.used_slots
                self.free[c.resource] = self.free.get(c.resource, 0) + (1 if mech == "dra" else c.slots) - used

    def inventory(self) -> dict[str, int]:
        return dict(sorted(self.advertised.items()))

    # -- scheduler view ------------------------------------------------------
    def fit_count(self, req: DeviceRequest) -> int:
        """How many pods with ``req`` the scheduler believes fit here now (devices, host CPU/memory, then the
        node's pod count)."""
        k = self.device_fit_count(req)
        if self.max_pods is not None:
            k = min(k, self.pods_room())
        if k and (req.cpu or req.host_gib):
            if req.cpu and self.cpu_free is not None:
                k = min(k, int(self.cpu_free / req.cpu + 1e-9))
            if req.host_gib and self.host_gib_free is not None:
                k = min(k, int(self.host_gib_free / req.host_gib + 1e-9))
        return k

    def pods_room(self) -> int:
        """Pods the node still admits under its maxPods (unbounded when it has none)."""
        return UNBOUNDED_PODS if self.max_pods is None else max(0, self.max_pods - len(self.pods))

    def device_fit_count(self, req: DeviceRequest) -> int:
        """How many pods with ``req`` the node's devices hold now (host resources aside)."""
        if req.kind == "count" and req.count == 0:
            return UNBOUNDED_PODS  # a pod without a device: the devices never bound it
        if req.kind == "count":
            return self.free.get(req.resource, 0) // req.count
        if req.kind == "hami":
            return _hami_fit_count(self, req)
        if req.kind == "fraction":
            return _fraction_fit_count(self, req)
        if req.kind == "dra":
            if req.shared_claim is not None:
                held = self.shared_claims.get(req.shared_claim)
                if held is not None:
                    return SHARED_CONSUMERS if held[0] is self else 0
                return SHARED_CONSUMERS if _dra_pick(self, req) is not None else 0
            if req.all_devices:
                return 1 if _dra_pick(self, req) is not None else 0
            if any(g.partitionable for g in self.gpus):
                return _dra_partitioned_fit(self, req)
            return len(_dra_candidates(self, req)) // req.count
        return 0

    def free_fraction(self, req: DeviceRequest) -> float:
        """Share of the requested resource still free (NodeResourcesFit scoring input)."""
        if req.kind == "count":
            total = self.advertised.get(req.resource, 0)
            return self.free.get(req.resource, 0) / total if total else 0.0
        if req.kind == "hami":
            mem = sum(c.memory_mib for c in self.contexts)
            return 1.0 - sum(c.mem_declared for c in self.contexts) / mem if mem else 0.0
        if req.kind == "fraction":
            return 1.0 - sum(c.fraction_used for c in self.contexts) / max(1, len(self.contexts))
        free = sum(1 for c in self.contexts if not c.tenants)
        return free / max(1, len(self.contexts))

    # -- kubelet Allocate ----------------------------------------------------
    def choose_contexts(self, req: DeviceRequest, rng) -> list[DeviceContext] | None:
        """Pick concrete devices for one pod (device plugin / extender / DRA allocator)."""
        if req.kind == "count" and req.count == 0:
            return []  # no device to allocate
        if req.kind == "count":
            cands = [c for c in self.contexts if c.resource == req.resource and c.free_slots > 0]
            if sum(c.free_slots for c in cands) < req.count:
                return None
            if cands[0].isolation in ("timeslice", "mps"):
                # Replicas are handed out with no accounting of which GPU is busier (§2.1): a
                # seeded random draw over free replicas, so two replicas may land on one GPU.
                pool = [c for c in cands for _ in range(c.free_slots)]
                out = []
                for _ in range(req.count):
                    c = pool.pop(rng.randrange(len(pool)))
                    out.append(c)
                return out
            if req.count == 1:
                return [cands[0]]
            # GetPreferredAllocation: keep a multi-GPU pod inside one NUMA node when possible.
            by_numa: dict[int, list[DeviceContext]] = {}
            for c in cands:
                by_numa.setdefault(c.gpu.numa, []).append(c)
            fitting = [v for v in by_numa.values() if len(v) >= req.count]
            if fitting:
                best = min(fitting, key=lambda v: (len(v), v[0].index))
                return best[: req.count]
            cands.sort(key=lambda c: (-len(by_numa[c.gpu.numa]), c.index))
            return cands[: req.count]
        if req.kind == "hami":
            return _hami_choose(self, req)
        if req.kind == "fraction":
            return _fraction_choose(self, req)
        if req.kind == "dra":
            held = self.shared_claims.get(req.shared_claim) if req.shared_claim is not None else None
            if held is not None:
                return list(held[1]) if held[0] is self else None
            return _dra_pick(self, req)
        return None

    def commit(self, pod, req: DeviceRequest, contexts: list[DeviceContext]) -> None:
        if self.cpu_free is not None:
            self.cpu_free -= req.cpu
        if self.host_gib_free is not None:
            self.host_gib_free -= req.host_gib
        held = self.shared_claims.get(req.shared_claim) if req.shared_claim is not None else None
        if held is not None:  # one more consumer of an allocated claim: its devices, time-sliced among them
            held[2] += 1
            for c in contexts:
                c.isolation = "timeslice"
                if pod not in c.tenants:
                    c.tenants.append(pod)
            self.pods.append(pod)
            return
        if req.shared_claim is not None:
            self.shared_claims[req.shared_claim] = [self, list(contexts), 1]
        for c in contexts:
            if req.kind in ("count", "dra"):
                c.used_slots += 1
                self.free[c.resource] -= 1
                if c.isolation == "kai":
                    c.fraction_used += 1.0  # a whole GPU leaves no room for fractions
            elif req.kind == "hami":
                c.used_slots += 1
                c.mem_declared += hami_card_memory(c, req)
                c.cores_used += min(req.cores, 100)
            elif req.kind == "fraction":
                if c.used_slots == 0:
                    self.free[c.resource] -= 1  # no longer wholly free for nvidia.com/gpu requests
                c.used_slots += 1
                c.fraction_used += req.fraction
            if pod not in c.tenants:
                c.tenants.append(pod)
        self.pods.append(pod)

    def release(self, pod, req: DeviceRequest, contexts: list[DeviceContext]) -> None:
        if self.cpu_free is not None:
            self.cpu_free += req.cpu
        if self.host_gib_free is not None:
            self.host_gib_free += req.host_gib
        held = self.shared_claims.get(req.shared_claim) if req.shared_claim is not None else None
        if held is not None:
            held[2] -= 1
            if held[2] > 0:  # the claim stays allocated while it has consumers
                for c in contexts:
                    if pod in c.tenants:
                        c.tenants.remove(pod)
                    if held[2] == 1:
                        c.isolation = "exclusive"
                if pod in self.pods:
                    self.pods.remove(pod)
                return
            del self.shared_claims[req.shared_claim]
        for c in contexts:
            if req.kind in ("count", "dra"):
                c.used_slots -= 1
                self.free[c.resource] += 1
                if c.isolation == "kai":
                    c.fraction_used -= 1.0
            elif req.kind == "hami":
                c.used_slots -= 1
                c.mem_declared -= hami_card_memory(c, req)
                c.cores_used -= min(req.cores, 100)
            elif req.kind == "fraction":
                c.used_slots -= 1
                c.fraction_used -= req.fraction
                if c.used_slots == 0:
                    c.fraction_used = 0.0  # drop float residue
                    self.free[c.resource] += 1
            if pod in c.tenants:
                c.tenants.remove(pod)
        if pod in self.pods:
            self.pods.remove(pod)

    def gpu_equivalents(self, req: DeviceRequest, contexts: Iterable[DeviceContext]) -> float:
        """Allocated capacity in GPUs (MIG: g/7 of a GPU; replicas: 1/replicas; HAMi: larger of
        memory and core share; KAI: the fraction)."""
        held = self.shared_claims.get(req.shared_claim) if req.shared_claim is not None else None
        if held is not None and held[2] > 1:
            return 0.0  # a shared claim's devices count once, for the consumer that allocated it
        total = 0.0
        for c in contexts:
            if req.kind == "hami":
                share = max(hami_card_memory(c, req) / c.memory_mib, req.cores / 100.0)
                total += min(1.0, share)
            elif req.kind == "fraction":
                total += req.fraction
            else:
                total += c.equiv_per_slot
        return total


# --------------------------------------------------------------- HAMi fit rules
def topology_domain(node: Node, level: str) -> str:
    """The domain a required topology level (``node`` or ``rack``) puts ``node`` in."""
    return node.name if level == "node" else node.rack


def held_domain(wl, nodes: list[Node]) -> list[Node]:
    """``nodes`` narrowed to the domain a gang's bound pods hold when it requires a topology (``node`` or
    ``rack``): a required level binds the whole gang, so the pods still to come (past an elastic minimum,
    or replacing a lost one) may only join it. Unchanged without a requirement or a bound pod."""
    level = wl.topology_required
    if level is None or not wl.pods:
        return nodes
    held = {topology_domain(p.node, level) for p in wl.pods if p.node is not None}
    return [n for n in nodes if topology_domain(n, level) in held] if held else nodes


def hami_card_memory(c: DeviceContext, req: DeviceRequest) -> float:
    """MiB ``req`` books on card ``c``: its gpumem, or a percentage of the card's (scaled) memory."""
    return card_memory(c.memory_mib * c.node.data_plane.hami.device_memory_scaling, req.memory_mib,
                       req.mem_percentage)


def hami_card_type(c: DeviceContext) -> str:
    """The card type HAMi's device plugin registers: NVML's product name, ``NVIDIA <model>``."""
    return f"NVIDIA {c.gpu.spec.name}"


def hami_card_id(c: DeviceContext) -> str:
    """The card's id for ``use-gpuuuid``/``nouse-gpuuuid``: the model has no GPU UUIDs, so ``<node>/gpu<i>``."""
    return f"{c.node.name}/gpu{c.gpu.index}"


def hami_card_reason(c: DeviceContext, req: DeviceRequest, scaling: float) -> str | None:
    """Why HAMi's fit rejects this card for ``req`` (its reason names), or None if it fits.

    The fit rules of pkg/device/nvidia/device.go (§3), in their order.
    """
    cores = min(req.cores, 100)  # Fit caps a core request at 100 ("core limit can't exceed 100")
    if not c.gpu.healthy:
        return "CardNotHealth"
    if req.card_filter:
        annotations = dict(req.card_filter)
        if not check_type(annotations, hami_card_type(c)):
            return "CardTypeMismatch"
        if not check_uuid(annotations, hami_card_id(c)):
            return "CardUuidMismatch"
    if c.slots <= c.used_slots:
        return "CardTimeSlicingExhausted"
    total = c.memory_mib * scaling
    if total - c.mem_declared < card_memory(total, req.memory_mib, req.mem_percentage):
        return "CardInsufficientMemory"
    if 100 - c.cores_used < cores:
        return "CardInsufficientCore"
    if cores >= 100 and c.used_slots > 0:
        return "ExclusiveDeviceAllocateConflict"
    if req.cores == 0 and c.cores_used >= 100:
        return "CardComputeUnitsExhausted"
    return None


def _hami_gpu_ok(c: DeviceContext, req: DeviceRequest, scaling: float) -> bool:
    return hami_card_reason(c, req, scaling) is None


def _hami_fit_count(node: Node, req: DeviceRequest) -> int:
    scaling = node.data_plane.hami.device_memory_scaling
    ok = sum(1 for c in node.contexts if _hami_gpu_ok(c, req, scaling))
    return ok // req.count


def hami_card_usage(c: DeviceContext) -> CardUsage:
    """Card ``c`` as HAMi's scorer reads it (its memory scaled by ``deviceMemoryScaling``)."""
    return CardUsage(c.used_slots, c.slots, c.mem_declared, c.memory_mib * c.node.data_plane.hami.device_memory_scaling,
                     c.cores_used, 100, c.gpu.numa)


def hami_node_score(node: Node, req: DeviceRequest, extra_pods: int = 0) -> float:
    """HAMi's node score (``ComputeDefaultScore``) with ``extra_pods`` more pods of ``req`` tentatively placed
    (a plan's earlier pods: each books ``req.count`` cards' slots, cores and memory)."""
    cards = [hami_card_usage(c) for c in node.contexts]
    if extra_pods and cards:
        k = extra_pods * req.count
        first = node.contexts[0]
        cards.append(CardUsage(k, 0, k * hami_card_memory(first, req), 0.0, k * min(req.cores, 100), 0))
    return node_score(cards)


def _hami_choose(node: Node, req: DeviceRequest) -> list[DeviceContext] | None:
    scaling = node.data_plane.hami.device_memory_scaling
    cands = [c for c in node.contexts if _hami_gpu_ok(c, req, scaling)]
    if len(cands) < req.count:
        return None
    policy = node.data_plane.hami.gpu_scheduler_policy
    one = [(req.cores, req.memory_mib, req.mem_percentage)]
    # HAMi sorts the cards (``DeviceUsageList.Less``: score, then NUMA node) and Fit takes them from the end;
    # among cards equal in both (an unstable sort upstream) the model takes the highest index first.
    cands.sort(key=lambda c: (card_order_key(card_score(hami_card_usage(c), one), c.gpu.numa, policy), c.index),
               reverse=True)
    return cands[: req.count]


# --------------------------------------------------------------- KAI fractions
def _fraction_fit_count(node: Node, req: DeviceRequest) -> int:
    return sum(int((1.0 - c.fraction_used + 1e-9) // req.fraction) for c in node.contexts
               if not c.unusable and c.fraction_used < 1.0 - 1e-9)


def _fraction_choose(node: Node, req: DeviceRequest) -> list[DeviceContext] | None:
    # KAI bin-packs fractions: the most used GPU that still fits.
    cands = [c for c in node.contexts if 1.0 - c.fraction_used + 1e-9 >= req.fraction]
    if not cands:
        return None
    cands.sort(key=lambda c: (-c.fraction_used, c.index))
    return [cands[0]]


# --------------------------------------------------------------------- DRA
# Pods a node can take for a shared claim (they add no devices): a bound no plan reaches.
SHARED_CONSUMERS = 1 << 20


def dra_device(c: DeviceContext) -> dramod.Device:
    """The device the NVIDIA DRA driver publishes for context ``c``: a whole GPU ``gpu-<i>`` of type ``gpu``
    or a MIG device of type ``mig`` with its ``profile``; ``productName`` as NVML names the board; capacity
    ``memory`` in bytes."""
    if c.published is None:
        g = c.gpu
        attrs: dict = {"type": "gpu" if c.placement is None else "mig", "productName": f"NVIDIA {g.spec.name}",
                       "index": g.index, "uuid": c.name}
        name = f"gpu-{g.index}"
        if c.placement is not None:
            attrs["profile"] = c.placement.profile.name
            name += f"-mig-{c.placement.profile.name}-{c.placement}"
        c.published = dramod.Device(name, attrs, {"memory": int(c.memory_mib) * 2**20})
    return c.published


def _dra_matching(node: Node, req: DeviceRequest) -> list[DeviceContext]:
    """The node's devices (ResourceSlice order) matching the request's DeviceClass and selectors."""
    classes = node.data_plane.dra.classes()
    exprs = classes[req.device_class] + req.selectors
    sels = [dramod.compile_selector(e, f"device class {req.device_class}") for e in exprs]
    return [c for c in node.contexts
            if not c.unusable and all(s(dra_device(c), dramod.NVIDIA_DRIVER) for s in sels)]


def _partition_blocked(c: DeviceContext, picked: list[DeviceContext] = ()) -> bool:
    """Is a partitionable GPU's device ``c`` out of reach: its counters taken by allocated devices (or by
    ``picked``, chosen for the same pod)? The whole GPU consumes every counter; a MIG partition its memory
    slices and compute, so it fits only where MIG could add it to the partitions in use."""
    g = c.gpu
    if not g.partitionable:
        return False
    taken = [x for x in g.contexts if x is not c and (x.tenants or x in picked)]
    if c.placement is None:
        return bool(taken)
    if any(x.placement is None for x in taken):
        return True
    layout = migmod.MigLayout(g.spec.mig_family, tuple(x.placement for x in taken))
    return c.placement.start not in layout.can_add(c.placement.profile)


def _first_free(cands: list[DeviceContext], count: int) -> list[DeviceContext] | None:
    """The first ``count`` of ``cands`` (slice order) that are free and fit beside each other."""
    out: list[DeviceContext] = []
    for c in cands:
        if not _partition_blocked(c, out):
            out.append(c)
            if len(out) == count:
                return out
    return None


def _dra_partitioned_fit(node: Node, req: DeviceRequest) -> int:
    """Pods of ``req`` the node holds when devices share counters: picked one pod after another."""
    cands = _dra_candidates(node, req)
    held: list[DeviceContext] = []
    pods = 0
    while True:
        out = list(held)
        for c in cands:
            if c not in out and not _partition_blocked(c, out):
                out.append(c)
                if len(out) - len(held) == req.count:
                    break
        if len(out) - len(held) < req.count:
            return pods
        held, pods = out, pods + 1


def _dra_pick(node: Node, req: DeviceRequest) -> list[DeviceContext] | None:
    """The devices the allocator gives one pod's claim here, or None: the first ``count`` free matching devices
    in slice order, or with allocationMode All every matching device (none may be taken)."""
    if req.device_class is None:
        return _first_free(_dra_candidates(node, req), req.count)
    matching = _dra_matching(node, req)
    if req.all_devices:
        if not matching or any(c.tenants for c in matching):
            return None
        return _first_free(matching, len(matching))
    return _first_free([c for c in matching if not c.tenants], req.count)


def _dra_candidates(node: Node, req: DeviceRequest) -> list[DeviceContext]:
    """Free devices matching the claim, in slice order (devices of a partitionable GPU may still block each
    other: :func:`_first_free`)."""
    if req.device_class is not None:
        return [c for c in _dra_matching(node, req) if not c.tenants and not _partition_blocked(c)]
    # The claim the export writes without unit.dra: a MIG profile asked (class mig.nvidia.com, profile selector),
    # else class gpu.nvidia.com with a memory selector: whole GPUs only, in ResourceSlice order.
    out = []
    for c in node.contexts:
        if c.tenants or c.unusable or _partition_blocked(c):
            continue
        if req.profile is not None:
            if c.placement is None or c.placement.profile.name != req.profile:
                continue
        elif c.placement is not None:
            continue
        out.append(c)
    return out


def memory_gib_to_mib(gib: float) -> float:
    return gib * MIB_PER_GIB
