"""Termination: release devices, finish, evict and requeue, preempt, crash and restart in place."""

from __future__ import annotations

import math

from scheduler_core.cluster import DeviceContext
from scheduler_core.events import Priority
from scheduler_core.resources import add_into
from scheduler_core.simulation.state import EPS
from scheduler_core.workloads import Pod, Workload


class TerminationPhase:
    def release_pod(self, pod: Pod) -> None:
        """Give a pod's devices back (completion, eviction, deletion, end of grace period)."""
        if pod.state == "gone":
            return
        wl = pod.wl
        self._advance()
        if pod.state == "terminating":
            self._releasing_add(pod, -1.0)
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
        add_into(self.queue_usage[wl.queue], wl.request.share, -1.0)
        self.running_priorities[wl.pod_priority] -= 1
        if not self.running_priorities[wl.pod_priority]:
            del self.running_priorities[wl.pod_priority]
        if pod in wl.pods:
            wl.pods.remove(pod)
        pod.state = "gone"
        self.refresh_node(node)
        if wl.finished:
            affected.pop(wl.uid, None)
        self._settle(ctxs, affected)
        if node.name in self._reconfig_pending:
            self._try_start_reconfigure(node)

    def complete(self, wl: Workload) -> None:
        self._finish(wl, "done")

    def fail_workload(self, wl: Workload, reason: str) -> None:
        if not wl.finished:
            self.log_event("fail", wl, reason)
        self._finish(wl, "failed")

    def _finish(self, wl: Workload, state: str) -> None:
        self._advance()
        if wl.finished:
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
        self.tenant_demand[wl.tenant] -= self.demand_equiv(wl)
        if self.admission is not None:
            self.admission.on_finish(wl)
        self.scheduler.on_finish(wl)
        self.request_cycle()

    def _stop_service(self, wl: Workload) -> None:
        self._flush_service(wl)
        self.services[wl.uid].active = False
        self._finish(wl, "stopped")

    def evict(self, wl: Workload, reason: str, requeue_delay: float = 0.0, preemption: bool = True,
              message: str = "") -> None:
        """Remove a workload's pods (preemption, waitForPodsReady timeout, node loss) and requeue it."""
        if wl.finished:
            return
        self._advance()
        detail = f"{reason}: {message}" if message else reason
        self.log_event("preempt" if preemption else "evict", wl, detail)
        self.log_event("requeue", wl, f"after {requeue_delay:g}s" if requeue_delay > 0 else "")
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

    def preempt_pod(self, pod: Pod, reason: str, message: str = "") -> None:
        """kube-scheduler preemption: delete one pod; its controller recreates it.

        A running gang that loses a worker stops (its peers wait for the
        replacement, holding their GPUs) and rolls back to its checkpoint.
        """
        wl = pod.wl
        if pod.state in ("gone", "terminating") or wl.finished:
            return
        self._advance()
        self.log.record(self.now, "preempt", pod.name, f"{reason}: {message}" if message else reason,
                        pod.node.name if pod.node is not None else None)
        self.preemptions += 1
        wl.preemptions += 1
        self.preempt_reasons[reason] = self.preempt_reasons.get(reason, 0) + 1
        self.lose_pod(pod)

    def lose_pod(self, pod: Pod, node_down: bool = False) -> None:
        """A pod is gone (deleted with its grace period, or at once on a failed node) and its controller
        creates a replacement; a running gang that loses a worker stops and rolls back to its checkpoint."""
        wl = pod.wl
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
        if node_down:
            self.release_pod(pod)
        else:
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
        self._releasing_add(pod, 1.0)
        if pod in pod.wl.pods:
            pod.wl.pods.remove(pod)
        self._settle(ctxs, affected)
        self.schedule_in(grace, Priority.COMPLETION, self._release_terminated, pod)

    def _releasing_add(self, pod: Pod, sign: float) -> None:
        releasing = add_into(self.queue_releasing.setdefault(pod.wl.queue, {}), pod.wl.request.share, sign)
        if all(abs(x) < EPS for x in releasing.values()):
            del self.queue_releasing[pod.wl.queue]

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
        if pod.state not in ("running", "bound") or wl.finished:
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
        if pod.state != "crashed" or wl.finished:
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
        if wl.finished:
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
