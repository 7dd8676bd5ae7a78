"""Cross-field checks pydantic cannot express locally (:func:`check_references`): a workload's tenant
and node group, a tenant's queue, an event's node, MIG layouts against the data plane, KAI queue
parents, Volcano task roles, and a container's HAMi resources against HAMi's webhook."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from scheduler_core import hami as hamimod
from scheduler_core import mig as migmod
from scheduler_core.scenario.document import Scenario
from scheduler_core.scenario.stack import KaiQueue
from scheduler_core.scenario.workloads import InferenceWorkload, TrainingWorkload


def _role_errors(i: int, w: "TrainingWorkload", scheduler: str, groups: dict) -> list[tuple[str, str]]:
    errs = []
    if scheduler != "volcano":
        errs.append((f"workloads.{i}.roles", "task roles (one PodGroup with minTaskMember) are modelled for the "
                                             "volcano scheduler only"))
    for field in ("workers", "gpus_per_worker", "cpu", "host_memory_gib"):
        if field in w.model_fields_set:
            errs.append((f"workloads.{i}.{field}", "set per role when the job has roles"))
    errs += _not_unique(f"workloads.{i}.roles", "role", (r.name for r in w.roles))
    for j, r in enumerate(w.roles):
        if r.min_available is not None and r.min_available > r.replicas:
            errs.append((f"workloads.{i}.roles.{j}.min_available", f"{r.min_available} > replicas {r.replicas}"))
        if r.node_group is not None and r.node_group not in groups:
            errs.append((f"workloads.{i}.roles.{j}.node_group", f"unknown node group {r.node_group!r}"))
    total = sum(r.replicas for r in w.roles)
    if w.min_available is not None and w.min_available > total:
        errs.append((f"workloads.{i}.min_available", f"{w.min_available} > the roles' {total} replicas"))
    return errs


def _not_unique(loc: str, what: str, names: Iterable[str]) -> list[tuple[str, str]]:
    """An error at ``loc`` naming every name given more than once (linear: imported clusters have 10^4
    workloads)."""
    dup = sorted(n for n, k in Counter(names).items() if k > 1)
    return [(loc, f"{what} names must be unique: {', '.join(dup)}")] if dup else []


def _parent_cycles(queues: list, where: str = "stack.control_plane.kai.queues",
                   field: str = "parent") -> list[tuple[str, str]]:
    """An error at the parent field of the queue that closes each cycle of KAI or Volcano queue parents (or
    Kueue Cohort parents), which leaves its queues without a root and so without a fair share (or quota)."""
    parent = {q.name: getattr(q, field) for q in queues}
    index = {q.name: i for i, q in reversed(list(enumerate(queues)))}  # the first queue of a name
    errs, seen = [], set()
    for start in parent:
        path: list[str] = []
        name: str | None = start
        while name is not None and name in parent and name not in seen and name not in path:
            path.append(name)
            name = parent[name]
        if name in path:  # this walk closed a cycle
            cycle = path[path.index(name):]
            errs.append((f"{where}.{index[cycle[0]]}.{field}",
                         "parent cycle: " + " -> ".join([*cycle, cycle[0]])))
        seen.update(path)
    return errs


def _volcano_hierarchy_errors(vc) -> list[tuple[str, str]]:
    """Volcano queue parents (spec.parent): only with the capacity plugin's enable_hierarchy, naming a
    stated queue or the root queue 'root' (which has none), without cycles."""
    where = "stack.control_plane.volcano.queues"
    names = {q.name for q in vc.queues} | {"root"}
    errs = []
    for i, q in enumerate(vc.queues):
        if q.parent is None:
            continue
        if not vc.enable_hierarchy:
            errs.append((f"{where}.{i}.parent", "a parent queue needs enable_hierarchy: true (the capacity plugin's "
                                                "enableHierarchy); without it Volcano ignores spec.parent"))
        elif q.name == "root":
            errs.append((f"{where}.{i}.parent", "the root queue has no parent"))
        elif q.parent not in names:
            errs.append((f"{where}.{i}.parent", f"unknown queue {q.parent!r}"))
    if vc.enable_hierarchy:
        errs += _parent_cycles(vc.queues, where)
    return errs


def check_references(sc: Scenario) -> list[tuple[str, str]]:
    """Cross-field checks pydantic cannot express locally.  Returns (path, message) pairs."""
    errs: list[tuple[str, str]] = []
    groups = {g.name: g for g in sc.pool.node_groups}
    errs += _not_unique("pool.node_groups", "node group", (g.name for g in sc.pool.node_groups))
    nodes: dict[str, Any] = {}
    for g in sc.pool.node_groups:
        for n in g.node_names():
            nodes[n] = g
    stack = sc.stack
    for name in stack.node_group_data_plane:
        if name not in groups:
            errs.append((f"stack.node_group_data_plane.{name}", f"unknown node group {name!r}"))
    # Data plane vs MIG hardware.
    for gi, g in enumerate(sc.pool.node_groups):
        dp = stack.data_plane_for(g.name)
        try:
            layouts = g.mig_layouts(sc.parameters.driver_slot_choice)
        except migmod.MigLayoutError as exc:  # pragma: no cover - caught by NodeGroup validator
            errs.append((f"pool.node_groups.{gi}.mig", str(exc)))
            continue
        if layouts and dp.mechanism == "mps":
            errs.append((f"pool.node_groups.{gi}.mig", "MPS is not supported on MIG-enabled devices (§2.2)"))
        if layouts and dp.mechanism in ("hami", "kai-fraction"):
            errs.append((f"pool.node_groups.{gi}.mig",
                         f"{dp.mechanism} on MIG-enabled GPUs (HAMi dynamic-MIG mode) is not modelled; use mechanism mig"))
        if dp.mechanism == "mig" and not layouts:
            errs.append((f"pool.node_groups.{gi}.mig", "mechanism 'mig' needs MIG enabled on some GPUs of this group"))
    uses_fractions = stack.data_plane.mechanism == "kai-fraction" or any(
        d.mechanism == "kai-fraction" for d in stack.node_group_data_plane.values())
    if uses_fractions and not (stack.control_plane.scheduler == "kai" and stack.control_plane.kai is not None
                               and stack.control_plane.kai.gpu_sharing):
        errs.append(("stack.data_plane.mechanism", "kai-fraction needs scheduler 'kai' with kai.gpu_sharing: true "
                                                   "(fractions are KAI scheduler accounting, §6.5)"))
    tenants = {t.name for t in sc.tenant_list()}
    errs += _not_unique("tenants", "tenant", (t.name for t in sc.tenants))
    errs += _not_unique("workloads", "workload", (w.name for w in sc.workloads))
    cp = stack.control_plane
    # Queues a tenant may name, per policy.
    queue_sets: list[tuple[str, set[str]]] = []
    if cp.admission == "kueue" and cp.kueue is not None:
        cqs = {q.name for q in cp.kueue.cluster_queues}
        errs += _not_unique("stack.control_plane.kueue.cluster_queues", "ClusterQueue",
                            (q.name for q in cp.kueue.cluster_queues))
        for lq, cq in cp.kueue.local_queues.items():
            if cq not in cqs:
                errs.append((f"stack.control_plane.kueue.local_queues.{lq}", f"unknown ClusterQueue {cq!r}"))
        queue_sets.append(("Kueue LocalQueue or ClusterQueue", set(cp.kueue.local_queues) | cqs))
        errs += _not_unique("stack.control_plane.kueue.cohorts", "Cohort", (c.name for c in cp.kueue.cohorts))
        errs += _parent_cycles(cp.kueue.cohorts, "stack.control_plane.kueue.cohorts", "parent_name")
        for i, co in enumerate(cp.kueue.cohorts):
            for j, fl in enumerate(co.flavors):
                for ng in fl.node_groups or []:
                    if ng not in groups:
                        errs.append((f"stack.control_plane.kueue.cohorts.{i}.flavors.{j}.node_groups",
                                     f"unknown node group {ng!r}"))
        for i, cq in enumerate(cp.kueue.cluster_queues):
            for j, fl in enumerate(cq.flavors):
                for ng in fl.node_groups or []:
                    if ng not in groups:
                        errs.append((f"stack.control_plane.kueue.cluster_queues.{i}.flavors.{j}.node_groups",
                                     f"unknown node group {ng!r}"))
    if cp.scheduler == "volcano":
        errs += _not_unique("stack.control_plane.volcano.queues", "Volcano queue", (q.name for q in cp.volcano.queues))
        queue_sets.append(("Volcano queue", {q.name for q in cp.volcano.queues}
                           | ({"root"} if cp.volcano.enable_hierarchy else set())))
        errs += _volcano_hierarchy_errors(cp.volcano)
    if cp.scheduler == "kai" and cp.kai is not None:
        parents = {q.parent for q in cp.kai.queues if q.parent}
        allq = {q.name for q in cp.kai.queues}
        errs += _not_unique("stack.control_plane.kai.queues", "KAI queue", (q.name for q in cp.kai.queues))
        for i, q in enumerate(cp.kai.queues):
            if q.parent and q.parent not in allq:
                errs.append((f"stack.control_plane.kai.queues.{i}.parent", f"unknown queue {q.parent!r}"))
        errs += _parent_cycles(cp.kai.queues)
        queue_sets.append(("KAI leaf queue", allq - parents))
    for i, t in enumerate(sc.tenant_list()):
        for what, qs in queue_sets:
            if t.queue_name not in qs:
                loc = f"tenants.{i}.queue" if i < len(sc.tenants) else f"tenants ({t.name})"
                errs.append((loc, f"tenant {t.name!r} submits to {t.queue_name!r}, which is not a {what} "
                                  f"(known: {', '.join(sorted(qs)) or 'none'})"))
    for i, w in enumerate(sc.workloads):
        if w.tenant not in tenants:  # pragma: no cover - tenant_list adds it
            errs.append((f"workloads.{i}.tenant", f"unknown tenant {w.tenant!r}"))
        if w.node_group is not None and w.node_group not in groups:
            errs.append((f"workloads.{i}.node_group", f"unknown node group {w.node_group!r}"))
        if w.unit.mig_profile is not None:
            fams = {g.spec.mig_family for g in sc.pool.node_groups
                    if w.node_group in (None, g.name) and g.spec.mig_family}
            if not any(w.unit.mig_profile in migmod.PROFILES[f] for f in fams):
                errs.append((f"workloads.{i}.unit.mig_profile",
                             f"{w.unit.mig_profile!r} is not a MIG profile of {', '.join(sorted(fams))}"))
        if w.unit.hami is not None:
            errs.extend(_check_hami_unit(sc, i, w))
        if w.unit.dra is not None:
            dp = sc.stack.data_plane_for(w.node_group) if w.node_group else sc.stack.data_plane
            loc = f"workloads.{i}.unit.dra"
            if dp.mechanism != "dra":
                errs.append((loc, f"a ResourceClaim needs mechanism 'dra' (the workload's nodes use {dp.mechanism!r})"))
            elif w.unit.dra.device_class not in dp.dra.classes():
                errs.append((f"{loc}.device_class", f"no DeviceClass {w.unit.dra.device_class!r}: give gpu.nvidia.com, "
                             "mig.nvidia.com or a class of stack.data_plane.dra.device_classes"))
            if w.unit.mig_profile is not None or w.unit.whole_gpu:
                errs.append((loc, "unit.dra states the claim; leave mig_profile and whole_gpu out"))
        if w.unit.annotations:
            dp = sc.stack.data_plane_for(w.node_group) if w.node_group else sc.stack.data_plane
            if dp.mechanism != "hami":
                errs.append((f"workloads.{i}.unit.annotations", "HAMi's card filters need mechanism 'hami' "
                                                                f"(the workload's nodes use {dp.mechanism!r})"))
        if isinstance(w, TrainingWorkload) and w.gpus_per_worker == 0:
            stated = sorted(f for f in w.unit.model_fields_set if getattr(w.unit, f))
            if stated:
                errs.append((f"workloads.{i}.unit", f"a pod without a GPU (gpus_per_worker 0) takes no device: "
                                                    f"leave {', '.join(stated)} out"))
        if isinstance(w, TrainingWorkload) and w.roles:
            errs += _role_errors(i, w, cp.scheduler, groups)
        elif isinstance(w, TrainingWorkload):
            wk = w.workers if isinstance(w.workers, int) else max(w.workers.values)
            if w.min_available is not None and w.min_available > wk:
                errs.append((f"workloads.{i}.min_available", f"{w.min_available} > workers {wk}"))
        if isinstance(w, InferenceWorkload) and w.stop is not None and w.stop <= w.start:
            errs.append((f"workloads.{i}.stop", "stop must be after start"))
    for i, ev in enumerate(sc.events):
        if ev.node not in nodes:
            errs.append((f"events.{i}.node", f"unknown node {ev.node!r} (nodes are <group>-<index>, e.g. "
                                             f"{next(iter(nodes))})"))
            continue
        g = nodes[ev.node]
        if ev.gpu is not None and ev.gpu >= g.gpus_per_node:
            errs.append((f"events.{i}.gpu", f"GPU {ev.gpu} >= gpus_per_node {g.gpus_per_node}"))
        if ev.kind == "gpu_fault" and ev.gpu is None:
            errs.append((f"events.{i}.gpu", "gpu_fault needs a gpu index"))
        if ev.kind in ("device_plugin_restart", "node_failure") and ev.duration <= 0:
            errs.append((f"events.{i}.duration", f"{ev.kind} needs a duration > 0"))
        if ev.kind == "mig_reconfigure":
            if ev.layout is None:
                errs.append((f"events.{i}.layout", "mig_reconfigure needs a layout"))
            else:
                try:
                    if not (isinstance(ev.layout, str) and ev.layout in ("all-disabled", "all-enabled")):
                        migmod.layout_from_spec(g.spec.mig_family, ev.layout, sc.parameters.driver_slot_choice)
                except migmod.MigLayoutError as exc:
                    errs.append((f"events.{i}.layout", str(exc)))
            if ev.gpus != "all" and any(x >= g.gpus_per_node for x in ev.gpus):
                errs.append((f"events.{i}.gpus", f"GPU index >= gpus_per_node {g.gpus_per_node}"))
        if ev.at > sc.horizon:
            errs.append((f"events.{i}.at", "event after the horizon"))
    return errs


def _check_hami_unit(sc: Scenario, i: int, w: Any) -> list[tuple[str, str]]:
    """``unit.hami`` states the container as written: HAMi's webhook must accept it and leave it
    asking for GPUs (hami.py); the other ways to state GPUs, memory and cores must stay unset."""
    errs = []
    loc = f"workloads.{i}.unit"
    count_field = "gpus_per_worker" if isinstance(w, TrainingWorkload) else "gpus_per_replica"
    for f, stated in ((count_field, getattr(w, count_field) != 1), ("memory_request_gib", w.memory_request_gib),
                      ("unit.gpucores", w.unit.gpucores is not None)):
        if stated:
            errs.append((f"{loc}.hami", f"{f} and unit.hami both state the request; give it in unit.hami"))
    dp = sc.stack.data_plane_for(w.node_group) if w.node_group else sc.stack.data_plane
    if dp.mechanism != "hami":
        return errs
    h = w.unit.hami
    limits = hamimod.HamiLimits(h.gpu, h.gpumem, h.gpumem_percentage, h.gpucores)
    if not limits.states_any():
        errs.append((f"{loc}.hami", "the container states no HAMi resource; HAMi leaves it alone"))
        return errs
    scheduler = sc.stack.control_plane.scheduler
    pod_scheduler = hamimod.pod_scheduler(scheduler, dp.hami)
    webhook = hamimod.webhook_applies(pod_scheduler, dp.hami)
    if webhook and (msg := hamimod.percentage_error(limits, w.name)):
        errs.append((f"{loc}.hami.gpumem_percentage", f"HAMi's webhook refuses the pod: {msg}"))
    elif hamimod.admitted_request(limits, dp.hami, scheduler) is None:
        why = ("defaultGPUNum is 0, so HAMi's webhook adds none" if webhook else
               f"HAMi's webhook leaves pods of {pod_scheduler!r} alone (pod already has different "
               "scheduler assigned)")
        errs.append((f"{loc}.hami.gpu", f"the container asks no nvidia.com/gpu: {why}; state unit.hami.gpu"))
    return errs
