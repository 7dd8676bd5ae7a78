"""kube-scheduler (pod by pod, no gang) and the coscheduling plugin (PodGroup all-or-nothing).

kube-scheduler (facts §6.3): the activeQ is ordered by priority then
creation; each pod is filtered and scored on its own (NodeResourcesFit,
``LeastAllocated`` by default, which *spreads*), so a gang's workers bind
one by one and a gang can start partially.  PostFilter preemption deletes
lower-priority pods on one node (their controllers recreate them).

Coscheduling (facts §6.4): pods of a PodGroup wait at Permit until
``minMember`` are reserved, then bind together; otherwise all are rejected.
Because every pass here sees the whole group at once, the Permit wait is
collapsed into an all-or-nothing check (the reservation that would be held
for up to ``permitWaitingTimeSeconds`` is not modelled - see
docs/simulator-model.md).  Scoring is still kube-scheduler's, so gangs are
spread unless the profile uses MostAllocated.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler_core.policies.base import Policy

if TYPE_CHECKING:  # pragma: no cover
    from scheduler_core.cluster import Node
    from scheduler_core.workloads import Pod, Workload


class KubeScheduler(Policy):
    """Extension points: allocate (pod by pod, with PostFilter preemption per pod), score (the default)."""

    name = "kube-default"

    def allocate(self) -> None:
        sim = self.sim
        scan = self.queue.scan(self.queue_order, self.pass_keys())
        while True:
            item = scan.next()
            if item is None:
                break
            key, wl = item
            strategy, _ = self.score(wl)
            if self.placed_as_gang(wl, strategy, scan, key):
                continue
            sim.place_pods_individually(wl, strategy)
            if wl.pending <= 0:
                scan.done(key)
                continue
            if sim.cp.kube.preemption:
                # PostFilter: victims hold their devices until they terminate (an event after this cycle,
                # whatever the grace period), so the preemptor waits for the cycle their release requests
                self.preempt_for(wl)
            scan.fail(key)

    def placed_as_gang(self, wl: "Workload", strategy, scan, key) -> bool:
        """Place ``wl`` as one gang and settle its scan entry (True), or leave it to pod-by-pod binding."""
        return False

    # -- PostFilter: default preemption ------------------------------------------
    def preempt_for(self, wl: "Workload") -> bool:
        """Delete lower-priority pods on the best node so one pod of ``wl`` fits.  True if any."""
        sim = self.sim
        req = wl.request
        if req.kind != "count" or wl.nominated_until > sim.now:
            return False
        if not sim.running_priorities or min(sim.running_priorities) >= wl.pod_priority:
            return False  # nothing of lower priority is running anywhere
        best = None
        for node in sim.candidate_nodes(wl):
            victims = self._victims(node, wl)
            if victims is None:
                continue
            key = (max(v.wl.pod_priority for v in victims), len(victims), node.index)
            if best is None or key < best[0]:
                best = (key, victims)
        if best is None:
            return False
        for v in best[1]:
            sim.preempt_pod(v, "PreemptedByScheduler", f"Preempted by pod {wl.name} on node {v.node.name}")
        wl.nominated_until = sim.now + sim.params.termination_grace
        return True

    def _victims(self, node: "Node", wl: "Workload") -> list["Pod"] | None:
        """The lowest-priority pods on ``node``, most recently bound first, whose deletion lets one pod of
        ``wl`` fit there: its GPUs, and its host CPU and memory when it asks for them (NodeResourcesFit
        checks the whole request). None if it fits already or no deletion makes it fit."""
        req = wl.request
        probe = self.sim.eviction_probe(wl, 1, [node])
        if probe.fits():
            return None  # fits already; not a preemption case
        lower = [p for p in node.pods if p.wl.pod_priority < wl.pod_priority and p.state in ("running", "bound")
                 and (any(c.resource == req.resource for c in p.contexts)
                      or (req.cpu and p.wl.request.cpu) or (req.host_gib and p.wl.request.host_gib))]
        lower.sort(key=lambda p: (p.wl.pod_priority, -p.bound_at, -p.uid))
        out = []
        for p in lower:
            out.append(p)
            probe.add([p])
            if probe.fits():
                return out
        return None


class KubeWorkloadGangScheduler(KubeScheduler):
    """kube-scheduler with the Workload API's gang (KEP-4671, beta in Kubernetes 1.37; the GenericWorkload
    feature gate turns on the GangScheduling plugin, k8s.io/kubernetes pkg/scheduler/apis/config/v1/
    default_plugins.go). The pods of a PodGroup with a gang policy wait at PreEnqueue until minCount of
    them exist and at Permit until minCount are reserved, then bind together: the same all-or-nothing
    placement as coscheduling (``Policy.place_gang``, the Permit wait collapsed), with minCount the
    workload's ``min_member``. Pods outside a gang (a job of one pod, services) still bind one by one
    with PostFilter preemption; workload-aware preemption of whole PodGroups is not modelled."""

    def key(self, wl: "Workload"):
        return (wl.pod_priority, wl.shape(), wl.pods_total, wl.min_member)

    @staticmethod
    def is_gang(wl: "Workload") -> bool:
        return wl.kind == "training" and wl.min_member > 1

    def placed_as_gang(self, wl: "Workload", strategy, scan, key) -> bool:
        if not self.is_gang(wl):
            return False
        if self.place_gang(wl, strategy):
            scan.done(key) if wl.pending <= 0 else scan.keep(key)
        else:
            scan.fail(key)
        return True

    def explain(self, wl: "Workload") -> str:
        if wl.pending <= 0 or not self.is_gang(wl) or wl.pods:
            return super().explain(wl)
        msg = self.sim.unschedulable(wl, siblings_fill=True) or super().explain(wl)
        return f"{msg} PodGroup {wl.name}: fewer than minCount {wl.min_member} pods can be scheduled (gang)"


class CoschedulingScheduler(Policy):
    """Extension points: allocate (PodGroups all-or-nothing, the Permit wait collapsed; backoff after a
    failure), score (kube-scheduler's, packed for a required topology)."""

    name = "coscheduling"

    def key(self, wl: "Workload"):
        return (wl.pod_priority, wl.shape(), wl.pods_total, wl.min_member)

    def score(self, wl: "Workload") -> tuple[str, str | None]:
        """Topology-aware placement when the workload asks for it, else kube-scheduler's scoring."""
        default = self.sim.kube_scoring(wl)
        if wl.topology_required is not None:
            return "pack", wl.topology_required
        return default, None

    def allocate(self) -> None:
        sim = self.sim
        # PodGroups: higher priority, then earlier creation (§6.4)
        scan = self.queue.scan(self.queue_order, self.pass_keys())
        backoff = sim.cp.coscheduling.pod_group_backoff
        while True:
            item = scan.next()
            if item is None:
                break
            key, wl = item
            if getattr(wl, "backoff_until", 0.0) > sim.now:
                scan.fail(key)
                continue
            strategy, level = self.score(wl)
            if self.place_gang(wl, strategy, level):
                scan.done(key) if wl.pending <= 0 else scan.keep(key)
            else:
                if backoff > 0:
                    wl.backoff_until = sim.now + backoff
                    sim.retry_at(wl.backoff_until)
                scan.fail(key)

    def explain(self, wl: "Workload") -> str:
        sim = self.sim
        if wl.pending <= 0:
            return super().explain(wl)
        msg = sim.unschedulable(wl)
        fit = None
        if msg is None:
            if getattr(wl, "backoff_until", 0.0) > sim.now:
                return f"PodGroup {wl.name} failed recently: in backoff until t={wl.backoff_until:g}s"
            held = sim.topology_unschedulable(wl, wl.topology_required) if wl.topology_required and wl.pods else None
            if held is not None:  # bound pods fix the group's domain: the rest fail pod affinity elsewhere
                msg, fit = held
            elif sim.pods_that_fit(wl, wl.pending) >= wl.pending:
                # every pod fits alone; a group that must share one node or rack may still not fit there
                apart = sim.topology_unschedulable(wl, wl.topology_required) if wl.topology_required else None
                if apart is None:
                    return super().explain(wl)
                msg, fit = apart
            else:
                msg = sim.unschedulable(wl, siblings_fill=True)
        pod = f"{wl.name}-{len(wl.pods) + (sim.pods_that_fit(wl, wl.pending) if fit is None else fit)}"
        return f"{msg} PodGroup {wl.name} gets rejected due to Pod {pod} is unschedulable even after PostFilter"
