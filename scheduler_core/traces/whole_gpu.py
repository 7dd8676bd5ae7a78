"""Whole-GPU job replay (Philly/Gavel style): FIFO and least-attained-service.

Model
-----
* A pool of ``servers x gpus_per_server`` identical GPUs.  Like Gavel's
  simulator, a job needs ``num_gpus`` GPUs *of the pool* at once (gang); the
  server a GPU sits on does not matter to feasibility or speed.
* A job runs for ``duration_s`` seconds of wall time when it holds its GPUs
  (the Philly-Gavel ``duration_s`` is the run time alone on V100s at that
  scale).  Unlike Gavel there are no 360 s rounds: jobs start and stop at
  event times, which is what makes this replay fast and exact.
* ``fifo`` -- non-preemptive, strict arrival order: the head of the queue
  blocks later jobs until it fits (Gavel's ``fifo`` policy breaks at the first
  job that does not fit).  ``fifo_backfill=True`` lets later jobs that fit
  start instead.
* ``las`` -- preemptive *discretised* least-attained-service (Tiresias'
  2D-LAS): a job's attained service is the GPU-seconds it has held
  (GPUs x seconds).  Thresholds ``las_thresholds_gpu_h`` split jobs into
  priority queues (queue 0 = least service).  Jobs are served queue by queue,
  FIFO inside a queue, skipping jobs that do not fit; a running job that is
  no longer selected is preempted (it keeps its progress) and restarts later,
  paying ``preemption_overhead_s`` of no progress.  Queues instead of a
  continuous ranking avoid the infinite preemption ping-pong of exact LAS;
  a long list of thresholds approaches exact LAS.

``mode="gavel"`` instead replays the trace as Gavel's simulator does (360 s rounds, allocation
recomputed at most every 1,920 s, Gavel's ``fifo`` and, for ``las``, its ``max_min_fairness``); see
:mod:`scheduler_core.traces.gavel_rounds`.

Events (all on :class:`scheduler_core.events.Environment`): arrivals
(``Priority.ARRIVAL``), completions (``COMPLETION``), LAS demotions when a
running job crosses a threshold (``RECONFIGURE`` band, before arrivals), and
one coalesced scheduling pass per instant (``SCHEDULE``).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Literal, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from scheduler_core.events import Environment, Priority
from scheduler_core.traces.gavel_rounds import replay_gavel
from scheduler_core.traces.las_queue import LasQueue
from scheduler_core.traces.records import MILLI, TraceJob

__all__ = ["WholeGpuConfig", "WholeGpuResult", "replay_whole_gpu"]


class WholeGpuConfig(BaseModel):
    """Pool and policy of a whole-GPU replay."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    policy: Literal["fifo", "las"] = "fifo"
    servers: int = Field(12, gt=0)
    gpus_per_server: int = Field(8, gt=0)
    fifo_backfill: bool = False
    las_thresholds_gpu_h: tuple[float, ...] = Field(
        (1.0, 10.0, 100.0),
        description="attained-service queue limits in GPU-hours, increasing",
    )
    preemption_overhead_s: float = Field(0.0, ge=0)
    mode: Literal["event", "gavel"] = Field(
        "event",
        description="event: exact event-time replay; gavel: Gavel's simulator (rounds, allocation resets, "
        "its fifo / max_min_fairness), see scheduler_core.traces.gavel_rounds",
    )
    round_s: float = Field(360.0, gt=0, description="gavel mode: round length (Gavel time_per_iteration)")
    reset_interval_s: float = Field(
        1920.0, ge=0, description="gavel mode: minimum time between allocation recomputations"
    )
    per_job: bool = Field(True, description="include per-job columns in the result")

    @field_validator("las_thresholds_gpu_h")
    @classmethod
    def _increasing(cls, v: tuple[float, ...]) -> tuple[float, ...]:
        if any(x <= 0 for x in v) or any(b <= a for a, b in zip(v, v[1:])):
            raise ValueError("thresholds must be positive and strictly increasing")
        return v

    @model_validator(mode="after")
    def _gavel_options(self) -> "WholeGpuConfig":
        default_thresholds = type(self).model_fields["las_thresholds_gpu_h"].default
        if self.mode == "gavel" and (self.fifo_backfill or self.preemption_overhead_s
                                     or self.las_thresholds_gpu_h != default_thresholds):
            raise ValueError("gavel mode has Gavel's own FIFO admission, max-min sharing for las and no "
                             "preemption cost: fifo_backfill, las_thresholds_gpu_h and preemption_overhead_s "
                             "do not apply")
        return self

    @property
    def capacity(self) -> int:
        return self.servers * self.gpus_per_server


def _dist(values: Sequence[float]) -> dict[str, float]:
    if len(values) == 0:
        return {"mean": 0.0, "median": 0.0, "p99": 0.0, "max": 0.0}
    a = np.asarray(values, dtype=float)
    return {
        "mean": float(a.mean()),
        "median": float(np.percentile(a, 50)),
        "p99": float(np.percentile(a, 99)),
        "max": float(a.max()),
    }


