"""Try a scenario's bundle on a running local plane: KWOK nodes shaped like its node groups, the bundle
applied in install order, the real controllers left to act until quiet; then per workload what Kueue,
kube-scheduler and Volcano (its PodGroup's phase and messages) did, beside what the simulator answers for the same workloads at the same instant.

Pure Python (no Django): ``try_scenario(plane, scenario)`` returns a :class:`Trial`."""

from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass, field
from typing import Callable

import yaml

from placement.deploy import export_scenario
from placement.deploy.control_plane import flavor_labels
from placement.deploy.data_plane import pool_plans
from placement.deploy.localplane.kube import Kube, KubeError
from placement.deploy.localplane.plane import KWOK_NODE_ANNOTATION, OPTIONAL_COMPONENTS
from scheduler_core.cluster import Node, dra_device
from scheduler_core.dra import NVIDIA_DRIVER
from scheduler_core.scenario import Scenario, parse_scenario

# Facts of the fake nodes beside their GPUs, for nodes whose group leaves CPU / memory unset (the
# simulator then does not count them): a DGX A100's 256 cores and 2 TiB hold every example pod.
DEFAULT_NODE_CPU = "256"
DEFAULT_NODE_MEMORY = "2Ti"
DEFAULT_NODE_PODS = "110"
HAMI_CORES_PER_GPU = 100  # HAMi's nvidia.com/gpucores: percent of one card
# The controllers are quiet when nothing observed changed for QUIET_SECONDS (at most SETTLE_TIMEOUT).
QUIET_SECONDS = 6.0
SETTLE_TIMEOUT = 120.0
WORKLOAD_GAP = 1.05
NAMESPACE_GONE_TIMEOUT = 60.0
NODES_READY_TIMEOUT = 60.0
PROBE_HORIZON = "10m"  # the simulator's instant: every example submitted at 0, observed shortly after
PROBE_DURATION = "1000h"  # long enough that nothing finishes before the instant
KUEUE = "kueue.x-k8s.io/v1beta2"
POOL_LABEL = "placement-atlas.io/pool"
# Objects a workload file carries beside its workload, which have no pods of their own: a DRA claim
# template, and the Workload API's Workload and PodGroup a kube-scheduler gang's pods name.
COMPANIONS = {("resource.k8s.io", "ResourceClaimTemplate"), ("scheduling.k8s.io", "Workload"),
              ("scheduling.k8s.io", "PodGroup"), ("scheduling.x-k8s.io", "PodGroup"), ("scheduling.volcano.sh", "PodGroup")}


def is_companion(obj: dict) -> bool:
    return (obj.get("apiVersion", "").split("/")[0], obj.get("kind")) in COMPANIONS


# The scheduler every plane runs; pods naming one the plane does not run (hami-scheduler, kai-scheduler,
# volcano when a trial did not start it) wait for it.
PLANE_SCHEDULER = "default-scheduler"
# schedulerName -> the plane's components that must run for it (LocalPlane.ensure).
# scheduler-plugins-scheduler: the chart's scheduler.name, which the bundles keep.
SCHEDULER_COMPONENTS = {"volcano": ("volcano-controller-manager", "volcano-scheduler"),
                        "scheduler-plugins-scheduler": ("coscheduling-controller", "coscheduling-scheduler")}


@dataclass(frozen=True)
class GroupKind:
    """Where a scheduler's PodGroups live and how a pod names its group."""

    api: str
    key: str            # the pod's annotation (Volcano) or label (coscheduling) naming its PodGroup
    in_labels: bool
    phases: tuple[str, ...]  # in the order a group goes through them


# Volcano: the PodGroup its controller made for the pod (pkg/controllers/podgroup); coscheduling: the
# PodGroup the pod's label names (pkg/coscheduling, PodGroupLabel), status by scheduler-plugins' controller.
POD_GROUPS = {"volcano": GroupKind("scheduling.volcano.sh/v1beta1", "scheduling.k8s.io/group-name", False,
                                   ("Pending", "Inqueue", "Running")),
              "scheduler-plugins-scheduler": GroupKind("scheduling.x-k8s.io/v1alpha1", "scheduling.x-k8s.io/pod-group", True,
                                                       ("Pending", "PreScheduling", "Scheduling", "Scheduled", "Running"))}
