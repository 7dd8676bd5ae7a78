"""How big a scenario may be, and what a run of it will cost.

Each node group is bounded by its own fields (4,096 nodes of at most 16 GPUs), but a scenario is
more than one group: 153 such groups are 10 million GPUs, and a batch entry with `count:
100000000` is 100 million jobs; either takes gigabytes before the first event. Two layers stop that:

* :data:`SCENARIO_LIMITS` bound the whole document. They hold everywhere (CLI, worker, web) and
  follow Kubernetes' own scalability envelope where it has one ("Considerations for large
  clusters": at most 5,000 nodes and 150,000 pods per cluster); a scenario past them does not
  describe a cluster Kubernetes supports.
* :func:`estimate_cost` predicts the nodes, GPUs, jobs, events, the peak memory and the work of a
  run (:func:`estimate_seconds` turns the work into time), so a service can refuse a run over its
  budget *before* it is queued. The memory coefficients were
  measured with ``ru_maxrss`` on this simulator (see docs/simulator-model.md, "Run limits") and
  are rounded up about 2x.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field

from scheduler_core import mig as migmod
from scheduler_core.hardware import MIB_PER_GIB
from scheduler_core.scenario.document import Scenario
from scheduler_core.scenario.stack import DataPlane
from scheduler_core.scenario.workloads import InferenceWorkload, TrainingWorkload

# name -> (limit, why). Messages name the limit so a user knows what to shrink.
SCENARIO_LIMITS: dict[str, int] = {
    "node_groups": 64,       # distinct hardware groups; the built-in scenarios use at most 3
    "nodes": 5_000,          # Kubernetes: "No more than 5,000 nodes" per cluster
    "gpus": 65_536,          # one maximal node group (4,096 x 16)
    "jobs": 1_000_000,       # training/batch jobs over the horizon (20x the 50,000-job benchmark)
    "inference_replicas": 150_000,  # Kubernetes: "No more than 150,000 total pods"
    "workloads": 2_000,      # workload entries (each entry may stand for `count` jobs)
    "tenants": 1_000,
    "events": 10_000,        # node failures, plugin restarts, GPU faults, MIG reconfigurations
    "rate_steps": 10_000,    # inference rate_schedule steps, all services together
}

# Measured on A100 scenarios (tests/evidence/scenarios.py shapes), rounded up ~2x:
# a bare process with the simulator imported ~55 MiB; ~0.6 KiB per GPU (node and GPU state);
# ~2.5 KiB per job (job record, arrival event, result row); events and rate steps ~1 KiB each.
BASE_BYTES = 64 * 2**20
BYTES_PER_GPU = 1_200
BYTES_PER_JOB = 5_000
BYTES_PER_REPLICA = 5_000
BYTES_PER_EVENT = 2_000


# Run time (issue 39.2): the work a run does, counted from the document, times the simulator's
# measured cost per unit of that work (benchmarks/estimate_bench.py --fit measures them: CPU time, 2
# shared cores, CPython 3.11). The units follow where the time goes:
#
# * building the cluster, per node; a fixed part per run;
# * the time series: each of `sampling.max_points` samples (240 by default, up to 5,000) scans every
#   node for stranded capacity and every tenant (its series and fair share);
# * events: ~4 per training/batch job (arrival, admission, start, finish), faults, rate steps, and
#   each OOM kill and restart; every pod placed is filtered and scored on each node it may use, and
#   on HAMi nodes the fit checks every card (at each pass and each sample), not a node counter;
# * settling: a job that starts, stops or crashes recomputes the speed, rate and OOM watch of every
#   pod on its cards (its co-tenants too on a shared card); a job whose workers use more memory than
#   their cap crash-loops until `max_restarts`;
# * inference services. Whenever a service changes (a replica starts, a rate step, a replica is
#   OOM-killed or restarts) every pod on its devices is settled, and each pod's busy share counts its
#   service's ready replicas: a service of R replicas costs ~R^2 pod updates and ~2R^3/3 ready checks
#   to start, and R updates and R^2 checks per later change. Each change also puts every replica on
#   the service's devices through the latency model (its M/G/1 response-time CDF over the histogram
#   grid). What changes a service most is memory: a replica whose KV cache grows past its memory limit
#   (HAMi's gpumem, its MIG instance, its share of a time-sliced card) is OOM-killed and restarts
#   again and again over the horizon, and on a shared card every kill and restart also updates its
#   co-tenants. This is the work the estimate used to miss: shared-card-oom-hami spends ~60% of its
#   time on it, and a 100-replica HAMi service whose KV cache outgrows its cap ~25 s.
EVENTS_PER_JOB = 4
SETTLES_PER_JOB = 3  # placed, started, finished
SECONDS_PER_UNIT: dict[str, float] = {
    "runs": 2e-3,               # a run: policies, result, the built-in scenarios' fixed part
    "nodes": 60e-6,             # a node and its GPUs built
    "samples": 8e-6,            # a time-series sample
    "node_samples": 1.7e-6,     # a node a sample scans for stranded capacity
    "tenant_samples": 0.9e-6,   # a tenant's series and fair share at a sample
    "events": 45e-6,            # a job event, a fault, a rate step, an OOM kill or restart
    "node_visits": 3e-6,        # a node filtered and scored for a pod being placed (fits 2.3-3.6 us)
    "card_checks": 0.35e-6,     # a card HAMi's fit checks (a pass or a sample, every HAMi GPU)
    "pod_updates": 7e-6,        # a pod's speed, rate and OOM watch recomputed
    "ready_checks": 22e-9,      # a ready replica counted for a pod's busy share
    "latency_updates": 68e-6,   # a replica's response-time CDF added to its service's histogram
}


@dataclass(frozen=True)
class RunWork:
    """Units of work a run does (see SECONDS_PER_UNIT), counted from the document alone."""

    runs: int = 1
    nodes: int = 0
    samples: int = 0
    node_samples: int = 0
    tenant_samples: int = 0
    events: int = 0
    node_visits: float = 0.0
    card_checks: int = 0
    pod_updates: float = 0.0
    ready_checks: float = 0.0
    latency_updates: float = 0.0
    oom_kills: float = 0.0  # predicted OOM kills of inference replicas (each also two events)

    def seconds(self) -> dict[str, float]:
        """Predicted seconds spent on each unit."""
        return {k: SECONDS_PER_UNIT[k] * getattr(self, k) for k in SECONDS_PER_UNIT}

    def mostly(self) -> str:
        """What most of the predicted time goes to, in a user's words."""
        parts = self.seconds()
        return _SPENT_ON[max(parts, key=parts.get)]


