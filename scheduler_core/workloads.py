"""Runtime workloads and pods, and how scenario workload specs become them.

A scenario workload entry with ``count`` copies and an arrival process is
expanded into concrete :class:`Workload` objects with a seeded random stream
per entry (``random.Random`` seeded from the scenario seed and the entry
index), so adding an entry never changes the draws of another.
"""

from __future__ import annotations

import dataclasses
import math
import random
from typing import TYPE_CHECKING

from scheduler_core import hami as hamimod
from scheduler_core import mig as migmod
from scheduler_core.cluster import GPU, DeviceRequest
from scheduler_core.hardware import MIB_PER_GIB
from scheduler_core.scenario import (
    DataPlane,
    DurationDist,
    InferenceWorkload,
    IntChoice,
    NodeGroup,
    Scenario,
    TrainingWorkload,
)

if TYPE_CHECKING:  # pragma: no cover
    from scheduler_core.cluster import DeviceContext, Node


class Pod:
    """A bound pod: where it runs, how fast, how much memory it holds."""

    __slots__ = ("wl", "index", "node", "contexts", "state", "bound_at", "speed", "activity", "container_start",
                 "restarts", "need", "cap", "mem_base", "kv_init", "kv_growth", "kv_max", "mem_limit", "equiv",
                 "uid", "restart_event", "effective_share", "crash_reason", "offered", "backoff_step", "bw")

    def __init__(self, wl: "Workload", index: int, uid: int) -> None:
        self.wl = wl
        self.index = index
        self.uid = uid
        self.node: Node | None = None
        self.contexts: list[DeviceContext] = []
        self.state = "bound"  # bound (waiting for gang) | running | crashed | terminating
        self.bound_at = 0.0
        self.speed = 1.0
        self.activity = 0.0
        self.offered = 0.0  # busy share it would need at full speed (1 for a running trainer)
        self.container_start = 0.0
        self.restarts = 0
        self.backoff_step = 0  # CrashLoopBackOff exponent; the kubelet resets it after a long enough run
        self.need = wl.compute_fraction
        self.bw = wl.memory_bandwidth_fraction
        self.cap = 1.0
        spec = wl.spec
        if isinstance(spec, InferenceWorkload):
            self.mem_base = spec.model_memory_gib * MIB_PER_GIB
            self.kv_init = spec.kv_cache.initial_gib * MIB_PER_GIB
            self.kv_growth = spec.kv_cache.growth_gib_per_hour * MIB_PER_GIB / 3600.0
            self.kv_max = spec.kv_cache.max_gib * MIB_PER_GIB
        else:
            self.mem_base = spec.memory_gib * MIB_PER_GIB
            self.kv_init = self.kv_growth = self.kv_max = 0.0
        self.mem_limit: float | None = None
        self.equiv = 0.0
        self.restart_event = None
        self.effective_share = 0.0
        self.crash_reason = ""

    @property
    def name(self) -> str:
        return f"{self.wl.name}-{self.index}"

    def memory(self, t: float) -> float:
        """GPU memory (MiB) in use at time ``t``; KV cache grows linearly to its cap."""
        if self.state != "running" and self.state != "bound":
            return 0.0
        kv = self.kv_init + self.kv_growth * max(0.0, t - self.container_start)
        return self.mem_base + (kv if kv < self.kv_max else max(self.kv_max, self.kv_init))

    def memory_rate(self, t: float) -> float:
        """d memory / dt at ``t`` (MiB/s)."""
        if self.state not in ("running", "bound") or self.kv_growth <= 0:
            return 0.0
        kv = self.kv_init + self.kv_growth * max(0.0, t - self.container_start)
        return self.kv_growth if kv < self.kv_max else 0.0