# kinds whose pods no controller of the plane creates (their operators are not part of it)
NO_CONTROLLER = {"PyTorchJob": "the training operator", "LeaderWorkerSet": "LWS", "JobSet": "JobSet"}


@dataclass
class Rejected:
    file: str
    kind: str
    name: str
    message: str


@dataclass
class WorkloadResult:
    file: str
    kind: str
    namespace: str
    name: str
    admitted: bool | None          # None: not under Kueue
    admission_message: str         # Kueue's own words
    pods: int
    bound: dict[str, int]          # node -> pods
    pending_messages: list[str]    # kube-scheduler's / the controller's own words for pods not bound
    schedulers: list[str] = field(default_factory=list)  # the pods' schedulerName
    podgroup_phase: str = ""       # Volcano: Pending / Inqueue / Running; coscheduling: Pending ... Running
    podgroup_messages: list[str] = field(default_factory=list)  # the scheduler's words: conditions and events
    sim_podgroup_phase: str = ""
    sim_state: str = ""
    sim_nodes: list[str] = field(default_factory=list)
    sim_reason: str = ""
    agree: bool | None = None
    note: str = ""

    @property
    def pools(self) -> set[str]:
        return {n.rsplit("-", 1)[0] for n in self.bound}


@dataclass
class Trial:
    scenario: str
    nodes: int
    rejected: list[Rejected]
    workloads: list[WorkloadResult]
    settled: bool

    @property
    def agreement(self) -> tuple[int, int]:
        judged = [w for w in self.workloads if w.agree is not None]
        return sum(w.agree for w in judged), len(judged)

    def as_dict(self) -> dict:
        agree, judged = self.agreement
        return {"scenario": self.scenario, "nodes": self.nodes, "settled": self.settled,
                "rejected": [asdict(r) for r in self.rejected],
                "workloads": [{**asdict(w), "pools": sorted(w.pools)} for w in self.workloads],
                "agreement": {"agree": agree, "judged": judged}}


def bundle_kueue_config(export) -> dict | None:
    """The Kueue Configuration the bundle installs: the chart's `managerConfig.controllerManagerConfigYaml`
    in kueue/values.yaml (integrations for the bundle's workload kinds, waitForPodsReady, fair
    sharing), so the plane's Kueue runs with what an operator's `helm install` would give it."""
    values = export.file("kueue/values.yaml")
    text = ((values.values if values else {}).get("managerConfig") or {}).get("controllerManagerConfigYaml")
    return yaml.safe_load(text) if text else None


def bundle_scheduler_config(export) -> dict | None:
    """The KubeSchedulerConfiguration the bundle gives the default scheduler (kube-scheduler/scheduler-config.yaml:
    NodeResourcesFit scoring GPUs, preemption), so the plane's kube-scheduler scores as the operator's would."""
    f = export.file("kube-scheduler/scheduler-config.yaml")
    if f is None:
        return None
    return yaml.safe_load(f.objects[0]["data"]["scheduler-config.yaml"])


def bundle_volcano_values(export) -> dict | None:
    """The bundle's volcano/values.yaml (custom.scheduler_config_override: actions, tiers, plugin
    arguments), rendered by the chart into the scheduler's configuration (LocalPlane.use_volcano_values)."""
    values = export.file("volcano/values.yaml")
    return values.values if values else None


def bundle_coscheduling_values(export) -> dict | None:
    """The bundle's coscheduling/values.yaml (scheduler name, plugins, Coscheduling's permit timeout)."""
    values = export.file("coscheduling/values.yaml")
    return values.values if values else None


def _scheduler_names(obj) -> set[str]:
    if isinstance(obj, dict):
        found = {obj["schedulerName"]} if isinstance(obj.get("schedulerName"), str) else set()
        return found.union(*(_scheduler_names(v) for v in obj.values()))
    if isinstance(obj, list):
        return set().union(*(_scheduler_names(v) for v in obj))
    return set()


