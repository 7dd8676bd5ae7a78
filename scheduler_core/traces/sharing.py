"""GPU-sharing replay (Alibaba 2023 style) with HAMi-like binpack/spread and fragmentation.

Cluster model
-------------
Each node has CPU (milli-cores), host memory (MiB) and ``num_gpus`` GPUs of
one model.  Each GPU is accounted the way HAMi's scheduler does it:

* a compute share in milli-GPU (1000 = the whole GPU; HAMi's ``gpucores`` x 10),
* device memory in MiB (a pod without a GPU-memory figure is charged
  ``gpu_milli/1000`` of the device, so memory then never binds on its own),
* a slot count: at most ``split_count`` pods per GPU (HAMi ``deviceSplitCount``,
  default 10; ``None`` = unlimited).

A pod asking ``num_gpus x gpu_milli`` fits a node when the node has CPU and
host memory for it, its GPU model is allowed by ``gpu_spec``, and at least
``num_gpus`` GPUs each have ``gpu_milli`` share, the memory and a free slot
left (a whole-GPU pod, ``gpu_milli=1000``, therefore needs idle GPUs).

Policies (HAMi ``docs/develop/scheduler-policy.md``): among feasible nodes,
node score = ``(used+req)/total`` of GPU share plus the same for GPU memory;
*binpack* takes the highest score (the fullest node), *spread* the lowest.
Inside the node, GPU score = ``(used+req)/1000 + (mem_used+req)/mem_total``
and the same rule picks the GPUs.  Ties go to the lowest node / GPU index, so
a run is deterministic.  CPU-only pods are scored by CPU share instead.

Fragmentation
-------------
After every pod, the cluster's GPU fragmentation against the workload's
*typical pods* M (the distribution of GPU-pod shapes in the trace, as in
Weng et al., "Beware of Fragmentation", ATC'23):

    F_n(m) = free_n                                 if node n cannot host m at all
           = sum of free share of GPUs g of n that cannot serve m   otherwise
    F     = sum_n sum_m p_m F_n(m)          (milli-GPU)
    frag_ratio = F / free capacity,   frag_share = F / total capacity

where "can host"/"can serve" is exactly the placement filter above.  Only
the node a pod lands on (or leaves) changes, so F is kept incrementally: the
node's term is recomputed (vectorised over all pod shapes, memoised by node
state) and swapped into an exact integer total.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from scheduler_core.events import Environment, Priority
from scheduler_core.traces.records import MILLI, TraceJob, TraceNode

__all__ = [
    "SharingCluster",
    "SharingConfig",
    "SharingResult",
    "TypicalPods",
    "replay_sharing",
]

Policy = Literal["binpack", "spread"]


class SharingConfig(BaseModel):
    """Policy and accounting knobs of a GPU-sharing replay."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    policy: Policy = "binpack"
    node_policy: Policy | None = Field(None, description="override for the node choice (default: policy)")
    gpu_policy: Policy | None = Field(None, description="override for the GPU choice (default: policy)")
    split_count: int | None = Field(10, ge=1, description="max pods per GPU (HAMi deviceSplitCount)")
    departures: bool = Field(
        False,
        description="pods leave after duration_s and unplaced pods wait; default: arrivals only, "
        "as in the fragmentation experiments on this trace (fill the cluster)",
    )
    series: bool = Field(True, description="include the per-pod series in to_dict()")
    checkpoints: tuple[float, ...] = (0.5, 0.6, 0.7, 0.8, 0.9)

    @property
    def node_rule(self) -> Policy:
        return self.node_policy or self.policy

    @property
    def gpu_rule(self) -> Policy:
        return self.gpu_policy or self.policy


# -- pod shapes ---------------------------------------------------------------

def _shape(j: TraceJob) -> tuple:
    return (j.num_gpus, j.gpu_milli, j.gpu_mem_mib, j.cpu_milli, j.mem_mib, j.gpu_spec)


