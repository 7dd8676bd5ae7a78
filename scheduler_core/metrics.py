"""The simulation result: a pydantic model written as JSON.

Floats are rounded to 6 significant digits when the result is built, so the
JSON is byte-identical for the same scenario and seed and diffs stay small.
Times are in seconds, capacities in GPU-equivalents (a MIG 3g instance is
3/7 of a GPU, a time-slicing replica 1/replicas).
"""

from __future__ import annotations

import math
from typing import Iterable

from pydantic import BaseModel, ConfigDict, Field


def rnd(x: float | None, digits: int = 6) -> float | None:
    """Round to ``digits`` significant digits (None/inf pass through as None)."""
    if x is None or not math.isfinite(x):
        return None
    if x == 0:
        return 0.0
    return float(f"{x:.{digits}g}")


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Distribution(_Out):
    count: int = 0
    mean: float | None = None
    p50: float | None = None
    p90: float | None = None
    p95: float | None = None
    p99: float | None = None
    max: float | None = None

    @classmethod
    def of(cls, values: Iterable[float]) -> "Distribution":
        xs = sorted(v for v in values if v is not None and math.isfinite(v))
        n = len(xs)
        if not n:
            return cls()

        def pct(q: float) -> float:
            # nearest-rank on the sorted sample: stable and exact for small n
            return xs[min(n - 1, max(0, math.ceil(q * n) - 1))]

        return cls(count=n, mean=rnd(sum(xs) / n), p50=rnd(pct(0.5)), p90=rnd(pct(0.9)), p95=rnd(pct(0.95)),
                   p99=rnd(pct(0.99)), max=rnd(xs[-1]))


class NodeInventory(_Out):
    node: str
    gpu: str
    interconnect: str
    mig: dict[str, str] = Field(default_factory=dict, description="GPU index -> layout")
    advertised: dict[str, int] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)


class JobMetrics(_Out):
    submitted: int = 0
    completed: int = 0
    failed: int = 0
    running_at_end: int = 0
    waiting_at_end: int = 0
    queue_wait: Distribution = Field(default_factory=Distribution, description="submit -> whole gang running")
    completion_time: Distribution = Field(default_factory=Distribution, description="submit -> done")
    makespan: float | None = Field(
        None, description="first submission -> last completion of batch/training jobs; censored at the horizon "
                          "(a lower bound) when any job failed or is unfinished")
    restarts: int = 0


class GangMetrics(_Out):
    gangs: int = 0
    partial_start_gpu_hours: float = Field(0.0, description="GPU-hours held by bound pods of incomplete gangs")
    rendezvous_timeouts: int = 0
    max_partial_gpus: float = 0.0
    topology_factor: Distribution = Field(default_factory=Distribution,
                                          description="step-time multiplier of multi-GPU jobs vs packed NVSwitch")


class UtilisationMetrics(_Out):
    capacity_gpus: int = 0
    allocated: float = Field(0.0, description="time-average allocated GPU-equivalents / capacity")
    effective: float = Field(0.0, description="time-average useful throughput / capacity")
    allocated_gpu_hours: float = 0.0
    effective_gpu_hours: float = 0.0
    stranded_gpus_mean: float = Field(0.0, description="free GPU-equivalents no pending pod can use, while pods wait")
    fragmentation_mean: float = Field(0.0, description="stranded / free, averaged over samples with pending pods")
    pending_pods_mean: float = 0.0
    pending_pods_max: int = 0


class ServiceMetrics(_Out):
    name: str
    tenant: str
    mechanism: str
    replicas: int
    requests: float
    p50_ms: float | None
    p99_ms: float | None = Field(description="null when more than 1% of requests were unserved (unbounded tail)")
    slo_p99_ms: float
    latency_cdf_ms: list[tuple[float, float]] = Field(
        default_factory=list, description="(latency ms, fraction of requests at or below) at fixed quantiles, for CDF plots")
    slo_violation_fraction: float
    slo_met: bool
    unserved_requests: float
    overload_seconds: float
    oom_kills: int
    no_traffic: bool = Field(False, description="the scenario sends it no requests (arrival rate 0, e.g. an imported "
                                                "snapshot): its latency and SLO cannot be judged")


