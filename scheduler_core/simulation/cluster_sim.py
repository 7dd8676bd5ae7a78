"""The cluster simulation: one :class:`~scheduler_core.events.Environment` holding all state.

Life of a workload (see docs/simulator-model.md):

submit -> [admission (Kueue) holds it until quota admits it] -> pods created
-> [scheduler places pods: pod by pod (kube-scheduler) or all-or-nothing
(coscheduling, Volcano, KAI)] -> kubelet Allocate on the node (fails with
UnexpectedAdmissionError if the device plugin is not registered) -> gang
complete: training progresses at the rate of its slowest worker divided by
the topology factor; services serve requests -> completion / stop.

This module owns the state, the scheduling cycle, arrivals and the run;
the phases of a workload's life live in :mod:`scheduler_core.simulation.phases`
and the result is built by :mod:`scheduler_core.simulation.results`.
Policies are handed the simulation as a
:class:`~scheduler_core.policies.port.ClusterPort` and never import it.
"""

from __future__ import annotations

from typing import Callable

from scheduler_core import metrics as M
from scheduler_core.cluster import GPU, Node
from scheduler_core.events import Environment, Priority
from scheduler_core.latency import LatencyGrid
from scheduler_core.policies import make_admission, make_scheduler
from scheduler_core.resources import CPU, MEMORY, add_into
from scheduler_core.scenario import InferenceWorkload, Scenario
from scheduler_core.simulation.phases.binding import BindingPhase
from scheduler_core.simulation.phases.disruptions import DisruptionPhase
from scheduler_core.simulation.phases.memory import MemoryPhase
from scheduler_core.simulation.phases.running import RunningPhase
from scheduler_core.simulation.phases.sampling import SamplingPhase
from scheduler_core.simulation.phases.termination import TerminationPhase
from scheduler_core.simulation import explain
from scheduler_core.simulation.eventlog import EventLog
from scheduler_core.simulation.results import build_result
from scheduler_core.simulation.state import EPS, CapacityIndex, EvictionProbe, ServiceState
from scheduler_core.workloads import Pod, Workload, expand_workloads


class ClusterSimulation(BindingPhase, RunningPhase, TerminationPhase, MemoryPhase, DisruptionPhase, SamplingPhase,
                        Environment):
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
                node = Node(name, g.name, len(self.nodes), g.rack_of(i), g.spec, g.gpus_per_node, g.link,
                            g.numa_nodes, dp, layouts)
                node.set_nics(g.nics or g.gpus_per_node, g.nic_gbps / 8.0 if g.nic_gbps else None, g.nic_numa)
                node.cpu_free, node.host_gib_free = g.cpu, g.memory_gib
                self.nodes.append(node)
                self.node_by_name[name] = node
                self.groups.setdefault(g.name, []).append(node)
        self.group_names = list(self.groups)
        self.capacity_gpus = sum(len(n.gpus) for n in self.nodes)
        self.capacity_total = self._capacity_total(scenario)
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
        # -- policies
        self.scheduler = make_scheduler(self)
        self.admission = make_admission(self)
        self._cycle_event = None
        self._next_arrival = 0
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
        """Cheap necessary condition for placing ``pods`` pods of ``wl`` (exact for count resources,
        counting host CPU and memory node by node when the pods ask for them)."""
        req = wl.request
        if req.kind != "count":
            return True
        if self.index.pods_fit(req.resource, self.groups_for(wl), req.count, pods) < pods:
            return False
        return not (req.cpu or req.host_gib) or explain.pods_that_fit(self, wl, pods) >= pods

    def queue_allocated(self, queue: str) -> dict[str, float]:
        """What a queue holds as Volcano's and KAI's sessions count it: bound pods, not the terminating ones
        (a releasing pod is in no queue's allocation, though it keeps its devices on the node)."""
        used = self.queue_usage.get(queue, {})
        releasing = self.queue_releasing.get(queue)
        return add_into(dict(used), releasing, -1.0) if releasing else used

    def eviction_probe(self, wl: Workload, pods: int, nodes: list[Node] | None = None) -> "EvictionProbe":
        """Incremental check of whether evicting some pods makes room for ``pods`` pods of ``wl``
        (on ``nodes``, default every node the scheduler may place it on)."""
        return EvictionProbe(self, wl, pods, nodes)

    def log_event(self, kind: str, wl: Workload, detail: str = "", node: str | None = None) -> None:
        """Record a decision in the bounded event log (policies call it through the port)."""
        self.log.record(self.now, kind, wl.name, detail, node)

    def unschedulable(self, wl: Workload, siblings_fill: bool = False, wording: str = "available") -> str | None:
        """kube-scheduler's words for why one pod of ``wl`` fits nowhere now (None: it fits somewhere)."""
        return explain.unschedulable(self, wl, siblings_fill, wording)

    def pods_that_fit(self, wl: Workload, pods: int) -> int:
        return explain.pods_that_fit(self, wl, pods)

    def topology_unschedulable(self, wl: Workload, level: str) -> tuple[str, int] | None:
        return explain.topology_unschedulable(self, wl, level)

    def pending_reason(self, wl: Workload) -> str:
        """Why ``wl`` still waits, in the words of the component holding it."""
        if self.admission is not None and not self.admission.is_admitted(wl):
            return self.admission.explain(wl)
        return self.scheduler.explain(wl)

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

    def _submit(self, wl: Workload) -> None:
        self.set_state(wl, "queued")
        self.tenant_demand[wl.tenant] += self.demand_equiv(wl)
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
        return build_result(self)