class PodGroup:
    """A Volcano Job with several task roles: one gang over role workloads that share its lifecycle.

    Each role is a :class:`Workload` (pods ``<job>-<role>-<i>``, its own request); ``min_member`` is the
    PodGroup's minMember and each role's ``min_member`` its minTaskMember.  Volcano enforces the per-role
    minima only when minMember covers their sum (``JobInfo.CheckTaskReady``)."""

    def __init__(self, name: str, min_member: int) -> None:
        self.name = name
        self.min_member = min_member
        self.members: list[Workload] = []

    @property
    def leader(self) -> "Workload":
        return self.members[0]

    @property
    def task_minimums(self) -> bool:
        """Whether the roles' own minima apply (minMember >= their sum)."""
        return self.min_member >= sum(m.min_member for m in self.members)

    @property
    def pending(self) -> int:
        return sum(m.pending for m in self.members)

    @property
    def bound(self) -> int:
        return sum(len(m.pods) for m in self.members)

    @property
    def pods_total(self) -> int:
        return sum(m.pods_total for m in self.members)

    def floor(self) -> list[tuple["Workload", int]]:
        """Pods each role still needs before the gang may run: the roles' own minima (when they apply),
        then what minMember asks beyond them, from the first role on."""
        per = {m.uid: max(0, m.min_member - len(m.pods)) if self.task_minimums else 0 for m in self.members}
        extra = max(0, self.min_member - self.bound - sum(per.values()))
        for m in self.members:
            room = m.pending - per[m.uid]
            take = min(extra, max(0, room))
            per[m.uid] += take
            extra -= take
        return [(m, min(per[m.uid], m.pending)) for m in self.members]


FINAL_STATES = frozenset({"done", "failed", "stopped"})  # a workload in one of them never runs again


class Workload:
    """A job (gang of workers, or a single batch pod) or an inference service."""

    def __init__(self, uid: int, name: str, spec, kind: str, submit: float, pods_total: int,
                 min_member: int, request: DeviceRequest, duration: float, tenant: str, queue: str,
                 node_group: str | None, checkpoint_interval: float) -> None:
        self.uid = uid
        self.name = name
        self.spec = spec
        self.kind = kind  # training | batch | inference
        self.submit = submit
        self.created = submit - getattr(spec, "created_early", 0.0)  # creation can precede arrival
        self.priority = spec.priority
        # what kube-scheduler sees (activeQ order, PostFilter preemption): the pods' PriorityClass. Under Kueue
        # the priority is a WorkloadPriorityClass, which never reaches the pods (0; set by the simulation).
        self.pod_priority = spec.priority
        self.pods_total = pods_total
        self.min_member = min_member
        self.full_count = pods_total  # what the workload asks for; Kueue partial admission may run fewer
        self.full_min_member = min_member
        self.min_count = getattr(spec, "min_count", None)
        self.preemptable = getattr(spec, "preemptable", True)
        self.admit_count: int | None = None  # a partial count Kueue is considering
        self.admission_usage: tuple[int, dict] | None = None  # Kueue's cached quota usage (count, usage)
        self.request = request
        self.duration = duration
        self.tenant = tenant
        self.queue = queue
        self.node_group = node_group
        self.compute_fraction = spec.compute_fraction
        self.memory_bandwidth_fraction = getattr(spec, "memory_bandwidth_fraction", 0.0)
        self.topology_sensitivity = getattr(spec, "topology_sensitivity", 0.0)
        self.topology_required = getattr(getattr(spec, "topology", None), "required", None)
        self.topology_preferred = getattr(getattr(spec, "topology", None), "preferred", None)
        self.checkpoint_interval = checkpoint_interval
        # lifecycle
        self.state = "new"  # new | queued | admitted | running | done | failed | stopped
        self.pending = 0  # pods created and not yet bound
        self.pods: list[Pod] = []
        self.first_start: float | None = None  # first time the whole gang ran
        self.first_bind: float | None = None
        self.end: float | None = None
        self.admitted_at: float | None = None
        self.gang_complete = False
        # progress of jobs
        self.work_done = 0.0
        self.rate = 0.0
        self.progress_t = 0.0
        self.completion_event = None
        self.timeout_event = None
        self.topology_factor = 1.0
        self.worst_topology_factor = 1.0
        self.restarts = 0
        self.crash_backoff_step = 0  # the gang's CrashLoopBackOff exponent (kubelet, reset after a long run)
        self.failed_pods = 0  # pods the Job controller saw fail: its retry backoff exponent
        self.preemptions = 0
        self.admission_errors = 0
        self.requeues = 0
        self.backoff_until = 0.0
        self.enqueued_at = submit
        self.nominated_until = -1.0
        self.last_nodes: list[str] = []
        # quota bookkeeping for admission controllers
        self.admission_info: dict = {}
        self.seq = uid
        self.group: PodGroup | None = None  # a Volcano Job with several task roles: this workload is one role

    @property
    def finished(self) -> bool:
        """Done, failed or stopped: nothing of it is placed, run or retried any more."""
        return self.state in FINAL_STATES

    @property
    def gpus(self) -> float:
        """GPU units the whole workload asks for (quota/fairness accounting)."""
        return self.request.gpu_units() * self.full_count

    @property
    def bound(self) -> int:
        return len(self.pods)

    def shape(self) -> tuple:
        """Everything that decides whether the workload can be placed: equal shapes fail together."""
        return (self.request, self.node_group, self.topology_required)  # the request: every field counts