_SPENT_ON = {
    "runs": "the run's fixed part", "nodes": "building the nodes", "samples": "time-series samples",
    "node_samples": "scanning every node at each time-series sample",
    "tenant_samples": "every tenant's series at each time-series sample", "events": "job events",
    "node_visits": "placing each pod on every node it may use", "card_checks": "HAMi's fit on every card",
    "pod_updates": "settling pods whenever an inference service changes (starts, rate steps, OOM kills)",
    "ready_checks": "counting ready replicas whenever an inference service changes (starts, rate steps, OOM kills)",
    "latency_updates": "inference latency accounting at each change (rate steps, OOM kills and restarts)",
}


@dataclass(frozen=True)
class RunCost:
    node_groups: int
    nodes: int
    gpus: int
    jobs: int
    inference_replicas: int
    workloads: int
    tenants: int
    events: int
    rate_steps: int
    work: RunWork = field(default_factory=RunWork)

    @property
    def memory_bytes(self) -> int:
        """Predicted peak resident memory of the process that runs the simulation."""
        return (BASE_BYTES + BYTES_PER_GPU * self.gpus + BYTES_PER_JOB * self.jobs
                + BYTES_PER_REPLICA * self.inference_replicas
                + BYTES_PER_EVENT * (self.events + self.rate_steps))

    @property
    def memory_mib(self) -> int:
        return -(-self.memory_bytes // 2**20)


def estimate_events(cost: RunCost) -> int:
    """Events a run processes besides its time-series samples."""
    return cost.work.events


def estimate_seconds(cost: RunCost) -> float:
    """Predicted wall time of a run on one worker process, from the document's sizes alone
    (benchmarks/estimate_bench.py prints it against measured runs)."""
    return sum(cost.work.seconds().values())


@dataclass(frozen=True)
class _Devices:
    """What a workload entry's pods run on: the data plane, one card's memory, its MIG family (None:
    whole cards) and how many pods share one card."""

    dp: DataPlane
    card_mib: float
    mig_family: str | None
    sharers: int


def _cards(sc: Scenario) -> dict[str | None, tuple[float, str | None]]:
    """Per node group (None: the whole pool) one card's memory and, where GPUs have MIG instances,
    their MIG family."""
    out: dict[str | None, tuple[float, str | None]] = {
        g.name: (float(g.spec.memory_mib), g.spec.mig_family if g.mig else None) for g in sc.pool.node_groups}
    out[None] = (min((card for card, _ in out.values()), default=80 * MIB_PER_GIB),
                 next((family for _, family in out.values() if family), None))
    return out


def _devices(sc: Scenario, cards, w, declared: float, neighbours: int) -> _Devices:
    dp = sc.stack.data_plane_for(w.node_group) if w.node_group else sc.stack.data_plane
    card, family = cards.get(w.node_group, cards[None])
    return _Devices(dp, card, family, max(1, min(_pods_per_card(w, dp, card, declared), neighbours)))


def _pods_per_card(w, dp: DataPlane, card: float, declared: float) -> int:
    """How many pods one card (one device context) may hold under the data plane."""
    mech = dp.mechanism
    if mech == "hami":
        hami = w.unit.hami
        cores = hami.gpucores if hami is not None and hami.gpucores is not None else w.unit.gpucores
        by_cores = 100 // min(cores, 100) if cores else dp.hami.device_split_count
        return max(1, min(dp.hami.device_split_count, by_cores, int(card // max(declared, 1.0))))
    if mech == "time-slicing":
        return dp.time_slicing.replicas
    if mech == "mps":
        return dp.mps.replicas
    if mech == "kai-fraction":
        frac = w.unit.gpu_fraction or math.ceil(declared / card * 20) / 20.0
        return max(1, int(1 / min(max(frac, 0.05), 1.0)))
    return 1


def _memory_limit_mib(w, dev: _Devices, declared: float) -> float | None:
    """The memory a pod may use before it is OOM-killed: its own cap (HAMi's gpumem, its MIG
    instance, its MPS share, its card), or None where pods share the card's memory unisolated."""
    mech, card = dev.dp.mechanism, dev.card_mib
    if mech == "hami":
        hami = w.unit.hami
        if hami is not None and hami.gpumem:
            return float(hami.gpumem)
        if hami is not None and hami.gpumem_percentage:
            return card * min(hami.gpumem_percentage, 100) / 100.0
        return declared
    if mech == "dra" and w.unit.dra is not None and w.unit.dra.device_class != "mig.nvidia.com":
        return card  # a claim of whole GPUs (or of a class of the scenario's): the device's memory at most
    if mech == "dra" and w.unit.dra is not None:
        fits = [p.memory_mib for p in migmod.PROFILES[dev.mig_family].values()] if dev.mig_family else []
        return float(min(fits, default=card))  # the first MIG device in slice order may be the smallest
    if mech == "dra" and w.unit.mig_profile is None:
        return card  # class gpu.nvidia.com: a whole GPU
    if mech in ("mig", "dra") and dev.mig_family is not None and dev.dp.strategy != "none" and not w.unit.whole_gpu:
        if w.unit.mig_profile is not None:
            with contextlib.suppress(ValueError):
                return float(migmod.profile(dev.mig_family, w.unit.mig_profile).memory_mib)
        fits = [p.memory_mib for p in migmod.PROFILES[dev.mig_family].values() if p.memory_mib >= declared]
        return float(min(fits, default=card))
    if mech == "mps":
        return card / dev.dp.mps.replicas
    if mech in ("time-slicing", "kai-fraction"):
        return None
    return card


def _oom_kills_per_replica(w: InferenceWorkload, limit: float, active: float, params) -> float:
    """OOM kills of one replica over ``active`` seconds: its memory grows from model + KV initial at
    the KV growth rate; past ``limit`` it is killed, and it restarts after CrashLoopBackOff (10 s
    once it ran 10 minutes, else up to 5 minutes) with an empty KV cache."""
    kv = w.kv_cache
    base = (w.model_memory_gib + kv.initial_gib) * MIB_PER_GIB
    peak = (w.model_memory_gib + max(kv.max_gib, kv.initial_gib)) * MIB_PER_GIB
    growth = kv.growth_gib_per_hour * MIB_PER_GIB / 3600.0
    if peak <= limit or active <= 0 or (base < limit and growth <= 0):
        return 0.0
    reach = (limit - base) / growth if base < limit else 0.0
    backoff = params.restart_backoff if reach >= params.restart_backoff_reset else params.restart_backoff_max
    return active / (reach + backoff)


def _inference_work(sc: Scenario, cards, w: InferenceWorkload, neighbours: int) -> dict[str, float]:
    """Settled pods, ready checks, latency updates and OOM kills of one service.

    Replicas of a service start together and grow alike, so they are killed at the same moments:
    the latency model runs once per replica at each moment, the settling once per kill."""
    r = w.replicas
    declared = w.declared_memory_gib * MIB_PER_GIB
    dev = _devices(sc, cards, w, declared, neighbours)
    limit = _memory_limit_mib(w, dev, declared)
    if limit is None:  # the card's memory is shared: a replica's part of it
        limit = dev.card_mib / dev.sharers
    end = min(w.stop if w.stop is not None else sc.horizon, sc.horizon)
    kills = r * _oom_kills_per_replica(w, limit, max(0.0, end - w.start), sc.parameters)
    steps = sum(1 for s in w.rate_schedule if w.start <= s.at <= sc.horizon)
    pods = min(r * dev.sharers, neighbours)  # pods on the service's devices
    # Starting: each replica's bind and readiness settle the pods placed so far (k of them, each
    # counting its k ready siblings). Later: a kill and a restart settle twice each, a rate step once.
    settles = 4 * kills + steps
    return {"pod_updates": r * r + settles * pods, "ready_checks": 2 * r ** 3 / 3 + settles * pods * r,
            "latency_updates": (1 + steps + 2 * kills / r) * pods, "oom_kills": kills}


def _mean_workers(w: TrainingWorkload) -> float:
    if w.roles:
        return float(sum(r.replicas for r in w.roles))
    if isinstance(w.workers, int):
        return float(w.workers)
    weights = w.workers.weights or [1.0] * len(w.workers.values)
    total = sum(weights)
    if total <= 0:
        return max(w.workers.values)
    return sum(v * p for v, p in zip(w.workers.values, weights)) / total


def _job_work(sc: Scenario, cards, w: TrainingWorkload) -> tuple[int, float, float]:
    """(crash-loop restarts, pods, pod updates) of a training/batch entry.

    A job that starts, stops or crashes settles every pod on its cards: its workers, and on a shared
    card (time-slicing, HAMi, MPS, KAI fractions) their co-tenants. A job whose workers use more
    memory than their cap is OOM-killed at every start until it fails after `max_restarts`."""
    declared = (w.memory_request_gib or w.memory_gib) * MIB_PER_GIB
    pods = w.count * _mean_workers(w)
    dev = _devices(sc, cards, w, declared, max(1, round(pods)))
    limit = _memory_limit_mib(w, dev, declared)
    crashes = 0
    if limit is not None and w.memory_gib * MIB_PER_GIB > limit:
        crashes = w.count * (sc.parameters.max_restarts + 1)
    return crashes, pods, pods * dev.sharers * (SETTLES_PER_JOB + 2 * crashes / w.count)


def _run_work(sc: Scenario, jobs: int, replicas: int, steps: int) -> RunWork:
    nodes = sum(g.count for g in sc.pool.node_groups)
    samples = sc.sampling.max_points
    on_group: dict[str | None, int] = {}
    for w in sc.workloads:
        if isinstance(w, InferenceWorkload):
            on_group[w.node_group] = on_group.get(w.node_group, 0) + w.replicas
    group_nodes = {g.name: g.count for g in sc.pool.node_groups}
    cards = _cards(sc)
    work = {"pod_updates": 0.0, "ready_checks": 0.0, "latency_updates": 0.0, "oom_kills": 0.0, "node_visits": 0.0}
    crashes = 0
    for w in sc.workloads:
        if isinstance(w, InferenceWorkload):
            neighbours = replicas if w.node_group is None else on_group[w.node_group] + on_group.get(None, 0)
            for key, value in _inference_work(sc, cards, w, neighbours).items():
                work[key] += value
            pods = float(w.replicas)
        else:
            job_crashes, pods, pod_updates = _job_work(sc, cards, w)
            crashes += job_crashes
            work["pod_updates"] += pod_updates
        # Each pod placed is filtered and scored on every node it may go to.
        work["node_visits"] += pods * (group_nodes.get(w.node_group, 0) if w.node_group else nodes)
    events = EVENTS_PER_JOB * jobs + 2 * crashes + len(sc.events) + steps + round(2 * work["oom_kills"])
    # HAMi's fit looks at every card of a node (count resources are node counters): at every
    # scheduling pass and every stranded-capacity scan of a sample.
    hami_gpus = sum(g.count * g.gpus_per_node for g in sc.pool.node_groups
                    if sc.stack.data_plane_for(g.name).mechanism == "hami")
    return RunWork(
        nodes=nodes, samples=samples, node_samples=samples * nodes,
        tenant_samples=samples * len(sc.tenant_list()), events=events,
        card_checks=(samples + events) * hami_gpus, **work)


def estimate_cost(sc: Scenario) -> RunCost:
    """Sizes and work counted from the document alone (nothing is expanded, so this is cheap at any size)."""
    jobs = replicas = steps = 0
    for w in sc.workloads:
        if isinstance(w, InferenceWorkload):
            replicas += w.replicas
            steps += len(w.rate_schedule)
        else:
            jobs += w.count
    return RunCost(
        node_groups=len(sc.pool.node_groups),
        nodes=sum(g.count for g in sc.pool.node_groups),
        gpus=sc.pool.total_gpus,
        jobs=jobs,
        inference_replicas=replicas,
        workloads=len(sc.workloads),
        tenants=len(sc.tenants),
        events=len(sc.events),
        rate_steps=steps,
        work=_run_work(sc, jobs, replicas, steps),
    )


_WHERE = {"node_groups": "pool.node_groups", "nodes": "pool.node_groups", "gpus": "pool.node_groups",
          "jobs": "workloads", "inference_replicas": "workloads", "workloads": "workloads",
          "tenants": "tenants", "events": "events", "rate_steps": "workloads"}
_WHAT = {"node_groups": "node groups", "nodes": "nodes", "gpus": "GPUs", "jobs": "training/batch jobs (sum of count)",
         "inference_replicas": "inference replicas", "workloads": "workload entries", "tenants": "tenants",
         "events": "events", "rate_steps": "rate_schedule steps"}


def over_limits(cost: RunCost, limits: dict[str, int], *, who: str = "a scenario") -> list[tuple[str, str]]:
    """(field path, message) for every size in `cost` above its limit in `limits`."""
    errs = []
    for key, limit in limits.items():
        value = getattr(cost, key, None)
        if value is not None and value > limit:
            errs.append((_WHERE[key], f"{value:,} {_WHAT[key]}; {who} may have at most {limit:,}"))
    return errs


def check_size(sc: Scenario) -> list[tuple[str, str]]:
    """The scenario-wide limits every run obeys, whoever starts it."""
    return over_limits(estimate_cost(sc), SCENARIO_LIMITS)
