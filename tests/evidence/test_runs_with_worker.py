"""Runs on the real Redis broker and a real Celery worker process started by the tests."""

from datetime import timedelta

import pytest
from django.utils import timezone

from placement.evidence.models import SimulationRun
from placement.evidence.services import runs as evidence
from tests.evidence.conftest import wait_for
from tests.evidence.scenarios import batch_scenario

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def _run(pk: int) -> SimulationRun:
    return SimulationRun.objects.get(pk=pk)


def test_run_on_a_real_worker_reports_progress_then_stores_the_result(worker_factory, architect):
    worker_factory("w1")
    run, created = evidence.simulation_start(user=architect, stack=None, scenario_document=batch_scenario(12000, nodes=32))
    assert created and run.status == SimulationRun.QUEUED
    seen = set()

    def finished():
        current = _run(run.pk)
        seen.add(round(current.progress, 2))
        return current.is_finished

    wait_for(finished, timeout=120, interval=0.1, what="the run to finish on the worker")
    done = _run(run.pk)
    assert done.status == SimulationRun.SUCCEEDED, done.error
    assert done.task_id, "the run was sent to the broker, not executed in-process"
    assert any(0 < p < 1 for p in seen), f"no intermediate progress observed: {sorted(seen)}"
    assert done.metrics["jobs"]["completed"] > 0 and done.timeseries["t"]


def test_killed_worker_leaves_no_run_stuck(worker_factory, architect, settings):
    settings.ATLAS_RUN_HEARTBEAT_TIMEOUT = 3
    first = worker_factory("w1")
    run, _ = evidence.simulation_start(user=architect, stack=None, scenario_document=batch_scenario(30000, nodes=64, name="kill-test"))
    wait_for(lambda: _run(run.pk).progress > 0.05, timeout=60, what="the run to make progress")
    first.kill()
    at_kill = _run(run.pk)
    assert at_kill.status == SimulationRun.RUNNING
    # Nobody writes the heartbeat any more: the sweep sees the run as lost and requeues it once.
    wait_for(lambda: timezone.now() - _run(run.pk).heartbeat_at > timedelta(seconds=3.5), timeout=20, what="a stale heartbeat")
    counts = evidence.simulation_fail_stale()
    assert counts == {"requeued": 1, "failed": 0}
    assert "worker stopped reporting progress" in _run(run.pk).error
    worker_factory("w2")
    wait_for(lambda: _run(run.pk).is_finished, timeout=180, interval=0.5, what="the requeued run to finish")
    done = _run(run.pk)
    assert done.status == SimulationRun.SUCCEEDED, done.error
    assert done.attempts == 2


def test_run_lost_on_every_attempt_is_failed_with_a_reason(worker_factory, architect, settings):
    settings.ATLAS_RUN_HEARTBEAT_TIMEOUT = 3
    settings.ATLAS_RUN_MAX_ATTEMPTS = 1
    worker = worker_factory("w1")
    run, _ = evidence.simulation_start(user=architect, stack=None, scenario_document=batch_scenario(30000, nodes=64, name="lost"))
    wait_for(lambda: _run(run.pk).progress > 0.02, timeout=60, what="the run to make progress")
    worker.kill()
    wait_for(lambda: timezone.now() - _run(run.pk).heartbeat_at > timedelta(seconds=3.5), timeout=20, what="a stale heartbeat")
    assert evidence.simulation_fail_stale() == {"requeued": 0, "failed": 1}
    failed = _run(run.pk)
    assert failed.status == SimulationRun.FAILED
    assert "worker stopped reporting progress" in failed.error and "1 attempts" in failed.error
