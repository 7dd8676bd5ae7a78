"""The app against a broker that is not listening: submitting answers 503 with the JSON error body
and leaves no run behind; the sweep re-sends or fails runs that never reached a worker."""

from __future__ import annotations

import socket
from datetime import timedelta

import pytest
from django.utils import timezone

from placement.evidence.models import SimulationRun, Sweep
from placement.evidence.services import runs as evidence
from placement.stacks.models import Stack
from tests.api.conftest import assert_error_body, session_client
from tests.evidence.conftest import BROKER, _reset_connections
from tests.evidence.test_run_limits import SMALL

pytestmark = [pytest.mark.django_db(transaction=True)]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the block ends: nothing listens there


@pytest.fixture
def broker_down(ensure_catalog):
    from config.celery import app

    saved = {k: app.conf[k] for k in ("broker_url", "task_always_eager")}
    app.conf.update(broker_url=f"redis://127.0.0.1:{_closed_port()}/0", task_always_eager=False)
    _reset_connections(app)
    yield app
    app.conf.update(saved)
    _reset_connections(app)


def test_submitting_with_the_broker_down_is_a_503_and_leaves_no_run(broker_down, architect):
    response = session_client(architect).post("/api/v1/simulations/", {"scenario": SMALL}, format="json")
    body = assert_error_body(response, 503)
    assert "task queue is unavailable" in body["detail"]
    assert not SimulationRun.objects.exists()


def test_a_sweep_with_the_broker_down_leaves_neither_runs_nor_the_sweep(broker_down, architect):
    from placement.stacks.services import stacks as rules

    stack = rules.stack_save(user=architect, request_data={"profile": "training"}, rank=1, name="s")
    with pytest.raises(evidence.QueueUnavailable):
        evidence.sweep_start(user=architect, stacks=[stack], scenario_name="partial-gang-default", seeds=2)
    assert not SimulationRun.objects.exists() and not Sweep.objects.exists()
    assert Stack.objects.filter(pk=stack.pk).exists()


def _queued_run(architect, *, task_id: str, age: timedelta, seed: int) -> SimulationRun:
    run = SimulationRun.objects.create(
        scenario_name="limits-test", scenario=SMALL, seed=seed, fingerprint=f"f{seed}", created_by=architect, task_id=task_id)
    SimulationRun.objects.filter(pk=run.pk).update(created_at=timezone.now() - age)
    return run


def test_the_sweep_fails_a_never_sent_run_with_the_reason_while_the_broker_is_down(broker_down, architect):
    never_sent = _queued_run(architect, task_id="", age=timedelta(minutes=5), seed=1)
    just_now = _queued_run(architect, task_id="", age=timedelta(seconds=0), seed=2)
    assert evidence.simulation_recover_queued() == {"resent": 0, "failed": 1}
    never_sent.refresh_from_db()
    assert never_sent.status == SimulationRun.FAILED and "never reached the task queue" in never_sent.error
    assert SimulationRun.objects.get(pk=just_now.pk).status == SimulationRun.QUEUED  # still in its send grace


@pytest.mark.worker  # needs the real Redis broker, like the worker tests
def test_the_sweep_resends_a_never_sent_run_once_the_broker_answers(celery_broker, architect):
    import redis

    run = _queued_run(architect, task_id="", age=timedelta(minutes=5), seed=1)
    assert evidence.simulation_recover_queued() == {"resent": 1, "failed": 0}
    run.refresh_from_db()
    assert run.status == SimulationRun.QUEUED and run.task_id
    assert redis.Redis.from_url(BROKER).llen("celery") == 1  # the message waits for a worker


def test_the_sweep_fails_a_sent_run_no_worker_picked_up(broker_down, architect, settings):
    settings.ATLAS_RUN_QUEUE_TIMEOUT = 3600
    lost = _queued_run(architect, task_id="lost-message", age=timedelta(hours=2), seed=1)
    waiting = _queued_run(architect, task_id="in-the-queue", age=timedelta(minutes=10), seed=2)
    assert evidence.simulation_recover_queued() == {"resent": 0, "failed": 1}
    lost.refresh_from_db()
    assert lost.status == SimulationRun.FAILED and "never picked up by a worker" in lost.error
    assert SimulationRun.objects.get(pk=waiting.pk).status == SimulationRun.QUEUED


def test_the_stack_page_says_the_queue_is_down_and_leaves_no_run(broker_down, architect):
    from django.test import Client

    from placement.stacks.services import stacks as rules

    stack = rules.stack_save(user=architect, request_data={"profile": "training"}, rank=1, name="s")
    client = Client()
    client.force_login(architect)
    page = client.post(f"/stacks/{stack.pk}/simulate/", {"scenario_name": "partial-gang-default"}, follow=True)
    assert page.status_code == 200 and "task queue is unavailable" in page.content.decode()
    assert not SimulationRun.objects.exists()
