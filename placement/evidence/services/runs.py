"""Simulation evidence: start runs (deduplicated), execute them in a worker with progress, store
results in one transaction, recover runs whose worker died, and run sweeps as Celery groups."""

from __future__ import annotations

import hashlib
import json
import logging
import time
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from placement.access.services import require
from placement.catalog.selectors.scenarios import run_seconds_estimate
from placement.common.queue import QueueUnavailable, RunNotAccepted, publish, task
from placement.evidence.models import SimulationRun, Sweep
from placement.stacks.models import Stack
from placement.stacks.services.scenario import ScenarioInvalid, scenario_for_stack
from scheduler_core.build import code_digest

log = logging.getLogger(__name__)

MAX_SWEEP_SEEDS = 20


def _heartbeat_timeout() -> timedelta:
    """A run whose worker stopped writing progress for this long is taken as lost."""
    return timedelta(seconds=settings.ATLAS_RUN_HEARTBEAT_TIMEOUT)


def _max_attempts() -> int:
    return settings.ATLAS_RUN_MAX_ATTEMPTS


def _fingerprint(stack: Stack | None, scenario: dict, seed: int) -> str:
    payload = {
        "stack": stack.composition.get("slots") if stack else None,
        "scenario": scenario,
        "seed": seed,
        # A changed simulator computes anew instead of returning what the old one stored.
        "simulator": code_digest(),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


class TooManyActiveRuns(RunNotAccepted):
    status_code = 429


def _enqueue(run: SimulationRun) -> None:
    # Send only after the run row is committed, so the worker always finds it. A send that fails
    # removes the row again (see _send_or_withdraw): a client told 503 has no run.
    transaction.on_commit(lambda: _send_or_withdraw([run.pk]))


def run_for(user, stack, scenario_name, document, seed, sweep) -> tuple[SimulationRun, bool]:
    """The stored or new run of a stack on a scenario (used by placement.evidence.services.evaluation).
    An unsaved stack (an evaluation's candidate) is simulated as it would be saved; its run has no stack."""
    return _run_for(user, stack, scenario_name, document, seed, sweep)


def queue_group(user, run_ids: list[int]) -> None:
    """Queue new runs as one Celery group once the transaction commits (inside an atomic block)."""
    _check_active_runs(user)
    transaction.on_commit(lambda: _send_or_withdraw(run_ids))


def _send(run_ids: list[int], task_id: str | None = None) -> None:
    """Send the runs' messages (several as one Celery group) and record their task ids; a queued
    run's `heartbeat_at` records its last send (the sweep re-sends a run whose last send is older
    than ATLAS_RUN_RESEND_AFTER). `task_id` re-sends one run under the id it already has.
    Raises QueueUnavailable."""
    from celery import group

    execute_simulation = task("placement.execute_simulation")

    def send(producer) -> list[str]:
        if len(run_ids) == 1:
            return [execute_simulation.apply_async(args=run_ids, producer=producer, retry=False, task_id=task_id).id]
        result = group(execute_simulation.s(pk) for pk in run_ids).apply_async(producer=producer, retry=False)
        return [sent.id for sent in result.results]

    for run_id, sent_id in zip(run_ids, publish(send)):
        SimulationRun.objects.filter(pk=run_id, task_id="").update(task_id=sent_id or "")
    SimulationRun.objects.filter(pk__in=run_ids, status=SimulationRun.QUEUED).update(heartbeat_at=timezone.now())


def _send_or_withdraw(run_ids: list[int]) -> None:
    """Send; when the broker refuses, delete the new runs and their sweep (an evidence ranking's
    candidates with it) so nothing is left queued that no worker will ever receive."""
    try:
        _send(run_ids)
    except QueueUnavailable:
        runs = SimulationRun.objects.filter(pk__in=run_ids, status=SimulationRun.QUEUED, attempts=0)
        sweeps = Sweep.objects.filter(pk__in=list(runs.exclude(sweep=None).values_list("sweep", flat=True)))
        runs.delete()
        sweeps.delete()
        raise


def _check_budget(scenario) -> None:
    """Refuse, before anything is queued, a run bigger than this installation lets one run be.

    The scenario-wide limits (scheduler_core.scenario.limits) already hold; these are the worker's budget:
    settings ATLAS_RUN_MAX_GPUS, ATLAS_RUN_MAX_JOBS, the predicted peak memory against
    ATLAS_RUN_MEMORY_BUDGET_MB and the predicted run time against the soft time limit."""
    from scheduler_core.scenario.limits import estimate_cost, over_limits

    cost = estimate_cost(scenario)
    errors: dict[str, list[str]] = {}
    budget = {"gpus": settings.ATLAS_RUN_MAX_GPUS, "jobs": settings.ATLAS_RUN_MAX_JOBS}
    names = {"gpus": "ATLAS_RUN_MAX_GPUS", "jobs": "ATLAS_RUN_MAX_JOBS"}
    for key, limit in budget.items():
        for loc, message in over_limits(cost, {key: limit}, who="a run here"):
            errors.setdefault(f"scenario.{loc}", []).append(f"{message} ({names[key]}).")
    seconds, limit = run_seconds_estimate(cost), settings.CELERY_TASK_SOFT_TIME_LIMIT
    if seconds > limit:
        errors.setdefault("scenario", []).append(
            f"This run would take about {seconds:,.0f} s on a worker ({cost.jobs:,} jobs on {cost.nodes:,} nodes"
            + (f", {cost.inference_replicas:,} inference replicas" if cost.inference_replicas else "")
            + f"; mostly {cost.work.mostly()}); a run here may take at most {limit:,} s (ATLAS_RUN_SOFT_TIME_LIMIT). "
            "Use fewer jobs, nodes or replicas.")
    if cost.memory_mib > settings.ATLAS_RUN_MEMORY_BUDGET_MB:
        errors.setdefault("scenario", []).append(
            f"This run would need about {cost.memory_mib:,} MiB; a run here may use at most "
            f"{settings.ATLAS_RUN_MEMORY_BUDGET_MB:,} MiB (ATLAS_RUN_MEMORY_BUDGET_MB). Use fewer GPUs, jobs or events.")
    if errors:
        raise ValidationError(errors)


def _check_active_runs(user) -> None:
    """One user cannot fill the queue: at most ATLAS_RUN_MAX_ACTIVE_PER_USER runs queued or
    running at once (counted after this request's runs were added, inside its transaction)."""
    if not getattr(user, "is_authenticated", False):
        return
    limit = settings.ATLAS_RUN_MAX_ACTIVE_PER_USER
    active = SimulationRun.objects.filter(
        created_by=user, status__in=[SimulationRun.QUEUED, SimulationRun.RUNNING]).count()
    if active > limit:
        raise TooManyActiveRuns(
            f"You have {active} runs queued or running with this request; at most {limit} may be "
            f"(ATLAS_RUN_MAX_ACTIVE_PER_USER). Wait for some to finish.")


def simulation_start(
    *,
    user,
    stack: Stack | None,
    scenario_name: str | None = None,
    scenario_document: dict | None = None,
    seed: int | None = None,
    node_groups: list[str] | None = None,
) -> tuple[SimulationRun, bool]:
    """Validate, deduplicate and queue a run. Returns (run, created).

    An invalid scenario raises ValidationError with field errors before anything is queued. The
    same stack, scenario and seed return the stored run instead of computing again (a failed run
    is retried by a new submission).
    """
    require(user, "run_simulation")
    with transaction.atomic():
        run, created = _run_for(user, stack, scenario_name, scenario_document, seed, sweep=None, node_groups=node_groups)
        if created:
            _check_active_runs(user)
            _enqueue(run)
    if not created and _resend_due(run, timezone.now()):
        # A stuck run (its message lost with the broker) is sent again, not just returned.
        _resend(run.pk)
    return run, created


def _last_sent(run: SimulationRun):
    return run.heartbeat_at or run.created_at


def _resend_due(run: SimulationRun, now) -> bool:
    return (run.status == SimulationRun.QUEUED and bool(run.task_id)
            and _last_sent(run) < now - timedelta(seconds=settings.ATLAS_RUN_RESEND_AFTER))


def _resend(run_id: int) -> None:
    """Send a queued run again under its own task id: the database says it must run, whether or
    not the broker still holds its message (a duplicate is skipped by simulation_execute).
    Raises QueueUnavailable; the run stays queued for the next sweep."""
    run = SimulationRun.objects.get(pk=run_id)
    _send([run.pk], task_id=run.task_id)


def _run_for(user, stack, scenario_name, document, seed, sweep, node_groups=None) -> tuple[SimulationRun, bool]:
    """The stored run for (stack, scenario, seed), or a new queued one (not yet sent)."""
    try:
        scenario = scenario_for_stack(stack, scenario_name=scenario_name, document=document, seed=seed, node_groups=node_groups)
    except ScenarioInvalid as exc:
        raise ValidationError(exc.field_errors) from None
    problems = {}
    if len(scenario.name) > 200:
        problems["scenario.name"] = ["A scenario name has at most 200 characters."]
    if not 0 <= scenario.seed < 2**63:
        problems["scenario.seed"] = ["A seed is a whole number between 0 and 2**63 - 1."]
    if problems:
        raise ValidationError(problems)
    _check_budget(scenario)
    scenario_json = scenario.model_dump(mode="json")
    fingerprint = _fingerprint(stack, scenario_json, scenario.seed)
    existing = (
        SimulationRun.objects.select_for_update()
        .filter(fingerprint=fingerprint)
        .exclude(status=SimulationRun.FAILED)
        .order_by("-created_at")
        .first()
    )
    if existing is not None:
        if sweep is not None and existing.sweep_id is None:
            existing.sweep = sweep
            existing.save(update_fields=["sweep"])
        return existing, False
    run = SimulationRun.objects.create(
        stack=stack if stack is not None and stack.pk is not None else None,
        sweep=sweep,
        scenario_name=scenario.name,
        scenario=scenario_json,
        seed=scenario.seed,
        fingerprint=fingerprint,
        created_by=user if getattr(user, "is_authenticated", False) else None,
    )
    return run, True


class _ProgressWriter:
    """Writes progress and a heartbeat at most every `interval` seconds (and at 100%)."""

    def __init__(self, run_id: int, interval: float = 0.5):
        self.run_id = run_id
        self.interval = interval
        self.last = float("-inf")  # the first call always writes, however recently the machine booted

    def __call__(self, fraction: float) -> None:
        now = time.monotonic()
        if now - self.last < self.interval and fraction < 1.0:
            return
        self.last = now
        SimulationRun.objects.filter(pk=self.run_id, status=SimulationRun.RUNNING).update(
            progress=max(0.0, min(1.0, float(fraction))), heartbeat_at=timezone.now()
        )


def simulation_execute(run_id: int, redelivered: bool = False) -> str:
    """Run one simulation (called by the Celery task). Idempotent: a finished run is left alone,
    so a redelivered message after a worker loss cannot compute or store twice, and a re-sent
    duplicate of a run another worker is running (fresh heartbeat) is skipped; a message the
    broker redelivered because its worker was lost restarts the run."""
    from scheduler_core import simulate
    from scheduler_core.scenario import Scenario

    with transaction.atomic():
        run = SimulationRun.objects.select_for_update().filter(pk=run_id).first()
        if run is None or run.is_finished:
            return "skipped"
        if (run.status == SimulationRun.RUNNING and not redelivered and run.heartbeat_at
                and run.heartbeat_at >= timezone.now() - _heartbeat_timeout()):
            return "skipped"
        if run.attempts >= _max_attempts():
            _fail(run, f"gave up after {run.attempts} attempts: the worker was lost each time")
            return "failed"
        run.status = SimulationRun.RUNNING
        run.attempts += 1
        run.started_at = timezone.now()
        run.heartbeat_at = run.started_at
        run.progress = 0.0
        run.error = ""
        run.save()
    reason = None
    try:
        scenario = Scenario.model_validate(run.scenario)
        result = simulate(scenario, progress=_ProgressWriter(run.pk))
        payload = result.model_dump(mode="json")
    except Exception as exc:  # the run records why; the worker stays up
        log.exception("simulation run %s failed", run_id)
        reason = _failure_reason(exc)
    if reason is not None:
        # Outside the except block: the traceback (and the simulation it holds) is freed first,
        # which matters after a MemoryError.
        with transaction.atomic():
            run = SimulationRun.objects.select_for_update().get(pk=run_id)
            _fail(run, reason)
        return "failed"
    timeseries = payload.pop("time_series", None)
    with transaction.atomic():
        run = SimulationRun.objects.select_for_update().get(pk=run_id)
        if run.is_finished:
            return "skipped"
        run.metrics = payload
        run.timeseries = timeseries
        run.status = SimulationRun.SUCCEEDED
        run.progress = 1.0
        run.finished_at = timezone.now()
        run.save()
    return "succeeded"


def _failure_reason(exc: BaseException) -> str:
    from celery.exceptions import SoftTimeLimitExceeded

    if isinstance(exc, MemoryError):
        limit = settings.ATLAS_WORKER_MEMORY_LIMIT_MB
        return (f"the run ran out of memory: a worker process may use {limit:,} MiB "
                f"(ATLAS_WORKER_MEMORY_LIMIT_MB); peak {_peak_rss_mib():,} MiB")
    if isinstance(exc, SoftTimeLimitExceeded):
        return (f"the run took longer than its time limit of {settings.CELERY_TASK_SOFT_TIME_LIMIT:,} s "
                "(ATLAS_RUN_SOFT_TIME_LIMIT)")
    return f"{type(exc).__name__}: {exc}"


def _peak_rss_mib() -> int:
    import resource
    import sys

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak // 2**20 if sys.platform == "darwin" else peak // 1024


def _fail(run: SimulationRun, reason: str) -> None:
    run.status = SimulationRun.FAILED
    run.error = reason
    run.finished_at = timezone.now()
    run.save()


def simulation_fail_killed(run_id: int, reason: str) -> None:
    """The worker stopped a run from outside (hard time limit): fail it with the reason."""
    with transaction.atomic():
        run = SimulationRun.objects.select_for_update().filter(pk=run_id).first()
        if run is not None and not run.is_finished:
            _fail(run, reason)


def simulation_fail_stale(now=None) -> dict[str, int]:
    """Recover runs whose worker died: requeue a lost run once, then fail it with the reason.

    Called by the `sweep_stale_runs` command and before run pages and the API answer.
    """
    now = now or timezone.now()
    cutoff = now - _heartbeat_timeout()
    counts = {"requeued": 0, "failed": 0}
    stale = SimulationRun.objects.filter(status=SimulationRun.RUNNING, heartbeat_at__lt=cutoff)
    for run_id in list(stale.values_list("pk", flat=True)):
        with transaction.atomic():
            run = SimulationRun.objects.select_for_update().get(pk=run_id)
            if run.status != SimulationRun.RUNNING or (run.heartbeat_at and run.heartbeat_at >= cutoff):
                continue
            if run.attempts < _max_attempts():
                run.status = SimulationRun.QUEUED
                run.error = f"worker stopped reporting progress at {run.progress:.0%}; requeued"
                run.heartbeat_at = now  # while queued: when it was queued again
                run.save()
                _enqueue(run)
                counts["requeued"] += 1
            else:
                _fail(run, f"worker stopped reporting progress at {run.progress:.0%} after {run.attempts} attempts")
                counts["failed"] += 1
    return counts


def simulation_recover_queued(now=None) -> dict[str, int]:
    """Runs queued but never picked up by a worker (called by `sweep_stale_runs`, not per page).

    A run whose message never reached the broker (no task id: the web process died or the broker
    failed between commit and send) is sent again, or failed with the reason if the broker still
    refuses. A sent run still queued ATLAS_RUN_RESEND_AFTER seconds after its last send is sent
    again under the same task id (its message may have been lost, e.g. a broker restarted without
    persistence; a duplicate is skipped by the worker). A run no worker picked up within
    ATLAS_RUN_QUEUE_TIMEOUT of being queued is failed with that reason."""
    from django.db.models.functions import Coalesce

    now = now or timezone.now()
    counts = {"resent": 0, "failed": 0}
    queued = SimulationRun.objects.filter(status=SimulationRun.QUEUED)
    grace = now - timedelta(seconds=settings.ATLAS_RUN_SEND_GRACE)
    for run_id in list(queued.filter(task_id="", created_at__lt=grace).values_list("pk", flat=True)):
        try:
            _send([run_id])
            counts["resent"] += 1
        except QueueUnavailable as exc:
            with transaction.atomic():
                run = SimulationRun.objects.select_for_update().get(pk=run_id)
                if run.status == SimulationRun.QUEUED and not run.task_id:
                    _fail(run, f"never reached the task queue: {exc.message}")
                    counts["failed"] += 1
    timeout = settings.ATLAS_RUN_QUEUE_TIMEOUT
    cutoff = now - timedelta(seconds=timeout)
    sent = queued.exclude(task_id="").annotate(queued_since=Coalesce("started_at", "created_at"))
    waited = sent.filter(queued_since__lt=cutoff)
    resend_cutoff = now - timedelta(seconds=settings.ATLAS_RUN_RESEND_AFTER)
    due = sent.filter(queued_since__gte=cutoff).filter(
        Q(heartbeat_at__lt=resend_cutoff) | Q(heartbeat_at=None, created_at__lt=resend_cutoff))
    for run_id in list(due.values_list("pk", flat=True)):
        try:
            _resend(run_id)
            counts["resent"] += 1
        except QueueUnavailable:
            break  # the broker refuses: every run stays queued for the next sweep
    for run_id in list(waited.values_list("pk", flat=True)):
        with transaction.atomic():
            run = SimulationRun.objects.select_for_update().get(pk=run_id)
            if run.status == SimulationRun.QUEUED:
                _fail(run, f"queued for more than {timeout:,} s and never picked up by a worker "
                           "(ATLAS_RUN_QUEUE_TIMEOUT); submit it again")
                counts["failed"] += 1
    return counts


def sweep_start(*, user, stacks: list[Stack], scenario_name: str, seeds: int, base_seed: int = 1) -> Sweep:
    """N seeds per stack on one scenario, queued as one Celery group."""
    require(user, "run_simulation")
    errors: dict[str, list[str]] = {}
    if not 1 <= len(stacks) <= 4:
        errors["stacks"] = ["Pick between 1 and 4 stacks."]
    if not 2 <= seeds <= MAX_SWEEP_SEEDS:
        errors["seeds"] = [f"Use between 2 and {MAX_SWEEP_SEEDS} seeds (a confidence interval needs at least 2)."]
    if errors:
        raise ValidationError(errors)
    with transaction.atomic():
        sweep = Sweep.objects.create(
            name=f"{scenario_name} x {seeds} seeds",
            scenario_name=scenario_name,
            seeds=seeds,
            created_by=user if getattr(user, "is_authenticated", False) else None,
        )
        sweep.stacks.set(stacks)
        new_runs = []
        for stack in stacks:
            for seed in range(base_seed, base_seed + seeds):
                run, created = _run_for(user, stack, scenario_name, None, seed, sweep=sweep)
                if created:
                    new_runs.append(run.pk)
        if new_runs:
            queue_group(user, new_runs)
    return sweep