# --------------------------------------------------------------- expansion
def _draw_duration(spec, rng: random.Random) -> float:
    if not isinstance(spec, DurationDist):
        return float(spec)
    if spec.dist == "exponential":
        return rng.expovariate(1.0 / spec.mean) if spec.mean > 0 else 0.0
    if spec.dist == "lognormal":
        sigma2 = math.log(1.0 + spec.cv ** 2)
        mu = math.log(spec.mean) - sigma2 / 2.0
        return rng.lognormvariate(mu, math.sqrt(sigma2))
    if spec.dist == "uniform":
        return rng.uniform(spec.low, spec.high)
    return rng.choices(spec.values, weights=spec.weights)[0]


def _draw_int(spec, rng: random.Random) -> int:
    if isinstance(spec, IntChoice):
        return rng.choices(spec.values, weights=spec.weights)[0]
    return int(spec)


def arrival_times(arrival, count: int, rng: random.Random) -> list[float]:
    if arrival.every is not None:
        return [arrival.at + k * arrival.every for k in range(count)]
    if arrival.poisson_per_hour is not None:
        t = arrival.at
        out = []
        rate = arrival.poisson_per_hour / 3600.0
        for _ in range(count):
            t += rng.expovariate(rate)
            out.append(t)
        return out
    return [arrival.at] * count


def _mig_auto_profile(family: str, memory_mib: float, present: set[str]) -> str | None:
    """Smallest profile (no +me) whose memory holds ``memory_mib``; prefer profiles the pool has."""
    cands = [p for p in migmod.PROFILES[family].values() if not p.media_extensions and p.memory_mib >= memory_mib]
    cands.sort(key=lambda p: (p.memory_mib, p.compute_slices))
    for p in cands:
        if p.name in present:
            return p.name
    return cands[0].name if cands else None


def translate_request(spec, gpus_per_pod: int, declared_mib: float, dp: DataPlane, groups: list[NodeGroup],
                      present_profiles: set[str], scheduler: str = "kube-default") -> DeviceRequest:
    """Turn a workload's needs into the per-pod request its data plane understands, with its host CPU/memory.

    ``scheduler``: the stack's scheduler, which names the pods' schedulerName (HAMi's webhook).  A pod
    without GPUs asks for no device whatever the data plane."""
    if gpus_per_pod == 0:
        req = DeviceRequest("count", GPU, 0)
    else:
        req = _device_request(spec, gpus_per_pod, declared_mib, dp, groups, present_profiles, scheduler)
    cpu, host = getattr(spec, "cpu", 0.0), getattr(spec, "host_memory_gib", 0.0)
    return dataclasses.replace(req, cpu=cpu, host_gib=host) if (cpu or host) else req


