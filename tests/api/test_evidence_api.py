"""Saved stacks, simulation runs (202 + status URL, deduplication, field errors with nothing
queued, stale runs never reported as running) and a stack's evidence."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from placement.evidence.models import SimulationRun
from placement.stacks.models import Stack
from tests.api.conftest import assert_error_body, session_client

pytestmark = pytest.mark.django_db

SCENARIO = {
    "name": "api-test",
    "horizon": 600,
    "pool": {"node_groups": [{"name": "a", "count": 1}]},
    "workloads": [{"kind": "training", "name": "t", "duration": 60}],
}
MIG_SCENARIO = {
    **SCENARIO,
    "pool": {"node_groups": [{"name": "a", "count": 1, "mig": [{"devices": "all", "layout": "all-1g.10gb"}]}]},
}


def save_stack(client, **extra) -> dict:
    response = client.post("/api/v1/stacks/", {"request": {"profile": "training"}, "rank": 1, **extra}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def test_saving_a_composed_stack_and_reading_it_back(architect, reader):
    stack = save_stack(session_client(architect), name="Training on MIG")
    assert stack["name"] == "Training on MIG" and stack["profile"] == "training" and stack["created_by"] == "arch"
    assert stack["composition"]["rank"] == 1 and stack["request"]["profile"] == "training"
    client = session_client(reader)
    assert client.get(stack["url"]).json() == stack
    assert [s["id"] for s in client.get("/api/v1/stacks/").json()["results"]] == [stack["id"]]


def test_saving_a_stack_with_bad_input_names_the_field(architect):
    client = session_client(architect)
    assert_error_body(client.post("/api/v1/stacks/", {"request": {"profile": "knitting"}, "rank": 1}, format="json"), 400, "request.profile")
    assert_error_body(client.post("/api/v1/stacks/", {"request": {"profile": "training"}, "rank": 49}, format="json"), 400, "rank")
    assert_error_body(client.post("/api/v1/stacks/", {"rank": 1}, format="json"), 400, "request")
    assert not Stack.objects.exists()


def test_a_reader_cannot_save_a_stack(reader):
    assert_error_body(session_client(reader).post("/api/v1/stacks/", {"request": {"profile": "training"}, "rank": 1}, format="json"), 403)


def test_starting_a_simulation_is_202_with_a_status_url_and_queues_once(architect, django_capture_on_commit_callbacks):
    client = session_client(architect)
    with django_capture_on_commit_callbacks() as queued:
        response = client.post("/api/v1/simulations/", {"scenario": SCENARIO, "seed": 7}, format="json")
    assert response.status_code == 202, response.content
    body = response.json()
    assert body["status"] == "queued" and body["created"] is True
    assert body["status_url"] == f"/api/v1/simulations/{body['id']}/"
    assert len(queued) == 1

    with django_capture_on_commit_callbacks() as queued_again:
        again = client.post("/api/v1/simulations/", {"scenario": SCENARIO, "seed": 7}, format="json")
    assert again.status_code == 200 and again.json() == {**body, "created": False}
    assert queued_again == [] and SimulationRun.objects.count() == 1

    status = client.get(body["status_url"]).json()
    assert status["status"] == "queued" and status["progress"] == 0 and status["metrics"] is None
    assert status["seed"] == 7 and status["timings"]["created_at"] and status["timings"]["started_at"] is None


def test_a_simulation_of_a_saved_stack_shows_in_its_evidence(architect, django_capture_on_commit_callbacks):
    client = session_client(architect)
    stack = save_stack(client)
    with django_capture_on_commit_callbacks():
        response = client.post("/api/v1/simulations/", {"stack": stack["id"], "scenario": MIG_SCENARIO}, format="json")
    assert response.status_code == 202, response.content
    runs = client.get(stack["evidence_url"]).json()
    assert [r["id"] for r in runs] == [response.json()["id"]] and runs[0]["stack"] == stack["id"]


@pytest.mark.parametrize(
    "body, field",
    [
        ({"scenario": {**SCENARIO, "horizon": -1}}, "scenario.horizon"),
        ({"scenario": {"name": "x"}}, "scenario.horizon"),
        ({"scenario": "a string"}, "scenario"),
        ({}, "scenario_name"),
        ({"scenario_name": "no-such-scenario"}, "scenario_name"),
        ({"scenario_name": "x", "scenario": SCENARIO}, "scenario"),
        ({"scenario": SCENARIO, "seed": -1}, "seed"),
        ({"scenario": SCENARIO, "seed": 10**30}, "seed"),
        ({"scenario": {**SCENARIO, "seed": 10**30}}, "scenario.seed"),
        ({"scenario": {**SCENARIO, "name": "n" * 201}}, "scenario.name"),
        ({"scenario": SCENARIO, "stack": 10**30}, "stack"),
        ({"scenario": SCENARIO, "stack": "one"}, "stack"),
    ],
)
def test_an_invalid_simulation_request_is_a_400_and_nothing_is_queued(
    architect, django_capture_on_commit_callbacks, body, field
):
    with django_capture_on_commit_callbacks() as queued:
        response = session_client(architect).post("/api/v1/simulations/", body, format="json")
    assert_error_body(response, 400, field)
    assert queued == [] and not SimulationRun.objects.exists()


def test_a_reader_cannot_start_a_simulation(reader):
    assert_error_body(session_client(reader).post("/api/v1/simulations/", {"scenario": SCENARIO}, format="json"), 403)


def test_a_run_whose_worker_died_is_never_reported_as_running(architect, django_capture_on_commit_callbacks):
    client = session_client(architect)
    with django_capture_on_commit_callbacks():
        run_id = client.post("/api/v1/simulations/", {"scenario": SCENARIO}, format="json").json()["id"]
    SimulationRun.objects.filter(pk=run_id).update(
        status=SimulationRun.RUNNING,
        attempts=99,  # past any retry budget: the sweep fails it
        progress=0.4,
        started_at=timezone.now() - timedelta(hours=1),
        heartbeat_at=timezone.now() - timedelta(hours=1),
    )
    status = client.get(f"/api/v1/simulations/{run_id}/").json()
    assert status["status"] == "failed" and "progress" in status["error"]
    assert status["timings"]["finished_at"]


def test_simulation_list_filters_by_status(architect, django_capture_on_commit_callbacks):
    client = session_client(architect)
    with django_capture_on_commit_callbacks():
        client.post("/api/v1/simulations/", {"scenario": SCENARIO}, format="json")
    assert client.get("/api/v1/simulations/?status=queued").json()["count"] == 1
    assert client.get("/api/v1/simulations/?status=failed").json()["count"] == 0
    assert_error_body(client.get("/api/v1/simulations/?status=sleeping"), 400, "status")


def test_unknown_stack_or_run_is_a_404(api):
    assert_error_body(api.get("/api/v1/stacks/999999/"), 404)
    assert_error_body(api.get("/api/v1/stacks/999999/evidence/"), 404)
    assert_error_body(api.get(f"/api/v1/simulations/{2**64}/"), 404)
