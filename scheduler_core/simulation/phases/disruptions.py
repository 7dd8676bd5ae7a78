"""Disruptions: scenario events (device plugin restart, node failure, GPU fault) and MIG reconfiguration."""

from __future__ import annotations

from scheduler_core import mig as migmod
from scheduler_core.cluster import Node
from scheduler_core.events import Priority
from scheduler_core.workloads import Pod, Workload


class DisruptionPhase:
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
        self.log.record(self.now, "fault", "", f"node failure: {len(node.pods)} pod(s) lost", node.name)
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
            elif self.admission is not None and self.admission.keeps_reservation(wl):
                # Kueue's waitForPodsReady: the workload stays admitted while its job recreates the pods.
                for p in [p for p in wl.pods if p.node is node]:
                    self.lose_pod(p, node_down=True)
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
        self.log.record(self.now, "fault", "", f"GPU {ev.gpu} fault ({ev.scope}): {len(victims)} pod(s) killed",
                        node.name)
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
        self.log.record(self.now, "reconfigure", "", f"MIG layout {layout} on GPU(s) {gpus} after a {dur:g}s drain",
                        node.name)
        self.reconfig_seconds += dur
        self.reconfig_gpu_hours += dur * len(node.gpus) / 3600.0
        self.request_cycle()