def hami_limits(spec, gpus_per_pod: int, declared_mib: float) -> hamimod.HamiLimits:
    """The container's HAMi resources: ``unit.hami`` as written, else nvidia.com/gpu = the GPUs per
    pod, gpumem = the declared memory and gpucores = ``unit.gpucores`` when given."""
    h = spec.unit.hami
    if h is not None:
        return hamimod.HamiLimits(h.gpu, h.gpumem, h.gpumem_percentage, h.gpucores)
    return hamimod.HamiLimits(gpu=gpus_per_pod, gpumem=declared_mib, gpucores=spec.unit.gpucores)


def _device_request(spec, gpus_per_pod: int, declared_mib: float, dp: DataPlane, groups: list[NodeGroup],
                    present_profiles: set[str], scheduler: str = "kube-default") -> DeviceRequest:
    mech = dp.mechanism
    unit = spec.unit
    family = groups[0].spec.mig_family
    gpu_mem = groups[0].spec.memory_mib
    if mech == "dra":
        claim = unit.dra
        if claim is not None:
            every = claim.allocation_mode == "All"
            return DeviceRequest("dra", "dra", 1 if every else (claim.count or gpus_per_pod), memory_mib=declared_mib,
                                 device_class=claim.device_class, selectors=tuple(claim.selectors),
                                 all_devices=every, shared_claim=claim.resource_claim_name)
        if unit.whole_gpu:  # DeviceClass gpu.nvidia.com: whole GPUs only, never a MIG device
            return DeviceRequest("dra", "dra", gpus_per_pod, memory_mib=declared_mib, device_class="gpu.nvidia.com")
        return DeviceRequest("dra", "dra", gpus_per_pod, memory_mib=declared_mib,
                             profile=unit.mig_profile if present_profiles else None)
    # A MIG profile request only means something where the target nodes have MIG instances
    # (HAMi and KAI fractions share whole GPUs in this model).
    mig_here = (bool(present_profiles) and mech not in ("hami", "kai-fraction") and dp.strategy != "none"
                and not unit.whole_gpu)
    if mig_here and (unit.mig_profile is not None or dp.strategy == "mixed"):
        prof = unit.mig_profile or _mig_auto_profile(family, declared_mib, present_profiles)
        if prof is not None:
            res = migmod.profile(family, prof).resource_name if dp.strategy == "mixed" else GPU
            if mech == "time-slicing" and dp.time_slicing.rename_by_default:
                res += ".shared"
            return DeviceRequest("count", res, gpus_per_pod, profile=prof)
    if mech == "hami":
        hr = hamimod.admitted_request(hami_limits(spec, gpus_per_pod, declared_mib), dp.hami, scheduler)
        if hr is None:  # pragma: no cover - check_references refuses such a workload
            raise ValueError(f"{spec.name}: the container asks no nvidia.com/gpu")
        return DeviceRequest("hami", "hami/" + GPU, hr.nums, memory_mib=hr.memory_mib, cores=hr.cores,
                             mem_percentage=hr.mem_percentage, card_filter=tuple(sorted(unit.annotations.items())))
    if mech == "kai-fraction" and gpus_per_pod == 1:
        frac = unit.gpu_fraction
        if frac is None and declared_mib < gpu_mem:
            frac = math.ceil(declared_mib / gpu_mem * 20) / 20.0
        if frac is not None and frac < 1.0:
            return DeviceRequest("fraction", "kai/" + GPU, 1, fraction=frac)
    res = GPU
    if mech == "time-slicing" and dp.time_slicing.rename_by_default:
        res = GPU + ".shared"
    return DeviceRequest("count", res, gpus_per_pod)


