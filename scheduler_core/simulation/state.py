"""State held by a running simulation beside the nodes and workloads themselves.

:class:`CapacityIndex` (free units per node group, for O(units) rejection of
unplaceable shapes), :class:`EvictionProbe` (would evicting these pods make
room?), :class:`ServiceState` (an inference service's rate and latency
account) and :func:`node_free_equiv` (free GPU-equivalents on a node).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from scheduler_core.cluster import Node
from scheduler_core.latency import LatencyGrid, ServiceLatency
from scheduler_core.scenario import InferenceWorkload
from scheduler_core.workloads import Workload

if TYPE_CHECKING:  # pragma: no cover
    from scheduler_core.simulation.cluster_sim import ClusterSimulation

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

    def __init__(self, sim: "ClusterSimulation", wl: Workload, pods: int, nodes: list[Node] | None = None) -> None:
        self.req = wl.request
        self.pods = pods
        self.level = wl.topology_required
        nodes = sim.candidate_nodes(wl) if nodes is None else nodes
        self.eligible = {n.name for n in nodes}
        self.count_kind = self.req.kind == "count"
        if self.count_kind:
            self.units = {n.name: n.free.get(self.req.resource, 0) for n in nodes}
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
        k = self.units[name] // self.req.count
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
                if not n and host == [None, None]:
                    continue
                before = self._fit(name)
                self.units[name] += n
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