class TypicalPods:
    """The workload distribution M: GPU-pod shapes and how often each occurs.

    Built from a list of pods (by default the replayed trace itself);
    CPU-only pods are left out (they cannot use GPU capacity, as in the
    reference simulator's default).  Shapes are sorted, so the order of the
    input does not matter.
    """

    def __init__(self, pods: Sequence[TraceJob]) -> None:
        counts: dict[tuple, int] = {}
        for p in pods:
            if p.num_gpus > 0:
                s = _shape(p)
                counts[s] = counts.get(s, 0) + 1
        if not counts:
            raise ValueError("no GPU pods to build the typical-pod distribution from")
        self.shapes = sorted(counts, key=lambda s: (s[0], s[1], -1 if s[2] is None else s[2], s[3], s[4], s[5]))
        self.counts = [counts[s] for s in self.shapes]
        self.total = sum(self.counts)

    def __len__(self) -> int:
        return len(self.shapes)


class _PodType:
    """Per-shape data precomputed against one cluster."""

    __slots__ = ("k", "m", "gmem", "cpu", "mem", "q_node", "q_grid", "spec_mask", "spec")

    def __init__(self, shape: tuple, cl: "SharingCluster") -> None:
        k, m, gmem, cpu, mem, spec = shape
        self.k, self.m, self.gmem, self.cpu, self.mem, self.spec = k, m, gmem, cpu, mem, spec
        # Per-GPU memory request on each node (depends on the node's GPU model).
        if gmem is None:
            self.q_node = (cl.model_mem[cl.model_idx] * m) // MILLI
        else:
            self.q_node = np.full(cl.n_nodes, gmem, dtype=np.int64)
        self.q_grid = None if not cl.mem_binding else self.q_node[:, None]
        self.spec_mask = None
        if spec:
            allowed = np.array([name in spec for name in cl.model_names])
            self.spec_mask = allowed[cl.model_idx]