def _role_workloads(sc: Scenario, spec: TrainingWorkload, name: str, uid: int, t: float, dur: float, queue: str,
                    groups: dict, layouts: dict, ckpt: float) -> list[Workload]:
    """One workload per task role of a Volcano Job, joined in a :class:`PodGroup`."""
    mins = [r.min_available if r.min_available is not None else r.replicas for r in spec.roles]
    group = PodGroup(name, spec.min_available if spec.min_available is not None else sum(mins))
    declared = (spec.memory_request_gib or spec.memory_gib) * MIB_PER_GIB
    for role, minimum in zip(spec.roles, mins):
        node_group = role.node_group or spec.node_group
        target = [groups[node_group]] if node_group else list(groups.values())
        dp = sc.stack.data_plane_for(node_group) if node_group else sc.stack.data_plane
        present = {p.profile.name for g in target for lay in layouts[g.name].values() if lay for p in lay.placements}
        req = dataclasses.replace(translate_request(spec, role.gpus_per_worker, declared, dp, target, present),
                                  cpu=role.cpu, host_gib=role.host_memory_gib)
        wl = Workload(uid, f"{name}-{role.name}", spec, spec.kind, t, role.replicas, minimum, req, dur, spec.tenant,
                      queue, node_group, ckpt)
        wl.group = group
        group.members.append(wl)
        uid += 1
    return group.members


def expand_workloads(sc: Scenario) -> list[Workload]:
    """All concrete workloads of the scenario, sorted by submission time then declaration order."""
    tenants = {t.name: t for t in sc.tenant_list()}
    groups = {g.name: g for g in sc.pool.node_groups}
    layouts = {g.name: g.mig_layouts(sc.parameters.driver_slot_choice) for g in sc.pool.node_groups}
    scheduler = sc.stack.control_plane.scheduler
    out: list[Workload] = []
    uid = 0
    for i, spec in enumerate(sc.workloads):
        rng = random.Random(f"{sc.seed}:{i}:{spec.name}")
        target = [groups[spec.node_group]] if spec.node_group else list(groups.values())
        dp = sc.stack.data_plane_for(spec.node_group) if spec.node_group else sc.stack.data_plane
        present = {p.profile.name for g in target for lay in layouts[g.name].values() if lay
                   for p in lay.placements}
        queue = tenants[spec.tenant].queue_name
        if isinstance(spec, InferenceWorkload):
            declared = spec.declared_memory_gib * MIB_PER_GIB
            req = translate_request(spec, spec.gpus_per_replica, declared, dp, target, present, scheduler)
            out.append(Workload(uid, spec.name, spec, "inference", spec.start, spec.replicas, 1, req,
                                (spec.stop if spec.stop is not None else sc.horizon) - spec.start,
                                spec.tenant, queue, spec.node_group, 0.0))
            uid += 1
            continue
        assert isinstance(spec, TrainingWorkload)
        times = arrival_times(spec.arrival, spec.count, rng)
        ckpt = spec.checkpoint_interval if spec.checkpoint_interval is not None else sc.parameters.checkpoint_interval
        if spec.roles:
            for k, t in enumerate(times):
                dur = max(1.0, _draw_duration(spec.duration, rng))
                name = spec.name if spec.count == 1 else f"{spec.name}-{k}"
                members = _role_workloads(sc, spec, name, uid, t, dur, queue, groups, layouts, ckpt)
                uid += len(members)
                out.extend(members)
            continue
        for k, t in enumerate(times):
            workers = _draw_int(spec.workers, rng)
            gpw = _draw_int(spec.gpus_per_worker, rng)
            dur = max(1.0, _draw_duration(spec.duration, rng))
            declared = (spec.memory_request_gib or spec.memory_gib) * MIB_PER_GIB
            req = translate_request(spec, gpw, declared, dp, target, present, scheduler)
            name = spec.name if spec.count == 1 else f"{spec.name}-{k}"
            min_member = min(workers, spec.min_available if spec.min_available is not None else workers)
            out.append(Workload(uid, name, spec, spec.kind, t, workers, min_member, req, dur, spec.tenant,
                                queue, spec.node_group, ckpt))
            uid += 1
    out.sort(key=lambda w: (w.submit, w.uid))
    return out
