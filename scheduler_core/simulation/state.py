"""The state of a simulated cluster: what it holds now and what it has accumulated.

:class:`ClusterState` (the base of :class:`~scheduler_core.simulation.cluster_sim.ClusterSimulation`):
nodes, workloads, services, the integrals and counters the result is built from, the decision log,
and the helpers that keep them (node eligibility, accounting, workload states).  Beside it:
:class:`CapacityIndex` (free units per node group, for O(units) rejection of
unplaceable shapes), :class:`EvictionProbe` (would evicting these pods make
room?), :class:`ServiceState` (an inference service's rate and latency
account) and :func:`node_free_equiv` (free GPU-equivalents on a node).

Nothing here knows the policies or the scheduling cycle; the phases, the result builder and the
cluster simulation build on it.
"""

from __future__ import annotations

from typing import Iterable

from scheduler_core import metrics as M
from scheduler_core.cluster import GPU, UNBOUNDED_PODS, Node
from scheduler_core.events import Environment
from scheduler_core.latency import LatencyGrid, ServiceLatency
from scheduler_core.resources import CPU, MEMORY, add_into
from scheduler_core.scenario import InferenceWorkload, Scenario
from scheduler_core.simulation.eventlog import EventLog
from scheduler_core.workloads import Pod, Workload, expand_workloads

EPS = 1e-9


