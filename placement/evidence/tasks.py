"""Celery tasks of the evidence: simulation runs, the stale-run sweep and story bands. Thin wrappers
that call services; services queue them by name (placement.common.queue), never by import.

acks_late + reject_on_worker_lost (settings) put a run's message back on the queue when its worker
dies; `simulation_execute` is idempotent and counts attempts, and the stale-run sweep catches a
worker that vanished without the broker noticing.
"""

from celery import Task, shared_task
from celery.exceptions import TimeLimitExceeded
from django.conf import settings

from placement.evidence.services import runs as evidence
from placement.evidence.services import story_band


class SimulationTask(Task):
    def on_failure(self, exc, task_id, args, kwargs, einfo):
        # The hard time limit kills the pool process mid-run; Celery calls this in the worker's
        # main process, so the run is failed with the reason instead of waiting for the sweep.
        if isinstance(exc, TimeLimitExceeded) and args:
            limit = exc.args[0] if exc.args else "?"
            evidence.simulation_fail_killed(
                args[0], f"the run was stopped at its hard time limit of {limit} s (ATLAS_RUN_TIME_LIMIT)")


@shared_task(name="placement.execute_simulation", base=SimulationTask, bind=True, acks_late=True, reject_on_worker_lost=True)
def execute_simulation(self, run_id: int) -> str:
    redelivered = bool((self.request.delivery_info or {}).get("redelivered"))
    return evidence.simulation_execute(run_id, redelivered=redelivered)


@shared_task(name="placement.fail_stale_runs")
def fail_stale_runs() -> dict:
    return {**evidence.simulation_fail_stale(), **{f"queued_{k}": v for k, v in evidence.simulation_recover_queued().items()}}


class StoryBandTask(Task):
    def on_failure(self, exc, task_id, args, kwargs, einfo):
        # The hard limit kills the pool process; record why so the page stops polling.
        if isinstance(exc, TimeLimitExceeded) and args:
            story_band.story_band_failed(args[0], f"stopped at its hard time limit of {settings.ATLAS_BAND_TIME_LIMIT + 30} s")


@shared_task(name="placement.compute_story_band", base=StoryBandTask, acks_late=True,
             soft_time_limit=settings.ATLAS_BAND_TIME_LIMIT, time_limit=settings.ATLAS_BAND_TIME_LIMIT + 30)
def compute_story_band(band_id: int) -> str:
    return story_band.story_band_compute(band_id)