def needed_components(export, workloads: list[dict] | None = None) -> tuple[str, ...]:
    """The optional plane components the bundle's workloads need: the schedulers their pods name."""
    objs = [o for _, o in bundle_workloads(export)] if workloads is None else workloads
    names = _scheduler_names(objs)
    return tuple(c for c in OPTIONAL_COMPONENTS if any(c in SCHEDULER_COMPONENTS.get(n, ()) for n in names))


# --- nodes -------------------------------------------------------------------------------------
def kwok_nodes(scenario: Scenario) -> list[dict]:
    """One fake Node per simulator node: its pool's labels and what the simulator's node advertises."""
    plans = {p.name: p for p in pool_plans(scenario)}
    # The label a Kueue flavor over several pools selects, added to those pools' plans as the export adds
    # it to its own (exporting the scenario here labelled other plan objects, and the nodes went without).
    if scenario.stack.control_plane.kueue is not None:
        flavor_labels(scenario, list(plans.values()))
    nodes = []
    for group in scenario.pool.node_groups:
        plan = plans[group.name]
        dp = scenario.stack.data_plane_for(group.name)
        probe = _probe_node(scenario, group)
        resources = {"cpu": f"{group.cpu:g}" if group.cpu else DEFAULT_NODE_CPU,
                     "memory": f"{group.memory_gib:g}Gi" if group.memory_gib else DEFAULT_NODE_MEMORY,
                     "pods": DEFAULT_NODE_PODS}
        for resource, count in probe.advertised.items():
            resources[resource.removeprefix("hami/")] = str(int(count))
        if dp.mechanism == "hami":
            memory = sum(c.memory_mib for c in probe.contexts) * dp.hami.device_memory_scaling
            resources["nvidia.com/gpumem"] = str(int(memory))
            resources["nvidia.com/gpucores"] = str(HAMI_CORES_PER_GPU * group.gpus_per_node)
        for i, name in enumerate(group.node_names()):
            labels = {**plan.labels, "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                      "type": "kwok", POOL_LABEL: group.name}
            if group.racks > 1 or group.rack:
                labels["placement-atlas.io/rack"] = group.rack_of(i)
            nodes.append({"apiVersion": "v1", "kind": "Node",
                          "metadata": {"name": name, "labels": labels,
                                       "annotations": {KWOK_NODE_ANNOTATION[0]: KWOK_NODE_ANNOTATION[1]}},
                          "status": {"capacity": resources, "allocatable": resources}})
    return nodes


def _probe_node(scenario: Scenario, group) -> Node:
    """The simulator's node of the group, as every node of it starts (nothing allocated)."""
    return Node(f"{group.name}-probe", group.name, 0, 0, group.spec, group.gpus_per_node, group.link,
                group.numa_nodes, scenario.stack.data_plane_for(group.name),
                group.mig_layouts(scenario.parameters.driver_slot_choice))


def _attribute(value) -> dict:
    if isinstance(value, bool):
        return {"bool": value}
    return {"int": value} if isinstance(value, int) else {"string": str(value)}


def _dns_label(name: str) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")[:63]


def dra_slices(scenario: Scenario) -> list[dict]:
    """What the NVIDIA DRA driver's kubelet plugin would publish on each node of a ``dra`` pool (there is no
    kubelet on a KWOK node): one ResourceSlice per node, the devices in the order, with the attributes and
    memory capacity, the simulator's allocator sees (scheduler_core.cluster.dra_device). Partitionable
    devices (shared counters) are not published: such pools are left without slices, and the trial says why."""
    slices = []
    for group in scenario.pool.node_groups:
        dp = scenario.stack.data_plane_for(group.name)
        if dp.mechanism != "dra" or dp.dra.partitionable_devices:
            continue
        probe = _probe_node(scenario, group)
        devices = [dra_device(c) for c in probe.contexts if not c.unusable]
        for name in group.node_names():
            slices.append({
                "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                "metadata": {"name": f"{name}-{NVIDIA_DRIVER}"},
                "spec": {"driver": NVIDIA_DRIVER, "nodeName": name,
                         "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                         "devices": [{"name": _dns_label(d.name),
                                      "attributes": {k: _attribute(f"GPU-{name}-{_dns_label(d.name)}" if k == "uuid" else v)
                                                     for k, v in d.attributes.items()},
                                      "capacity": {k: {"value": str(v)} for k, v in d.capacity.items()}}
                                     for d in devices]}})
    return slices