class InferenceMetrics(_Out):
    services: list[ServiceMetrics] = Field(default_factory=list)
    requests: float = 0.0
    p50_ms: float | None = None
    p99_ms: float | None = None
    slo_violations: float = 0.0
    slo_violation_fraction: float = 0.0
    services_missing_slo: int = 0
    services_without_traffic: int = Field(0, description="services given no requests; not counted as missing their SLO")


class OomIncident(_Out):
    time: float
    device: str
    mechanism: str
    offender: str
    killed: list[str]
    collateral: int = Field(description="pods killed other than the offender")


class OomMetrics(_Out):
    kills: int = 0
    incidents: int = 0
    collateral_kills: int = Field(0, description="kills of pods that did not exceed anything themselves")
    max_blast_radius: int = Field(0, description="most pods killed by one incident")
    kills_by_workload: dict[str, int] = Field(default_factory=dict)
    first_incidents: list[OomIncident] = Field(default_factory=list, description="up to 20, in time order")


class FaultMetrics(_Out):
    faults: int = 0
    pods_killed: int = 0
    max_blast_radius: int = 0


class PreemptionMetrics(_Out):
    preemptions: int = Field(0, description="workloads (or pods, under kube-scheduler) evicted for others")
    lost_gpu_hours: float = Field(0.0, description="work since the last checkpoint thrown away, in GPU-hours")
    by_reason: dict[str, int] = Field(default_factory=dict)


class TenantMetrics(_Out):
    name: str
    weight: float
    submitted: int
    completed: int
    gpu_hours: float
    fair_gpu_hours: float = Field(description="demand-capped weighted max-min share, integrated")
    share_ratio: float | None
    queue_wait: Distribution


class FairnessMetrics(_Out):
    jain_index: float | None = Field(None, description="Jain's index over tenants of received / fair GPU-hours")
    tenants: list[TenantMetrics] = Field(default_factory=list)


class AdmissionErrorMetrics(_Out):
    total: int = 0
    by_reason: dict[str, int] = Field(default_factory=dict)


class ReconfigurationMetrics(_Out):
    drains: int = 0
    drain_seconds: float = 0.0
    unavailable_gpu_hours: float = 0.0
    failed: int = 0


class WorkloadRecord(_Out):
    name: str
    kind: str
    tenant: str
    pods: int
    request: str
    submit: float
    start: float | None
    end: float | None
    state: str
    queue_wait: float | None
    topology_factor: float
    restarts: int
    preemptions: int
    nodes: list[str]
    pending_reason: str | None = Field(None, description="why it still waits at the horizon, in the words of "
                                                         "the component that holds it (kube-scheduler, Kueue, Volcano, HAMi)")


class LoggedEvent(_Out):
    t: float
    kind: str = Field(description="admit | bind | preempt | evict | requeue | oom | crash | fault | reconfigure | "
                                  "fail | complete")
    workload: str
    detail: str = ""
    node: str | None = None


class EventLogMetrics(_Out):
    total: int = 0
    kept: int = 0
    left_out: int = Field(0, description="events counted in by_kind but not kept verbatim (the log is bounded)")
    per_kind_limit: int = Field(0, description="entries kept verbatim per kind")
    by_kind: dict[str, int] = Field(default_factory=dict)
    entries: list[LoggedEvent] = Field(default_factory=list)


class PendingReason(_Out):
    reason: str
    workloads: int


class PendingMetrics(_Out):
    waiting: int = Field(0, description="workloads still waiting at the horizon")
    explained: int = Field(0, description="of them, how many had their reason worked out (bounded)")
    by_reason: list[PendingReason] = Field(default_factory=list, description="the 20 most common pending reasons "
                                                                             "(workload names replaced by <workload>)")


class TimeSeries(_Out):
    t: list[float] = Field(default_factory=list)
    allocated_gpus: list[float] = Field(default_factory=list)
    effective_gpus: list[float] = Field(default_factory=list)
    pending_pods: list[int] = Field(default_factory=list)
    running_pods: list[int] = Field(default_factory=list)
    waiting_workloads: list[int] = Field(default_factory=list)
    stranded_gpus: list[float] = Field(default_factory=list)
    partial_gang_gpus: list[float] = Field(default_factory=list)
    tenant_allocated_gpus: dict[str, list[float]] = Field(default_factory=dict)


