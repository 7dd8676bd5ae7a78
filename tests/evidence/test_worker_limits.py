"""A run that outgrows its memory or time limit fails with the reason; the worker lives on.

The budget check normally refuses such a run before it is queued; here the test process raises
the budget (as a careless operator might), so only the worker's own limits stand in the way."""

from __future__ import annotations

import re

import pytest

from placement.evidence.models import SimulationRun
from placement.evidence.services import runs as evidence
from tests.evidence.conftest import wait_for
from tests.evidence.scenarios import batch_scenario

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

LIMIT_MB = 1024


def _run(pk: int) -> SimulationRun:
    return SimulationRun.objects.get(pk=pk)


@pytest.fixture
def no_budget(settings):
    settings.ATLAS_RUN_MAX_JOBS = 10**6
    settings.ATLAS_RUN_MEMORY_BUDGET_MB = 10**6
    settings.ATLAS_RUN_SPEED_FACTOR = 0  # no time budget either


def test_a_run_past_the_worker_memory_limit_fails_and_the_worker_runs_the_next(worker_factory, architect, no_budget):
    worker = worker_factory("w1", ATLAS_WORKER_MEMORY_LIMIT_MB=str(LIMIT_MB))
    huge, _ = evidence.simulation_start(user=architect, stack=None, scenario_document=batch_scenario(1_000_000, nodes=16, name="huge"))
    wait_for(lambda: _run(huge.pk).is_finished, timeout=240, what="the huge run to end")
    failed = _run(huge.pk)
    assert failed.status == SimulationRun.FAILED
    assert "ran out of memory" in failed.error and "ATLAS_WORKER_MEMORY_LIMIT_MB" in failed.error, failed.error
    peak = int(re.search(r"peak ([\d,]+) MiB", failed.error).group(1).replace(",", ""))
    assert peak < LIMIT_MB
    assert worker.proc.poll() is None
    small, _ = evidence.simulation_start(user=architect, stack=None, scenario_document=batch_scenario(200, name="after"))
    wait_for(lambda: _run(small.pk).is_finished, timeout=120, what="the next run on the same worker")
    assert _run(small.pk).status == SimulationRun.SUCCEEDED, _run(small.pk).error


def test_a_run_past_the_soft_time_limit_fails_with_the_reason(worker_factory, architect, no_budget, monkeypatch):
    from placement.evidence.tasks import execute_simulation

    # The sender stamps the limits into the message (Celery's `timelimit` header), so both sides
    # use the same settings, as they do in production.
    monkeypatch.setattr(execute_simulation, "soft_time_limit", 1)
    monkeypatch.setattr(execute_simulation, "time_limit", 30)
    monkeypatch.setattr(execute_simulation, "_exec_options", None)  # Celery caches them per task
    worker_factory("w1", ATLAS_RUN_SOFT_TIME_LIMIT="1", ATLAS_RUN_TIME_LIMIT="30")
    slow, _ = evidence.simulation_start(user=architect, stack=None, scenario_document=batch_scenario(200_000, nodes=64, name="slow"))
    wait_for(lambda: _run(slow.pk).is_finished, timeout=120, what="the slow run to end")
    failed = _run(slow.pk)
    assert failed.status == SimulationRun.FAILED
    assert "longer than its time limit of 1 s" in failed.error, failed.error


def test_a_run_past_the_hard_time_limit_is_failed_with_the_reason(worker_factory, architect, no_budget, monkeypatch):
    from placement.evidence.tasks import execute_simulation

    monkeypatch.setattr(execute_simulation, "soft_time_limit", None)  # no soft limit: only the hard one stops it
    monkeypatch.setattr(execute_simulation, "time_limit", 2)
    monkeypatch.setattr(execute_simulation, "_exec_options", None)
    worker = worker_factory("w1", ATLAS_RUN_SOFT_TIME_LIMIT="0", ATLAS_RUN_TIME_LIMIT="2")
    slow, _ = evidence.simulation_start(user=architect, stack=None, scenario_document=batch_scenario(200_000, nodes=64, name="slow"))
    wait_for(lambda: _run(slow.pk).is_finished, timeout=120, what="the slow run to end")
    failed = _run(slow.pk)
    assert failed.status == SimulationRun.FAILED
    assert "hard time limit of 2" in failed.error, failed.error
    assert worker.proc.poll() is None
