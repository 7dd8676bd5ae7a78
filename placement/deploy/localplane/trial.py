"""Try a scenario's bundle on a running local plane: KWOK nodes shaped like its node groups, the bundle
applied in install order, the real controllers left to act until quiet; then per workload what Kueue
and kube-scheduler did, beside what the simulator answers for the same workloads at the same instant.

Pure Python (no Django): ``try_scenario(plane, scenario)`` returns a :class:`Trial`."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Callable

import yaml

from placement.deploy import export_scenario
from placement.deploy.control_plane import flavor_labels
from placement.deploy.data_plane import pool_plans
from placement.deploy.localplane.kube import Kube, KubeError
from placement.deploy.localplane.plane import KWOK_NODE_ANNOTATION
from scheduler_core.cluster import Node
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
PROBE_HORIZON = "10m"  # the simulator's instant: every example submitted at 0, observed shortly after
PROBE_DURATION = "1000h"  # long enough that nothing finishes before the instant
KUEUE = "kueue.x-k8s.io/v1beta2"
POOL_LABEL = "placement-atlas.io/pool"
# Objects a workload file carries beside its workload, which have no pods of their own: a DRA claim
# template, and the Workload API's Workload and PodGroup a kube-scheduler gang's pods name.
COMPANIONS = {("resource.k8s.io", "ResourceClaimTemplate"), ("scheduling.k8s.io", "Workload"),
              ("scheduling.k8s.io", "PodGroup")}


def is_companion(obj: dict) -> bool:
    return (obj.get("apiVersion", "").split("/")[0], obj.get("kind")) in COMPANIONS


# The one scheduler the plane runs; pods naming another (hami-scheduler, volcano, kai-scheduler) wait for it.
PLANE_SCHEDULER = "default-scheduler"
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
        layouts = group.mig_layouts(scenario.parameters.driver_slot_choice)
        probe = Node(f"{group.name}-probe", group.name, 0, 0, group.spec, group.gpus_per_node, group.link,
                     group.numa_nodes, dp, layouts)
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


def create_nodes(kube: Kube, nodes: list[dict]) -> None:
    for node in nodes:
        kube.request("POST", "/api/v1/nodes", {k: v for k, v in node.items() if k != "status"})
        # A merge patch: KWOK writes the node's conditions meanwhile.
        kube.request("PATCH", f"/api/v1/nodes/{node['metadata']['name']}/status", {"status": node["status"]},
                     content_type="application/merge-patch+json")


# --- the bundle ------------------------------------------------------------------------------
def _apply(kube: Kube, path: str, obj: dict, rejected: list[Rejected]) -> None:
    try:
        kube.apply(obj)
    except KubeError as exc:
        rejected.append(Rejected(path, obj.get("kind", "?"), obj.get("metadata", {}).get("name", "?"), exc.message))


def bundle_workloads(export) -> list[tuple[str, dict]]:
    return [(f.path, o) for f in export.files if f.kind == "manifests" and f.path.startswith("workloads/") for o in f.objects]


def apply_bundle(kube: Kube, export, workloads: list[tuple[str, dict]] | None = None) -> list[Rejected]:
    """Every object of the bundle in its install order; ``workloads`` (file, object) replace the bundle's
    workloads/ files. Workloads go in one per WORKLOAD_GAP seconds: Kueue orders equal priorities by
    creation time, which the API server keeps to the second."""
    rejected: list[Rejected] = []
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
    return tuple(sorted(state))


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
            results.append(WorkloadResult(path, obj["kind"], ns, name, admitted, message, len(pods), bound,
                                          sorted(set(pending)), schedulers=schedulers))
    return results


# --- the simulator's answer -------------------------------------------------------------------
def probe_scenario(scenario: Scenario, names: list[str]) -> Scenario:
    """The scenario with only the exported example workloads, one each, running long past the instant
    observed; `names` in the order the trial creates them, and each submitted when the trial creates it
    (WORKLOAD_GAP apart). Submitted all at once, Kueue's order of a cycle's heads (priority first) would
    decide which of two contenders gets the last quota, where the plane admitted the first created."""
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
    return parse_scenario(doc, source="probe")


def simulator_answer(scenario: Scenario, names: list[str]) -> dict[str, object]:
    from scheduler_core.simulation import ClusterSimulation

    probe = probe_scenario(scenario, names)
    result = ClusterSimulation(probe).execute()
    by_name: dict[str, object] = {}
    for rec in result.workloads:
        base = next((n for n in names if rec.name == n or rec.name.startswith(n + "-") or rec.name.startswith(n + "#")), rec.name)
        by_name.setdefault(base, rec)
    return by_name


def judge(results: list[WorkloadResult], answers: dict[str, object]) -> None:
    """Agree when the simulator and the plane say the same on admission (Kueue) and on binding (every
    pod bound), and bound workloads sit on the same pools."""
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
        absent = [s for s in r.schedulers if s != PLANE_SCHEDULER]
        if absent:
            r.note = f"pods wait for {', '.join(absent)}, which is not part of the plane; admission only"
            r.agree = None if r.admitted is None else r.admitted == sim_admitted
            continue
        real_bound = r.pods > 0 and not r.pending_messages
        disagree = []
        if r.admitted is not None and r.admitted != sim_admitted:
            disagree.append(f"Kueue {'admitted' if r.admitted else 'did not admit'} it, the simulator "
                            f"{'admitted' if sim_admitted else 'did not'}")
        if real_bound != sim_bound:
            disagree.append(f"kube-scheduler {'bound every pod' if real_bound else 'left pods pending'}, the simulator "
                            f"{'started it' if sim_bound else 'did not start it'}")
        elif real_bound:
            sim_pools = {n.rsplit("-", 1)[0] for n in rec.nodes}
            if sim_pools and r.pools != sim_pools:
                disagree.append(f"placed on pools {sorted(r.pools)}, the simulator on {sorted(sim_pools)}")
        r.agree = not disagree
        r.note = "; ".join(disagree)


def try_scenario(kube: Kube, scenario: Scenario, *, export=None, workloads: list[dict] | None = None,
                 progress: Callable[[str], None] | None = None) -> Trial:
    """``workloads`` (objects) replace the bundle's one example per class and pool."""
    say = progress or (lambda _m: None)
    export = export or export_scenario(scenario)
    items = bundle_workloads(export) if workloads is None else [("workloads", o) for o in workloads]
    say("creating KWOK nodes")
    nodes = kwok_nodes(scenario)
    create_nodes(kube, nodes)
    say("applying the bundle")
    rejected = apply_bundle(kube, export, items)
    namespaces = sorted({o["metadata"].get("namespace", "default") for _, o in items})
    say("waiting for the controllers to settle")
    settled = settle(kube, namespaces)
    results = observe(kube, items)
    say("running the simulator on the same workloads")
    judge(results, simulator_answer(scenario, [r.name for r in results]))
    return Trial(scenario.name, len(nodes), rejected, results, settled)