def create_nodes(kube: Kube, nodes: list[dict]) -> None:
    for node in nodes:
        kube.request("POST", "/api/v1/nodes", {k: v for k, v in node.items() if k != "status"})
        # A merge patch: KWOK writes the node's conditions meanwhile.
        kube.request("PATCH", f"/api/v1/nodes/{node['metadata']['name']}/status", {"status": node["status"]},
                     content_type="application/merge-patch+json")
    wait_schedulable(kube, [n["metadata"]["name"] for n in nodes])


def _schedulable(node: dict) -> bool:
    ready = _condition(node, "Ready")
    tainted = any(t.get("effect") in ("NoSchedule", "NoExecute") for t in node.get("spec", {}).get("taints") or [])
    return bool(ready and ready["status"] == "True") and not tainted


def wait_schedulable(kube: Kube, names: list[str]) -> bool:
    """Wait (at most NODES_READY_TIMEOUT) until every new node is Ready and the node lifecycle controller has
    lifted its `node.kubernetes.io/not-ready` taint, as a cluster's nodes are before its workloads arrive.
    Without it the first workloads saw only the nodes untainted so far: a 1-GPU Job's 8 pods all went to the
    one node that was (topology-cliff-default, where the simulation spreads them over four)."""
    deadline = time.monotonic() + NODES_READY_TIMEOUT
    waiting = set(names)
    while waiting and time.monotonic() < deadline:
        ready = {n["metadata"]["name"] for n in kube.list("v1", "Node") if _schedulable(n)}
        waiting -= ready
        if waiting:
            time.sleep(0.5)
    return not waiting


# --- the bundle ------------------------------------------------------------------------------
def _apply(kube: Kube, path: str, obj: dict, rejected: list[Rejected]) -> None:
    try:
        kube.apply(obj)
    except KubeError as exc:
        rejected.append(Rejected(path, obj.get("kind", "?"), obj.get("metadata", {}).get("name", "?"), exc.message))


def chart_objects(export) -> list[tuple[str, dict]]:
    """The cluster objects a chart of the bundle creates itself (targets.Component.creates: the DRA driver's
    DeviceClasses), rendered by helm with the bundle's values as `helm install` would; the charts' controllers
    and DaemonSets are not part of the plane, so nothing else of them is applied."""
    from placement.deploy import targets
    from placement.deploy.localplane.plane import SHARED, helm_template

    out = []
    for f in export.files:
        comp = targets.COMPONENTS.get(f.chart or "") if f.kind == "helm-values" else None
        if comp is None or not comp.creates:
            continue
        values = {**dict(comp.set_values), **(f.values or {})}
        wanted = set(comp.creates)
        out += [(f"{f.path} (chart {comp.local})", d)
                for d in helm_template(SHARED / "charts" / comp.local, comp.release, comp.namespace, values)
                if (d.get("kind"), d.get("metadata", {}).get("name")) in wanted]
    return out


def bundle_workloads(export) -> list[tuple[str, dict]]:
    return [(f.path, o) for f in export.files if f.kind == "manifests" and f.path.startswith("workloads/") for o in f.objects]


def apply_bundle(kube: Kube, export, workloads: list[tuple[str, dict]] | None = None) -> list[Rejected]:
    """Every object of the bundle in its install order; ``workloads`` (file, object) replace the bundle's
    workloads/ files. Workloads go in one per WORKLOAD_GAP seconds: Kueue orders equal priorities by
    creation time, which the API server keeps to the second."""
    rejected: list[Rejected] = []
    for path, obj in chart_objects(export):
        _apply(kube, path, obj, rejected)
    for f in export.files:
        if f.kind == "manifests" and not f.path.startswith("workloads/"):
            for obj in f.objects:
                _apply(kube, f.path, obj, rejected)
    applied_one = False
    for path, obj in bundle_workloads(export) if workloads is None else workloads:
        if applied_one and not is_companion(obj):
            time.sleep(WORKLOAD_GAP)
        applied_one |= not is_companion(obj)
        _apply(kube, path, obj, rejected)
    return rejected


