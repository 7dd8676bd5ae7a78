"""Build the plan of one ranked stack (called at the end of compose; pure, no Django).

Inputs are what a saved stack keeps: the ranked `Stack`, the workload classes and the request's
pool, so a stored stack's plan can be rebuilt the same way.
"""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path

import yaml

from placement.plans.models import (
    Component,
    DataPlane,
    MigLayout,
    NodeGroup,
    Plan,
    PodGroupPlan,
    PodRequest,
    QueuePlan,
    Shortfall,
    WorkloadPlan,
)
from placement.plans.sizing import mig_profile, node_shape, per_gpu_share_fit, split_nodes
from scheduler_core.hami import SCHEDULER_NAMES
from scheduler_core.hardware import MIB_PER_GIB, gpu_spec

MAPPING_FILE = Path(__file__).resolve().parents[2] / "fixtures" / "rules" / "simulation.yaml"

# Host resources per pod, proportional to its GPUs (named assumptions, not catalog facts): 8 cores and
# 64 GiB of host memory per GPU, what a DGX A100 gives each of its 8 GPUs (128 cores, 1 TiB, §7.1).
CPU_PER_GPU = 8.0
HOST_MEMORY_GIB_PER_GPU = 64.0
# PCI device ids for mig-parted's device-filter (mig-parted deployments/systemd/config-default.yaml).
DEVICE_FILTER = {
    "a100-40gb": "0x20B010DE", "a100-80gb": "0x20B210DE", "h100-80gb": "0x233010DE",
    "h200-141gb": "0x233510DE", "b200-180gb": "0x290110DE",
}
HAMI_SPLIT_COUNT = 10  # HAMi chart values.yaml deviceSplitCount default (facts §3)
# KAI GPU sharing is off by default; the kai-resource-isolator's memory cap needs KAI's hamicore binder
# plugin, which writes CUDA_DEVICE_MEMORY_LIMIT (kai-scheduler/KAI-Scheduler docs/gpu-sharing/README.md,
# docs/gpu-sharing/hami/README.md: KAI >= v0.17.0).
KAI_SHARING = {"global.gpuSharing": "true"}
KAI_ENFORCED = {"binder.plugins.hamicore.enabled": "true"}
VOLCANO_VGPU = "volcano-vgpu-device-plugin"

# Kind of object per (workload-unit project, workload kind); None: the built-in kind below.
_KINDS: dict[str, dict[str, tuple[str, str]]] = {
    "jobset": {"training": ("JobSet", "jobset.x-k8s.io/v1alpha2"), "batch_inference": ("JobSet", "jobset.x-k8s.io/v1alpha2")},
    "kubeflow-training-operator": {"training": ("PyTorchJob", "kubeflow.org/v1")},
    "kuberay": {"training": ("RayJob", "ray.io/v1"), "batch_inference": ("RayJob", "ray.io/v1"),
                "online_inference": ("RayService", "ray.io/v1")},
    "lws": {"online_inference": ("LeaderWorkerSet", "leaderworkerset.x-k8s.io/v1")},
    "volcano": {"training": ("Job", "batch.volcano.sh/v1alpha1"), "batch_inference": ("Job", "batch.volcano.sh/v1alpha1")},
    "appwrapper": {"training": ("AppWrapper", "workload.codeflare.dev/v1beta2"),
                   "batch_inference": ("AppWrapper", "workload.codeflare.dev/v1beta2")},
    "kserve": {"online_inference": ("InferenceService", "serving.kserve.io/v1beta1")},
    "nvidia-dynamo": {"online_inference": ("DynamoGraphDeployment", "nvidia.com/v1beta1")},  # Dynamo v1.5.0: v1alpha1 deprecated
}
_BUILT_IN = {"training": ("Job", "batch/v1"), "batch_inference": ("Job", "batch/v1"),
             "online_inference": ("Deployment", "apps/v1"), "interactive": ("Deployment", "apps/v1")}


@lru_cache(maxsize=1)
def simulation_mapping() -> dict[str, dict[str | None, str]]:
    """fixtures/rules/simulation.yaml: catalog slug -> simulator model, per section."""
    data = yaml.safe_load(MAPPING_FILE.read_text(encoding="utf-8"))
    return {section: {(None if k in (None, "null") else k): v for k, v in table.items()} for section, table in data.items()}


