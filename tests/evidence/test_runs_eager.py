"""Embedded default: with no broker, a run executes in-process and its evidence is stored."""

import pytest
from django.core.exceptions import ValidationError

from placement.evidence.models import SimulationRun
from placement.evidence.services import runs as evidence
from tests.evidence.scenarios import batch_scenario

pytestmark = pytest.mark.django_db


def test_eager_run_completes_and_stores_metrics_and_time_series(architect, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        run, created = evidence.simulation_start(user=architect, stack=None, scenario_document=batch_scenario(200))
    assert created
    run.refresh_from_db()
    assert run.status == SimulationRun.SUCCEEDED, run.error
    assert run.progress == 1.0
    assert run.metrics["jobs"]["completed"] > 0
    assert run.timeseries["t"] and run.timeseries["allocated_gpus"]
    assert run.finished_at >= run.started_at


def test_same_stack_scenario_and_seed_return_the_stored_evidence(architect, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        first, _ = evidence.simulation_start(user=architect, stack=None, scenario_document=batch_scenario(100))
    again, created = evidence.simulation_start(user=architect, stack=None, scenario_document=batch_scenario(100))
    assert not created and again.pk == first.pk
    other_seed, created = evidence.simulation_start(user=architect, stack=None, scenario_document=batch_scenario(100), seed=7)
    assert created and other_seed.pk != first.pk


def test_invalid_scenario_is_refused_with_field_errors_and_nothing_is_stored(architect):
    bad = batch_scenario(10)
    bad["workloads"][0]["duration"] = "forever"
    bad["pool"]["node_groups"][0]["gpu"] = "A100-SXM4-999GB"
    with pytest.raises(ValidationError) as exc:
        evidence.simulation_start(user=architect, stack=None, scenario_document=bad)
    fields = exc.value.message_dict
    assert any(k.startswith("scenario.pool.node_groups.0.gpu") for k in fields), fields
    assert any(k.startswith("scenario.workloads.0.duration") for k in fields), fields
    assert not SimulationRun.objects.exists()


def test_unknown_built_in_scenario_names_the_field(architect):
    with pytest.raises(ValidationError) as exc:
        evidence.simulation_start(user=architect, stack=None, scenario_name="no-such-scenario")
    assert "scenario_name" in exc.value.message_dict


def test_failed_simulation_is_recorded_with_its_reason(architect, monkeypatch, django_capture_on_commit_callbacks):
    import scheduler_core.api

    def boom(scenario, progress=None):
        raise RuntimeError("model blew up")

    monkeypatch.setattr(scheduler_core.api, "simulate", boom)
    monkeypatch.setattr("scheduler_core.simulate", boom, raising=False)
    with django_capture_on_commit_callbacks(execute=True):
        run, _ = evidence.simulation_start(user=architect, stack=None, scenario_document=batch_scenario(5))
    run.refresh_from_db()
    assert run.status == SimulationRun.FAILED and "model blew up" in run.error


def test_a_failed_run_is_retried_on_resubmission_not_reused(architect, monkeypatch, django_capture_on_commit_callbacks):
    import scheduler_core

    real = scheduler_core.simulate

    def boom(scenario, progress=None):
        raise RuntimeError("worker ran out of memory")

    monkeypatch.setattr(scheduler_core, "simulate", boom)
    with django_capture_on_commit_callbacks(execute=True):
        failed, _ = evidence.simulation_start(user=architect, stack=None, scenario_document=batch_scenario(5))
    failed.refresh_from_db()
    assert failed.status == SimulationRun.FAILED
    monkeypatch.setattr(scheduler_core, "simulate", real)
    with django_capture_on_commit_callbacks(execute=True):
        retry, created = evidence.simulation_start(user=architect, stack=None, scenario_document=batch_scenario(5))
    assert created and retry.pk != failed.pk
    retry.refresh_from_db()
    assert retry.status == SimulationRun.SUCCEEDED, retry.error