def _snapshot(kube: Kube, namespaces: list[str]) -> tuple:
    state = []
    for ns in namespaces:
        for wl in kube.list(KUEUE, "Workload", ns):
            state.append(("wl", ns, wl["metadata"]["name"],
                          tuple((c["type"], c["status"], c.get("reason", "")) for c in wl.get("status", {}).get("conditions", []))))
        for pod in kube.list("v1", "Pod", ns):
            state.append(("pod", ns, pod["metadata"]["name"], pod["spec"].get("nodeName"), pod.get("status", {}).get("phase")))
        for gk in POD_GROUPS.values():
            for pg in _podgroups(kube, gk, ns):
                state.append(("pg", ns, pg["metadata"]["name"], pg.get("status", {}).get("phase")))
    return tuple(sorted(state))


def _podgroups(kube: Kube, gk: GroupKind, namespace: str) -> list[dict]:
    """The PodGroups of one kind in the namespace; none when its CRD is not installed."""
    try:
        return kube.list(gk.api, "PodGroup", namespace)
    except (KubeError, KeyError):
        return []


def _pod_groups(kube: Kube, gk: GroupKind, ns: str, pods: list[dict]) -> tuple[str, list[str]]:
    """The phase of the PodGroups these pods belong to (the least advanced when several) and the
    scheduler's own words about them: the conditions' and the Warning events' messages."""
    names = {p["metadata"].get("labels" if gk.in_labels else "annotations", {}).get(gk.key) for p in pods} - {None}
    groups = [g for g in _podgroups(kube, gk, ns) if g["metadata"]["name"] in names]
    if not groups:
        return "", []
    phases = [g.get("status", {}).get("phase") or "Pending" for g in groups]
    phase = min(phases, key=lambda ph: gk.phases.index(ph) if ph in gk.phases else -1)
    messages = [c["message"] for g in groups for c in g.get("status", {}).get("conditions", [])
                if c.get("message") and c.get("status") == "True"]
    if phase == "Running":  # a bound group's Warning events are the passing "1 Binding" of the bind cycle
        return phase, messages
    events = sorted((e for e in kube.list("v1", "Event", ns)
                     if e["involvedObject"].get("kind") == "PodGroup" and e["involvedObject"].get("name") in names
                     and e.get("type") == "Warning"), key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or "")
    messages += [e["message"] for e in events if e.get("message")]
    return phase, list(dict.fromkeys(messages))


def settle(kube: Kube, namespaces: list[str], progress: Callable[[str], None] | None = None) -> bool:
    """Wait until nothing the trial reads changes for QUIET_SECONDS; False if still moving at SETTLE_TIMEOUT."""
    start = time.monotonic()
    last, since = None, time.monotonic()
    while time.monotonic() - start < SETTLE_TIMEOUT:
        now = _snapshot(kube, namespaces)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= QUIET_SECONDS:
            return True
        time.sleep(1.0)
    return False


def _condition(obj: dict, kind: str) -> dict | None:
    return next((c for c in obj.get("status", {}).get("conditions", []) if c["type"] == kind), None)


