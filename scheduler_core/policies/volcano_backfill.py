"""Volcano's ``backfill`` action: the pods that request nothing (BestEffort) are placed here, not by allocate.

Restated from volcano-sh/volcano ``pkg/scheduler/actions/backfill/backfill.go`` (and ``allocate.go``,
which skips a BestEffort task; ``api/job_info.go``, where a task is BestEffort when its initial request
is empty and a job's pending BestEffort tasks count towards its readiness):

* **Which pods.**  The pending pods of BestEffort jobs (in the model a workload's pods share one request:
  no GPU, no cpu, no memory) whose PodGroup is not Pending - with the ``enqueue`` action, only Inqueue
  jobs (enqueue always admits them: their minimum asks for nothing); without it, allocate makes every
  PodGroup Inqueue, and with neither action none is.
* **Order.**  Queues by allocate's queue order (queue priority, then share), within a queue jobs by the
  job order (priority, then creation), within a job its pods in turn.
* **Each pod alone.**  A pod goes to the best-scored node whose predicates pass - with nothing requested
  the node's pod count is the one resource check (``node(s) pod number exceeded`` once its ``pods`` are
  all taken), the node selector the other.  No gang: a job's pending BestEffort pods already count as
  ready, so each bound pod is dispatched at once.  A pod that fits nowhere keeps its FitErrors and the
  next pod is tried; the queue's share and deserved are not consulted (backfill balances no queues).
* **Words.**  A pending pod's condition is its FitErrors, ``0/N nodes are unavailable: N node(s) pod
  number exceeded.``; while none of the job's pods is bound the PodGroup (still Inqueue) also gets
  ``k/M tasks in gang unschedulable: pod group is ready, ...; Pending: k Unschedulable. Origin reason is
  <pod>: <FitErrors>`` (cache ``RecordJobStatusEvent`` with ``JobInfo.FitError``).

preempt (``preempt.go``): a BestEffort preemptor evicts only BestEffort pods; a node's pod count is room
that an evicted pod frees, whatever it requested.  reclaim leaves BestEffort jobs out.

Not modelled: pipelined BestEffort tasks (the model pipelines nothing), scheduling gates and shards.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from scheduler_core.workloads import Workload


def best_effort(wl: "Workload") -> bool:
    """A job whose pods request nothing (a PodGroup's roles always ask for GPUs)."""
    return wl.group is None and wl.request.best_effort


def may_preempt(preemptor: "Workload", victim: "Workload") -> bool:
    """preempt's rule: a BestEffort pod does not preempt a pod that requests resources (preempt.go)."""
    return not best_effort(preemptor) or best_effort(victim)


def backfill(policy) -> None:
    """The backfill action of one session, after allocate; ``policy``: the VolcanoScheduler (its queue, Inqueue
    jobs, queue and job orders and node scoring; volcano.py imports this module, not the other way round)."""
    sim = policy.sim
    # A PodGroup still Pending is skipped; without the enqueue action allocate turns them Inqueue first (and
    # with neither action none leaves Pending).
    gated = "enqueue" in policy.actions or "allocate" not in policy.actions
    by_queue: dict[str, list["Workload"]] = {}
    for key in policy.pass_keys():
        # A plain job's key holds its shape, whose first item is the pods' request (QueuedPolicy.key): most
        # buckets are told apart without looking up their head; a PodGroup's key holds no request.
        shape = key[2]
        if not (type(shape) is tuple and len(shape) == 3 and getattr(shape[0], "best_effort", False)):
            continue
        head = policy.queue.head(key)
        if head is None or not best_effort(head):
            continue
        for wl in policy.queue.iter_bucket(key):
            if wl.pending > 0 and not (gated and wl.uid not in policy.inqueue):  # job.IsPending(): skipped
                by_queue.setdefault(wl.queue, []).append(wl)
    for qname in sorted(by_queue, key=policy._order_key):
        for wl in sorted(by_queue[qname], key=policy.queue_order):
            strategy, _ = policy.score(wl)
            placed = 0
            while wl.pending > 0:
                plan = sim.plan(wl, 1, strategy)
                if plan is None or sim.bind_plan(wl, plan) == 0:
                    break  # every later pod of the job meets the same nodes: the same FitErrors
                placed += 1
            if placed:
                policy._inq_dirty.add(wl.queue)
            if wl.pending <= 0:
                policy._leave_inqueue(wl)
                policy.queue.remove(wl)


def explain(policy, wl: "Workload") -> str | None:
    """Volcano's words for a pending BestEffort pod of ``wl`` that fits no node (None: it fits somewhere)."""
    sim = policy.sim
    fit = sim.unschedulable(wl, wording="unavailable")
    if fit is None:
        return None
    if wl.pods:  # the PodGroup runs: only the pod's condition says why
        return fit
    p = wl.pending
    statuses = ", ".join(sorted([f"{p} Pending", f"{wl.min_member} minAvailable"]))
    return (f"{p}/{wl.pods_total} tasks in gang unschedulable: pod group is ready, {statuses}; "
            f"Pending: {p} Unschedulable. Origin reason is {wl.name}-0: {fit}")