@dataclass
class WholeGpuResult:
    """Outcome of :func:`replay_whole_gpu`; :meth:`to_dict` is JSON-ready."""

    config: WholeGpuConfig
    job_ids: list[str]
    tenants: list[str]
    gpus: list[int]
    submit: list[float]
    first_start: list[float | None]
    finish: list[float | None]
    preemptions: list[int]
    held: list[float]
    rejected: list[str]
    busy_gpu_s: float
    events: int
    summary: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        done = [i for i, f in enumerate(self.finish) if f is not None]
        jct = [self.finish[i] - self.submit[i] for i in done]
        wait = [self.first_start[i] - self.submit[i] for i in done]
        not_running = [self.finish[i] - self.submit[i] - self.held[i] for i in done]
        first = min(self.submit) if self.submit else 0.0
        last = max((self.finish[i] for i in done), default=first)
        makespan = last - first
        cap = self.config.capacity
        self.summary = {
            "jobs": len(self.job_ids) + len(self.rejected),
            "completed": len(done),
            "rejected": len(self.rejected),
            "jct_s": _dist(jct),
            "queue_wait_s": _dist(wait),
            "time_not_running_s": _dist(not_running),
            "makespan_s": float(makespan),
            "utilisation": float(self.busy_gpu_s / (cap * makespan)) if makespan > 0 else 0.0,
            "preemptions": int(sum(self.preemptions)),
            "events": self.events,
            "by_tenant": self._by_tenant(done),
        }

    def _by_tenant(self, done: list[int]) -> dict:
        groups: dict[str, list[int]] = {}
        for i in done:
            groups.setdefault(self.tenants[i], []).append(i)
        return {
            t: {
                "completed": len(ix),
                "jct_s": _dist([self.finish[i] - self.submit[i] for i in ix]),
                "queue_wait_s": _dist([self.first_start[i] - self.submit[i] for i in ix]),
                "gpu_s": float(sum(self.held[i] * self.gpus[i] for i in ix)),
            }
            for t, ix in sorted(groups.items())
        }

    def to_dict(self) -> dict:
        out = {
            "kind": "whole_gpu",
            "config": self.config.model_dump(mode="json", exclude={"per_job"}),
            "summary": self.summary,
            "rejected": list(self.rejected),
        }
        if self.config.per_job:
            out["per_job"] = {
                "job_id": self.job_ids,
                "gpus": self.gpus,
                "submit_s": self.submit,
                "start_s": self.first_start,
                "finish_s": self.finish,
                "preemptions": self.preemptions,
            }
        return out


class _Replay:
    """State of one whole-GPU replay; one instance per run."""

    def __init__(self, jobs: list[TraceJob], cfg: WholeGpuConfig) -> None:
        self.cfg = cfg
        self.env = env = Environment()
        cap = cfg.capacity
        self.free = cap
        self.jobs = jobs
        n = len(jobs)
        self.k = [j.num_gpus for j in jobs]
        self.remaining = [float(j.duration_s) for j in jobs]  # work left, seconds at full allocation
        self.attained = [0.0] * n  # GPU-seconds held so far
        self.last_start = [0.0] * n
        self.restore_left = [0.0] * n  # overhead still to pay in the current run
        self.first_start: list[float | None] = [None] * n
        self.finish: list[float | None] = [None] * n
        self.preempt = [0] * n
        self.done_ev: list = [None] * n
        self.demote_ev: list = [None] * n
        self.level = [0] * n
        self.running: dict[int, None] = {}  # insertion-ordered set
        self.held = [0.0] * n  # seconds holding GPUs (progress + restore overhead)
        self.busy = 0.0
        self._pass_at = -1.0
        if cfg.policy == "fifo":
            self.queue: deque[int] = deque()
        else:
            self.thr = [h * 3600.0 for h in cfg.las_thresholds_gpu_h]
            self.las = LasQueue(self.k, len(self.thr) + 1, cap)
        arrive = self._arrive
        for i, j in enumerate(jobs):
            env.schedule(j.submit_s, Priority.ARRIVAL, arrive, i)

    # -- events ------------------------------------------------------------
    def _request_pass(self) -> None:
        now = self.env.now
        if self._pass_at != now:
            self._pass_at = now
            self.env.schedule(now, Priority.SCHEDULE, self._pass)

    def _arrive(self, i: int) -> None:
        if self.cfg.policy == "fifo":
            self.queue.append(i)
        else:
            self.las.arrive(i)
        self._request_pass()

    def _complete(self, i: int) -> None:
        now = self.env.now
        held = now - self.last_start[i]
        self.held[i] += held
        self.busy += self.k[i] * held
        self.remaining[i] = 0.0
        self.finish[i] = now
        self.free += self.k[i]
        self.done_ev[i] = None
        ev = self.demote_ev[i]
        if ev is not None:
            ev.cancel()
            self.demote_ev[i] = None
        del self.running[i]
        if self.cfg.policy == "las":
            self.las.finish(i)
        self._request_pass()

    def _start(self, i: int) -> None:
        now = self.env.now
        k = self.k[i]
        self.free -= k
        if self.first_start[i] is None:
            self.first_start[i] = now
        self.last_start[i] = now
        self.running[i] = None
        run_for = self.restore_left[i] + self.remaining[i]
        self.done_ev[i] = self.env.schedule(now + run_for, Priority.COMPLETION, self._complete, i)
        if self.cfg.policy == "las":
            self._schedule_demotion(i)

    def _sync(self, i: int) -> None:
        """Bring attained service and remaining work of running job ``i`` to now."""
        now = self.env.now
        held = now - self.last_start[i]
        k = self.k[i]
        self.held[i] += held
        self.busy += k * held
        self.attained[i] += k * held
        paid = min(held, self.restore_left[i])
        self.restore_left[i] -= paid
        self.remaining[i] = max(0.0, self.remaining[i] - (held - paid))
        self.last_start[i] = now

    def _preempt(self, i: int) -> None:
        self._sync(i)
        self.done_ev[i].cancel()
        self.done_ev[i] = None
        ev = self.demote_ev[i]
        if ev is not None:
            ev.cancel()
            self.demote_ev[i] = None
        self.free += self.k[i]
        del self.running[i]
        self.preempt[i] += 1
        self.restore_left[i] = self.cfg.preemption_overhead_s

    def _schedule_demotion(self, i: int) -> None:
        lvl = self.level[i]
        if lvl >= len(self.thr):
            return
        at = self.last_start[i] + (self.thr[lvl] - self.attained[i]) / self.k[i]
        if at < self.done_ev[i].time:
            self.demote_ev[i] = self.env.schedule(max(at, self.env.now), Priority.RECONFIGURE, self._demote, i)

    def _demote(self, i: int) -> None:
        self.demote_ev[i] = None
        self._sync(i)
        self.level[i] += 1
        self.las.demote(i)
        self._schedule_demotion(i)
        self._request_pass()

    # -- scheduling passes ---------------------------------------------------
    def _pass(self) -> None:
        if self.cfg.policy == "fifo":
            self._pass_fifo()
        else:
            self._pass_las()

    def _pass_fifo(self) -> None:
        q, k = self.queue, self.k
        if not self.cfg.fifo_backfill:
            while q and k[q[0]] <= self.free:
                self._start(q.popleft())
            return
        if not q or self.free == 0:
            return
        keep: deque[int] = deque()
        for i in q:
            if k[i] <= self.free:
                self._start(i)
            else:
                keep.append(i)
        self.queue = keep

    def _pass_las(self) -> None:
        # Greedy in (level, arrival) order over every job, computed incrementally (las_queue.py).
        starts, stops = self.las.decide()
        for i in stops:
            self._preempt(i)
        for i in starts:
            self._start(i)