def observe(kube: Kube, workloads: list[tuple[str, dict]]) -> list[WorkloadResult]:
    results = []
    for path, obj in workloads:
        if True:
            if is_companion(obj):
                continue
            meta = obj["metadata"]
            ns, name = meta.get("namespace", "default"), meta["name"]
            under_kueue = "kueue.x-k8s.io/queue-name" in meta.get("labels", {})
            pods = kube.list("v1", "Pod", ns, label_selector=f"app.kubernetes.io/name={name}")
            admitted, message = None, ""
            if under_kueue:
                # A Job's (JobSet's, ...) Workload is owned by the object; Kueue's pod integration (a
                # Deployment's or StatefulSet's pods) makes one per pod or pod group, owned by the pods.
                owners = {(obj["kind"], name)} | {("Pod", p["metadata"]["name"]) for p in pods}
                wls = [w for w in kube.list(KUEUE, "Workload", ns)
                       if any((o.get("kind"), o.get("name")) in owners for o in w["metadata"].get("ownerReferences", []))]
                if not wls:
                    admitted, message = False, "Kueue created no Workload for it"
                else:
                    states = []
                    for wl in sorted(wls, key=lambda w: w["metadata"]["name"]):
                        cond = _condition(wl, "Admitted")
                        ok = bool(cond and cond["status"] == "True")
                        reserved = _condition(wl, "QuotaReserved")
                        states.append((ok, (cond or {}).get("message", "") if ok
                                       else ((reserved or cond or {}).get("message", "") or "no condition yet")))
                    admitted = all(ok for ok, _ in states)
                    message = next((m for ok, m in states if ok is admitted), "")
            bound: dict[str, int] = {}
            pending = []
            for pod in pods:
                node = pod["spec"].get("nodeName")
                if node:
                    bound[node] = bound.get(node, 0) + 1
                else:
                    cond = _condition(pod, "PodScheduled")
                    pending.append((cond or {}).get("message") or f"no scheduler has acted (schedulerName {pod['spec'].get('schedulerName')})")
            schedulers = sorted({p["spec"].get("schedulerName") or PLANE_SCHEDULER for p in pods})
            gk = next((POD_GROUPS[n] for n in schedulers if n in POD_GROUPS), None)
            phase, pg_messages = _pod_groups(kube, gk, ns, pods) if gk else ("", [])
            results.append(WorkloadResult(path, obj["kind"], ns, name, admitted, message, len(pods), bound,
                                          sorted(set(pending)), schedulers=schedulers, podgroup_phase=phase,
                                          podgroup_messages=pg_messages))
    return results


# --- the simulator's answer -------------------------------------------------------------------
def probe_scenario(scenario: Scenario, names: list[str]) -> Scenario:
    """The scenario with only the exported example workloads, one each, running long past the instant
    observed; `names` in the order the trial creates them, and each submitted when the trial creates it
    (WORKLOAD_GAP apart). Submitted all at once, Kueue's order of a cycle's heads (priority first) would
    decide which of two contenders gets the last quota, where the plane admitted the first created. The
    scenario's events are left out: the trial applies none."""
    order = {name: i for i, name in enumerate(dict.fromkeys(names))}
    doc = scenario.model_dump(mode="json", exclude_none=True)
    workloads = []
    for w in doc["workloads"]:
        if w["name"] not in order:
            continue
        at = round(order[w["name"]] * WORKLOAD_GAP, 3)
        if w.get("kind") == "inference":
            w.update(start=at, stop=None)
            w.pop("stop", None)
        else:
            w.update(count=1, arrival={"at": at}, duration={"dist": "choice", "values": [PROBE_DURATION]}, created_early=0)
        workloads.append(w)
    doc["workloads"] = workloads
    doc["horizon"] = PROBE_HORIZON
    doc.pop("events", None)  # the trial applies none (node failures, drains, plugin restarts): the same instant
    return parse_scenario(doc, source="probe")


def simulator_answer(scenario: Scenario, names: list[str]) -> dict[str, object]:
    return simulator_answers(scenario, names)[0]


def simulator_answers(scenario: Scenario, names: list[str]) -> tuple[dict[str, object], dict[str, str]]:
    """The simulator's record per workload name and, under Volcano, its PodGroup phase at the instant:
    Running when started, Inqueue when its enqueue action let the group in (scheduler_core/policies/volcano.py),
    else Pending."""
    from scheduler_core.simulation import ClusterSimulation

    def base(name: str) -> str:
        return next((n for n in names if name == n or name.startswith(n + "-") or name.startswith(n + "#")), name)

    probe = probe_scenario(scenario, names)
    sim = ClusterSimulation(probe)
    result = sim.execute()
    by_name: dict[str, object] = {}
    for rec in result.workloads:
        by_name.setdefault(base(rec.name), rec)
    phases: dict[str, str] = {}
    inqueue = getattr(sim.scheduler, "inqueue", None)
    if inqueue is not None:
        for wl in sim.workloads:
            head = wl if getattr(wl, "group", None) is None else wl.group.leader
            phase = "Running" if wl.state == "running" else "Inqueue" if head.uid in inqueue else "Pending"
            phases.setdefault(base(wl.name), phase)
    return by_name, phases