class PlanError(ValueError):
    """A stack that cannot be planned (a project with no simulator model, an unknown GPU); names the field."""

    def __init__(self, field: str, reason: str):
        self.field = field
        super().__init__(f"{field}: {reason}")


def _mapped(section: str, slug: str | None, where: str) -> str:
    table = simulation_mapping()[section]
    if slug not in table:
        raise PlanError(where, f"{slug} has no simulator model yet; see fixtures/rules/simulation.yaml.")
    return table[slug]


def _slot(stack, slot: str) -> str | None:
    for a in stack.slots:
        if a.slot.value == slot and a.project is not None and a.pool is None:
            return a.project.slug
    return None


def _split(total: int, parts: int) -> list[int]:
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def _host(gpus: float) -> dict[str, float]:
    return {"cpu": round(CPU_PER_GPU * gpus, 3), "memory": round(HOST_MEMORY_GIB_PER_GPU * gpus, 3)}


def build_plan(stack, workloads, pool, *, pool_given: bool) -> Plan:
    """The plan of `stack` (a rules Stack) for the request's workload classes and pool.

    `pool_given`: the request named the pool's GPU count (else pools are sized from demand)."""
    try:
        spec = gpu_spec(pool.gpu_model)
    except ValueError as exc:
        raise PlanError("pool.gpu_model", str(exc)) from None
    classes = {w.name: w for w in workloads}
    scheduler_slug = _slot(stack, "scheduling_policy") or "kube-scheduler"
    admission_slug = _slot(stack, "admission_quota")
    scheduler = _mapped("scheduler", scheduler_slug, "scheduling_policy")
    admission = _mapped("admission", admission_slug, "admission_quota") if admission_slug else "none"
    controller = _slot(stack, "workload_unit")
    gang_api = _gang_api(stack, scheduler)
    assumptions = [
        f"Pods ask {CPU_PER_GPU:g} CPU cores and {HOST_MEMORY_GIB_PER_GPU:g} GiB host memory per GPU they use "
        "(a DGX A100's per-GPU share); nodes advertise the same per GPU.",
    ]
    modelled_as = simulation_mapping().get("modelled_as", {})
    assumptions += [modelled_as[slug] for slug in (scheduler_slug, admission_slug) if slug in modelled_as]
    shortfalls: list[Shortfall] = []

    # --- per pool: mechanism, sizing, demand --------------------------------------------------
    sized = []
    for p in stack.pools:
        w = classes.get(p.workload or p.name)
        mechanism = _mapped("data_plane", p.data_plane, f"pool {p.name}")
        if p.device_handoff == "nvidia-dra-driver":
            mechanism = "dra"
        share = min(1.0, w.gpus_per_replica) if w else 1.0
        whole = w.whole_gpus if w else 1
        choice = None
        if w and (mechanism == "mig" or (mechanism == "dra" and p.data_plane in ("mig", "mig-manager"))):
            choice = mig_profile(spec, w.gpu_memory_gib, w.gpus_per_replica)
            if choice is None:
                raise PlanError(f"pool {p.name}", f"no MIG profile of {pool.gpu_model} holds {w.gpu_memory_gib:g} GiB "
                                                  f"with {share:g} of a GPU's compute")
        if w is None:
            per_gpu, demand_gpus = 1, p.gpus
        elif choice is not None:
            per_gpu = choice.per_gpu
            demand_gpus = math.ceil(w.replicas / per_gpu)
        elif w.shares_a_gpu and mechanism != "whole" and not (mechanism == "dra"):
            per_gpu = max(1, per_gpu_share_fit(spec.memory_mib, w.gpu_memory_gib, share))
            demand_gpus = math.ceil(w.replicas / per_gpu)
        else:
            per_gpu, demand_gpus = 1, w.replicas * whole
        sized.append((p, w, mechanism, choice, per_gpu, whole, share, demand_gpus))

    if pool_given:
        shape = node_shape(pool.gpu_count, max(s[5] for s in sized), sum(s[7] for s in sized))
        total_nodes = pool.gpu_count // shape
        if pool.gpu_count % shape:
            assumptions.append(f"{pool.gpu_count % shape} GPU(s) beyond whole {shape}-GPU nodes are left out.")
        counts = split_nodes(total_nodes, [s[7] for s in sized])
        if sum(counts) > total_nodes:
            shortfalls.append(Shortfall(pool="all", resource="nodes", needed=sum(counts), available=total_nodes,
                                        reason=f"{len(sized)} pools need a whole node each; the pool has {total_nodes} "
                                               f"node(s) of {shape} GPUs."))
        shapes = [shape] * len(sized)
    else:
        shapes = [node_shape(None, s[5], s[7]) for s in sized]
        counts = [max(1, math.ceil(s[7] / shape)) for s, shape in zip(sized, shapes)]
        assumptions.append("Pools sized from the workload classes' demand, rounded up to whole nodes.")

    node_groups: list[NodeGroup] = []
    plans: list[WorkloadPlan] = []
    queues: list[QueuePlan] = []
    for (p, w, mechanism, choice, per_gpu, whole, share, demand_gpus), count, shape in zip(sized, counts, shapes):
        dp, pod = _data_plane(p, w, mechanism, choice, per_gpu, whole, share, spec, shape)
        labels = {"atlas.gpu/pool": p.name}
        if dp.mig:
            labels["nvidia.com/mig.config"] = dp.mig.config
        if mechanism in ("time-slicing", "mps"):
            labels["nvidia.com/device-plugin.config"] = f"{p.name}-{mechanism}"
        group = NodeGroup(name=p.name, pool=p.name, gpu_model=pool.gpu_model, simulated_gpu=spec.name,
                          gpus_per_node=shape, count=count, labels=labels, data_plane=dp)
        node_groups.append(group)
        if w is None:
            continue
        # demand against the pool
        if choice is not None or (w.shares_a_gpu and mechanism not in ("whole", "dra")):
            fit = per_gpu * group.gpus
            binding = "gpu_memory" if mechanism != "mig" and per_gpu < math.floor(1 / share + 1e-9) else "gpus"
        else:
            fit = (shape // whole) * count
            binding = "gpus"
        if fit < w.replicas:
            unit = f"{choice.name} instances" if choice else ("GPU shares" if w.shares_a_gpu else f"{whole}-GPU slots")
            shortfalls.append(Shortfall(
                pool=p.name, resource=binding, needed=w.replicas, available=fit,
                reason=(f"{w.replicas} replicas x {w.gpu_memory_gib:g} GiB ({w.gpus_per_replica:g} GPU) need {w.replicas} "
                        f"{unit}; {count} node(s) x {shape} {pool.gpu_model} hold {fit}: {w.replicas - fit} replica(s) wait.")))
        kind, api = _KINDS.get(controller or "", {}).get(w.kind.value) or _BUILT_IN[w.kind.value]
        owner = controller if controller and w.kind.value in _KINDS.get(controller, {}) else None
        sched_name = SCHEDULER_NAMES[scheduler]
        if mechanism == "hami" and p.data_plane != VOLCANO_VGPU and scheduler == "kube-default":
            sched_name = "hami-scheduler"
        tenants = w.tenant_names()
        per_tenant = dict(zip(tenants, _split(w.replicas, len(tenants))))
        plans.append(WorkloadPlan(
            name=w.name, kind=w.kind.value, node_group=p.name, object_kind=kind, api_version=api, controller=owner,
            replicas=w.replicas, pods_per_replica=1, gpus_per_replica=w.gpus_per_replica, gpu_memory_gib=w.gpu_memory_gib,
            gang=w.gang, pod=pod, scheduler_name=sched_name, scheduler=scheduler,
            queues={t: t for t in tenants}, replicas_per_tenant=per_tenant, unit=p.unit.value, unit_size=p.unit_size,
            min_replicas=w.min_replicas if w.elastic else None,
        ))
        if w.gang and gang_api is not None:
            plans[-1] = with_pod_group(plans[-1], gang_api)
            assumptions.append(pod_group_assumption(plans[-1]))
        if w.elastic:
            assumptions.append(elastic_assumption(plans[-1], admission, scheduler))
        capacity = {r: v * count for r, v in dp.advertised.items()}
        for t in tenants:
            quota = {}
            for r, v in {**pod.resources, **({_claim_resource(pod): pod.claim_count} if pod.claim_device_class else {})}.items():
                demand = v * per_tenant[t]
                total = v * w.replicas
                scale = min(1.0, capacity.get(r, total) / total) if total else 1.0
                quota[r] = round(max(v if per_tenant[t] else 0.0, demand * scale), 3)
            if mechanism == "kai-fraction":
                quota["nvidia.com/gpu"] = round(min(share * per_tenant[t], group.gpus), 3)
            queues.append(QueuePlan(name=t, tenant=t, workload=w.name, quota=quota))
    queues = _one_queue_per_team(queues, assumptions)
    components = _components(stack, node_groups, scheduler_slug)
    if gang_api is not None and gang_api[0] in components:
        comp = components[gang_api[0]]
        components[gang_api[0]] = comp.model_copy(update={"settings": {**comp.settings, **gang_api_settings(gang_api[1])}})
    return Plan(stack=stack.title, gpu_model=pool.gpu_model, admission=admission, scheduler=scheduler,
                node_groups=node_groups, workloads=plans, queues=queues, components=list(components.values()),
                assumptions=assumptions, shortfalls=shortfalls)


def _components(stack, node_groups: list[NodeGroup], scheduler_slug: str) -> dict[str, Component]:
    """The stack's projects with the settings the plan relies on: slot members, then supporting ones."""
    components: dict[str, Component] = {}
    for a in stack.slots:
        if a.project is not None:
            components.setdefault(a.project.slug, Component(project=a.project.slug, role=a.slot.value))
    for g in node_groups:
        dp = g.data_plane
        if dp.project and dp.project in components:
            settings = {}
            if dp.mig:
                settings = {"mig.strategy": "mixed", "nvidia.com/mig.config": dp.mig.config, "device-filter": dp.mig.device_filter}
            elif dp.time_slicing_replicas:
                settings = {"sharing.timeSlicing.replicas": str(dp.time_slicing_replicas), "failRequestsGreaterThanOne": "true"}
            elif dp.mps_replicas:
                settings = {"sharing.mps.replicas": str(dp.mps_replicas)}
            elif dp.hami_split_count:
                settings = {"deviceSplitCount": str(dp.hami_split_count)}
            comp = components[dp.project]
            components[dp.project] = comp.model_copy(update={"settings": {**comp.settings, **settings}})
        if dp.mechanism == "kai-fraction" and scheduler_slug in components:
            # fractions need KAI's GPU sharing; an enforcing add-on as the data plane needs its binder plugin
            kai = components[scheduler_slug]
            extra = {**KAI_SHARING, **(KAI_ENFORCED if dp.project and dp.project != scheduler_slug else {})}
            components[scheduler_slug] = kai.model_copy(update={"settings": {**kai.settings, **extra}})
    for s in stack.supporting:
        components.setdefault(s.project.slug, Component(project=s.project.slug, role=f"required by {s.required_by}"))
    return components


# The Workload API (scheduling.k8s.io/v1beta1) from Kubernetes 1.37: the GenericWorkload feature gate is beta but
# off by default there (k8s.io/kubernetes v1.37.2 pkg/features/kube_features.go), beta APIs are served only
# when runtime-config enables them; with the gate kube-scheduler adds its GangScheduling plugin
# (pkg/scheduler/apis/config/v1/default_plugins.go) and kube-controller-manager its PodGroup protection
# controller (cmd/kube-controller-manager/app/scheduling.go). WorkloadWithJob (the Job controller creating
# Workloads and PodGroups itself) is still alpha and off in 1.37, so the plan's jobs bring their own.
GANG_API_KUBERNETES = "1.37"
GANG_API_GATE = "GenericWorkload=true"


def _gang_api(stack, scheduler: str) -> tuple[str, str] | None:
    """(slug, api version) of the stack member through which kube-scheduler gangs (simulation.yaml gang_api)."""
    if scheduler != "kube-default":
        return None
    members = {a.project.slug for a in stack.slots if a.project is not None} | {s.project.slug for s in stack.supporting}
    return next(((slug, version) for slug, version in simulation_mapping().get("gang_api", {}).items() if slug in members), None)


def gang_api_settings(api_version: str) -> dict[str, str]:
    """What the cluster must run for the gang API (the plan's component settings; the bundle's README)."""
    gate = f"--feature-gates={GANG_API_GATE}"
    return {"apiVersion": api_version, "kubernetes": f">= {GANG_API_KUBERNETES}",
            "kube-apiserver": f"{gate} --runtime-config={api_version}=true",
            "kube-scheduler": gate, "kube-controller-manager": gate}


def with_pod_group(w: WorkloadPlan, gang_api: tuple[str, str]) -> WorkloadPlan:
    """A gang class placed through the API: each tenant's job one PodGroup of minCount = its replicas, or
    the elastic minimum for that tenant (as the other gang schedulers' minMember)."""
    mins = {t: w.min_for(t) or n for t, n in w.replicas_per_tenant.items() if n}
    return w.model_copy(update={"pod_group": PodGroupPlan(api=gang_api[0], api_version=gang_api[1], min_count=mins)})


def pod_group_assumption(w: WorkloadPlan) -> str:
    g = w.pod_group
    mins = ", ".join(f"{t} {n}" for t, n in g.min_count.items())
    return (f"Class {w.name} is a gang through the {g.api} ({g.api_version}, Kubernetes >= {GANG_API_KUBERNETES} with the "
            f"{GANG_API_GATE.split('=')[0]} feature gate): each tenant's job is a PodGroup made from its Workload's gang "
            f"template with minCount {mins}, its pods name it in {g.pod_reference}, and kube-scheduler binds at least "
            f"minCount of them together or none.")


# scheduler_core models that start a gang from its minMember and place the rest as they fit
# (policies: place_gang / Volcano's minAvailable parts), and the admission model that admits partially.
ELASTIC_GANG_SCHEDULERS = ("volcano", "kai", "coscheduling")
PARTIAL_ADMISSION = "kueue"


def elastic_assumption(w: WorkloadPlan, admission: str, scheduler: str) -> str:
    """How an elastic class is simulated (placement/plans/scenario.py), or why it is not."""
    head = f"Class {w.name} is elastic ({w.min_replicas} to {w.replicas} replicas)"
    if w.kind != "training":
        return (f"{head}, but the simulator runs {w.kind} classes as independent single-pod jobs with no minimum "
                f"(scheduler_core/scenario/workloads.py), so its minimum is not simulated.")
    mins = ", ".join(f"{t} {w.min_for(t)} of {n}" for t, n in w.replicas_per_tenant.items() if n)
    how = []
    if admission == PARTIAL_ADMISSION:
        how.append("Kueue admits it partially down to that minimum (pod set minCount)")
    if w.gang and scheduler in ELASTIC_GANG_SCHEDULERS:
        how.append(f"{scheduler} binds the minimum all-or-nothing (minMember) and the other workers as they fit")
    elif w.gang and w.pod_group is not None:
        how.append(f"{scheduler} binds the minimum all-or-nothing (the PodGroup's minCount) and the other workers as they fit")
    elif w.gang:
        how.append(f"{scheduler} has no gang minimum in the simulator, so the minimum is not held there")
    else:
        how.append("pods bind one by one (no gang)")
    return f"{head}: each tenant's job starts with at least its share of the minimum ({mins}); " + "; ".join(how) + "."


def _one_queue_per_team(queues: list[QueuePlan], assumptions: list[str]) -> list[QueuePlan]:
    """A team that submits several classes (teams declared once for all classes) has one queue: its
    quota is the sum of its share of every class (resource names differ per pool where units do)."""
    merged: dict[str, QueuePlan] = {}
    for q in queues:
        if q.name not in merged:
            merged[q.name] = q
            continue
        have = merged[q.name]
        quota = dict(have.quota)
        for r, v in q.quota.items():
            quota[r] = round(quota.get(r, 0.0) + v, 3)
        merged[q.name] = have.model_copy(update={"workload": f"{have.workload}, {q.workload}", "quota": quota})
    shared = [q for q in merged.values() if "," in q.workload]
    if shared:
        assumptions.append(f"{len(shared)} team(s) submit several classes: one queue per team ({', '.join(q.name for q in shared)}), "
                           "its quota the sum of its share of each class.")
    return list(merged.values())


def _claim_resource(pod: PodRequest) -> str:
    return f"claim:{pod.claim_device_class}"


def _data_plane(p, w, mechanism, choice, per_gpu, whole, share, spec, shape) -> tuple[DataPlane, PodRequest]:
    """The node group's data plane and one pod's requests."""
    gpus = w.gpus_per_replica if w else 1.0
    host = _host(gpus)
    node_host = _host(shape)
    mem_mib = int(math.ceil(w.gpu_memory_gib * MIB_PER_GIB)) if w else 0
    project = p.data_plane or p.device_handoff
    if mechanism == "mig" and choice is not None:
        layout = MigLayout(config=f"all-{choice.name}", device_filter=DEVICE_FILTER[spec.mig_family],
                           devices={choice.name: choice.per_gpu}, profile_memory_mib=choice.memory_mib)
        res = f"nvidia.com/mig-{choice.name}"
        n = whole if w and w.gpus_per_replica >= 1 else 1
        return (DataPlane(mechanism="mig", project=project, mig=layout, advertised={res: choice.per_gpu * shape, **node_host}),
                PodRequest(resources={res: n, **host}))
    if mechanism == "time-slicing":
        return (DataPlane(mechanism=mechanism, project=project, time_slicing_replicas=max(2, per_gpu),
                          fail_requests_greater_than_one=True,
                          advertised={"nvidia.com/gpu": max(2, per_gpu) * shape, **node_host}),
                PodRequest(resources={"nvidia.com/gpu": 1, **host}))
    if mechanism == "mps":
        replicas = min(48, max(2, per_gpu))
        return (DataPlane(mechanism=mechanism, project=project, mps_replicas=replicas,
                          mps_memory_limit_mib=spec.memory_mib // replicas, mps_thread_percentage=100 // replicas,
                          fail_requests_greater_than_one=True,
                          advertised={"nvidia.com/gpu": replicas * shape, **node_host}),
                PodRequest(resources={"nvidia.com/gpu": 1, **host}))
    if mechanism == "hami":
        cores = max(1, round(100 * share))
        if p.data_plane == VOLCANO_VGPU:
            names = ("volcano.sh/vgpu-number", "volcano.sh/vgpu-memory", "volcano.sh/vgpu-cores")
        else:
            names = ("nvidia.com/gpu", "nvidia.com/gpumem", "nvidia.com/gpucores")
        advertised = {names[0]: HAMI_SPLIT_COUNT * shape, names[1]: spec.memory_mib * shape, names[2]: 100 * shape, **node_host}
        return (DataPlane(mechanism=mechanism, project=project, hami_split_count=HAMI_SPLIT_COUNT, advertised=advertised),
                PodRequest(resources={names[0]: whole, names[1]: mem_mib, names[2]: cores, **host}))
    if mechanism == "dra":
        if choice is not None:
            cls, sel = "mig.nvidia.com", f"device.attributes['gpu.nvidia.com'].profile == '{choice.name}'"
            per_node = choice.per_gpu * shape
        else:
            cls, sel = "gpu.nvidia.com", None
            per_node = shape
        return (DataPlane(mechanism="dra", project="nvidia-dra-driver", device_classes=[cls],
                          advertised={f"claim:{cls}": per_node, **node_host}),
                PodRequest(resources=dict(host), claim_device_class=cls, claim_count=1 if choice else whole, claim_selector=sel))
    if mechanism == "kai-fraction":
        ann = {"gpu-fraction": f"{share:g}"} if share < 1 else {}
        res = {} if share < 1 else {"nvidia.com/gpu": whole}
        return (DataPlane(mechanism=mechanism, project=project, advertised={"nvidia.com/gpu": shape, **node_host}),
                PodRequest(resources={**res, **host}, annotations=ann))
    return (DataPlane(mechanism="whole", project=p.device_handoff, advertised={"nvidia.com/gpu": shape, **node_host}),
            PodRequest(resources={"nvidia.com/gpu": whole, **host}))
