"""Gavel-compatible whole-GPU replay: Gavel's 360 s rounds, allocation resets and policies.

``WholeGpuConfig(mode="gavel")`` replays a whole-GPU trace the way Gavel's simulator does
(stanford-futuredata/gavel, ``scheduler/scheduler.py``, ``Scheduler.simulate`` with one worker type,
no packing), so that per-job JCTs can be compared with Gavel's own.  The event replay in
:mod:`scheduler_core.traces.whole_gpu` stays the default; this mode reproduces Gavel's mechanism,
quirks included:

* **Rounds** (``time_per_iteration``, 360 s).  Every scheduled job runs for one round or until it
  finishes; a round ends when the last of its jobs stops, so a round whose jobs all finish early is
  shorter.  Completions and arrivals are handled only at round ends (an arrival waits for the next
  one), except that an idle cluster jumps straight to the next arrival.
* **Allocation resets** (``minimum_time_between_allocation_resets``, 1,920 s).  The policy's
  allocation is recomputed only when a job arrived or finished since the last computation *and*
  1,920 s have passed since the last reset (or the last reset was at time 0, which Gavel reads as
  "never").  Until then new jobs have no allocation and do not run, and finished jobs' GPUs stay
  idle unless already-allocated jobs can use them.  Each reset also folds the time each job got
  against its allocation into a deficit and restarts every job's time count at half a round
  (``Scheduler._reset_time_run_so_far``).
* **Round packing** (``_update_priorities``, ``_schedule_jobs_on_workers_helper``).  Priority =
  allocation / (job's time since reset / all jobs' time since reset); jobs are taken greedily in
  descending (priority, deficit, allocation) order, ties in arrival order, skipping jobs that do
  not fit.  FIFO never runs a job with zero priority; a job that arrived after the last reset has no
  allocation and never runs (under max-min it may still take GPUs from the round's count, which then
  stay idle: ``_schedule_jobs_on_workers`` skips it only when assigning workers).
* **``fifo``** (``policies/fifo.py``, ``FIFOPolicy.get_allocation``, base mode).  The allocation is
  kept between resets.  For each previously allocated job that has finished (in job-id order), the
  head of the queue is admitted if it fits in the GPUs *counted so far*: jobs later in id order are
  not yet subtracted, so a 1-GPU job's slot can admit an 8-GPU job and the allocation can exceed
  the pool (over-admission).  Then queued jobs are admitted in arrival order until one does not fit.
  Over-admitted jobs time-share through the round packing above.
* **``las``** = Gavel's ``max_min_fairness`` (``policies/max_min_fairness.py``,
  ``MaxMinFairnessPolicy``): with one GPU type and equal throughputs it maximises the smallest
  ``num_gpus x share`` subject to ``sum(num_gpus x share) <= pool`` and ``share <= 1``.  Gavel hands
  this linear program to cvxpy/ECOS, whose interior-point answer is the *analytic centre* of the set
  of optimal shares, not a vertex; :func:`max_min_shares` computes that centre with a small Newton
  method (numpy only).

Work: when the trace gives ``steps`` (Philly-Gavel's ``total_steps``), a job runs at ``steps /
duration_s`` steps per second and does ``int(rate x round_s)`` steps in a full round, as Gavel does
(``Scheduler._get_num_steps``), so its rounds last slightly less than 360 s; without steps, a round
is 360 s of ``duration_s``.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from scheduler_core.traces.records import TraceJob

__all__ = ["GavelRun", "fifo_allocation", "max_min_shares", "replay_gavel"]

#: Gavel's ``_update_priorities`` gives a job with an allocation but no recorded time this priority
#: factor ("don't use inf so 2*new_priority > new_priority").
_NO_TIME_PRIORITY = 1e9


class GavelRun:
    """Per-job outcome of :func:`replay_gavel`, in the order of the jobs given."""

    __slots__ = ("first_start", "finish", "preemptions", "held", "busy_gpu_s", "rounds", "resets")

    def __init__(self, n: int) -> None:
        self.first_start: list[float | None] = [None] * n
        self.finish: list[float | None] = [None] * n
        self.preemptions = [0] * n
        self.held = [0.0] * n
        self.busy_gpu_s = 0.0
        self.rounds = 0
        self.resets = 0


def fifo_allocation(allocated: dict[int, None], active: Sequence[int], k: Sequence[int], capacity: int) -> None:
    """Gavel's ``FIFOPolicy.get_allocation`` (base mode, one GPU type), updating ``allocated`` in place.

    ``allocated`` holds the jobs the policy admitted at earlier calls (finished ones included);
    ``active`` the jobs still in the system, ids in arrival order.
    """
    live = set(active)
    avail = capacity
    queue = [j for j in sorted(active) if j not in allocated]
    head = 0
    for done_or_running in sorted(allocated):
        if done_or_running in live:
            avail -= k[done_or_running]
            continue
        # Finished: admit the queue head if it fits in what has been counted so far.
        if head < len(queue) and k[queue[head]] <= avail:
            allocated[queue[head]] = None
            avail -= k[queue[head]]
            head += 1
        del allocated[done_or_running]
    while head < len(queue) and avail > 0:
        j = queue[head]
        head += 1
        if k[j] > avail:
            break
        allocated[j] = None
        avail -= k[j]


def max_min_shares(k: Sequence[int], capacity: int, *, tol: float = 1e-10) -> list[float]:
    """Gavel's ``max_min_fairness`` allocation for jobs of ``k`` GPUs each on ``capacity`` GPUs.

    Returns each job's share of time x_i in (0, 1].  The linear program is ``max min_i k_i x_i``
    s.t. ``sum k_i x_i <= capacity``, ``0 <= x_i <= 1``.  Its optimum t* = min(min k_i,
    capacity / n); when several allocations reach it, ECOS (Gavel's solver) returns the analytic
    centre of the optimal face: the point maximising the sum of the logs of the constraint slacks
    that are not zero on the whole face.  Jobs with k_i = t* are pinned at x_i = 1; if t* =
    capacity / n every x_i = t* / k_i.
    """
    n = len(k)
    if n == 0:
        return []
    kk = np.asarray(k, dtype=float)
    kmin = float(kk.min())
    t = min(kmin, capacity / n)
    if capacity / n <= kmin:
        return list(t / kk)
    x = np.ones(n)
    free = kk > t  # jobs whose share is not pinned at 1
    if not free.any():
        return list(x)
    kf = kk[free]
    budget = capacity - float(kk[~free].sum())
    lo = t / kf
    # Maximise sum log(x - lo) + log(x) + log(1 - x) + log(budget - k.x) over lo < x < 1 (Newton's method on
    # the face's own log-barrier).
    xf = _analytic_centre(kf, lo, budget, tol)
    x[free] = xf
    return list(x)


def _analytic_centre(kf: np.ndarray, lo: np.ndarray, budget: float, tol: float) -> np.ndarray:
    # Start strictly inside: a point between lo and 1 that leaves budget slack.
    span = 1.0 - lo
    room = budget - float(kf @ lo)
    frac = min(0.5, 0.5 * room / float(kf @ span)) if float(kf @ span) > 0 else 0.5
    x = lo + frac * span
    for _ in range(100):
        s1 = x - lo
        s2 = 1.0 - x
        s3 = budget - float(kf @ x)
        g = 1.0 / s1 + 1.0 / x - 1.0 / s2 - kf / s3
        hd = 1.0 / s1**2 + 1.0 / x**2 + 1.0 / s2**2  # diagonal of -Hessian; plus rank one kf kf^T / s3^2
        # Solve (D + u u^T) dx = g with u = kf / s3 (Sherman-Morrison).
        u = kf / s3
        dinv_g = g / hd
        dinv_u = u / hd
        dx = dinv_g - dinv_u * (float(u @ dinv_g) / (1.0 + float(u @ dinv_u)))
        lam2 = float(g @ dx)
        # Step back to stay inside.
        step = 1.0
        while True:
            nx = x + step * dx
            if (nx > lo).all() and (nx < 1.0).all() and budget - float(kf @ nx) > 0:
                break
            step *= 0.5
        x = nx
        if lam2 < tol:
            break
    return x


def _type_rates(jobs: Sequence[TraceJob]) -> dict[tuple[str, int], float]:
    """Steps per second of each (job type, GPU count), from its longest job.

    Gavel reads one throughput per (job type, GPU count) from its table; the trace gives steps and
    a duration rounded to 1 ms, so each job's own ratio is off by up to 3e-5 for the shortest jobs.
    Jobs of one type then tie exactly in Gavel's round packing, and must tie here too.
    """
    best: dict[tuple[str, int], TraceJob] = {}
    for j in jobs:
        if j.job_type and j.steps and j.duration_s:
            key = (j.job_type, j.num_gpus)
            if key not in best or j.duration_s > best[key].duration_s:
                best[key] = j
    return {key: j.steps / float(j.duration_s) for key, j in best.items()}


def _work(jobs: Sequence[TraceJob], order: Sequence[int], round_s: float
          ) -> tuple[list[float], list[float], list[float]]:
    """Per job in ``order``: its rate (work per second), the work of a full round and its total work.

    Work is counted in steps when the trace gives them (Gavel: steps at the job's V100 throughput,
    int(throughput x round) of them per full round), else in seconds."""
    thr: list[float] = []
    quantum: list[float] = []
    remaining: list[float] = []
    rates = _type_rates(jobs)
    for i in order:
        j = jobs[i]
        if j.steps:
            rate = rates.get((j.job_type, j.num_gpus)) if j.job_type else None
            rate = rate or (j.steps / float(j.duration_s) if j.duration_s else float(j.steps))
            thr.append(rate)
            quantum.append(float(max(1, math.floor(rate * round_s))))
            remaining.append(float(j.steps))
        else:
            thr.append(1.0)
            quantum.append(round_s)
            remaining.append(float(j.duration_s))
    return thr, quantum, remaining


def _round_priorities(active: dict[int, None], alloc: dict[int, float], job_time: dict[int, float],
                      deficit: dict[int, float], worker_time: float) -> list[tuple[float, float, float, int]]:
    """Gavel's ``_update_priorities`` for a round: (priority, deficit, allocation, job) of every active
    job, in the order the round packs them (descending, ties in arrival order)."""
    entries = []
    for j in active:
        a = alloc.get(j)
        if a is None:
            p = 0.0
            a = 0.0
        elif a == 0.0:
            p = 0.0
        elif worker_time == 0.0:
            p = a * _NO_TIME_PRIORITY
        else:
            p = a / (job_time[j] / worker_time)
        entries.append((p, deficit[j], a, j))
    entries.sort(key=lambda e: (e[0], e[1], e[2]), reverse=True)
    return entries


def replay_gavel(jobs: Sequence[TraceJob], *, policy: str, capacity: int, round_s: float,
                 reset_interval_s: float) -> GavelRun:
    """Replay ``jobs`` (whole GPUs, each fits the pool) with Gavel's rounds; see the module doc."""
    n = len(jobs)
    out = GavelRun(n)
    if n == 0:
        return out
    order = sorted(range(n), key=lambda i: (jobs[i].submit_s, i))  # Gavel's job ids = arrival rank
    k = [jobs[i].num_gpus for i in order]
    sub = [float(jobs[i].submit_s) for i in order]
    thr, quantum, remaining = _work(jobs, order, round_s)
    first_start: list[float | None] = [None] * n
    finish: list[float | None] = [None] * n
    preempt = [0] * n
    held = [0.0] * n
    fifo = policy == "fifo"
    half = round_s / 2.0

    active: dict[int, None] = {}  # Gavel's _priorities order: insertion (= arrival) order
    job_time: dict[int, float] = {}
    deficit: dict[int, float] = {}
    alloc: dict[int, float] = {}
    fifo_admitted: dict[int, None] = {}
    worker_time = 0.0
    last_reset = 0.0
    need_update = False
    t = sub[0]
    qi = 0
    running: list[tuple[float, int, float]] = []
    round_start = 0.0
    round_end: float | None = None
    left_jobs = n
    busy = 0.0
    rounds = resets = 0

    while left_jobs:
        if qi < n:
            next_arrival: float | None = sub[qi]
        else:
            next_arrival = None
            if not running:
                last_reset = 0.0  # Gavel: nothing running and no arrivals left -> force a reset
        mx = max((f for f, _j, _s in running), default=0.0)
        if mx > 0:
            if round_end is not None:
                round_start = round_end
            round_end = mx
            t = mx
        elif next_arrival is not None:
            t = next_arrival

        # -- end of round: account the round's work, retire finished jobs ---------------------
        for f, j, work in running:
            ex = f - round_start  # Gavel counts from the previous round's end, idle gaps included
            job_time[j] += ex
            worker_time += ex
            secs = work / thr[j]
            held[j] += secs
            busy += secs * k[j]
            remaining[j] -= work
            if remaining[j] <= 0.0:
                finish[j] = f
                left_jobs -= 1
                del active[j], job_time[j], deficit[j]
                alloc.pop(j, None)
                need_update = True
        ran = {j for _f, j, _s in running}
        running = []

        # -- arrivals up to now ---------------------------------------------------------------
        while qi < n and sub[qi] <= t:
            active[qi] = None
            job_time[qi] = half
            deficit[qi] = 0.0
            need_update = True
            qi += 1

        # -- reset and recompute the allocation (Scheduler._update_priorities) ----------------
        if need_update and (t - last_reset >= reset_interval_s or last_reset == 0.0):
            elapsed = t - last_reset
            worker_time = 0.0
            for j in job_time:
                deficit[j] += alloc.get(j, 0.0) * elapsed - (job_time[j] - half)
                job_time[j] = half
                worker_time += half
            last_reset = t
            ids = list(active)
            if fifo:
                fifo_allocation(fifo_admitted, ids, k, capacity)
                alloc = {j: (1.0 if j in fifo_admitted else 0.0) for j in ids}
            else:
                alloc = dict(zip(ids, max_min_shares([k[j] for j in ids], capacity)))
            need_update = False
            resets += 1

        # -- pick this round's jobs (_schedule_jobs_on_workers_helper) -------------------------
        free = capacity
        for p, _d, _a, j in _round_priorities(active, alloc, job_time, deficit, worker_time):
            if free == 0:
                break
            if fifo and p <= 0.0:
                continue
            if k[j] > free:
                continue
            free -= k[j]
            if j not in alloc:
                continue  # counted against the round but given no workers (_schedule_jobs_on_workers)
            work = remaining[j] if remaining[j] <= quantum[j] else quantum[j]
            running.append((t + work / thr[j], j, work))
            if first_start[j] is None:
                first_start[j] = t
        now_running = {j for _f, j, _s in running}
        for j in ran:
            if j in active and j not in now_running:
                preempt[j] += 1
        if running:
            rounds += 1
        elif qi >= n and not need_update:
            break  # nothing left can ever be allocated (Gavel's loop would spin here)

    for pos, i in enumerate(order):
        out.first_start[i] = first_start[pos]
        out.finish[i] = finish[pos]
        out.preemptions[i] = preempt[pos]
        out.held[i] = held[pos]
    out.busy_gpu_s = busy
    out.rounds = rounds
    out.resets = resets
    return out