def replay_whole_gpu(jobs: Sequence[TraceJob], config: WholeGpuConfig | None = None, **overrides) -> WholeGpuResult:
    """Replay whole-GPU ``jobs`` on a pool under FIFO or LAS.

    Jobs needing more GPUs than the pool has are not run; they are listed in
    ``result.rejected``.  Fractional or CPU-only jobs raise ``ValueError``
    (use :func:`scheduler_core.traces.replay_sharing` for those).
    """
    cfg = config or WholeGpuConfig()
    if overrides:
        cfg = cfg.model_copy(update=overrides)
        cfg = WholeGpuConfig.model_validate(cfg.model_dump())
    runnable: list[TraceJob] = []
    rejected: list[str] = []
    for j in jobs:
        if j.num_gpus <= 0 or j.gpu_milli != MILLI:
            where = f" (line {j.line})" if j.line else ""
            raise ValueError(
                f"job {j.job_id!r}{where} asks for {j.gpu_demand:g} GPU as "
                f"{j.num_gpus} x {j.gpu_milli}/{MILLI}: whole-GPU replay needs whole GPUs; "
                "use the binpack/spread sharing replay"
            )
        if j.duration_s is None:
            raise ValueError(f"job {j.job_id!r} has no duration")
        if j.num_gpus > cfg.capacity:
            rejected.append(j.job_id)
        else:
            runnable.append(j)
    if cfg.mode == "gavel":
        g = replay_gavel(runnable, policy=cfg.policy, capacity=cfg.capacity, round_s=cfg.round_s,
                         reset_interval_s=cfg.reset_interval_s)
        return WholeGpuResult(
            config=cfg, job_ids=[j.job_id for j in runnable], tenants=[j.tenant for j in runnable],
            gpus=[j.num_gpus for j in runnable], submit=[j.submit_s for j in runnable],
            first_start=g.first_start, finish=g.finish, preemptions=g.preemptions, held=g.held,
            rejected=rejected, busy_gpu_s=g.busy_gpu_s, events=g.rounds,
        )
    r = _Replay(runnable, cfg)
    r.env.run()
    return WholeGpuResult(
        config=cfg,
        job_ids=[j.job_id for j in runnable],
        tenants=[j.tenant for j in runnable],
        gpus=r.k,
        submit=[j.submit_s for j in runnable],
        first_start=r.first_start,
        finish=r.finish,
        preemptions=r.preempt,
        held=r.held,
        rejected=rejected,
        busy_gpu_s=r.busy,
        events=r.env.processed,
    )
