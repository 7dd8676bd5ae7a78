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
from django.utils import timezone

from placement.models import SimulationRun, Stack, Sweep
from placement.services.access import require
from placement.services.stack_scenario import ScenarioInvalid, scenario_for_stack

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
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _enqueue(run: SimulationRun) -> None:
    from placement.tasks import execute_simulation

    # Enqueue only after the run row is committed, so the worker always finds it.
    transaction.on_commit(lambda: _send(run.pk, execute_simulation))


def _send(run_id: int, task) -> None:
    result = task.apply_async(args=[run_id])
    SimulationRun.objects.filter(pk=run_id, task_id="").update(task_id=result.id or "")


def simulation_start(
    *,
    user,
    stack: Stack | None,
    scenario_name: str | None = None,
    scenario_document: dict | None = None,
    seed: int | None = None,
) -> tuple[SimulationRun, bool]:
    """Validate, deduplicate and queue a run. Returns (run, created).

    An invalid scenario raises ValidationError with field errors before anything is queued. The
    same stack, scenario and seed return the stored run instead of computing again (a failed run
    is retried by a new submission).
    """
    require(user, "run_simulation")
    with transaction.atomic():
        run, created = _run_for(user, stack, scenario_name, scenario_document, seed, sweep=None)
        if created:
            _enqueue(run)
    return run, created


def _run_for(user, stack, scenario_name, document, seed, sweep) -> tuple[SimulationRun, bool]:
    """The stored run for (stack, scenario, seed), or a new queued one (not yet sent)."""
    try:
        scenario = scenario_for_stack(stack, scenario_name=scenario_name, document=document, seed=seed)
    except ScenarioInvalid as exc:
        raise ValidationError(exc.field_errors) from None
    problems = {}
    if len(scenario.name) > 200:
        problems["scenario.name"] = ["A scenario name has at most 200 characters."]
    if not 0 <= scenario.seed < 2**63:
        problems["scenario.seed"] = ["A seed is a whole number between 0 and 2**63 - 1."]
    if problems:
        raise ValidationError(problems)
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
        stack=stack,
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
        self.last = 0.0

    def __call__(self, fraction: float) -> None:
        now = time.monotonic()
        if now - self.last < self.interval and fraction < 1.0:
            return
        self.last = now
        SimulationRun.objects.filter(pk=self.run_id, status=SimulationRun.RUNNING).update(
            progress=max(0.0, min(1.0, float(fraction))), heartbeat_at=timezone.now()
        )


def simulation_execute(run_id: int) -> str:
    """Run one simulation (called by the Celery task). Idempotent: a finished run is left alone,
    so a redelivered message after a worker loss cannot compute or store twice."""
    from scheduler_core import simulate
    from scheduler_core.scenario import Scenario

    with transaction.atomic():
        run = SimulationRun.objects.select_for_update().filter(pk=run_id).first()
        if run is None or run.is_finished:
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
    try:
        scenario = Scenario.model_validate(run.scenario)
        result = simulate(scenario, progress=_ProgressWriter(run.pk))
        payload = result.model_dump(mode="json")
    except Exception as exc:  # the run records why; the worker stays up
        log.exception("simulation run %s failed", run_id)
        with transaction.atomic():
            run = SimulationRun.objects.select_for_update().get(pk=run_id)
            _fail(run, f"{type(exc).__name__}: {exc}")
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


def _fail(run: SimulationRun, reason: str) -> None:
    run.status = SimulationRun.FAILED
    run.error = reason
    run.finished_at = timezone.now()
    run.save()


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
                run.save()
                _enqueue(run)
                counts["requeued"] += 1
            else:
                _fail(run, f"worker stopped reporting progress at {run.progress:.0%} after {run.attempts} attempts")
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
    from celery import group

    from placement.tasks import execute_simulation

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
            transaction.on_commit(lambda: group(execute_simulation.s(pk) for pk in new_runs).apply_async())
    return sweep

