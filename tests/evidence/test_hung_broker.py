"""A broker that hangs (Redis SIGSTOPped: the kernel accepts connections, nothing answers) cannot
hang the web tier: publishing has a total timeout, the submit answers 503 and nothing is left
behind (issue 37.2)."""

from __future__ import annotations

import pytest

from placement.evidence.models import SimulationRun, Sweep
from placement.stacks.models import Stack
from tests.api.conftest import assert_error_body, session_client
from tests.api.test_evidence_ranking_api import REQUEST
from tests.evidence.test_run_limits import SMALL

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]


def _answer(send, hang_after: float = 30.0, within: float = 3.0):
    """The response, or a failure if the request is still waiting on the broker after `hang_after`
    seconds (the defect: a submit that never answers) or answered after `within` seconds (the
    issue's bound: connect 1 s + publish 1.5 s, and the request's own work)."""
    import threading
    import time

    from django.db import connection

    box = {}

    def call():
        started = time.perf_counter()
        try:
            box["response"] = send()
        finally:
            box["seconds"] = time.perf_counter() - started
            connection.close()

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(hang_after)
    assert "response" in box, "the request hung on the broker"
    assert box["seconds"] < within, f"answered after {box['seconds']:.2f} s (target: under {within:g} s)"
    return box["response"]


@pytest.fixture
def hung_broker(private_redis):
    private_redis.pause()
    yield private_redis
    private_redis.resume()


def test_a_submit_to_a_hung_broker_is_a_503_and_leaves_no_run(hung_broker, architect):
    client = session_client(architect)
    response = _answer(lambda: client.post("/api/v1/simulations/", {"scenario": SMALL}, format="json"))
    assert "task queue is unavailable" in assert_error_body(response, 503)["detail"]
    assert not SimulationRun.objects.exists()


def test_an_evaluation_during_a_broker_outage_leaves_no_saved_stack(hung_broker, architect):
    client = session_client(architect)
    response = _answer(lambda: client.post("/api/v1/stacks/evaluate/", {"request": REQUEST, "top": 2}, format="json"))
    assert_error_body(response, 503)
    assert not SimulationRun.objects.exists() and not Sweep.objects.exists() and not Stack.objects.exists()
