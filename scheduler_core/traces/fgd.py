"""FGD peer reproduction: Weng et al., "Beware of Fragmentation" (USENIX ATC '23), like with like.

This module replays the paper's headline experiment on the Alibaba GPU v2023 trace the way the
authors' simulator (hkust-adsl/kubernetes-scheduler-simulator, the artifact behind the paper) runs
it, so that its allocation and fragmentation curves can be set beside the paper's.  It reads pods
and nodes through :mod:`scheduler_core.traces.csvio` (the same :class:`TraceJob` /
:class:`TraceNode` records as the HAMi-style replay in :mod:`scheduler_core.traces.sharing`); the
cluster model, the measure's defaults and the policies are the artifact's, which differ from that
replay's on purpose (see ``docs/fgd.md``).

Cluster model (artifact: ``pkg/type/resource.go``, ``pkg/simulator/plugin/open_gpu_share.go``)
---------------------------------------------------------------------------------------------
A node has CPU (milli-cores), host memory (MiB) and ``num_gpus`` GPUs of one model, each with
1000 milli-GPU.  A pod ``k x m`` (``k`` GPUs of ``m`` milli each) fits a node when the node has the
CPU and memory (kube-scheduler's NodeResourcesFit), the model is in ``gpu_spec`` and ``k`` GPUs each
have ``m`` free (``m = 1000``: idle GPUs).  There is no per-GPU pod limit and no GPU memory.

Fragmentation (paper section 3; artifact ``pkg/utils/frag.go``, ``NodeGpuShareFragAmount``)
-----------------------------------------------------------------------------------------
The target workload M is the trace's *typical pods*: pod shapes ``(cpu, gpu_milli, num_gpus,
gpu_type)`` with their popularity ``p_m``.  By the artifact's experiment defaults
(``scripts/generate_config_and_run.py``) CPU-only pods are included and the most popular shapes are
kept until they cover 95% of the pods, then renormalised.  For node *n* with free milli ``r_g`` on
its GPUs and free CPU ``c``, the fragment that task *m* sees is

* all of ``sum_g r_g`` when *m* asks for no GPU (it cannot use any), when the node's model is not
  one *m* accepts, when ``c`` is below *m*'s CPU, or when fewer than ``k_m`` GPUs have ``m_m`` free;
* otherwise the free milli of the GPUs with ``r_g < m_m`` (those *m* cannot use).

``F_n = sum_m p_m F_n(m)`` and the cluster's fragmentation is ``sum_n F_n``; the fragmentation
ratio is that over the unallocated GPU milli.  Host memory is not part of the measure (it is not in
the artifact's ``PodResource``).

Policies (artifact ``pkg/simulator/plugin/*_score.go``)
-----------------------------------------------------
``fgd`` scores a node ``int(100 * sigmoid((F_n - F_n')/1000))`` with ``F_n'`` the node's
fragmentation after the pod lands (for a sharing pod, on the GPU that scores best, which is also
the GPU it gets); ``bestfit``, ``dotprod``, ``packing``, ``clustering`` and ``random`` follow their
plugins (integer scores as there).  kube-scheduler takes the highest score and breaks ties
uniformly at random; so does this module, with a seeded generator.

Experiment (artifact ``experiments/run_scripts/generate_run_scripts.py``)
----------------------------------------------------------------------
Pods are shuffled (seeded), then the list is tuned to 1.3 x the cluster's GPU capacity: random
copies of trace pods are appended (or random pods removed) until the next one would pass it.  Pods
arrive in that order and never leave (the artifact's YAML carries no deletion times); after each pod
the allocated GPU milli and the fragmentation are recorded.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Iterable, Sequence

import numpy as np

from scheduler_core.traces.records import MILLI, TraceJob, TraceNode

__all__ = [
    "DEFAULT_POPULARITY",
    "DEFAULT_TUNE_RATIO",
    "FGD_POLICIES",
    "FgdCluster",
    "FgdResult",
    "PodShape",
    "TargetWorkload",
    "inflate_workload",
    "node_fragmentation",
    "replay_fgd",
]

#: Policies in the paper's order (Fig. 9): Random, DotProd, GpuClustering, GpuPacking, BestFit, FGD.
FGD_POLICIES = ("random", "dotprod", "clustering", "packing", "bestfit", "fgd")
#: Typical pods cover this share of the trace's pods (artifact: ``--pod-popularity-threshold 95``).
DEFAULT_POPULARITY = 0.95
#: Arrived GPU demand as a multiple of capacity (artifact: ``-tune 1.3``).
DEFAULT_TUNE_RATIO = 1.3
#: Normalisers of BestFit and DotProduct (artifact ``open-gpu-share/utils/const.go``).
MAX_SPEC_CPU = 128_000
MAX_SPEC_GPU = 8_000
#: How equal best scores are broken: "order" = the first node in a seeded node order (what the
#: artifact's runs show, see docs/fgd.md), "random" = uniformly (upstream kube-scheduler).
TIE_BREAKS = ("order", "random")
#: kube-scheduler counts a pod asking for no CPU as 100m when scoring (``GetNonzeroRequests``).
NONZERO_CPU_MILLI = 100
_BIG = 1 << 30


# -- workload ----------------------------------------------------------------------------------

@dataclass(frozen=True, order=True)
class PodShape:
    """What the measure and the scores see of a pod (the artifact's ``PodResource``)."""

    cpu_milli: int
    gpu_milli: int  # per GPU; 0 for a CPU-only pod
    num_gpus: int
    gpu_type: str = ""  # allowed models joined by "|"; "" = any

    @classmethod
    def of(cls, pod: TraceJob) -> "PodShape":
        cpu = pod.cpu_milli or NONZERO_CPU_MILLI
        if pod.num_gpus == 0:
            return cls(cpu, 0, 0, "")
        return cls(cpu, pod.gpu_milli, pod.num_gpus, "|".join(pod.gpu_spec))

    def allows(self, model: str) -> bool:
        return not self.gpu_type or model in self.gpu_type.split("|")


@dataclass(frozen=True)
class TargetWorkload:
    """The typical pods M and their popularity (weights sum to 1)."""

    shapes: tuple[PodShape, ...]
    weights: tuple[float, ...]

    def __post_init__(self) -> None:
        if not self.shapes or len(self.shapes) != len(self.weights):
            raise ValueError("a target workload needs one weight per shape and at least one shape")
        if abs(sum(self.weights) - 1.0) > 1e-6 or min(self.weights) < 0:
            raise ValueError("target workload weights must be >= 0 and sum to 1")

    def __len__(self) -> int:
        return len(self.shapes)

    @classmethod
    def of(cls, weighted: dict[PodShape, float] | Iterable[tuple[PodShape, float]]) -> "TargetWorkload":
        """From shapes and (unnormalised) weights, as given."""
        items = list(weighted.items() if isinstance(weighted, dict) else weighted)
        total = float(sum(w for _s, w in items))
        return cls(tuple(s for s, _w in items), tuple(w / total for _s, w in items))

    @classmethod
    def from_pods(cls, pods: Sequence[TraceJob], *, popularity: float = DEFAULT_POPULARITY,
                  include_cpu_pods: bool = True) -> "TargetWorkload":
        """The typical pods of ``pods`` as the artifact builds them (``GetTypicalPods``).

        Shapes are counted, sorted by count (ties: larger shape first), and taken one by one until
        they cover ``popularity`` of the pods; their weights are then renormalised.
        """
        if not 0 < popularity <= 1:
            raise ValueError("popularity must be in (0, 1]")
        counts: dict[PodShape, int] = {}
        for p in pods:
            if p.num_gpus == 0 and not include_cpu_pods:
                continue
            s = PodShape.of(p)
            counts[s] = counts.get(s, 0) + 1
        if not counts:
            raise ValueError("no pods to build the typical pods from")
        total = sum(counts.values())
        ranked = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
        want = popularity * total
        kept, cum = [], 0
        for s, c in ranked:
            if cum >= want:
                break
            kept.append((s, c))
            cum += c
        return cls.of(kept)


def node_fragmentation(gpu_left: Sequence[int], cpu_left: int, model: str, workload: TargetWorkload) -> float:
    """``F_n``: expected milli-GPU of one node that a task drawn from ``workload`` cannot use.

    The plain statement of the measure (one node, a loop over tasks); :class:`FgdCluster` computes
    the same thing vectorised and incrementally.
    """
    free = sum(gpu_left)
    total = 0.0
    for s, w in zip(workload.shapes, workload.weights):
        if s.num_gpus == 0 or not s.allows(model) or cpu_left < s.cpu_milli:
            frag = free
        elif sum(1 for r in gpu_left if r >= s.gpu_milli) < s.num_gpus:
            frag = free
        else:
            frag = sum(r for r in gpu_left if r < s.gpu_milli)
        total += w * frag
    return total


# -- inflation -----------------------------------------------------------------------------------

def inflate_workload(pods: Sequence[TraceJob], capacity_milli: int, *, ratio: float = DEFAULT_TUNE_RATIO,
                     seed: int = 42) -> list[TraceJob]:
    """The arrival list of one run: ``pods`` shuffled, then tuned to ``ratio x capacity_milli``.

    As the artifact does it (``SortClusterPods`` with ``shufflePod``, ``TunePodsByNodeTotalResource``):
    pods sorted by id are shuffled; while the GPU demand is below the target, a uniformly drawn trace
    pod is copied to the end (id ``<id>-tuned-<i>``), stopping at the first draw whose per-GPU milli
    would pass the target; while it is above, a uniformly drawn pod is removed.
    """
    if ratio <= 0:
        raise ValueError("ratio must be positive")
    if not pods:
        raise ValueError("no pods to inflate")
    rng = np.random.default_rng([seed, 1])
    base = sorted(pods, key=lambda p: p.job_id)
    order = rng.permutation(len(base))
    out = [base[i] for i in order]
    total = sum(p.num_gpus * p.gpu_milli for p in out)
    if total <= 0:
        raise ValueError("the pods ask for no GPU, so there is no GPU demand to tune")
    target = ratio * capacity_milli
    if total > target:
        while total > target and out:
            p = out.pop(int(rng.integers(len(out))))
            total -= p.num_gpus * p.gpu_milli
    else:
        i = 0
        while True:
            p = base[int(rng.integers(len(base)))]
            # The artifact tests the per-GPU milli here (not num_gpus x milli), so the last copy of a
            # multi-GPU pod may pass the target by up to (k-1) GPUs; kept as it is.
            if total + p.gpu_milli > target:
                break
            total += p.num_gpus * p.gpu_milli
            out.append(replace(p, job_id=f"{p.job_id}-tuned-{i}"))
            i += 1
    return [replace(p, index=i) for i, p in enumerate(out)]


# -- cluster -------------------------------------------------------------------------------------

class FgdCluster:
    """Mutable cluster state with each node's fragmentation kept up to date.

    Per node and typical task *t* it keeps ``P[n, t]`` (free milli on GPUs too small for *t*) and
    ``K[n, t]`` (GPUs large enough for *t*), from lookup tables over the 1001 possible free values;
    a candidate placement then changes one row by table differences, so FGD scores every node (and
    every GPU of a sharing pod) in a few numpy operations.

    :param rng: generator for ties and the random policy (kube-scheduler picks uniformly among the
        best-scored nodes).
    """

    def __init__(self, nodes: Sequence[TraceNode], workload: TargetWorkload, *, rng: np.random.Generator | None = None,
                 tie_break: str = "order"):
        if not nodes:
            raise ValueError("no nodes")
        if tie_break not in TIE_BREAKS:
            raise ValueError(f"tie_break is one of {', '.join(TIE_BREAKS)}")
        self.nodes = list(nodes)
        self.rng = rng if rng is not None else np.random.default_rng(0)
        n = self.n_nodes = len(nodes)
        self.tie_break = tie_break
        # Node rank for "order" ties: the artifact names nodes "<rand.Perm index>-<name>" per seed.
        self.rank = self.rng.permutation(n)
        g = self.max_gpus = max(1, max(nd.num_gpus for nd in nodes))
        self.model_names = sorted({nd.model for nd in nodes})
        mi = {name: i for i, name in enumerate(self.model_names)}
        self.model = np.array([mi[nd.model] for nd in nodes], dtype=np.int64)
        self.ngpu = np.array([nd.num_gpus for nd in nodes], dtype=np.int64)
        # Free milli per GPU; absent GPUs hold 0, which no table counts and no request fits.
        self.left = np.where(np.arange(g)[None, :] < self.ngpu[:, None], MILLI, 0).astype(np.int64)
        self.full = self.ngpu.copy()  # idle GPUs per node
        self.free = self.ngpu * MILLI
        self.cpu_left = np.array([nd.cpu_milli for nd in nodes], dtype=np.int64)
        self.mem_left = np.array([nd.mem_mib for nd in nodes], dtype=np.int64)
        self.capacity_milli = int(self.free.sum())
        self.allocated_milli = 0
        # Pod-kind tags per node for GPU clustering: column 0 = sharing pods, k = k-GPU pods.
        self.tags = np.zeros((n, g + 1), dtype=np.int64)
        self._spec_cache: dict[str, np.ndarray] = {}
        self.set_workload(workload)

    # -- the measure -----------------------------------------------------------------------------
    def set_workload(self, workload: TargetWorkload) -> None:
        self.workload = workload
        sh = workload.shapes
        self.tk = np.array([s.num_gpus for s in sh], dtype=np.int64)
        self.tm = np.array([s.gpu_milli for s in sh], dtype=np.int64)
        self.tcpu = np.array([s.cpu_milli for s in sh], dtype=np.int64)
        self.tw = np.array(workload.weights, dtype=np.float64)
        # acc[model, t]: task t asks for GPUs and accepts the model.
        self.acc = np.array([[s.num_gpus > 0 and s.allows(name) for s in sh] for name in self.model_names], dtype=bool)
        x = np.arange(MILLI + 1)[None, :]
        gpu_t = (self.tk > 0)[:, None]
        self.H = np.where(gpu_t & (x < self.tm[:, None]), x, 0).astype(np.int64)  # (T, 1001)
        self.C = (gpu_t & (x >= self.tm[:, None])).astype(np.int64)
        self.P = self.H[:, self.left].sum(axis=2).T.copy()  # (N, T)
        self.K = self.C[:, self.left].sum(axis=2).T.copy()
        self.node_frag = self._frag(self.P, self.K, self.free, self.cpu_left, self.model)

    def _frag(self, P, K, free, cpu, model) -> np.ndarray:
        ok = self.acc[model] & (K >= self.tk) & (cpu[:, None] >= self.tcpu)
        return np.where(ok, P, free[:, None]) @ self.tw

    @property
    def frag_milli(self) -> float:
        return float(self.node_frag.sum())

    def frag_ratio(self) -> float:
        free = self.capacity_milli - self.allocated_milli
        return self.frag_milli / free if free else 0.0

    def fragmentation_full(self) -> float:
        """Cluster fragmentation recomputed node by node with :func:`node_fragmentation` (checks)."""
        return sum(
            node_fragmentation(self.left[i, : self.ngpu[i]].tolist(), int(self.cpu_left[i]),
                               self.model_names[self.model[i]], self.workload)
            for i in range(self.n_nodes)
        )

    # -- filter ------------------------------------------------------------------------------------
    def _spec_mask(self, gpu_type: str) -> np.ndarray:
        m = self._spec_cache.get(gpu_type)
        if m is None:
            allowed = set(gpu_type.split("|"))
            m = self._spec_cache[gpu_type] = np.array([name in allowed for name in self.model_names])[self.model]
        return m

    def feasible(self, pod: TraceJob) -> np.ndarray:
        """Indices of the nodes the pod fits (NodeResourcesFit + the GPU-share filter)."""
        ok = (self.cpu_left >= pod.cpu_milli) & (self.mem_left >= pod.mem_mib)
        k, m = pod.num_gpus, pod.gpu_milli
        if k:
            if m >= MILLI:
                ok &= self.full >= k
            elif k == 1:
                ok &= (self.left >= m).any(axis=1)
            else:
                raise ValueError(f"pod {pod.job_id}: {k} GPUs of {m} milli each; the FGD model (like its "
                                 "simulator) takes sharing pods of one GPU only")
            if pod.gpu_spec:
                ok &= self._spec_mask("|".join(pod.gpu_spec))
        return np.flatnonzero(ok)

    # -- scores ------------------------------------------------------------------------------------
    def _fgd_scores(self, idx: np.ndarray, pod: TraceJob, shape: PodShape):
        """Node scores for FGD, and for a sharing pod the (node row, free value, score) candidates."""
        cpu_after = self.cpu_left[idx] - shape.cpu_milli
        before = self.node_frag[idx]
        k, m = pod.num_gpus, pod.gpu_milli
        if k == 0 or m >= MILLI:
            P, K, free = self.P[idx], self.K[idx], self.free[idx]
            if k:
                K = K - k * self.C[:, MILLI]
                free = free - k * MILLI
            after = self._frag(P, K, free, cpu_after, self.model[idx])
            return _sigmoid_score(before - after), None
        sub = self.left[idx]
        rows, cols = np.nonzero(sub >= m)
        xs = sub[rows, cols]
        key = np.unique(rows * (MILLI + 1) + xs)
        r, x = key // (MILLI + 1), key % (MILLI + 1)
        nodes = idx[r]
        P = self.P[nodes] + (self.H[:, x - m] - self.H[:, x]).T
        K = self.K[nodes] + (self.C[:, x - m] - self.C[:, x]).T
        after = self._frag(P, K, self.free[nodes] - m, cpu_after[r], self.model[nodes])
        cand = _sigmoid_score(before[r] - after)
        score = np.full(len(idx), -1, dtype=np.int64)
        np.maximum.at(score, r, cand)
        return score, (r, x, cand)

    def _scores(self, policy: str, idx: np.ndarray, pod: TraceJob, shape: PodShape):
        k, m = pod.num_gpus, pod.gpu_milli
        if policy == "fgd":
            return self._fgd_scores(idx, pod, shape)
        if policy == "bestfit":
            s = (self.cpu_left[idx] - shape.cpu_milli) / MAX_SPEC_CPU * 0.5
            s = s + (self.free[idx] - k * m) / MAX_SPEC_GPU * 0.5
            return np.trunc((1.0 - s) * 100).astype(np.int64), None
        if policy == "dotprod":
            dot = (self.cpu_left[idx] / MAX_SPEC_CPU) * (shape.cpu_milli / MAX_SPEC_CPU)
            dot = dot + (self.free[idx] / MAX_SPEC_GPU) * (k * m / MAX_SPEC_GPU)
            return np.trunc(100 * (1 - dot / 2)).astype(np.int64), None
        if k == 0:  # packing and clustering give CPU-only pods the minimum score everywhere
            return np.zeros(len(idx), dtype=np.int64), None
        if policy == "packing":
            ff, ng = self.full[idx], self.ngpu[idx]
            if m >= MILLI:
                used = np.full(len(idx), max(50 - k, 33))
            else:
                xmin = np.where(self.left[idx] >= m, self.left[idx], _BIG).min(axis=1)
                used = np.where(xmin >= MILLI, 49, np.maximum(100 - (xmin * 100 // MILLI) // 10, 50))
            return np.where(ff == ng, np.maximum(33 - ff, ff), used).astype(np.int64), None
        if policy == "clustering":
            tag = 0 if m < MILLI else k
            t = self.tags[idx]
            has = t[:, tag] > 0
            kinds = (t > 0).sum(axis=1)
            base = 25 * (MAX_SPEC_GPU - self.free[idx]) // MAX_SPEC_GPU
            band = np.where(has, np.where(kinds == 1, 75, 50), np.where(kinds == 0, 25, 0))
            return (base + band).astype(np.int64), None
        raise ValueError(f"unknown policy {policy!r}; known: {', '.join(FGD_POLICIES)}")

    # -- placement ---------------------------------------------------------------------------------
    def choose(self, pod: TraceJob, policy: str) -> tuple[int, list[int]] | None:
        """The node and GPUs ``policy`` gives ``pod``, or None when it fits nowhere."""
        idx = self.feasible(pod)
        if idx.size == 0:
            return None
        shape = PodShape.of(pod)
        cand = None
        if policy == "random":
            row = int(self.rng.integers(idx.size))
        else:
            score, cand = self._scores(policy, idx, pod, shape)
            best = np.flatnonzero(score == score.max())
            if best.size == 1:
                row = int(best[0])
            elif self.tie_break == "order":
                row = int(best[np.argmin(self.rank[idx[best]])])
            else:
                row = int(best[self.rng.integers(best.size)])
        n = int(idx[row])
        return n, self._gpus(n, row, pod, policy, cand)

    def _gpus(self, n: int, row: int, pod: TraceJob, policy: str, cand) -> list[int]:
        k, m = pod.num_gpus, pod.gpu_milli
        if k == 0:
            return []
        left = self.left[n, : self.ngpu[n]]
        if m >= MILLI:  # AllocateExclusiveGpuId: the first idle GPUs by index
            return [int(i) for i in np.flatnonzero(left == MILLI)[:k]]
        fits = np.flatnonzero(left >= m)
        if policy == "random":
            return [int(fits[self.rng.integers(fits.size)])]
        if policy == "fgd":
            r, x, s = cand
            mine = r == row
            by_free = dict(zip(x[mine].tolist(), s[mine].tolist()))
            scores = [by_free[int(left[i])] for i in fits]
            return [int(fits[int(np.argmax(scores))])]
        return [int(fits[int(np.argmin(left[fits]))])]  # best fit: tightest GPU, first by index

    def place(self, n: int, pod: TraceJob, gpus: list[int]) -> None:
        self.cpu_left[n] -= pod.cpu_milli
        self.mem_left[n] -= pod.mem_mib
        if gpus:
            m = pod.gpu_milli
            for g in gpus:
                self.left[n, g] -= m
            row = self.left[n]
            self.full[n] = int((row == MILLI).sum())
            self.free[n] -= m * len(gpus)
            self.allocated_milli += m * len(gpus)
            self.P[n] = self.H[:, row].sum(axis=1)
            self.K[n] = self.C[:, row].sum(axis=1)
            self.tags[n, 0 if m < MILLI else pod.num_gpus] += 1
        self.node_frag[n] = self._frag(self.P[n : n + 1], self.K[n : n + 1], self.free[n : n + 1],
                                       self.cpu_left[n : n + 1], self.model[n : n + 1])[0]

    def schedule(self, pod: TraceJob, policy: str) -> tuple[int, list[int]] | None:
        got = self.choose(pod, policy)
        if got is not None:
            self.place(got[0], pod, got[1])
        return got


def _sigmoid_score(delta_milli: np.ndarray) -> np.ndarray:
    """``int64(sigmoid(delta/1000) * 100)`` of the FGD plugin (higher = fragmentation falls more)."""
    return np.trunc(100.0 / (1.0 + np.exp(-delta_milli / 1000.0))).astype(np.int64)


# -- replay --------------------------------------------------------------------------------------

@dataclass
class FgdResult:
    """One run: a point per arriving pod, and the artifact's per-percent curves."""

    policy: str
    seed: int
    tune_ratio: float
    capacity_milli: int
    typical_shapes: int
    pods: int
    placed: int
    failed_gpu_milli: int
    arrived_milli: np.ndarray
    allocated_milli: np.ndarray
    frag_milli: np.ndarray
    cpu_s: float = 0.0
    wall_s: float = 0.0
    summary: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        cap = self.capacity_milli
        free = cap - self.allocated_milli
        self.frag_ratio = np.divide(self.frag_milli, free, out=np.zeros_like(self.frag_milli), where=free > 0)
        self.summary = {
            "policy": self.policy,
            "seed": self.seed,
            "pods": self.pods,
            "placed": self.placed,
            "failed": self.pods - self.placed,
            "arrived_share": float(self.arrived_milli[-1] / cap),
            "allocated_share": float(self.allocated_milli[-1] / cap),
            "frag_ratio": float(self.frag_ratio[-1]),
            "frag_share": float(self.frag_milli[-1] / cap),
        }

    def curve(self, metric: str = "alloc", points: Iterable[int] = range(0, 131)) -> dict[int, float]:
        """Percent values at arrived load ``points`` (percent of capacity), as the artifact's merge
        scripts compute them (``experiments/analysis/merge_*_discrete.py``): each pod's arrived share
        is rounded to a whole percent and the pods in a bucket are averaged (a missing bucket takes
        its neighbours).  ``metric``: ``alloc`` (allocated / capacity), ``frag_ratio`` (fragment /
        unallocated) or ``frag`` (fragment / capacity)."""
        cap = self.capacity_milli
        bucket = np.round(self.arrived_milli / cap * 100)
        if metric == "alloc":
            vals = np.round(self.allocated_milli / cap * 100, 2)
        elif metric == "frag_ratio":
            vals = np.round(self.frag_ratio * 100, 2)
        elif metric == "frag":
            vals = self.frag_milli / cap * 100
        else:
            raise ValueError("metric is one of alloc, frag_ratio, frag")
        out = {}
        for b in points:
            sel = bucket == b
            if not sel.any():
                sel = (bucket >= b - 1) & (bucket <= b + 1)
                if not sel.any():
                    continue
            out[b] = round(float(vals[sel].mean()), 2)
        return out

    def to_dict(self) -> dict:
        return {"kind": "fgd", "summary": self.summary,
                "curves": {m: self.curve(m, range(0, 131, 10)) for m in ("alloc", "frag_ratio", "frag")}}


def replay_fgd(pods: Sequence[TraceJob], nodes: Sequence[TraceNode], policy: str = "fgd", *,
               seed: int = 42, tune_ratio: float = DEFAULT_TUNE_RATIO, workload: TargetWorkload | None = None,
               popularity: float = DEFAULT_POPULARITY, include_cpu_pods: bool = True,
               tie_break: str = "order") -> FgdResult:
    """One run of the paper's experiment: inflate ``pods`` to ``tune_ratio`` x capacity (seeded),
    place them in order under ``policy`` and record allocation and fragmentation after each.

    :param workload: the target workload M (default: the typical pods of ``pods``, before
        inflation, as in the artifact).
    """
    if policy not in FGD_POLICIES:
        raise ValueError(f"unknown policy {policy!r}; known: {', '.join(FGD_POLICIES)}")
    t0, c0 = time.perf_counter(), time.process_time()
    wl = workload or TargetWorkload.from_pods(pods, popularity=popularity, include_cpu_pods=include_cpu_pods)
    cl = FgdCluster(nodes, wl, rng=np.random.default_rng([seed, 2]), tie_break=tie_break)
    arrivals = inflate_workload(pods, cl.capacity_milli, ratio=tune_ratio, seed=seed)
    n = len(arrivals)
    arrived = np.zeros(n, dtype=np.int64)
    alloc = np.zeros(n, dtype=np.int64)
    frag = np.zeros(n, dtype=np.float64)
    total, placed, failed = 0, 0, 0
    for i, p in enumerate(arrivals):
        total += p.num_gpus * p.gpu_milli
        if cl.schedule(p, policy) is None:
            failed += p.num_gpus * p.gpu_milli
        else:
            placed += 1
        arrived[i] = total
        alloc[i] = cl.allocated_milli
        frag[i] = cl.node_frag.sum()
    return FgdResult(
        policy=policy, seed=seed, tune_ratio=tune_ratio, capacity_milli=cl.capacity_milli,
        typical_shapes=len(wl), pods=n, placed=placed, failed_gpu_milli=failed,
        arrived_milli=arrived, allocated_milli=alloc, frag_milli=frag,
        cpu_s=time.process_time() - c0, wall_s=time.perf_counter() - t0,
    )


# -- several runs --------------------------------------------------------------------------------

#: Arrived-load points (percent of capacity) the comparison tables show.
ALLOC_POINTS = (90, 100, 110, 120, 130)
FRAG_RATIO_POINTS = (50, 70, 80, 90)
FRAG_POINTS = (50, 90, 130)


def seed_list(seeds: int | str | Sequence[int]) -> list[int]:
    """``3`` -> the artifact's first three seeds ``[42, 43, 44]``; ``"1,7"`` -> ``[1, 7]``."""
    if isinstance(seeds, int):
        if seeds < 1:
            raise ValueError("need at least one seed")
        return list(range(42, 42 + seeds))
    if isinstance(seeds, str):
        parts = [s for s in seeds.split(",") if s.strip()]
        if len(parts) == 1 and "," not in seeds:
            return seed_list(int(parts[0]))
        return [int(s) for s in parts]
    return [int(s) for s in seeds]


def compare(pods: Sequence[TraceJob], nodes: Sequence[TraceNode], policies: Sequence[str] = FGD_POLICIES,
            seeds: Sequence[int] = (42,), **options) -> dict[str, list[FgdResult]]:
    """Run every policy with every seed (same inflated arrivals per seed for all policies)."""
    for p in policies:
        if p not in FGD_POLICIES:
            raise ValueError(f"unknown policy {p!r}; known: {', '.join(FGD_POLICIES)}")
    wl = options.pop("workload", None) or TargetWorkload.from_pods(
        pods, popularity=options.pop("popularity", DEFAULT_POPULARITY),
        include_cpu_pods=options.pop("include_cpu_pods", True))
    return {p: [replay_fgd(pods, nodes, p, seed=s, workload=wl, **options) for s in seeds] for p in policies}


def mean_curve(runs: Sequence[FgdResult], metric: str, points: Iterable[int]) -> dict[int, float]:
    """Mean over runs of :meth:`FgdResult.curve` (points missing in any run are left out)."""
    points = list(points)
    curves = [r.curve(metric, points) for r in runs]
    return {b: round(sum(c[b] for c in curves) / len(curves), 2) for b in points if all(b in c for c in curves)}