def judge(results: list[WorkloadResult], answers: dict[str, object], phases: dict[str, str] | None = None,
          schedulers: set[str] = frozenset({PLANE_SCHEDULER})) -> None:
    """Agree when the simulator and the plane say the same on admission (Kueue; Volcano's PodGroup phase)
    and on binding (every pod bound), and bound workloads sit on the same pools. ``schedulers``: the
    schedulerNames the plane runs; pods naming another are judged on admission only."""
    for r in results:
        rec = answers.get(r.name)
        if rec is None:
            r.note = "the simulator has no record of this workload"
            continue
        r.sim_state, r.sim_nodes, r.sim_reason = rec.state, list(rec.nodes), rec.pending_reason or ""
        # Running now: a record's start is its first start, which a workload preempted since (queued
        # again, or re-admitted with its pods not yet placed) keeps.
        sim_bound = rec.start is not None and rec.state not in ("queued", "admitted")
        sim_admitted = sim_bound or rec.state == "admitted"
        owner = NO_CONTROLLER.get(r.kind)
        if owner and r.pods == 0:
            r.note = f"no pods: {owner} is not part of the plane; admission only"
            r.agree = None if r.admitted is None else r.admitted == sim_admitted
            continue
        r.sim_podgroup_phase = (phases or {}).get(r.name, "") if r.podgroup_phase else ""
        absent = [s for s in r.schedulers if s not in schedulers]
        if absent:
            r.note = f"pods wait for {', '.join(absent)}, which is not part of the plane; admission only"
            r.agree = None if r.admitted is None else r.admitted == sim_admitted
            continue
        real_bound = r.pods > 0 and not r.pending_messages
        disagree = []
        if r.admitted is not None and r.admitted != sim_admitted:
            disagree.append(f"Kueue {'admitted' if r.admitted else 'did not admit'} it, the simulator "
                            f"{'admitted' if sim_admitted else 'did not'}")
        if r.podgroup_phase and r.sim_podgroup_phase and r.podgroup_phase != r.sim_podgroup_phase:
            disagree.append(f"Volcano's PodGroup is {r.podgroup_phase}, the simulator's {r.sim_podgroup_phase}")
        who = ("Volcano" if "volcano" in r.schedulers else "coscheduling" if "scheduler-plugins-scheduler" in r.schedulers
               else "kube-scheduler")
        if real_bound != sim_bound:
            disagree.append(f"{who} {'bound every pod' if real_bound else 'left pods pending'}, the simulator "
                            f"{'started it' if sim_bound else 'did not start it'}")
        elif real_bound:
            sim_pools = {n.rsplit("-", 1)[0] for n in rec.nodes}
            if sim_pools and r.pools != sim_pools:
                disagree.append(f"placed on pools {sorted(r.pools)}, the simulator on {sorted(sim_pools)}")
        r.agree = not disagree
        r.note = "; ".join(disagree)


def try_scenario(kube: Kube, scenario: Scenario, *, export=None, workloads: list[dict] | None = None,
                 progress: Callable[[str], None] | None = None, components: tuple[str, ...] = ()) -> Trial:
    """``workloads`` (objects) replace the bundle's one example per class and pool; ``components``: the
    optional plane components running (LocalPlane.components), i.e. which schedulers act."""
    say = progress or (lambda _m: None)
    export = export or export_scenario(scenario)
    items = bundle_workloads(export) if workloads is None else [("workloads", o) for o in workloads]
    say("creating KWOK nodes")
    nodes = kwok_nodes(scenario)
    create_nodes(kube, nodes)
    for obj in dra_slices(scenario):
        kube.apply(obj)
    say("applying the bundle")
    rejected = apply_bundle(kube, export, items)
    namespaces = sorted({o["metadata"].get("namespace", "default") for _, o in items})
    say("waiting for the controllers to settle")
    settled = settle(kube, namespaces)
    results = observe(kube, items)
    say("running the simulator on the same workloads")
    answers, phases = simulator_answers(scenario, [r.name for r in results])
    running = {PLANE_SCHEDULER} | {n for n, needs in SCHEDULER_COMPONENTS.items() if set(needs) <= set(components)}
    judge(results, answers, phases, running)
    return Trial(scenario.name, len(nodes), rejected, results, settled)


