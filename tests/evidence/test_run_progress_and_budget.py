"""What a run shows while and after it runs (its progress, the reason it was stopped) and where the memory
budget draws its line; evaluation runs queued as one group really reach the worker."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from placement.evidence.models import SimulationRun
from placement.evidence.services import runs as evidence
from placement.evidence.services.runs import _ProgressWriter
from scheduler_core.scenario import Scenario
from scheduler_core.scenario.limits import estimate_cost
from tests.evidence.scenarios import batch_scenario

pytestmark = pytest.mark.django_db


def _run(status=SimulationRun.RUNNING, name="progress") -> SimulationRun:
    return SimulationRun.objects.create(scenario_name=name, scenario=batch_scenario(5, name=name), seed=1,
                                        fingerprint=name, status=status)


def test_progress_is_written_for_the_running_run_only():
    running, other, finished = _run(name="a"), _run(name="b"), _run(SimulationRun.SUCCEEDED, name="c")
    _ProgressWriter(running.pk)(0.4)
    _ProgressWriter(finished.pk)(0.4)
    assert [SimulationRun.objects.get(pk=r.pk).progress for r in (running, other, finished)] == [0.4, 0.0, 0.0]


def test_the_last_progress_is_written_however_soon_it_follows_the_previous_one():
    run = _run()
    write = _ProgressWriter(run.pk, interval=3600)
    write(0.3)
    write(0.6)  # within the interval: skipped
    assert SimulationRun.objects.get(pk=run.pk).progress == 0.3
    write(1.0)
    assert SimulationRun.objects.get(pk=run.pk).progress == 1.0


def test_a_failed_run_keeps_the_progress_it_had_reached(architect, monkeypatch, django_capture_on_commit_callbacks):
    import scheduler_core

    def half_then_boom(scenario, progress=None):
        progress(0.5)
        raise RuntimeError("model blew up halfway")

    monkeypatch.setattr(scheduler_core, "simulate", half_then_boom)
    with django_capture_on_commit_callbacks(execute=True):
        run, _ = evidence.simulation_start(user=architect, stack=None, scenario_document=batch_scenario(5))
    run.refresh_from_db()
    assert (run.status, run.progress, run.error) == (SimulationRun.FAILED, 0.5, "RuntimeError: model blew up halfway")


def test_a_run_stopped_by_the_worker_fails_with_the_reason_and_a_finished_one_is_left_alone():
    running, done = _run(name="a"), _run(SimulationRun.SUCCEEDED, name="b")
    for run in (running, done):
        evidence.simulation_fail_killed(run.pk, "hard time limit (3600 s) exceeded")
    running.refresh_from_db()
    done.refresh_from_db()
    assert (running.status, running.error) == (SimulationRun.FAILED, "hard time limit (3600 s) exceeded")
    assert running.finished_at is not None
    assert (done.status, done.error) == (SimulationRun.SUCCEEDED, "")


def test_a_run_needing_exactly_the_memory_budget_is_accepted_and_one_mib_more_is_not(architect, settings):
    doc = batch_scenario(50)
    need = estimate_cost(Scenario.model_validate(doc)).memory_mib
    settings.ATLAS_RUN_MEMORY_BUDGET_MB = need
    run, created = evidence.simulation_start(user=architect, stack=None, scenario_document=doc)
    assert created
    settings.ATLAS_RUN_MEMORY_BUDGET_MB = need - 1
    with pytest.raises(ValidationError) as exc:
        evidence.simulation_start(user=architect, stack=None, scenario_document=batch_scenario(50, seed=2))
    assert exc.value.message_dict["scenario"] == [
        f"This run would need about {need:,} MiB; a run here may use at most {need - 1:,} MiB "
        "(ATLAS_RUN_MEMORY_BUDGET_MB). Use fewer GPUs, jobs or events."]
    assert SimulationRun.objects.count() == 1


def test_a_sweep_of_no_stacks_says_how_many_to_pick(architect):
    with pytest.raises(ValidationError) as exc:
        evidence.sweep_start(user=architect, stacks=[], scenario_name="any", seeds=2)
    assert exc.value.message_dict == {"stacks": ["Pick between 1 and 4 stacks."]}


@pytest.mark.parametrize("field, change, message", [
    ("scenario.name", {"name": "n" * 201}, "A scenario name has at most 200 characters."),
    ("scenario.seed", {"seed": 2**63}, "A seed is a whole number between 0 and 2**63 - 1."),
])
def test_a_run_the_database_cannot_store_is_refused_on_its_field(architect, field, change, message):
    with pytest.raises(ValidationError) as exc:
        evidence.simulation_start(user=architect, stack=None, scenario_document={**batch_scenario(5), **change})
    assert exc.value.message_dict == {field: [message]}
    assert not SimulationRun.objects.exists()


def test_a_run_whose_worker_went_silent_is_requeued_once_then_failed(settings, django_capture_on_commit_callbacks):
    # The same bookkeeping the worker tests exercise with a killed worker, without one: a heartbeat older
    # than ATLAS_RUN_HEARTBEAT_TIMEOUT marks the run lost.
    from datetime import timedelta

    from django.utils import timezone

    settings.ATLAS_RUN_HEARTBEAT_TIMEOUT = 60
    settings.ATLAS_RUN_MAX_ATTEMPTS = 2
    now = timezone.now()
    lost = _run(name="lost")
    SimulationRun.objects.filter(pk=lost.pk).update(heartbeat_at=now - timedelta(seconds=61), attempts=1, progress=0.4)
    fresh = _run(name="fresh")
    SimulationRun.objects.filter(pk=fresh.pk).update(heartbeat_at=now - timedelta(seconds=30), attempts=1)
    with django_capture_on_commit_callbacks() as sent:
        assert evidence.simulation_fail_stale(now) == {"requeued": 1, "failed": 0}
    assert len(sent) == 1  # the requeued run is sent to the broker again
    lost.refresh_from_db()
    assert (lost.status, lost.error) == (SimulationRun.QUEUED, "worker stopped reporting progress at 40%; requeued")
    assert SimulationRun.objects.get(pk=fresh.pk).status == SimulationRun.RUNNING
    SimulationRun.objects.filter(pk=lost.pk).update(status=SimulationRun.RUNNING, attempts=2,
                                                    heartbeat_at=now - timedelta(seconds=61))
    assert evidence.simulation_fail_stale(now) == {"requeued": 0, "failed": 1}
    lost.refresh_from_db()
    assert (lost.status, lost.error) == (SimulationRun.FAILED,
                                         "worker stopped reporting progress at 40% after 2 attempts")
