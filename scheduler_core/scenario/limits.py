"""How big a scenario may be, and what a run of it will cost.

Each node group is bounded by its own fields (4,096 nodes of at most 16 GPUs), but a scenario is
more than one group: 153 such groups are 10 million GPUs, and a batch entry with `count:
100000000` is 100 million jobs; either takes gigabytes before the first event. Two layers stop that:

* :data:`SCENARIO_LIMITS` bound the whole document. They hold everywhere (CLI, worker, web) and
  follow Kubernetes' own scalability envelope where it has one ("Considerations for large
  clusters": at most 5,000 nodes and 150,000 pods per cluster); a scenario past them does not
  describe a cluster Kubernetes supports.
* :func:`estimate_cost` predicts the nodes, GPUs, jobs, events and the peak memory of a run, so a
  service can refuse a run over its budget *before* it is queued. The memory coefficients were
  measured with ``ru_maxrss`` on this simulator (see docs/simulator-model.md, "Run limits") and
  are rounded up about 2x.
"""

from __future__ import annotations

from dataclasses import dataclass

from scheduler_core.scenario.document import Scenario
from scheduler_core.scenario.workloads import InferenceWorkload

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

    @property
    def memory_bytes(self) -> int:
        """Predicted peak resident memory of the process that runs the simulation."""
        return (BASE_BYTES + BYTES_PER_GPU * self.gpus + BYTES_PER_JOB * self.jobs
                + BYTES_PER_REPLICA * self.inference_replicas
                + BYTES_PER_EVENT * (self.events + self.rate_steps))

    @property
    def memory_mib(self) -> int:
        return -(-self.memory_bytes // 2**20)


# Run time (issue 39.2), measured with benchmarks/estimate_bench.py (2 shared cores, CPython 3.11).
# A job event (arrival, admission, start, finish: ~4 per training/batch job) costs ~180 us plus
# ~6 us per node its scheduling pass visits (16 nodes: 0.27 ms, 512 nodes: 3.2 ms); each of the
# ~240 time-series samples ~40 us plus ~25 us per node; an inference replica ~25 ms over a run
# (its latency model at every sample). Runs under a second vary ~2x with the policy's own fixed
# costs, far from any limit.
SECONDS_BASE = 0.005
SAMPLE_EVENTS = 240
SECONDS_PER_SAMPLE = 40e-6
SECONDS_PER_SAMPLE_PER_NODE = 25e-6
EVENTS_PER_JOB = 4
SECONDS_PER_EVENT = 180e-6
SECONDS_PER_EVENT_PER_NODE = 6e-6
SECONDS_PER_REPLICA = 0.025


def estimate_events(cost: RunCost) -> int:
    """Events a run processes besides its time-series samples."""
    return EVENTS_PER_JOB * cost.jobs + cost.events + cost.rate_steps


def estimate_seconds(cost: RunCost) -> float:
    """Predicted wall time of a run on one worker process, from the document's sizes alone
    (benchmarks/estimate_bench.py prints it against measured runs)."""
    return (SECONDS_BASE + SECONDS_PER_REPLICA * cost.inference_replicas
            + SAMPLE_EVENTS * (SECONDS_PER_SAMPLE + SECONDS_PER_SAMPLE_PER_NODE * cost.nodes)
            + estimate_events(cost) * (SECONDS_PER_EVENT + SECONDS_PER_EVENT_PER_NODE * cost.nodes))


def estimate_cost(sc: Scenario) -> RunCost:
    """Sizes counted from the document alone (nothing is expanded, so this is cheap at any size)."""
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
