"""The cluster simulation: the cluster's state, its policies and the scheduling cycle, on one event heap.

Life of a workload (see docs/simulator-model.md):

submit -> [admission (Kueue) holds it until quota admits it] -> pods created
-> [scheduler places pods: pod by pod (kube-scheduler) or all-or-nothing
(coscheduling, Volcano, KAI)] -> kubelet Allocate on the node (fails with
UnexpectedAdmissionError if the device plugin is not registered) -> gang
complete: training progresses at the rate of its slowest worker divided by
the topology factor; services serve requests -> completion / stop.

This module owns the policies, the scheduling cycle, arrivals and the run.
What the cluster holds and the accounting over time are
:class:`~scheduler_core.simulation.state.ClusterState` (the base class); the
phases of a workload's life live in :mod:`scheduler_core.simulation.phases`;
the result is built by :mod:`scheduler_core.simulation.results` and the
"why not" answers by :mod:`scheduler_core.simulation.explain`.  Each of those
is handed data, so every import arrow points down from here.  Policies are
handed the simulation as a :class:`~scheduler_core.policies.port.ClusterPort`
and never import it; the scheduling cycle calls their extension points by name
(see :class:`~scheduler_core.policies.base.ControlPlanePolicy`).
"""

from __future__ import annotations

from typing import Callable

from scheduler_core import metrics as M
from scheduler_core.cluster import Node
from scheduler_core.events import Priority
from scheduler_core.policies import make_admission, make_scheduler
from scheduler_core.scenario import InferenceWorkload, Scenario
from scheduler_core.simulation import explain
from scheduler_core.simulation.phases.binding import BindingPhase
from scheduler_core.simulation.phases.disruptions import DisruptionPhase
from scheduler_core.simulation.phases.memory import MemoryPhase
from scheduler_core.simulation.phases.running import RunningPhase
from scheduler_core.simulation.phases.sampling import SamplingPhase
from scheduler_core.simulation.phases.termination import TerminationPhase
from scheduler_core.simulation.results import build_result
from scheduler_core.simulation.state import ClusterState, EvictionProbe
from scheduler_core.workloads import Workload


class ClusterSimulation(BindingPhase, RunningPhase, TerminationPhase, MemoryPhase, DisruptionPhase, SamplingPhase,
                        ClusterState):
    """A scenario being simulated.  Build it, call :meth:`execute`, get a :class:`SimulationResult`."""

    def __init__(self, scenario: Scenario, progress: Callable[[float], None] | None = None) -> None:
        super().__init__(scenario)
        self.progress_cb = progress
        # -- policies: the L1 admission controller (if any) acts before the L2 scheduler in each cycle
        self.scheduler = make_scheduler(self)
        self.admission = make_admission(self)
        self.policies = (self.scheduler,) if self.admission is None else (self.admission, self.scheduler)
        self._cycle_event = None
        self._next_arrival = 0

    # ================================================================ placement questions (the port's)
    def quick_fit(self, wl: Workload, pods: int = 1) -> bool:
        """Cheap necessary condition for placing ``pods`` pods of ``wl`` (exact for count resources,
        counting host CPU and memory, and the nodes' pod counts, node by node when they bound the pods)."""
        req = wl.request
        if req.kind != "count":
            return True
        if req.count == 0:  # no device: the nodes' pod counts and host resources bound it
            return explain.pods_that_fit(self.candidate_nodes(wl), wl, pods) >= pods
        if self.index.pods_fit(req.resource, self.groups_for(wl), req.count, pods) < pods:
            return False
        return not (req.cpu or req.host_gib or self.pods_bounded) or \
            explain.pods_that_fit(self.candidate_nodes(wl), wl, pods) >= pods

    def eviction_probe(self, wl: Workload, pods: int, nodes: list[Node] | None = None) -> "EvictionProbe":
        """Incremental check of whether evicting some pods makes room for ``pods`` pods of ``wl``
        (on ``nodes``, default every node the scheduler may place it on)."""
        return EvictionProbe(wl, pods, self.candidate_nodes(wl) if nodes is None else nodes)

    def unschedulable(self, wl: Workload, siblings_fill: bool = False, wording: str = "available") -> str | None:
        """kube-scheduler's words for why one pod of ``wl`` fits nowhere now (None: it fits somewhere)."""
        return explain.unschedulable(self.nodes, wl, self.cp.respect_device_plugin_readiness, siblings_fill, wording)

    def pods_that_fit(self, wl: Workload, pods: int) -> int:
        return explain.pods_that_fit(self.candidate_nodes(wl), wl, pods)

    def topology_unschedulable(self, wl: Workload, level: str) -> tuple[str, int] | None:
        return explain.topology_unschedulable(self.nodes, self.candidate_nodes(wl), wl, level,
                                              self.cp.respect_device_plugin_readiness)

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

    # ================================================================ scheduling cycle
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
        """One scheduling cycle: each policy's extension points by name (see
        :class:`~scheduler_core.policies.base.ControlPlanePolicy`), the admission controller's before the
        scheduler's; then each policy's post-cycle, the scheduler's first."""
        self._cycle_event = None
        for policy in self.policies:
            policy.open_session()
            policy.admit()
            policy.allocate()
            policy.preempt()
            policy.reclaim()
        for policy in reversed(self.policies):
            policy.end_pass()
        self.full_pass = False

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
        return build_result(self, self.pending_reason)