class SimulationResult(_Out):
    scenario: str
    stack: str
    seed: int
    horizon: float
    scenario_digest: str = Field(description="sha256 of the canonical scenario JSON")
    events_processed: int
    inventory: list[NodeInventory]
    jobs: JobMetrics
    gangs: GangMetrics
    utilisation: UtilisationMetrics
    inference: InferenceMetrics
    oom: OomMetrics
    faults: FaultMetrics
    preemption: PreemptionMetrics
    fairness: FairnessMetrics
    admission_errors: AdmissionErrorMetrics
    reconfiguration: ReconfigurationMetrics
    workloads: list[WorkloadRecord] = Field(default_factory=list,
                                            description="per-workload records (omitted above sampling.record_workloads)")
    time_series: TimeSeries
    pending: PendingMetrics = Field(default_factory=PendingMetrics)
    events: EventLogMetrics = Field(default_factory=EventLogMetrics)

    def to_json(self) -> str:
        return self.model_dump_json(indent=2)


def jain(values: list[float]) -> float | None:
    """Jain's fairness index (sum x)^2 / (n sum x^2): 1 = equal, 1/n = one tenant gets everything."""
    xs = [v for v in values if v is not None]
    if not xs:
        return None
    sq = sum(x * x for x in xs)
    if sq == 0:
        return 1.0
    return sum(xs) ** 2 / (len(xs) * sq)


INF = float("inf")


def water_fill(capacity: float, demands: dict[str, float], weights: dict[str, float]) -> dict[str, float]:
    """Weighted max-min fair split of ``capacity`` capped by each demand (deterministic order)."""
    return _water_fill(capacity, demands, weights)[0]


class KeptWaterFill:
    """:func:`water_fill` that keeps its last split: a call whose capacity and weights are the last call's
    and whose demands differ only for entries that were never capped (their share is below their demand),
    each still above what the split gave it, returns the same split without recomputing it.  Exact: such
    an entry takes ``min(room, give)`` = ``give`` every round either way, so every figure of the split is
    the same float (a queue of a backlogged tenant whose demand grows is the common case)."""

    def __init__(self) -> None:
        self._last: tuple | None = None  # capacity, weights, demands, split, per entry the demand it is free above

    def __call__(self, capacity: float, demands: dict[str, float], weights: dict[str, float]) -> dict[str, float]:
        last = self._last
        if last is not None and last[0] == capacity and last[1] == weights and last[2].keys() == demands.keys():
            old, free = last[2], last[4]
            if all(d == old[k] or d >= free.get(k, INF) for k, d in demands.items()):
                return dict(last[3])
        alloc, open_ = _water_fill(capacity, demands, weights)
        # An entry never capped took its full give every round: any demand at least its share plus the loop's
        # 1e-12 (with a relative margin for rounding) leaves every round's arithmetic unchanged.
        free = {k: (alloc[k] + 2e-12) * (1.0 + 2.0 ** -40) for k in open_}
        self._last = (capacity, dict(weights), dict(demands), dict(alloc), free)
        return alloc


def _water_fill(capacity: float, demands: dict[str, float], weights: dict[str, float]) -> tuple[dict[str, float], list]:
    """The split and the entries never capped (each round gave them their full give, below their room)."""
    alloc = {k: 0.0 for k in demands}
    capped: set[str] = set()
    active = [k for k in sorted(demands) if demands[k] > 1e-12]
    remaining = capacity
    while active and remaining > 1e-12:
        wsum = sum(weights[k] for k in active)
        give = {k: remaining * weights[k] / wsum for k in active}
        nxt = []
        used = 0.0
        for k in active:
            room = demands[k] - alloc[k]
            g = min(room, give[k])
            if room < give[k]:
                capped.add(k)
            alloc[k] += g
            used += g
            if demands[k] - alloc[k] > 1e-12:
                nxt.append(k)
        remaining -= used
        if len(nxt) == len(active):
            break
        active = nxt
    return alloc, [k for k in active if k not in capped]
