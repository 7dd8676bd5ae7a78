"""Binding: choose nodes for pods, bind them (kubelet admission), start gangs, rendezvous timeouts."""

from __future__ import annotations

import random

from scheduler_core.cluster import DeviceContext, Node, hami_card_memory, hami_node_score
from scheduler_core.events import Priority
from scheduler_core.hami import node_order_key
from scheduler_core.interference import topology_factor
from scheduler_core.resources import add_into
from scheduler_core.workloads import Pod, Workload

# Tentative placements (plan_group) pick devices with their own stream, leaving the run's draws alone.
_PLANNING_RNG = random.Random(0)
PLACEMENT_STRATEGIES = ("spread", "binpack", "pack")


class BindingPhase:
    def plan(self, wl: Workload, pods: int, strategy: str, level: str | None = None,
             nodes: list[Node] | None = None) -> list[tuple[Node, int]] | None:
        """Choose nodes for ``pods`` pods of ``wl`` without committing; None if they do not all fit.

        strategy: ``spread`` (kube-scheduler LeastAllocated), ``binpack``
        (MostAllocated / Volcano binpack / KAI), ``pack`` (topology-aware:
        fewest nodes, one node or one rack if ``level`` requires it).
        """
        if strategy not in PLACEMENT_STRATEGIES:  # a misspelt strategy must not quietly act as binpack
            raise ValueError(f"unknown placement strategy {strategy!r}: expected one of {', '.join(PLACEMENT_STRATEGIES)}")
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
        # HAMi's extender scores the nodes of its pods itself (its node policy, the one kube_scoring names):
        # by used slots, cores and memory together, not by free memory alone.
        hami = req.kind == "hami" and self.cp.scheduler in ("kube-default", "coscheduling")
        for _ in range(pods):
            best = None
            best_key = None
            for n, k in fits:
                if used[n.name] >= k:
                    continue
                if hami:
                    key = (-node_order_key(hami_node_score(n, req, used[n.name]), strategy), n.index)
                else:
                    free = base_free[n.name] - used[n.name] * per_pod_share[n.name]
                    key = (-free if strategy == "spread" else free, n.index)
                if best_key is None or key < best_key:
                    best, best_key = n, key
            if best is None:
                return None
            if req.shared_claim is not None:  # a shared claim's devices are on one node: every consumer goes there
                fits = [f for f in fits if f[0] is best]
            used[best.name] += 1
            plan.setdefault(best.name, [best, 0])[1] += 1
        return [(n, k) for n, k in sorted(plan.values(), key=lambda x: x[0].index)]

    def plan_group(self, parts: list[tuple[Workload, int]], strategy: str,
                   level: str | None = None) -> list[tuple[Workload, list[tuple[Node, int]]]] | None:
        """Plan several workloads' pods together (a PodGroup's roles, each with its own request): each
        part is planned on the room the parts before it leave.  None if one part does not fit."""
        held: list = []
        out = []
        try:
            for wl, pods in parts:
                if pods <= 0:
                    continue
                plan = self.plan(wl, pods, strategy, level)
                if plan is None:
                    return None
                out.append((wl, plan))
                for node, k in plan:  # hold the planned room while the next part is planned
                    for _ in range(k):
                        ctxs = node.choose_contexts(wl.request, _PLANNING_RNG)
                        if ctxs is None:
                            return None
                        token = object()
                        node.commit(token, wl.request, ctxs)
                        held.append((node, token, wl.request, ctxs))
            return out
        finally:
            for node, token, req, ctxs in reversed(held):
                node.release(token, req, ctxs)

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
        racks: dict[str, list] = {}
        for n, k in fits:
            racks.setdefault(n.rack, []).append((n, k))
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
        where: list[str] = []
        for node, k in plan:
            for _ in range(k):
                if wl.pending <= 0 or (ctxs := node.choose_contexts(wl.request, self.rng)) is None:
                    break
                self.bind_pod(wl, node, ctxs)
                bound += 1
            else:
                where.append(f"{node.name} x{k}")
                continue
            where.append(node.name)
            break
        if bound:
            self.log_event("bind", wl, f"{bound} pod(s): {', '.join(where)}", plan[0][0].name)
        return bound

    def place_pods_individually(self, wl: Workload, strategy: str, max_pods: int | None = None) -> int:
        """kube-scheduler style: one pod at a time until none fits (or ``max_pods`` are bound)."""
        bound = 0
        while wl.pending > 0 and (max_pods is None or bound < max_pods):
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
        iso = ctxs[0].isolation if ctxs else None  # None: a pod without a device
        if iso == "exclusive":
            pod.mem_limit = min(c.memory_mib for c in ctxs)
        elif iso == "mps":
            mps = node.data_plane.mps  # active thread percentage, default 100 / replicas (§2.2)
            pod.cap = (mps.active_thread_percentage / 100.0 if mps.active_thread_percentage
                       else 1.0 / mps.replicas)
            pod.mem_limit = min(c.memory_mib for c in ctxs) / node.data_plane.mps.replicas
        elif iso == "hami":
            pod.cap = min(req.cores, 100) / 100.0 if req.cores > 0 else 1.0
            pod.mem_limit = hami_card_memory(ctxs[0], req)  # HAMi-core hard cap on allocations (§3)
        else:
            pod.mem_limit = None  # time-slicing / KAI fractions: no memory isolation
        wl.pods.append(pod)
        self.alloc_equiv += pod.equiv
        self.running_pods += 1
        self._tenant_alloc_add(wl.tenant, pod.equiv)
        add_into(self.queue_usage.setdefault(wl.queue, {}), req.share)
        self.running_priorities[wl.pod_priority] = self.running_priorities.get(wl.pod_priority, 0) + 1
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
        if not wl.gang_complete and len(wl.pods) >= wl.pods_total and self._group_bound(wl):
            for member in (wl.group.members if wl.group is not None else (wl,)):
                if not member.gang_complete and not member.finished:
                    self._gang_start(member)
        elif (wl.pods_total > 1 or wl.group is not None) and wl.timeout_event is None and not wl.gang_complete:
            wl.timeout_event = self.schedule_in(self.params.rendezvous_timeout, Priority.MONITOR,
                                                self._rendezvous_timeout, wl)
        return pod

    @staticmethod
    def _group_bound(wl: Workload) -> bool:
        """Every role of ``wl``'s PodGroup has all its pods bound (a workload without roles: itself)."""
        if wl.group is None:
            return True
        return all(len(m.pods) >= m.pods_total or m.finished for m in wl.group.members)

    def _recreate_pod(self, wl: Workload) -> None:
        if wl.finished:
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
        if wl.gang_complete or wl.finished or not wl.pods:
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
        if wl.finished:
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