class SharingCluster:
    """Mutable GPU-sharing cluster state with incremental fragmentation.

    :param nodes: the node list.
    :param typical: workload distribution for the fragmentation measure.
    :param mem_binding: set when some pod states its GPU memory, so memory
        must be checked separately from the share (otherwise it is implied).
    """

    def __init__(self, nodes: Sequence[TraceNode], typical: TypicalPods, *, split_count: int | None = 10,
                 node_rule: Policy = "binpack", gpu_rule: Policy = "binpack", mem_binding: bool = False) -> None:
        if not nodes:
            raise ValueError("no nodes")
        self.n_nodes = n = len(nodes)
        self.max_gpus = g = max(1, max(nd.num_gpus for nd in nodes))
        self.split = split_count
        self.node_rule = node_rule
        self.gpu_rule = gpu_rule
        self.mem_binding = mem_binding
        self.model_names = sorted({nd.model for nd in nodes})
        mi = {name: i for i, name in enumerate(self.model_names)}
        model_mem = {}
        for nd in nodes:
            model_mem.setdefault(nd.model, nd.gpu_mem_mib)
        self.model_mem = np.array([model_mem[name] for name in self.model_names], dtype=np.int64)
        self.model_idx = np.array([mi[nd.model] for nd in nodes], dtype=np.int64)
        self.ngpu = np.array([nd.num_gpus for nd in nodes], dtype=np.int64)
        valid = np.arange(g)[None, :] < self.ngpu[:, None]
        self.valid = valid
        self.left = np.where(valid, MILLI, -1).astype(np.int64)  # free share; -1 = no GPU
        self.gmem_total = np.where(valid, np.array([nd.gpu_mem_mib for nd in nodes])[:, None], 0).astype(np.int64)
        self.gmem_left = self.gmem_total.copy()
        self.slots = np.zeros((n, g), dtype=np.int64)
        self.slot_ok = valid.copy()
        self.cpu_total = np.array([nd.cpu_milli for nd in nodes], dtype=np.int64)
        self.cpu_left = self.cpu_total.copy()
        self.mem_left = np.array([nd.mem_mib for nd in nodes], dtype=np.int64)
        self.used_milli = np.zeros(n, dtype=np.int64)
        self.used_mem = np.zeros(n, dtype=np.int64)
        tot_milli = self.ngpu * MILLI
        tot_mem = self.gmem_total.sum(axis=1)
        with np.errstate(divide="ignore"):
            self.inv_milli = np.where(tot_milli > 0, 1.0 / np.maximum(tot_milli, 1), 0.0)
            self.inv_mem = np.where(tot_mem > 0, 1.0 / np.maximum(tot_mem, 1), 0.0)
            self.inv_cpu = np.where(self.cpu_total > 0, 1.0 / np.maximum(self.cpu_total, 1), 0.0)
        self.capacity_milli = int(tot_milli.sum())
        self.allocated_milli = 0
        self._types: dict[tuple, _PodType] = {}
        # Fragmentation: typical-pod arrays.
        self.typical = typical
        t_shapes = typical.shapes
        self._tk = np.array([s[0] for s in t_shapes], dtype=np.int64)
        self._tm = np.array([s[1] for s in t_shapes], dtype=np.int64)
        self._tcpu = np.array([s[3] for s in t_shapes], dtype=np.int64)
        self._tmem = np.array([s[4] for s in t_shapes], dtype=np.int64)
        self._tcount = np.array(typical.counts, dtype=np.int64)
        self._tspec = np.array(
            [[(not s[5]) or (name in s[5]) for name in self.model_names] for s in t_shapes], dtype=bool
        )  # (T, models)
        self._tq = np.array(
            [[(mm * s[1]) // MILLI if s[2] is None else s[2] for mm in self.model_mem] for s in t_shapes],
            dtype=np.int64,
        )  # (T, models)
        self._frag_cache: dict[tuple, int] = {}
        self.node_frag = np.zeros(n, dtype=np.int64)  # numerator: sum_m count_m * F_n(m)
        for i in range(n):
            self.node_frag[i] = self._node_frag(i)
        self.frag_num = int(self.node_frag.sum())

    # -- queries ---------------------------------------------------------------
    def pod_type(self, job: TraceJob) -> _PodType:
        s = _shape(job)
        t = self._types.get(s)
        if t is None:
            t = self._types[s] = _PodType(s, self)
        return t

    @property
    def frag_milli(self) -> float:
        """Expected fragmented GPU capacity F in milli-GPU."""
        return self.frag_num / self.typical.total

    @property
    def free_milli(self) -> int:
        return self.capacity_milli - self.allocated_milli

    def frag_ratio(self) -> float:
        free = self.free_milli
        return self.frag_milli / free if free > 0 else 0.0

    def fragmentation_full(self) -> float:
        """F recomputed from scratch for every node (for checks; O(nodes))."""
        self._frag_cache.clear()
        return sum(self._node_frag(i) for i in range(self.n_nodes)) / self.typical.total

    def _node_frag(self, n: int) -> int:
        g = int(self.ngpu[n])
        if g == 0:
            return 0
        lf = self.left[n, :g]
        free = int(lf.sum())
        if free == 0:
            return 0
        model = int(self.model_idx[n])
        cpu = int(self.cpu_left[n])
        mem = int(self.mem_left[n])
        so = self.slot_ok[n, :g]
        key = (model, cpu, mem, lf.tobytes(), so.tobytes(),
               self.gmem_left[n, :g].tobytes() if self.mem_binding else b"")
        v = self._frag_cache.get(key)
        if v is not None:
            return v
        serve = (lf[None, :] >= self._tm[:, None]) & so[None, :]
        if self.mem_binding:
            serve &= self.gmem_left[n, :g][None, :] >= self._tq[:, model][:, None]
        ok = (serve.sum(axis=1) >= self._tk) & (self._tcpu <= cpu) & (self._tmem <= mem) & self._tspec[:, model]
        served = (serve * lf[None, :]).sum(axis=1)
        frag = np.where(ok, free - served, free)
        v = int(self._tcount @ frag)
        if len(self._frag_cache) > 200_000:
            self._frag_cache.clear()
        self._frag_cache[key] = v
        return v

    def _refresh_frag(self, n: int) -> None:
        v = self._node_frag(n)
        self.frag_num += v - int(self.node_frag[n])
        self.node_frag[n] = v

    # -- placement ---------------------------------------------------------------
    def _feasible_nodes(self, t: _PodType) -> np.ndarray:
        if t.k == 0:
            ok = (self.cpu_left >= t.cpu) & (self.mem_left >= t.mem)
        else:
            serve = self.left >= t.m
            if self.split is not None:
                serve &= self.slot_ok
            if t.q_grid is not None:
                serve &= self.gmem_left >= t.q_grid
            ok = serve.any(axis=1) if t.k == 1 else serve.sum(axis=1) >= t.k
            if t.cpu:
                ok &= self.cpu_left >= t.cpu
            if t.mem:
                ok &= self.mem_left >= t.mem
        if t.spec_mask is not None:
            ok &= t.spec_mask
        return np.flatnonzero(ok)

    def choose_node(self, t: _PodType) -> int:
        """Index of the node the policy picks for ``t``, or -1 if none fits."""
        idx = self._feasible_nodes(t)
        if idx.size == 0:
            return -1
        if idx.size == 1:
            return int(idx[0])
        if t.k == 0:
            score = (self.cpu_total[idx] - self.cpu_left[idx] + t.cpu) * self.inv_cpu[idx]
        else:
            req = t.k * t.m
            score = (self.used_milli[idx] + req) * self.inv_milli[idx] + (
                self.used_mem[idx] + t.k * t.q_node[idx]
            ) * self.inv_mem[idx]
        j = int(score.argmax()) if self.node_rule == "binpack" else int(score.argmin())
        return int(idx[j])

    def gpus_on(self, n: int, t: _PodType) -> list[int] | None:
        """GPUs of node ``n`` the policy picks for ``t`` (``[]`` for CPU-only), or None."""
        if self.cpu_left[n] < t.cpu or self.mem_left[n] < t.mem:
            return None
        if t.spec_mask is not None and not t.spec_mask[n]:
            return None
        if t.k == 0:
            return []
        g = int(self.ngpu[n])
        left = self.left[n, :g].tolist()
        gml = self.gmem_left[n, :g].tolist()
        gmt = self.gmem_total[n, :g].tolist()
        so = self.slot_ok[n, :g].tolist()
        q = int(t.q_node[n])
        m = t.m
        check_slots = self.split is not None
        cands = []
        for i in range(g):
            if left[i] >= m and gml[i] >= q and (so[i] or not check_slots):
                score = (MILLI - left[i] + m) / MILLI + ((gmt[i] - gml[i] + q) / gmt[i] if gmt[i] else 0.0)
                cands.append((score, i))
        if len(cands) < t.k:
            return None
        if self.gpu_rule == "binpack":
            cands.sort(key=lambda c: (-c[0], c[1]))
        else:
            cands.sort()
        return [i for _s, i in cands[: t.k]]

    def place(self, n: int, t: _PodType, gpus: list[int]) -> None:
        self.cpu_left[n] -= t.cpu
        self.mem_left[n] -= t.mem
        if gpus:
            q = int(t.q_node[n])
            m = t.m
            split = self.split
            for g in gpus:
                self.left[n, g] -= m
                self.gmem_left[n, g] -= q
                s = self.slots[n, g] + 1
                self.slots[n, g] = s
                if split is not None and s >= split:
                    self.slot_ok[n, g] = False
            self.used_milli[n] += m * len(gpus)
            self.used_mem[n] += q * len(gpus)
            self.allocated_milli += m * len(gpus)
        self._refresh_frag(n)

    def remove(self, n: int, t: _PodType, gpus: list[int]) -> None:
        self.cpu_left[n] += t.cpu
        self.mem_left[n] += t.mem
        if gpus:
            q = int(t.q_node[n])
            m = t.m
            split = self.split
            for g in gpus:
                self.left[n, g] += m
                self.gmem_left[n, g] += q
                s = self.slots[n, g] - 1
                self.slots[n, g] = s
                if split is None or s < split:
                    self.slot_ok[n, g] = True
            self.used_milli[n] -= m * len(gpus)
            self.used_mem[n] -= q * len(gpus)
            self.allocated_milli -= m * len(gpus)
        self._refresh_frag(n)

    def try_place(self, t: _PodType) -> tuple[int, list[int]] | None:
        n = self.choose_node(t)
        if n < 0:
            return None
        gpus = self.gpus_on(n, t)
        if gpus is None:  # pragma: no cover - filter and per-node check agree
            raise AssertionError("node filter and GPU choice disagree")
        self.place(n, t, gpus)
        return n, gpus


# -- replay ---------------------------------------------------------------------

def _count(keys) -> dict[str, int]:
    out: dict[str, int] = {}
    for k in keys:
        out[k] = out.get(k, 0) + 1
    return out


def _r6(a: np.ndarray) -> list[float]:
    return [float(x) for x in np.round(a, 6)]


@dataclass
class SharingResult:
    """Outcome of :func:`replay_sharing`; :meth:`to_dict` is JSON-ready."""

    config: SharingConfig
    nodes: int
    gpus: int
    capacity_milli: int
    typical_shapes: int
    pods: int
    gpu_pods: int
    placed: int
    unplaced: list[str]
    unplaced_gpu_milli: int
    unplaced_by_class: dict[str, int]
    arrived_milli: np.ndarray
    allocated_milli: np.ndarray
    frag_milli: np.ndarray
    events: int
    summary: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        cap = self.capacity_milli
        alloc = self.allocated_milli / cap
        free = cap - self.allocated_milli
        ratio = np.divide(self.frag_milli, free, out=np.zeros_like(self.frag_milli), where=free > 0)
        self.allocated_share = alloc
        self.arrived_share = self.arrived_milli / cap
        self.frag_ratio = ratio
        self.frag_share = self.frag_milli / cap
        at = {}
        for c in self.config.checkpoints:
            hit = np.flatnonzero(alloc >= c)
            if hit.size:
                i = int(hit[0])
                at[f"{c:g}"] = {
                    "pod": i,
                    "arrived_share": float(self.arrived_share[i]),
                    "frag_ratio": float(ratio[i]),
                    "frag_share": float(self.frag_share[i]),
                }
            else:
                at[f"{c:g}"] = None
        last = len(alloc) - 1
        self.summary = {
            "nodes": self.nodes,
            "gpus": self.gpus,
            "pods": self.pods,
            "gpu_pods": self.gpu_pods,
            "typical_pod_shapes": self.typical_shapes,
            "placed": self.placed,
            "unplaced": len(self.unplaced),
            "unplaced_gpus": self.unplaced_gpu_milli / MILLI,
            "unplaced_by_priority_class": dict(sorted(self.unplaced_by_class.items())),
            "arrived_share": float(self.arrived_share[last]),
            "final_allocated_share": float(alloc[last]),
            "final_frag_ratio": float(ratio[last]),
            "final_frag_share": float(self.frag_share[last]),
            "max_allocated_share": float(alloc.max()),
            "mean_frag_ratio": float(ratio.mean()),
            "at_allocated_share": at,
            "events": self.events,
        }

    def to_dict(self) -> dict:
        out = {
            "kind": "gpu_sharing",
            "config": self.config.model_dump(mode="json", exclude={"series"}),
            "summary": self.summary,
            "unplaced": list(self.unplaced),
        }
        if self.config.series:
            out["series"] = {
                "arrived_share": _r6(self.arrived_share),
                "allocated_share": _r6(self.allocated_share),
                "frag_ratio": _r6(self.frag_ratio),
                "frag_share": _r6(self.frag_share),
            }
        return out


class _SharingReplay:
    def __init__(self, pods: Sequence[TraceJob], cl: SharingCluster, cfg: SharingConfig) -> None:
        self.pods = pods
        self.cl = cl
        self.cfg = cfg
        self.env = env = Environment()
        n = len(pods)
        self.arrived = np.zeros(n, dtype=np.int64)
        self.alloc = np.zeros(n, dtype=np.int64)
        self.frag = np.zeros(n, dtype=np.float64)
        self._arrived_milli = 0
        self.placed = 0
        self.unplaced: dict[int, None] = {}  # insertion-ordered set of pod positions
        self.where: dict[int, tuple[int, list[int]]] = {}
        self.types = [cl.pod_type(p) for p in pods]
        for i, p in enumerate(pods):
            env.schedule(p.submit_s, Priority.ARRIVAL, self._arrive, i)

    def _record(self, i: int) -> None:
        cl = self.cl
        self.arrived[i] = self._arrived_milli
        self.alloc[i] = cl.allocated_milli
        self.frag[i] = cl.frag_num / cl.typical.total

    def _started(self, i: int, n: int, gpus: list[int]) -> None:
        self.placed += 1
        if self.cfg.departures:
            d = self.pods[i].duration_s
            if d is not None:
                self.where[i] = (n, gpus)
                self.env.schedule(self.env.now + d, Priority.COMPLETION, self._depart, i)

    def _arrive(self, i: int) -> None:
        p = self.pods[i]
        self._arrived_milli += p.num_gpus * p.gpu_milli
        got = self.cl.try_place(self.types[i])
        if got is None:
            self.unplaced[i] = None
        else:
            self._started(i, *got)
        self._record(i)

    def _depart(self, i: int) -> None:
        n, gpus = self.where.pop(i)
        cl = self.cl
        cl.remove(n, self.types[i], gpus)
        # A waiting pod fitted no node when it was last tried and only node n
        # has gained room since, so n is the only node worth trying.
        if self.unplaced:
            for w in list(self.unplaced):
                t = self.types[w]
                got = cl.gpus_on(n, t)
                if got is not None:
                    cl.place(n, t, got)
                    del self.unplaced[w]
                    self._started(w, n, got)


def replay_sharing(
    pods: Sequence[TraceJob],
    nodes: Sequence[TraceNode],
    config: SharingConfig | None = None,
    *,
    typical: Sequence[TraceJob] | None = None,
    **overrides,
) -> SharingResult:
    """Replay ``pods`` on ``nodes`` with HAMi-style binpack or spread sharing.

    :param typical: pods whose shapes define the fragmentation workload M
        (default: ``pods``).
    :param overrides: fields of :class:`SharingConfig` (e.g. ``policy="spread"``).
    :returns: a :class:`SharingResult` with a point per pod (arrival order):
        arrived share, allocated share, fragmentation ratio and share.
    """
    cfg = config or SharingConfig()
    if overrides:
        cfg = SharingConfig.model_validate({**cfg.model_dump(), **overrides})
    if not pods:
        raise ValueError("no pods to replay")
    mem_binding = any(p.gpu_mem_mib is not None for p in pods)
    cl = SharingCluster(
        nodes, TypicalPods(typical if typical is not None else pods), split_count=cfg.split_count,
        node_rule=cfg.node_rule, gpu_rule=cfg.gpu_rule, mem_binding=mem_binding,
    )
    r = _SharingReplay(pods, cl, cfg)
    r.env.run()
    unplaced = list(r.unplaced)
    return SharingResult(
        config=cfg,
        nodes=cl.n_nodes,
        gpus=int(cl.ngpu.sum()),
        capacity_milli=cl.capacity_milli,
        typical_shapes=len(cl.typical),
        pods=len(pods),
        gpu_pods=sum(1 for p in pods if p.num_gpus > 0),
        placed=r.placed,
        unplaced=[pods[i].job_id for i in unplaced],
        unplaced_gpu_milli=sum(pods[i].num_gpus * pods[i].gpu_milli for i in unplaced),
        unplaced_by_class=_count(pods[i].priority_class or "-" for i in unplaced),
        arrived_milli=r.arrived,
        allocated_milli=r.alloc,
        frag_milli=r.frag,
        events=r.env.processed,
    )