def clean(kube: Kube, scenario: Scenario, export=None, workloads: list[dict] | None = None) -> None:
    """Remove what try_scenario created, so the next scenario starts on an empty plane."""
    export = export or export_scenario(scenario)
    items = bundle_workloads(export) if workloads is None else [("workloads", o) for o in workloads]
    others = [o for f in export.files if f.kind == "manifests" and not f.path.startswith("workloads/")
              and f.path != "namespaces.yaml" for o in f.objects]
    for obj in [o for _, o in items] + list(reversed(others)):
        meta = obj["metadata"]
        try:
            kube.delete(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"))
        except KubeError:
            pass
    for group in scenario.pool.node_groups:
        for name in group.node_names():
            kube.delete("v1", "Node", name)
    ns_file = export.file("namespaces.yaml")
    names = [obj["metadata"]["name"] for obj in (ns_file.objects if ns_file else [])]
    for name in names:
        kube.delete("v1", "Namespace", name)
    # A namespace lingers while the namespace controller empties it, and refuses new objects meanwhile
    # ("unable to create new content in namespace ... because it is being terminated"): the next trial of
    # a bundle with the same namespaces waits until they are gone.
    deadline = time.monotonic() + NAMESPACE_GONE_TIMEOUT
    for name in names:
        while time.monotonic() < deadline:
            try:
                kube.get("v1", "Namespace", name)
            except KubeError as exc:
                if exc.code == 404:
                    break
                raise
            time.sleep(0.5)
