"""The cluster simulation: one :class:`~scheduler_core.engine.Environment` holding all state.

Life of a workload (see docs/simulator-model.md):

submit -> [admission (Kueue) holds it until quota admits it] -> pods created
-> [scheduler places pods: pod by pod (kube-scheduler) or all-or-nothing
(coscheduling, Volcano, KAI)] -> kubelet Allocate on the node (fails with
UnexpectedAdmissionError if the device plugin is not registered) -> gang
complete: training progresses at the rate of its slowest worker divided by
the topology factor; services serve requests -> completion / stop.

Everything that changes a device context (bind, release, crash, restart,
load change) goes through :meth:`ClusterSimulation._begin` (bring every
tenant's progress and latency accounts up to *now*) and
:meth:`ClusterSimulation._settle` (recompute speeds, rates, completion
times and the OOM watch), so the piecewise-constant accounting stays exact.
"""

from __future__ import annotations

import math
from typing import Callable, Iterable

from scheduler_core.cluster import DeviceContext, Node
from scheduler_core.engine import Environment, Priority
from scheduler_core.interference import speed_in, topology_factor
from scheduler_core.latency import LatencyGrid, ServiceLatency
from scheduler_core import metrics as M
from scheduler_core.scenario import InferenceWorkload, Scenario
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
    """Would ``pods`` pods of ``wl`` fit once the added victims' pods are gone?

    Node-local for count resources (free units per node, and one node if the
    workload requires it), so reclaim never evicts capacity the preemptor
    cannot use; other request kinds fall back to counting freed devices.
    Adding a victim costs O(its pods); :meth:`fits` is O(1).
    """

    def __init__(self, sim: "ClusterSimulation", wl: Workload, pods: int) -> None:
        self.req = wl.request
        self.pods = pods
        self.level = wl.topology_required
        nodes = sim.candidate_nodes(wl)
        self.eligible = {n.name for n in nodes}
        self.count_kind = self.req.kind == "count"
        if self.count_kind:
            self.units = {n.name: n.free.get(self.req.resource, 0) for n in nodes}
            self.total = sum(u // self.req.count for u in self.units.values())
            self.best = max((u // self.req.count for u in self.units.values()), default=0)
        else:
            self.total = sum(n.fit_count(self.req) for n in nodes)
            self.best = self.total

    def add(self, victim_pods) -> None:
        req = self.req
        for p in victim_pods:
            if p.node is None or p.node.name not in self.eligible:
                continue
            if self.count_kind:
                n = sum(1 for c in p.contexts if c.resource == req.resource)
                if not n:
                    continue
                before = self.units[p.node.name] // req.count
                self.units[p.node.name] += n
                after = self.units[p.node.name] // req.count
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


class ClusterSimulation(Environment):
    """A scenario being simulated.  Build it, call :meth:`execute`, get a :class:`SimulationResult`."""

    def __init__(self, scenario: Scenario, progress: Callable[[float], None] | None = None) -> None:
        super().__init__(0.0, seed=scenario.seed)
        self.scenario = scenario
        self.params = scenario.parameters
        self.horizon = scenario.horizon
        self.cp = scenario.stack.control_plane
        self.progress_cb = progress
        # -- hardware
        self.nodes: list[Node] = []
        self.node_by_name: dict[str, Node] = {}
        self.groups: dict[str, list[Node]] = {}
        for g in scenario.pool.node_groups:
            layouts = g.mig_layouts(self.params.driver_slot_choice)
            dp = scenario.stack.data_plane_for(g.name)
            for i, name in enumerate(g.node_names()):
                rack = i * g.racks // g.count
                node = Node(name, g.name, len(self.nodes), rack, g.spec, g.gpus_per_node, g.link, g.numa_nodes,
                            dp, layouts)
                self.nodes.append(node)
                self.node_by_name[name] = node
                self.groups.setdefault(g.name, []).append(node)
        self.group_names = list(self.groups)
        self.capacity_gpus = sum(len(n.gpus) for n in self.nodes)
        self.max_node_gpus = max(len(n.gpus) for n in self.nodes)
        self.index = CapacityIndex()
        self._eligible_cache: dict[str | None, list[Node]] = {}
        self._eligible_state: dict[str, bool] = {}
        self.running_priorities: dict[int, int] = {}  # priority -> bound pods (cheap preemption pre-check)
        for n in self.nodes:
            self.refresh_node(n)
        # -- workloads
        self.workloads: list[Workload] = expand_workloads(scenario)
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
        self.queue_units: dict[str, float] = {}  # GPU units bound per scheduler queue (quota accounting)
        self.queue_pending_units: dict[str, float] = {}  # GPU units of pending pods per queue
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
        # -- policies
        from scheduler_core.policies import make_admission, make_scheduler
        self.scheduler = make_scheduler(self)
        self.admission = make_admission(self)
        self._cycle_event = None
        self._next_arrival = 0
        self.full_pass = True  # capacity was freed since the last pass: retry every waiting shape

    # ================================================================ helpers
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

    def quick_fit(self, wl: Workload, pods: int = 1) -> bool:
        """Cheap necessary condition for placing ``pods`` pods of ``wl`` (exact for count resources)."""
        req = wl.request
        if req.kind != "count":
            return True
        return self.index.pods_fit(req.resource, self.groups_for(wl), req.count, pods) >= pods

    def eviction_probe(self, wl: Workload, pods: int) -> "EvictionProbe":
        """Incremental check of whether evicting some pods makes room for ``pods`` pods of ``wl``."""
        return EvictionProbe(self, wl, pods)

    def kube_scoring(self, wl: Workload) -> str:
        """The node scoring kube-scheduler applies to this pod (HAMi's extender overrides it)."""
        if wl.request.kind == "hami":
            nodes = self.groups[wl.node_group] if wl.node_group else self.nodes
            pol = nodes[0].data_plane.hami.node_scheduler_policy if nodes else "binpack"
            return "binpack" if pol == "binpack" else "spread"
        return "binpack" if self.cp.kube.scoring == "MostAllocated" else "spread"

    def request_cycle(self) -> None:
        if self._cycle_event is None:
            self._cycle_event = self.schedule(self.now, Priority.SCHEDULE, self._cycle)

    def retry_at(self, t: float) -> None:
        """Ask for a full scheduling pass at ``t`` (backoffs, timers)."""
        self.schedule(max(t, self.now), Priority.SCHEDULE - 1, self.request_full_cycle)

    def request_full_cycle(self) -> None:
        self.full_pass = True
        self.request_cycle()

    def _cycle(self) -> None:
        self._cycle_event = None
        if self.admission is not None:
            self.admission.cycle()
        self.scheduler.cycle()
        self.scheduler.end_pass()
        if self.admission is not None:
            self.admission.end_pass()
        self.full_pass = False

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
        self.queue_pending_units[wl.queue] = self.queue_pending_units.get(wl.queue, 0.0) + n * wl.request.gpu_units()

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

    # ================================================================ arrivals
    def _schedule_next_arrival(self) -> None:
        if self._next_arrival < len(self.workloads):
            wl = self.workloads[self._next_arrival]
            if wl.submit <= self.horizon:
                self.schedule(wl.submit, Priority.ARRIVAL, self._on_arrival)

    def _on_arrival(self) -> None:
        wl = self.workloads[self._next_arrival]
        self._next_arrival += 1
        self._submit(wl)
        self._schedule_next_arrival()

    WAITING_STATES = ("queued", "admitted")

    def set_state(self, wl: Workload, state: str) -> None:
        """Change a workload's state, keeping the count of waiting workloads."""
        if wl.state in self.WAITING_STATES:
            self.waiting_workloads -= 1
        wl.state = state
        if state in self.WAITING_STATES:
            self.waiting_workloads += 1

    def _submit(self, wl: Workload) -> None:
        self.set_state(wl, "queued")
        self.tenant_demand[wl.tenant] += wl.gpus
        if wl.kind == "inference":
            svc = self.services[wl.uid]
            svc.active = True
            svc.last = self.now
            spec: InferenceWorkload = wl.spec
            for step in spec.rate_schedule:
                if spec.start <= step.at <= self.horizon:
                    self.schedule(step.at, Priority.ARRIVAL, self._rate_change, wl, step.rps)
            if spec.stop is not None and spec.stop <= self.horizon:
                self.schedule(spec.stop, Priority.COMPLETION, self._stop_service, wl)
        if self.admission is not None:
            self.admission.submit(wl)
        else:
            self.create_pods(wl)
        self.request_cycle()

    def create_pods(self, wl: Workload, n: int | None = None) -> None:
        """The workload controller creates its missing pods; they join the scheduler queue."""
        if n is None:
            n = wl.pods_total - len(wl.pods) - wl.pending
        if n <= 0:
            return
        wl.pending += n
        self._pending_add(n, wl)
        self.scheduler.enqueue(wl)

    def drop_pending(self, wl: Workload) -> None:
        if wl.pending:
            self._pending_add(-wl.pending, wl)
            wl.pending = 0
        self.scheduler.remove(wl)

    # ================================================================ binding
    def plan(self, wl: Workload, pods: int, strategy: str, level: str | None = None,
             nodes: list[Node] | None = None) -> list[tuple[Node, int]] | None:
        """Choose nodes for ``pods`` pods of ``wl`` without committing; None if they do not all fit.

        strategy: ``spread`` (kube-scheduler LeastAllocated), ``binpack``
        (MostAllocated / Volcano binpack / KAI), ``pack`` (topology-aware:
        fewest nodes, one node or one rack if ``level`` requires it).
        """
        req = wl.request
        cands = nodes if nodes is not None else self.candidate_nodes(wl)
        fits = []
        total = 0
        for n in cands:
            k = n.fit_count(req)
            if k > 0:
                fits.append([n, min(k, pods)])
                total += min(k, pods)
        if total < pods:
            return None
        if strategy == "pack" or level is not None:
            return self._plan_pack(fits, pods, level, wl)
        plan: dict[str, list] = {}
        # Greedy per pod; the score is the node's free share after the tentative pods.
        cap_total = {n.name: max(1, n.advertised.get(req.resource, 0)) for n, _ in fits}
        base_free = {n.name: n.free_fraction(req) for n, _ in fits}
        used = {n.name: 0 for n, _ in fits}
        per_pod_share = {n.name: (req.count / cap_total[n.name]) if req.kind == "count"
                         else 1.0 / max(1, len(n.contexts)) for n, _ in fits}
        for _ in range(pods):
            best = None
            best_key = None
            for n, k in fits:
                if used[n.name] >= k:
                    continue
                free = base_free[n.name] - used[n.name] * per_pod_share[n.name]
                key = (-free if strategy == "spread" else free, n.index)
                if best_key is None or key < best_key:
                    best, best_key = n, key
            if best is None:
                return None
            used[best.name] += 1
            plan.setdefault(best.name, [best, 0])[1] += 1
        return [(n, k) for n, k in sorted(plan.values(), key=lambda x: x[0].index)]

    def _plan_pack(self, fits: list, pods: int, level: str | None, wl: Workload):
        # Prefer NVSwitch nodes for communication-heavy gangs (topology-aware schedulers know the link).
        def link_rank(n: Node) -> int:
            return 0 if (n.link == "nvswitch" or wl.topology_sensitivity <= 0) else 1

        single = [(n, k) for n, k in fits if k >= pods]
        if single:
            n, _ = min(single, key=lambda x: (link_rank(x[0]), x[1], x[0].index))  # best fit
            return [(n, pods)]
        if level == "node":
            return None
        racks: dict[tuple[str, int], list] = {}
        for n, k in fits:
            racks.setdefault((n.group, n.rack), []).append((n, k))
        rack_fit = [(key, members) for key, members in racks.items() if sum(k for _, k in members) >= pods]
        if rack_fit:
            _, members = min(rack_fit, key=lambda x: (sum(k for _, k in x[1]), x[0]))
            return self._fill(members, pods)
        if level == "rack":
            return None
        return self._fill(fits, pods)

    @staticmethod
    def _fill(members: list, pods: int):
        out = []
        left = pods
        for n, k in sorted(members, key=lambda x: (-x[1], x[0].index)):
            take = min(k, left)
            out.append((n, take))
            left -= take
            if left == 0:
                break
        return out if left == 0 else None

    def bind_plan(self, wl: Workload, plan: list[tuple[Node, int]]) -> int:
        bound = 0
        for node, k in plan:
            for _ in range(k):
                if wl.pending <= 0:
                    return bound
                ctxs = node.choose_contexts(wl.request, self.rng)
                if ctxs is None:
                    return bound
                self.bind_pod(wl, node, ctxs)
                bound += 1
        return bound

    def place_pods_individually(self, wl: Workload, strategy: str) -> int:
        """kube-scheduler style: one pod at a time until none fits.  Returns pods bound."""
        bound = 0
        while wl.pending > 0:
            if not self.quick_fit(wl, 1):
                break
            plan = self.plan(wl, 1, strategy)
            if not plan:
                break
            if self.bind_plan(wl, plan) == 0:
                break
            bound += 1
        return bound

    def bind_pod(self, wl: Workload, node: Node, ctxs: list[DeviceContext]) -> Pod | None:
        """Bind one pending pod; the kubelet may reject it (UnexpectedAdmissionError)."""
        self._advance()
        if wl.kind == "inference":
            # Close the interval with the replicas that served it: until now this pod was not
            # serving, and while no replica ran, every request went unserved.
            self._flush_service(wl)
        self._pod_seq += 1
        pod = Pod(wl, len(wl.pods), self._pod_seq)
        wl.pending -= 1
        self._pending_add(-1, wl)
        req = wl.request
        reason = None
        if not node.plugin_ready and node.mechanism != "dra":
            reason = "UnexpectedAdmissionError"  # kubelet: device plugin resource not registered
        elif (node.mechanism == "time-slicing" and req.kind == "count" and req.count > 1
              and node.data_plane.time_slicing.fail_requests_greater_than_one):
            reason = "UnexpectedAdmissionError"  # failRequestsGreaterThanOne (§2.1)
        if reason is not None:
            self.count_admission_error(reason)
            wl.admission_errors += 1
            if wl.kind != "inference" and wl.admission_errors > self.params.max_restarts:
                self.fail_workload(wl, "BackoffLimitExceeded")
                return None
            if wl.kind == "inference":  # ReplicaSet: replaces the pod at once
                delay = self.params.controller_recreate_delay
            else:  # Job controller: exponential retry backoff per failed pod
                wl.failed_pods += 1
                delay = self._job_backoff(wl.failed_pods)
            self.schedule_in(delay, Priority.ARRIVAL, self._recreate_pod, wl)
            return None
        if wl.first_bind is None:
            wl.first_bind = self.now
        affected = self._begin(ctxs)
        node.commit(pod, req, ctxs)
        self.refresh_node(node)
        pod.node = node
        pod.contexts = ctxs
        pod.bound_at = self.now
        pod.container_start = self.now
        pod.equiv = node.gpu_equivalents(req, ctxs)
        iso = ctxs[0].isolation
        if iso == "exclusive":
            pod.mem_limit = min(c.memory_mib for c in ctxs)
        elif iso == "mps":
            mps = node.data_plane.mps  # active thread percentage, default 100 / replicas (§2.2)
            pod.cap = (mps.active_thread_percentage / 100.0 if mps.active_thread_percentage
                       else 1.0 / mps.replicas)
            pod.mem_limit = min(c.memory_mib for c in ctxs) / node.data_plane.mps.replicas
        elif iso == "hami":
            pod.cap = req.cores / 100.0 if req.cores > 0 else 1.0
            pod.mem_limit = req.memory_mib  # HAMi-core hard cap on allocations (§3)
        else:
            pod.mem_limit = None  # time-slicing / KAI fractions: no memory isolation
        wl.pods.append(pod)
        self.alloc_equiv += pod.equiv
        self.running_pods += 1
        self._tenant_alloc_add(wl.tenant, pod.equiv)
        self.queue_units[wl.queue] = self.queue_units.get(wl.queue, 0.0) + wl.request.gpu_units()
        self.running_priorities[wl.priority] = self.running_priorities.get(wl.priority, 0) + 1
        if wl.kind == "inference":
            pod.state = "running"
            self._settle(ctxs, affected)
            if wl.first_start is None:
                wl.first_start = self.now
            if wl.state != "running":
                self.set_state(wl, "running")
            self.refresh_service(wl)
            if any(c.unusable for c in ctxs):
                self.schedule(self.now, Priority.FAULT, self._device_unusable, pod)
            self.notify_ready(wl)
            return pod
        pod.state = "bound"
        if wl.pods_total > 1 and not wl.gang_complete:
            self._partial_add(pod.equiv)
        self._settle(ctxs, affected)
        if any(c.unusable for c in ctxs):
            self.schedule(self.now, Priority.FAULT, self._device_unusable, pod)
        if not wl.gang_complete and len(wl.pods) >= wl.pods_total:
            self._gang_start(wl)
        elif wl.pods_total > 1 and wl.timeout_event is None and not wl.gang_complete:
            wl.timeout_event = self.schedule_in(self.params.rendezvous_timeout, Priority.MONITOR,
                                                self._rendezvous_timeout, wl)
        return pod

    def _recreate_pod(self, wl: Workload) -> None:
        if wl.state in ("done", "failed", "stopped"):
            return
        if self.admission is not None and not self.admission.is_admitted(wl):
            return
        self.create_pods(wl, 1)
        self.request_cycle()

    def _device_unusable(self, pod: Pod) -> None:
        # mig-strategy none handed a MIG-mode GPU to the pod: CUDA sees no device and the container exits.
        if pod.state in ("running", "bound"):
            self.count_admission_error("ContainerCannotUseDevice")
            self.crash_pod(pod, "NoCudaDevice")

    # ============================================================ gang life
    def _gang_start(self, wl: Workload) -> None:
        self._advance()
        if wl.timeout_event is not None:
            wl.timeout_event.cancel()
            wl.timeout_event = None
        if wl.pods_total > 1:
            self._partial_add(-sum(p.equiv for p in wl.pods))
        wl.gang_complete = True
        self.set_state(wl, "running")
        if wl.first_start is None:
            wl.first_start = self.now
        wl.topology_factor = topology_factor([p.contexts for p in wl.pods], wl.topology_sensitivity, self.params,
                                             self.max_node_gpus)
        wl.last_nodes = sorted({p.node.name for p in wl.pods})
        wl.worst_topology_factor = max(wl.worst_topology_factor, wl.topology_factor)
        ctxs = [c for p in wl.pods for c in p.contexts]
        affected = self._begin(ctxs)
        wl.progress_t = self.now
        for p in wl.pods:
            if p.state == "bound":
                p.state = "running"
        self._settle(ctxs, affected | {wl.uid: wl})
        self.notify_ready(wl)

    def notify_ready(self, wl: Workload) -> None:
        if self.admission is not None:
            self.admission.on_ready(wl)

    def _rendezvous_timeout(self, wl: Workload) -> None:
        wl.timeout_event = None
        if wl.gang_complete or wl.state in ("done", "failed", "stopped") or not wl.pods:
            return
        # Workers that waited too long for their peers give up; the job restarts from scratch placement.
        self.rendezvous_timeouts += 1
        wl.restarts += 1
        if wl.restarts > self.params.max_restarts:
            self.fail_workload(wl, "RendezvousTimeout")
            return
        for p in list(wl.pods):
            self.release_pod(p)
        wl.failed_pods += 1
        self.schedule_in(self._job_backoff(wl.failed_pods), Priority.ARRIVAL, self._recreate_all, wl)

    def _recreate_all(self, wl: Workload) -> None:
        if wl.state in ("done", "failed", "stopped"):
            return
        if self.admission is not None and not self.admission.is_admitted(wl):
            return
        self.create_pods(wl)
        self.request_cycle()

    def _crash_backoff(self, step: int) -> float:
        """Kubelet CrashLoopBackOff before the ``step``-th restart since the last reset."""
        return min(self.params.restart_backoff_max, self.params.restart_backoff * 2 ** max(0, step - 1))

    def _next_crash_step(self, step: int, ran_since: float) -> int:
        # The kubelet forgets earlier crashes once the container has run restart_backoff_reset.
        return 1 if self.now - ran_since >= self.params.restart_backoff_reset else step + 1

    def _job_backoff(self, failures: int) -> float:
        """Job controller delay before recreating a pod after its ``failures``-th failed pod."""
        return min(self.params.job_retry_backoff_max, self.params.job_retry_backoff * 2 ** max(0, failures - 1))

    # ==================================================== context changes
    def _begin(self, ctxs: Iterable[DeviceContext]) -> dict[int, Workload]:
        """Bring every workload sharing ``ctxs`` up to date before their speeds change."""
        affected: dict[int, Workload] = {}
        for c in ctxs:
            if self.params.mig_interference > 0 and c.placement is not None:
                for other in c.gpu.contexts:
                    for p in other.tenants:
                        affected[p.wl.uid] = p.wl
            for p in c.tenants:
                affected[p.wl.uid] = p.wl
        for uid in sorted(affected):
            self._sync(affected[uid])
        return affected

    def _sync(self, wl: Workload) -> None:
        if wl.kind == "inference":
            self._flush_service(wl)
        elif wl.state == "running" and wl.rate > 0:
            wl.work_done += wl.rate * (self.now - wl.progress_t)
        wl.progress_t = self.now

    def _activity(self, pod: Pod) -> float:
        """Busy share of the pod now; also sets ``pod.offered`` (busy share at full speed)."""
        if pod.state != "running":
            pod.offered = 0.0
            return 0.0
        wl = pod.wl
        if wl.kind != "inference":
            pod.offered = 1.0 if wl.gang_complete else 0.0
            return pod.offered
        svc = self.services[wl.uid]
        ready = sum(1 for p in wl.pods if p.state == "running")
        if not ready or svc.rate <= 0:
            pod.offered = 0.0
            return 0.0
        work = svc.rate / ready * wl.spec.service_time.mean
        pod.offered = work
        return min(1.0, work / max(pod.speed, 1e-6))

    def _settle(self, ctxs: Iterable[DeviceContext], affected: dict[int, Workload]) -> None:
        """Recompute speeds in ``ctxs``, then rates/completions of every affected workload."""
        ctxs = list(ctxs)
        pods: dict[int, Pod] = {}
        for c in ctxs:
            if self.params.mig_interference > 0 and c.placement is not None:
                for other in c.gpu.contexts:
                    for p in other.tenants:
                        pods[p.uid] = p
            for p in c.tenants:
                pods[p.uid] = p
        plist = [pods[k] for k in sorted(pods)]
        for _ in range(2):  # activity <-> speed fixed point (inference utilisation depends on speed)
            for p in plist:
                p.activity = self._activity(p)
            for p in plist:
                p.speed = min(speed_in(c, p, self.params) for c in p.contexts) if p.contexts else 0.0
        for p in plist:
            affected.setdefault(p.wl.uid, p.wl)
        for uid in sorted(affected):
            self._resync(affected[uid])
        for c in ctxs:
            self._oom_watch(c)

    def _resync(self, wl: Workload) -> None:
        """After speeds changed: new job rate and completion time, new effective shares."""
        if wl.kind == "inference":
            svc = self.services[wl.uid]
            ready = [p for p in wl.pods if p.state == "running"]
            lam = svc.rate / len(ready) if ready else 0.0
            s = wl.spec.service_time.mean
            for p in wl.pods:
                if p.state == "running":
                    self._set_effective(p, p.need * min(lam * s, p.speed) * len(p.contexts))
                else:
                    self._set_effective(p, 0.0)
            return
        if wl.completion_event is not None:
            wl.completion_event.cancel()
            wl.completion_event = None
        if wl.state != "running" or not wl.gang_complete or any(p.state != "running" for p in wl.pods):
            wl.rate = 0.0
            for p in wl.pods:
                self._set_effective(p, 0.0)
            return
        wl.progress_t = self.now
        wl.rate = min(p.speed for p in wl.pods) / wl.topology_factor
        for p in wl.pods:
            self._set_effective(p, p.need * wl.rate * len(p.contexts))
        if wl.rate > 0:
            left = max(0.0, wl.duration - wl.work_done)
            wl.completion_event = self.schedule(self.now + left / wl.rate, Priority.COMPLETION,
                                                self._complete_check, wl)

    def _complete_check(self, wl: Workload) -> None:
        wl.completion_event = None
        self._sync(wl)
        if wl.work_done >= wl.duration - 1e-6 * max(1.0, wl.duration):
            self.complete(wl)
        else:  # rounding: reschedule the tail
            self._resync(wl)

    # ========================================================= termination
    def release_pod(self, pod: Pod) -> None:
        """Give a pod's devices back (completion, eviction, deletion, end of grace period)."""
        if pod.state == "gone":
            return
        wl = pod.wl
        self._advance()
        ctxs = pod.contexts
        affected = self._begin(ctxs)
        if pod.restart_event is not None:
            pod.restart_event.cancel()
            pod.restart_event = None
        if pod.state == "bound" and wl.pods_total > 1 and not wl.gang_complete and wl.kind != "inference":
            self._partial_add(-pod.equiv)
        node = pod.node
        node.release(pod, wl.request, ctxs)
        self._set_effective(pod, 0.0)
        self.alloc_equiv -= pod.equiv
        if abs(self.alloc_equiv) < EPS:
            self.alloc_equiv = 0.0
        self.running_pods -= 1
        self.full_pass = True
        self._tenant_alloc_add(wl.tenant, -pod.equiv)
        self.queue_units[wl.queue] -= wl.request.gpu_units()
        self.running_priorities[wl.priority] -= 1
        if not self.running_priorities[wl.priority]:
            del self.running_priorities[wl.priority]
        if pod in wl.pods:
            wl.pods.remove(pod)
        pod.state = "gone"
        self.refresh_node(node)
        if wl.state in ("done", "failed", "stopped"):
            affected.pop(wl.uid, None)
        self._settle(ctxs, affected)
        if node.name in self._reconfig_pending:
            self._try_start_reconfigure(node)

    def complete(self, wl: Workload) -> None:
        self._finish(wl, "done")

    def fail_workload(self, wl: Workload, reason: str) -> None:
        self._finish(wl, "failed")

    def _finish(self, wl: Workload, state: str) -> None:
        self._advance()
        if wl.state in ("done", "failed", "stopped"):
            return
        self.set_state(wl, state)
        wl.end = self.now
        for ev in (wl.completion_event, wl.timeout_event):
            if ev is not None:
                ev.cancel()
        wl.completion_event = wl.timeout_event = None
        self.drop_pending(wl)
        for p in list(wl.pods):
            self.release_pod(p)
        self.tenant_demand[wl.tenant] -= wl.gpus
        if self.admission is not None:
            self.admission.on_finish(wl)
        self.scheduler.on_finish(wl)
        self.request_cycle()

    def _stop_service(self, wl: Workload) -> None:
        self._flush_service(wl)
        self.services[wl.uid].active = False
        self._finish(wl, "stopped")

    def evict(self, wl: Workload, reason: str, requeue_delay: float = 0.0, preemption: bool = True) -> None:
        """Remove a workload's pods (preemption, waitForPodsReady timeout, node loss) and requeue it."""
        if wl.state in ("done", "failed", "stopped"):
            return
        self._advance()
        if wl.kind != "inference" and wl.gang_complete:
            self.lost_gpu_hours += self._rollback(wl)
        if preemption:
            self.preemptions += 1
            wl.preemptions += 1
            self.preempt_reasons[reason] = self.preempt_reasons.get(reason, 0) + 1
        if wl.completion_event is not None:
            wl.completion_event.cancel()
            wl.completion_event = None
        if wl.timeout_event is not None:
            wl.timeout_event.cancel()
            wl.timeout_event = None
        self.drop_pending(wl)
        grace = self.params.termination_grace if preemption else 0.0
        pods = list(wl.pods)
        wl.gang_complete = False
        self.set_state(wl, "queued")
        wl.requeues += 1
        for p in pods:
            if grace > 0:
                self._terminate_later(p, grace)
            else:
                self.release_pod(p)
        if self.admission is not None:
            self.admission.requeue(wl, requeue_delay)
        elif requeue_delay > 0:
            self.schedule_in(requeue_delay, Priority.ARRIVAL, self._recreate_all, wl)
        else:
            self.create_pods(wl)
        self.request_cycle()

    def preempt_pod(self, pod: Pod, reason: str) -> None:
        """kube-scheduler preemption: delete one pod; its controller recreates it.

        A running gang that loses a worker stops (its peers wait for the
        replacement, holding their GPUs) and rolls back to its checkpoint.
        """
        wl = pod.wl
        if pod.state in ("gone", "terminating") or wl.state in ("done", "failed", "stopped"):
            return
        self._advance()
        self.preemptions += 1
        wl.preemptions += 1
        self.preempt_reasons[reason] = self.preempt_reasons.get(reason, 0) + 1
        if wl.kind != "inference" and wl.gang_complete and wl.pods_total > 1:
            self.lost_gpu_hours += self._rollback(wl)
            ctxs = [c for p in wl.pods for c in p.contexts]
            affected = self._begin(ctxs)
            wl.gang_complete = False
            self.set_state(wl, "queued")
            for p in wl.pods:
                if p is not pod and p.state == "running":
                    p.state = "bound"
                    self._partial_add(p.equiv)
            self._settle(ctxs, affected | {wl.uid: wl})
            if wl.timeout_event is None:
                wl.timeout_event = self.schedule_in(self.params.rendezvous_timeout, Priority.MONITOR,
                                                    self._rendezvous_timeout, wl)
        elif wl.kind != "inference" and wl.pods_total == 1 and wl.gang_complete:
            self.lost_gpu_hours += self._rollback(wl)
            wl.gang_complete = False
            self.set_state(wl, "queued")
        self._terminate_later(pod, self.params.termination_grace)
        if wl.kind == "inference":
            self.refresh_service(wl)
        self.create_pods(wl, 1)
        self.request_cycle()

    def _terminate_later(self, pod: Pod, grace: float) -> None:
        """Pod deleted with a grace period: it stops working now but holds its devices until it ends."""
        ctxs = pod.contexts
        affected = self._begin(ctxs)
        if pod.state == "bound" and pod.wl.pods_total > 1:
            self._partial_add(-pod.equiv)
        pod.state = "terminating"
        if pod in pod.wl.pods:
            pod.wl.pods.remove(pod)
        self._settle(ctxs, affected)
        self.schedule_in(grace, Priority.COMPLETION, self._release_terminated, pod)

    def _release_terminated(self, pod: Pod) -> None:
        self.release_pod(pod)
        self.request_cycle()

    def _rollback(self, wl: Workload) -> float:
        """Lose the work since the last checkpoint; returns the GPU-hours thrown away."""
        self._sync(wl)
        ck = wl.checkpoint_interval
        kept = math.floor(wl.work_done / ck) * ck if ck > 0 else 0.0
        lost = wl.work_done - kept
        wl.work_done = kept
        rate = wl.rate if wl.rate > 0 else 1.0
        gpus = sum(p.equiv for p in wl.pods)
        return lost / rate * gpus / 3600.0

    # ============================================================ crashes
    def crash_pod(self, pod: Pod, reason: str) -> None:
        """Container dies and restarts in place after CrashLoopBackOff; a training gang restarts with it."""
        wl = pod.wl
        if pod.state not in ("running", "bound") or wl.state in ("done", "failed", "stopped"):
            return
        if wl.kind == "inference":
            ctxs = self._service_contexts(wl)
            affected = self._begin(ctxs)
            pod.state = "crashed"
            pod.crash_reason = reason
            pod.restarts += 1
            pod.backoff_step = self._next_crash_step(pod.backoff_step, pod.container_start)
            self._settle(ctxs, affected)
            self.refresh_service(wl)
            pod.restart_event = self.schedule_in(self._crash_backoff(pod.backoff_step), Priority.COMPLETION,
                                                 self._restart_pod, pod)
            return
        # Training: one worker dying breaks the collective; every worker restarts from the checkpoint.
        if wl.gang_complete:
            self.lost_gpu_hours += self._rollback(wl)
        wl.restarts += 1
        if wl.restarts > self.params.max_restarts:
            self.fail_workload(wl, reason)
            return
        ran_since = max((p.container_start for p in wl.pods), default=self.now)
        ctxs = [c for p in wl.pods for c in p.contexts]
        affected = self._begin(ctxs)
        for p in wl.pods:
            if p.state in ("running", "bound"):
                if p.state == "bound" and wl.pods_total > 1 and not wl.gang_complete:
                    self._partial_add(-p.equiv)
                p.state = "crashed"
                p.crash_reason = reason
        self._settle(ctxs, affected | {wl.uid: wl})
        wl.crash_backoff_step = self._next_crash_step(wl.crash_backoff_step, ran_since)
        delay = self._crash_backoff(wl.crash_backoff_step)
        for p in wl.pods:
            if p.restart_event is not None:
                p.restart_event.cancel()
        wl.pods[0].restart_event = self.schedule_in(delay, Priority.COMPLETION, self._restart_job, wl)

    def _restart_pod(self, pod: Pod) -> None:
        pod.restart_event = None
        wl = pod.wl
        if pod.state != "crashed" or wl.state in ("done", "failed", "stopped"):
            return
        ctxs = self._service_contexts(wl)
        affected = self._begin(ctxs)
        pod.state = "running"
        pod.container_start = self.now  # a fresh process: KV cache starts empty
        self._settle(ctxs, affected)
        self.refresh_service(wl)
        if any(c.unusable for c in pod.contexts):
            self._device_unusable(pod)

    def _restart_job(self, wl: Workload) -> None:
        if wl.pods:
            wl.pods[0].restart_event = None
        if wl.state in ("done", "failed", "stopped"):
            return
        ctxs = [c for p in wl.pods for c in p.contexts]
        affected = self._begin(ctxs)
        for p in wl.pods:
            if p.state == "crashed":
                p.container_start = self.now
                p.state = "running" if wl.gang_complete else "bound"
                if p.state == "bound" and wl.pods_total > 1:
                    self._partial_add(p.equiv)
        self._settle(ctxs, affected | {wl.uid: wl})
        if any(c.unusable for p in wl.pods for c in p.contexts):
            self._device_unusable(wl.pods[0])

    @staticmethod
    def _service_contexts(wl: Workload) -> list[DeviceContext]:
        seen: dict[int, DeviceContext] = {}
        for p in wl.pods:
            for c in p.contexts:
                seen[id(c)] = c
        return sorted(seen.values(), key=lambda c: (c.node.index, c.index))

    # ============================================================== memory
    def _oom_watch(self, ctx: DeviceContext) -> None:
        if ctx.oom_event is not None:
            ctx.oom_event.cancel()
            ctx.oom_event = None
        if not ctx.tenants:
            return
        t = self._next_oom(ctx)
        if t is not None and t <= self.horizon:
            ctx.oom_event = self.schedule(max(t, self.now), Priority.FAULT, self._oom_fire, ctx)

    def _shared_memory(self, ctx: DeviceContext) -> bool:
        iso = ctx.isolation
        if iso in ("timeslice", "kai"):
            return True
        if iso == "hami" and ctx.node.data_plane.hami.device_memory_scaling > 1.0:
            return True
        return False

    def _next_oom(self, ctx: DeviceContext) -> float | None:
        now = self.now
        best = None
        for p in ctx.tenants:
            if p.mem_limit is None:
                continue
            t = _crossing([p], p.mem_limit, now)
            if t is not None and (best is None or t < best):
                best = t
        if self._shared_memory(ctx) or len(ctx.tenants) > 1:
            t = _crossing(ctx.tenants, ctx.memory_mib, now)
            if t is not None and (best is None or t < best):
                best = t
        return best

    def _oom_fire(self, ctx: DeviceContext) -> None:
        ctx.oom_event = None
        now = self.now
        victims: list[Pod] = []
        offender: Pod | None = None
        scope = "pod"
        over = [p for p in ctx.tenants if p.mem_limit is not None and _exceeds(p.memory(now), p.memory_rate(now),
                                                                                 p.mem_limit)]
        if over:
            offender = max(over, key=lambda p: (p.memory(now) - p.mem_limit, p.memory_rate(now), -p.uid))
            scope = self._oom_scope(ctx)
        elif _exceeds(sum(p.memory(now) for p in ctx.tenants), sum(p.memory_rate(now) for p in ctx.tenants),
                      ctx.memory_mib):
            live = [p for p in ctx.tenants if p.state in ("running", "bound")]
            if live:
                # The process whose allocation failed: the one growing fastest, then the largest.
                offender = max(live, key=lambda p: (p.memory_rate(now), p.memory(now), -p.uid))
                scope = self._oom_scope(ctx)
        if offender is None:
            self._oom_watch(ctx)
            return
        if scope == "gpu":
            victims = [p for p in ctx.tenants if p.state in ("running", "bound")]
        else:
            victims = [offender]
        self._record_oom(ctx, offender, victims)
        for p in victims:
            if p.wl.kind == "inference":
                self.services[p.wl.uid].oom_kills += 1
            self.crash_pod(p, "OOMKilled")
        self._oom_watch(ctx)

    def _oom_scope(self, ctx: DeviceContext) -> str:
        iso = ctx.isolation
        if iso == "timeslice":
            return self.params.timeslicing_oom_scope
        if iso == "kai":
            return self.params.kai_oom_scope
        if iso == "mps":
            return self.params.mps_oom_scope
        if iso == "hami":
            return self.params.hami_oom_scope
        return "pod"

    def _record_oom(self, ctx: DeviceContext, offender: Pod, victims: list[Pod]) -> None:
        self.oom_incident_count += 1
        self.oom_kills += len(victims)
        coll = sum(1 for v in victims if v is not offender)
        self.oom_collateral += coll
        self.oom_max_blast = max(self.oom_max_blast, len(victims))
        for v in victims:
            self.oom_by_workload[v.wl.name] = self.oom_by_workload.get(v.wl.name, 0) + 1
        if len(self.oom_incidents) < 20:
            self.oom_incidents.append(M.OomIncident(
                time=M.rnd(self.now), device=ctx.name, mechanism=ctx.node.mechanism, offender=offender.name,
                killed=[v.name for v in victims], collateral=coll))

    # ============================================================ services
    def _flush_service(self, wl: Workload) -> None:
        svc = self.services[wl.uid]
        dt = self.now - svc.last
        if dt <= 0:
            return
        svc.last = self.now
        if not svc.active or svc.rate <= 0:
            return
        ready = [p for p in wl.pods if p.state == "running"]
        if not ready:
            svc.latency.add_unserved(svc.rate * dt)
            return
        lam = svc.rate / len(ready)
        for p in ready:
            svc.latency.add_replica(lam, p.speed, dt)

    def refresh_service(self, wl: Workload) -> None:
        """Load per replica changed (readiness or rate): recompute every context the service touches."""
        ctxs = self._service_contexts(wl)
        affected = self._begin(ctxs)
        affected[wl.uid] = wl
        self._settle(ctxs, affected)

    def _rate_change(self, wl: Workload, rps: float) -> None:
        if wl.state in ("done", "failed", "stopped"):
            return
        self._flush_service(wl)
        self.services[wl.uid].rate = rps
        self.refresh_service(wl)

    # ============================================================== events
    def _scenario_event(self, ev) -> None:
        node = self.node_by_name[ev.node]
        if ev.kind == "device_plugin_restart":
            node.plugin_ready = False
            self.refresh_node(node)
            self.schedule_in(ev.duration, Priority.FAULT, self._plugin_ready, node)
        elif ev.kind == "node_failure":
            self._node_failure(node, ev.duration)
        elif ev.kind == "gpu_fault":
            self._gpu_fault(node, ev)
        elif ev.kind == "mig_reconfigure":
            self._reconfigure_request(node, ev)

    def _plugin_ready(self, node: Node) -> None:
        if not node.reconfiguring:
            node.plugin_ready = True
        self.refresh_node(node)
        self.request_cycle()

    def _node_failure(self, node: Node, duration: float) -> None:
        self.faults += 1
        node.up = False
        self.refresh_node(node)
        victims = list(node.pods)
        self.fault_kills += len(victims)
        self.fault_max_blast = max(self.fault_max_blast, len(victims))
        seen: dict[int, Workload] = {}
        for p in victims:
            seen.setdefault(p.wl.uid, p.wl)
        for uid in sorted(seen):
            wl = seen[uid]
            if wl.kind == "inference":
                for p in [p for p in wl.pods if p.node is node]:
                    self.release_pod(p)
                    self.create_pods(wl, 1)
                self.refresh_service(wl)
            else:
                self.evict(wl, "NodeFailure", preemption=False)
        self.schedule_in(duration, Priority.FAULT, self._node_back, node)
        self.request_cycle()

    def _node_back(self, node: Node) -> None:
        node.up = True
        self.refresh_node(node)
        self.request_cycle()

    def _gpu_fault(self, node: Node, ev) -> None:
        gpu = node.gpus[ev.gpu]
        ctxs = gpu.contexts
        if ev.scope == "instance" and gpu.mig_enabled:
            ctxs = [c for c in gpu.contexts if c.placement is not None and
                    (ev.instance is None or c.placement.start == ev.instance)][:1]
        victims: dict[int, Pod] = {}
        for c in ctxs:
            for p in c.tenants:
                if p.state in ("running", "bound"):
                    victims[p.uid] = p
        if node.mechanism == "mps" and self.params.mps_fault_scope == "pod" and victims:
            first = victims[min(victims)]
            victims = {first.uid: first}
        self.faults += 1
        self.fault_kills += len(victims)
        self.fault_max_blast = max(self.fault_max_blast, len(victims))
        for uid in sorted(victims):
            self.crash_pod(victims[uid], "XidError")

    # ---------------------------------------------------- MIG reconfiguration
    def _reconfigure_request(self, node: Node, ev) -> None:
        gpus = list(range(len(node.gpus))) if ev.gpus == "all" else list(ev.gpus)
        node.cordoned = True  # drain: no new pods while waiting for the GPUs to go idle
        self.refresh_node(node)
        self._reconfig_pending[node.name] = (self.now, gpus, ev.layout)
        self._try_start_reconfigure(node)

    def _try_start_reconfigure(self, node: Node) -> None:
        start, gpus, layout = self._reconfig_pending[node.name]
        if not all(node.gpus[i].idle() for i in gpus):
            return
        del self._reconfig_pending[node.name]
        # mig-manager shuts down every GPU operand on the node (§1.4): the device plugin goes away.
        node.reconfiguring = True
        node.plugin_ready = False
        self.refresh_node(node)
        self.schedule_in(self.params.mig_reconfigure_cost, Priority.RECONFIGURE, self._finish_reconfigure,
                         node, gpus, layout, start)

    def _finish_reconfigure(self, node: Node, gpus: list[int], layout, start: float) -> None:
        from scheduler_core import mig as migmod
        fam = node.spec.mig_family
        new = None if layout == "all-disabled" else migmod.layout_from_spec(fam, layout, self.params.driver_slot_choice)
        for i in gpus:
            g = node.gpus[i]
            g.mig_enabled = layout != "all-disabled"
            g.layout = new if new is not None and new.placements else None
        node.rebuild_contexts(gpus)
        self.full_pass = True
        node.reconfiguring = False
        node.cordoned = False
        node.plugin_ready = True
        self.refresh_node(node)
        self.reconfig_drains += 1
        dur = self.now - start
        self.reconfig_seconds += dur
        self.reconfig_gpu_hours += dur * len(node.gpus) / 3600.0
        self.request_cycle()

    # ============================================================ sampling
    def _sample(self) -> None:
        self._advance()
        ts = self.samples
        ts.t.append(M.rnd(self.now))
        ts.allocated_gpus.append(M.rnd(self.alloc_equiv))
        ts.effective_gpus.append(M.rnd(self.eff_equiv))
        ts.pending_pods.append(self.pending_pods)
        ts.running_pods.append(self.running_pods)
        ts.waiting_workloads.append(self.waiting_workloads)
        ts.partial_gang_gpus.append(M.rnd(self.partial_gpus))
        stranded, free = self._stranded()
        ts.stranded_gpus.append(M.rnd(stranded))
        for t in self.tenants:
            ts.tenant_allocated_gpus[t].append(M.rnd(self.tenant_alloc[t]))
        self.samples_n += 1
        if free > EPS and self.waiting_workloads > 0:
            self.stranded_sum += stranded
            self.frag_sum += stranded / free
            self.frag_n += 1
        # Fairness: demand-capped weighted max-min share of the pool, sample-and-hold.
        dt = self._sample_dt
        weights = {t: self.tenants[t].weight for t in self.tenants}
        demand = {t: max(0.0, self.tenant_demand[t]) for t in self.tenants}
        fair = M.water_fill(float(self.capacity_gpus), demand, weights)
        for t in self.tenants:
            self.tenant_fair_int[t] += fair[t] * dt
            self.tenant_recv_int[t] += self.tenant_alloc[t] * dt
        if self.progress_cb is not None:
            self.progress_cb(min(1.0, self.now / self.horizon))
        nxt = self.now + self._sample_dt
        if nxt <= self.horizon + EPS:
            self.schedule(min(nxt, self.horizon), Priority.SAMPLE, self._sample)

    def _stranded(self) -> tuple[float, float]:
        """Free capacity (GPU-equivalents) and the part no waiting workload could use on its node."""
        shapes = self.scheduler.waiting_requests()
        if self.admission is not None:
            shapes = shapes + self.admission.waiting_requests()
        free_total = 0.0
        stranded = 0.0
        for n in self.nodes:
            if not n.up:
                continue
            free = _node_free_equiv(n)
            if free <= EPS:
                continue
            free_total += free
            if not shapes:
                continue
            usable = any((grp is None or grp == n.group) and n.fit_count(req) > 0 for req, grp in shapes)
            if not usable:
                stranded += free
        return (stranded if shapes else 0.0), free_total

    # ================================================================ run
    def execute(self) -> M.SimulationResult:
        """Run to the horizon and build the result."""
        for ev in self.scenario.events:
            self.schedule(ev.at, Priority.FAULT, self._scenario_event, ev)
        self._schedule_next_arrival()
        self._sample_dt = self.horizon / (self.scenario.sampling.max_points - 1)
        self.schedule(0.0, Priority.SAMPLE, self._sample)
        self.run(until=self.horizon)
        self._advance()
        for wl in self.workloads:
            if wl.kind == "inference" and wl.state not in ("new",):
                self._flush_service(wl)
            elif wl.state == "running":
                self._sync(wl)
        for t in self.tenants:
            self._tenant_alloc_add(t, 0.0)
        for name in list(self._reconfig_pending):
            self.reconfig_failed += 1
        if self.progress_cb is not None:
            self.progress_cb(1.0)
        from scheduler_core.results import build_result
        return build_result(self)


def _node_free_equiv(n: Node) -> float:
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


MEM_EPS = 1e-3  # MiB: using exactly the limit is allowed; the next allocation beyond it fails


def _exceeds(used: float, rate: float, limit: float) -> bool:
    """Out of memory: above the limit, or at it and still allocating."""
    return used > limit + MEM_EPS or (used >= limit - MEM_EPS and rate > 0)


def _crossing(pods: list[Pod], limit: float, now: float) -> float | None:
    """Earliest t >= now when the summed memory of ``pods`` reaches ``limit`` (piecewise linear)."""
    total = 0.0
    segs = []  # (time growth stops, rate)
    for p in pods:
        total += p.memory(now)
        r = p.memory_rate(now)
        if r > 0:
            kv_now = p.kv_init + p.kv_growth * max(0.0, now - p.container_start)
            stop = now + max(0.0, (p.kv_max - kv_now)) / r
            segs.append((stop, r))
    if total > limit + MEM_EPS:
        return now
    if not segs:
        return None
    segs.sort()
    t = now
    rate = sum(r for _, r in segs)
    for stop, r in segs:
        if rate <= 0:
            return None
        reach = t + (limit - total) / rate
        if reach <= stop:
            return reach
        total += rate * (stop - t)
        t = stop
        rate -= r
    return None