def configure_plane(plane, export, workloads: list[dict] | None = None) -> None:
    """A plane shared by several trials runs as this bundle's installs configure it: Kueue with its manager
    configuration, kube-scheduler with its profile, Volcano's and scheduler-plugins' schedulers with what their
    charts render from its values, and the schedulers its pods name started."""
    plane.use_kueue_config(bundle_kueue_config(export))
    plane.use_scheduler_config(bundle_scheduler_config(export))
    plane.use_volcano_values(bundle_volcano_values(export))
    plane.use_coscheduling_values(bundle_coscheduling_values(export))
    plane.ensure(needed_components(export, workloads))


def try_on_plane(plane, scenario: Scenario, *, export=None, workloads: list[dict] | None = None,
                 progress: Callable[[str], None] | None = None) -> Trial:
    """A trial on a running LocalPlane, configured as the bundle's helm installs would: Kueue with the
    bundle's manager configuration, the schedulers its pods name started (Volcano), Volcano's scheduler
    with the configuration the chart renders from the bundle's values."""
    export = export or export_scenario(scenario)
    configure_plane(plane, export, workloads)
    return try_scenario(plane.kube, scenario, export=export, workloads=workloads, progress=progress,
                        components=tuple(plane.running()))


class CleanError(RuntimeError):
    """A trial's namespaces were still there when the next trial would have started in them."""


def clean(kube: Kube, scenario: Scenario, export=None, workloads: list[dict] | None = None) -> None:
    """Remove what try_scenario created, so the next scenario starts on an empty plane."""
    export = export or export_scenario(scenario)
    items = bundle_workloads(export) if workloads is None else [("workloads", o) for o in workloads]
    others = [o for f in export.files if f.kind == "manifests" and not f.path.startswith("workloads/")
              and f.path != "namespaces.yaml" for o in f.objects]
    others = [o for _, o in chart_objects(export)] + others + dra_slices(scenario)
    for obj in [o for _, o in items] + list(reversed(others)):
        meta = obj["metadata"]
        try:
            kube.delete(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"))
        except KubeError:
            pass
    ns_file = export.file("namespaces.yaml")
    names = [obj["metadata"]["name"] for obj in (ns_file.objects if ns_file else [])]
    # A pod bound to a KWOK node ends when KWOK, its kubelet, confirms; once the node is deleted nothing
    # does, and the pod stays Terminating until the pod GC's orphan sweep (40 s quarantine), holding its
    # namespace. The trial's pods go at once (grace 0, as `kubectl delete --force`) before their nodes.
    for ns in sorted({o["metadata"].get("namespace", "default") for _, o in items} | set(names)):
        for pod in kube.list("v1", "Pod", ns):
            kube.delete("v1", "Pod", pod["metadata"]["name"], ns, grace_seconds=0)
    for group in scenario.pool.node_groups:
        for name in group.node_names():
            kube.delete("v1", "Node", name)
    for name in names:
        kube.delete("v1", "Namespace", name)
    # A namespace lingers while the namespace controller empties it, and refuses new objects meanwhile
    # ("unable to create new content in namespace ... because it is being terminated"): clean returns when
    # they are gone, or says which one is not, rather than let the next trial's objects be refused.
    deadline = time.monotonic() + NAMESPACE_GONE_TIMEOUT
    for name in names:
        while True:
            try:
                ns = kube.get("v1", "Namespace", name)
            except KubeError as exc:
                if exc.code == 404:
                    break
                raise
            if time.monotonic() >= deadline:
                left = "; ".join(c.get("message", "") for c in ns.get("status", {}).get("conditions", [])
                                 if c.get("status") == "True")
                raise CleanError(f"namespace {name} is still {ns.get('status', {}).get('phase', 'there')} "
                                 f"after {NAMESPACE_GONE_TIMEOUT:.0f} s" + (f": {left}" if left else ""))
            time.sleep(0.5)