class CapacityIndex:
    """Per (resource, node group): how many eligible nodes have k free units.

    Lets a scheduling pass reject an unplaceable shape in O(max units)
    instead of scanning every node - the key to staying linear in the number
    of jobs when the backlog is long.
    """

    def __init__(self) -> None:
        self.hist: dict[tuple[str, str], list[int]] = {}
        self.contrib: dict[str, list[tuple[str, str, int]]] = {}

    def update(self, node: Node, eligible: bool) -> None:
        for res, grp, k in self.contrib.pop(node.name, ()):
            self.hist[(res, grp)][k] -= 1
        if not eligible:
            return
        out = []
        for res, k in node.free.items():
            h = self.hist.setdefault((res, node.group), [0])
            if k >= len(h):
                h.extend([0] * (k + 1 - len(h)))
            h[k] += 1
            out.append((res, node.group, k))
        self.contrib[node.name] = out

    def max_free(self, res: str, groups: Iterable[str]) -> int:
        best = 0
        for g in groups:
            h = self.hist.get((res, g))
            if not h:
                continue
            for k in range(len(h) - 1, best, -1):
                if h[k] > 0:
                    best = k
                    break
        return best

    def pods_fit(self, res: str, groups: Iterable[str], per_pod: int, limit: int) -> int:
        n = 0
        for g in groups:
            h = self.hist.get((res, g))
            if not h:
                continue
            for k in range(len(h) - 1, per_pod - 1, -1):
                if h[k]:
                    n += h[k] * (k // per_pod)
                    if n >= limit:
                        return n
        return n


class EvictionProbe:
    """Would ``pods`` pods of ``wl`` fit on ``nodes`` once the added victims' pods are gone?

    Node-local for count resources (free units per node, and one node if the
    workload requires it), so reclaim never evicts capacity the preemptor
    cannot use; other request kinds fall back to counting freed devices.
    Adding a victim costs O(its pods); :meth:`fits` is O(1).
    """

    def __init__(self, wl: Workload, pods: int, nodes: list[Node]) -> None:
        self.req = wl.request
        self.pods = pods
        self.level = wl.topology_required
        self.eligible = {n.name for n in nodes}
        self.count_kind = self.req.kind == "count"
        if self.count_kind:
            self.units = {n.name: n.free.get(self.req.resource, 0) for n in nodes}
            # pods each node still admits under its maxPods (None: not modelled): a victim frees one
            self.room = {n.name: None if n.max_pods is None else n.pods_room() for n in nodes}
            # host CPU / memory left per node, when the pods ask for them and the node models them
            self.host = {n.name: [n.cpu_free if self.req.cpu else None, n.host_gib_free if self.req.host_gib else None]
                         for n in nodes}
            fits = [self._fit(n.name) for n in nodes]
            self.total = sum(fits)
            self.best = max(fits, default=0)
        else:
            self.total = sum(n.fit_count(self.req) for n in nodes)
            self.best = self.total

    def _fit(self, name: str) -> int:
        k = self.units[name] // self.req.count if self.req.count else UNBOUNDED_PODS
        room = self.room[name]
        if room is not None:
            k = min(k, room)
        cpu, mem = self.host[name]
        if cpu is not None:
            k = min(k, int(cpu / self.req.cpu + EPS))
        if mem is not None:
            k = min(k, int(mem / self.req.host_gib + EPS))
        return k

    def add(self, victim_pods) -> None:
        req = self.req
        for p in victim_pods:
            if p.node is None or p.node.name not in self.eligible:
                continue
            if self.count_kind:
                name = p.node.name
                n = sum(1 for c in p.contexts if c.resource == req.resource)
                host = self.host[name]
                if not n and host == [None, None] and self.room[name] is None:
                    continue
                before = self._fit(name)
                self.units[name] += n
                if self.room[name] is not None:
                    self.room[name] += 1
                if host[0] is not None:
                    host[0] += p.wl.request.cpu
                if host[1] is not None:
                    host[1] += p.wl.request.host_gib
                after = self._fit(name)
                self.total += after - before
                self.best = max(self.best, after)
            else:
                self.total += len(p.contexts)
                self.best = self.total

    def fits(self) -> bool:
        if self.level == "node":
            return self.best >= self.pods
        return self.total >= self.pods


class ServiceState:
    """Runtime state of an inference service: current arrival rate and its latency account."""

    __slots__ = ("rate", "latency", "last", "active", "oom_kills")

    def __init__(self, spec: InferenceWorkload, grid: LatencyGrid) -> None:
        self.rate = spec.arrival_rate
        self.latency = ServiceLatency(grid, spec.service_time.mean, spec.service_time.cv, spec.slo.p99)
        self.last = spec.start
        self.active = False
        self.oom_kills = 0


def node_free_equiv(n: Node) -> float:
    free = 0.0
    for c in n.contexts:
        if c.unusable or not c.slots:
            continue
        if c.isolation == "hami":
            free += max(0.0, 1.0 - c.mem_declared / c.memory_mib) * (1.0 if c.used_slots < c.slots else 0.0)
        elif c.isolation == "kai":
            free += max(0.0, 1.0 - c.fraction_used)
        elif n.mechanism == "dra":
            free += 0.0 if c.tenants else c.equiv_per_slot
        else:
            free += c.free_slots * c.equiv_per_slot
    return free


class ClusterState(Environment):
    """A scenario's cluster on the event clock: hardware, workloads, accounting, counters and the log."""

    def __init__(self, scenario: Scenario) -> None:
        super().__init__(0.0, seed=scenario.seed)
        self.scenario = scenario
        self.params = scenario.parameters
        self.horizon = scenario.horizon
        self.cp = scenario.stack.control_plane
        # -- hardware
        self.nodes: list[Node] = []
        self.node_by_name: dict[str, Node] = {}
        self.groups: dict[str, list[Node]] = {}
        for g in scenario.pool.node_groups:
            layouts = g.mig_layouts(self.params.driver_slot_choice)
            dp = scenario.stack.data_plane_for(g.name)
            for i, name in enumerate(g.node_names()):
                node = Node(name, g.name, len(self.nodes), g.rack_of(i), g.spec, g.gpus_per_node, g.link,
                            g.numa_nodes, dp, layouts)
                node.set_nics(g.nics or g.gpus_per_node, g.nic_gbps / 8.0 if g.nic_gbps else None, g.nic_numa)
                node.cpu_free, node.host_gib_free = g.cpu, g.memory_gib
                node.max_pods = g.max_pods
                self.nodes.append(node)
                self.node_by_name[name] = node
                self.groups.setdefault(g.name, []).append(node)
        self.group_names = list(self.groups)
        self.pods_bounded = any(g.max_pods is not None for g in scenario.pool.node_groups)  # maxPods on some nodes
        shared_claims: dict[str, list] = {}  # DRA claims shared by pods: one registry for every node
        for n in self.nodes:
            n.shared_claims = shared_claims
        self.capacity_gpus = sum(len(n.gpus) for n in self.nodes)
        self.capacity_total = self._capacity_total(scenario)
        self.max_node_gpus = max(len(n.gpus) for n in self.nodes)
        self.index = CapacityIndex()
        self._eligible_cache: dict[str | None, list[Node]] = {}
        self._eligible_state: dict[str, bool] = {}
        self.running_priorities: dict[int, int] = {}  # pod priority -> bound pods (cheap preemption pre-check)
        for n in self.nodes:
            self.refresh_node(n)
        # -- workloads
        self.workloads: list[Workload] = expand_workloads(scenario)
        if scenario.stack.control_plane.admission == "kueue":
            # The export writes priorities as Kueue WorkloadPriorityClasses (admission order and Kueue's own
            # preemption); pods carry no PriorityClass, so kube-scheduler orders and preempts them at 0.
            for wl in self.workloads:
                wl.pod_priority = 0
        self.tenants = {t.name: t for t in scenario.tenant_list()}
        self.grid = LatencyGrid(self.params.latency_grid_per_decade)
        self.services: dict[int, ServiceState] = {}
        for wl in self.workloads:
            if wl.kind == "inference":
                self.services[wl.uid] = ServiceState(wl.spec, self.grid)
        self._pod_seq = 0
        # -- accounting (integrated piecewise-constant between mutations)
        self._t_last = 0.0
        self.alloc_equiv = 0.0
        self.eff_equiv = 0.0
        self.partial_gpus = 0.0
        self.pending_pods = 0
        self.running_pods = 0
        self.alloc_int = 0.0
        self.eff_int = 0.0
        self.partial_int = 0.0
        self.pending_int = 0.0
        self.max_partial = 0.0
        self.max_pending = 0
        self.tenant_alloc = {t: 0.0 for t in self.tenants}
        self.tenant_alloc_int = {t: 0.0 for t in self.tenants}
        self.tenant_last = {t: 0.0 for t in self.tenants}
        self.tenant_demand = {t: 0.0 for t in self.tenants}
        # Per scheduler queue, the resource vectors (DeviceRequest.share) of its bound and its pending pods.
        self.queue_usage: dict[str, dict[str, float]] = {}
        self.queue_releasing: dict[str, dict[str, float]] = {}  # the part of queue_usage still terminating
        self.queue_pending: dict[str, dict[str, float]] = {}
        self.tenant_fair_int = {t: 0.0 for t in self.tenants}
        self.tenant_recv_int = {t: 0.0 for t in self.tenants}
        self.waiting_workloads = 0
        # -- counters
        self.rendezvous_timeouts = 0
        self.admission_errors: dict[str, int] = {}
        self.oom_kills = 0
        self.oom_incidents: list[M.OomIncident] = []
        self.oom_incident_count = 0
        self.oom_collateral = 0
        self.oom_max_blast = 0
        self.oom_by_workload: dict[str, int] = {}
        self.faults = 0
        self.fault_kills = 0
        self.fault_max_blast = 0
        self.preemptions = 0
        self.preempt_reasons: dict[str, int] = {}
        self.lost_gpu_hours = 0.0
        self.reconfig_drains = 0
        self.reconfig_seconds = 0.0
        self.reconfig_gpu_hours = 0.0
        self.reconfig_failed = 0
        self._reconfig_pending: dict[str, tuple[float, list[int], object]] = {}
        self.samples = M.TimeSeries(tenant_allocated_gpus={t: [] for t in self.tenants})
        self.stranded_sum = 0.0
        self.frag_sum = 0.0
        self.frag_n = 0
        self.samples_n = 0
        self.log = EventLog()
        self.full_pass = True  # capacity was freed since the last pass: retry every waiting shape

    @staticmethod
    def _capacity_total(scenario: Scenario) -> dict[str, float]:
        """The cluster's allocatable total per queue resource: GPUs always; cpu and memory (GiB) when
        every node group states them (a group that does not leaves the resource unbounded)."""
        groups = scenario.pool.node_groups
        out = {GPU: float(sum(g.count * g.gpus_per_node for g in groups))}
        if all(g.cpu is not None for g in groups):
            out[CPU] = float(sum(g.count * g.cpu for g in groups))
        if all(g.memory_gib is not None for g in groups):
            out[MEMORY] = float(sum(g.count * g.memory_gib for g in groups))
        return out

    # ================================================================ nodes
    def node_eligible(self, node: Node) -> bool:
        """Can the scheduler place new pods here?  (What it can *see*, not what will work.)"""
        if not node.up or node.cordoned or node.reconfiguring:
            return False
        if not node.plugin_ready and (self.cp.respect_device_plugin_readiness or node.mechanism == "dra"):
            # DRA: the driver's ResourceSlices vanish with it, so the scheduler sees no devices.
            return False
        return True

    def refresh_node(self, node: Node) -> None:
        ok = self.node_eligible(node)
        if ok != self._eligible_state.get(node.name):
            self._eligible_state[node.name] = ok
            self._eligible_cache.clear()
            if ok:
                self.full_pass = True
        self.index.update(node, ok)

    def candidate_nodes(self, wl: Workload) -> list[Node]:
        """Nodes the scheduler may place ``wl`` on (cached until a node's eligibility changes)."""
        key = wl.node_group
        out = self._eligible_cache.get(key)
        if out is None:
            nodes = self.groups[key] if key else self.nodes
            out = self._eligible_cache[key] = [n for n in nodes if self.node_eligible(n)]
        return out

    def groups_for(self, wl: Workload) -> list[str]:
        return [wl.node_group] if wl.node_group else self.group_names

    def queue_allocated(self, queue: str) -> dict[str, float]:
        """What a queue holds as Volcano's and KAI's sessions count it: bound pods, not the terminating ones
        (a releasing pod is in no queue's allocation, though it keeps its devices on the node)."""
        used = self.queue_usage.get(queue, {})
        releasing = self.queue_releasing.get(queue)
        return add_into(dict(used), releasing, -1.0) if releasing else used

    def log_event(self, kind: str, wl: Workload, detail: str = "", node: str | None = None) -> None:
        """Record a decision in the bounded event log (policies call it through the port)."""
        self.log.record(self.now, kind, wl.name, detail, node)

    # ============================================================ accounting
    def _advance(self) -> None:
        dt = self.now - self._t_last
        if dt > 0:
            # Maxima count only states that lasted: a pod created and bound in one pass is not "pending".
            if self.pending_pods > self.max_pending:
                self.max_pending = self.pending_pods
            if self.partial_gpus > self.max_partial:
                self.max_partial = self.partial_gpus
            self.alloc_int += self.alloc_equiv * dt
            self.eff_int += self.eff_equiv * dt
            self.partial_int += self.partial_gpus * dt
            self.pending_int += self.pending_pods * dt
            self._t_last = self.now

    def _tenant_alloc_add(self, tenant: str, delta: float) -> None:
        last = self.tenant_last[tenant]
        self.tenant_alloc_int[tenant] += self.tenant_alloc[tenant] * (self.now - last)
        self.tenant_last[tenant] = self.now
        self.tenant_alloc[tenant] += delta

    def _pending_add(self, n: int, wl: Workload) -> None:
        self._advance()
        self.pending_pods += n
        add_into(self.queue_pending.setdefault(wl.queue, {}), wl.request.share, n)

    def _partial_add(self, x: float) -> None:
        self._advance()
        self.partial_gpus += x
        if abs(self.partial_gpus) < EPS:
            self.partial_gpus = 0.0

    def _set_effective(self, pod: Pod, value: float) -> None:
        if value != pod.effective_share:
            self._advance()
            self.eff_equiv += value - pod.effective_share
            pod.effective_share = value

    def count_admission_error(self, reason: str) -> None:
        self.admission_errors[reason] = self.admission_errors.get(reason, 0) + 1

    # ================================================================ workloads
    WAITING_STATES = ("queued", "admitted")

    def set_state(self, wl: Workload, state: str) -> None:
        """Change a workload's state, keeping the count of waiting workloads."""
        if wl.state in self.WAITING_STATES:
            self.waiting_workloads -= 1
        wl.state = state
        if state in self.WAITING_STATES:
            self.waiting_workloads += 1

    def demand_equiv(self, wl: Workload) -> float:
        """What a workload will hold once placed, in the GPU-equivalents allocation is counted in
        (cluster.gpu_equivalents), so a tenant's fair share is capped by a demand of the same unit:
        a HAMi pod at 10% cores and 4 of 80 GiB holds 0.1 GPU, not 1; a time-slicing replica 1/replicas."""
        req = wl.request
        groups = [g for g in self.scenario.pool.node_groups if wl.node_group in (None, g.name)]
        if not groups:
            return wl.gpus
        group = groups[0]
        dp = self.scenario.stack.data_plane_for(group.name)
        if req.kind == "hami":
            card = group.spec.memory_mib
            mem = req.memory_mib / card if req.memory_mib else (req.mem_percentage / 100.0 if req.mem_percentage else 1.0)
            return min(1.0, max(req.cores / 100.0, mem)) * req.count * wl.full_count
        if req.kind == "count" and req.profile is None and dp.mechanism in ("time-slicing", "mps"):
            replicas = dp.time_slicing.replicas if dp.mechanism == "time-slicing" else dp.mps.replicas
            return req.count * wl.full_count / replicas
        return wl.gpus
