"""The database, not the broker, is the record of what must run (issue 39.1): a Redis restarted
without persistence loses the queued messages, and the sweep (or a resubmission) sends them again
with the same task id, so a real worker still runs every accepted run."""

from __future__ import annotations

import time

import pytest
import redis

from placement.evidence.models import SimulationRun
from placement.evidence.services import runs as evidence
from tests.evidence.conftest import wait_for
from tests.evidence.test_run_limits import SMALL

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]


def _scenario(name: str) -> dict:
    return {**SMALL, "name": name}


def _queued_messages(url: str) -> int:
    return redis.Redis.from_url(url).llen("celery")


def test_runs_queued_before_a_broker_restart_are_resent_and_succeed(private_redis, private_worker_factory, architect, settings):
    settings.ATLAS_RUN_RESEND_AFTER = 1
    by_sweep, _ = evidence.simulation_start(user=architect, stack=None, scenario_document=_scenario("by-sweep"))
    by_resubmit, _ = evidence.simulation_start(user=architect, stack=None, scenario_document=_scenario("by-resubmit"))
    assert _queued_messages(private_redis.url) == 2
    task_id = SimulationRun.objects.get(pk=by_sweep.pk).task_id

    private_redis.restart()
    assert _queued_messages(private_redis.url) == 0  # both messages are gone, the runs still queued
    time.sleep(1.5)  # past ATLAS_RUN_RESEND_AFTER

    again, created = evidence.simulation_start(user=architect, stack=None, scenario_document=_scenario("by-resubmit"))
    assert (again.pk, created) == (by_resubmit.pk, False)
    assert _queued_messages(private_redis.url) == 1  # the resubmission sent the stuck run again
    assert evidence.simulation_recover_queued()["resent"] == 1  # the other one; the fresh re-send waits
    assert _queued_messages(private_redis.url) == 2
    assert SimulationRun.objects.get(pk=by_sweep.pk).task_id == task_id  # the same, idempotent task id

    private_worker_factory("w1")
    for run in (by_sweep, by_resubmit):
        wait_for(lambda run=run: SimulationRun.objects.get(pk=run.pk).is_finished, timeout=120, what="the re-sent run")
        done = SimulationRun.objects.get(pk=run.pk)
        assert done.status == SimulationRun.SUCCEEDED and done.attempts == 1, done.error


def test_a_duplicate_message_of_a_run_another_worker_holds_is_skipped(architect):
    from django.utils import timezone

    run = SimulationRun.objects.create(
        scenario_name="limits-test", scenario=SMALL, seed=1, fingerprint="dup", created_by=architect,
        status=SimulationRun.RUNNING, attempts=1, heartbeat_at=timezone.now(), task_id="t")
    assert evidence.simulation_execute(run.pk) == "skipped"
    run.refresh_from_db()
    assert run.status == SimulationRun.RUNNING and run.attempts == 1
