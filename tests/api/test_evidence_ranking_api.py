"""Rank by evidence: the top composed stacks are simulated on a scenario built from the same
workload classes as one Celery group; the result sets the rules score next to the measured figures,
re-ranks by evidence and names the metric behind every disagreement."""

from __future__ import annotations

import pytest

from placement.evidence.models import EvaluationCandidate, SimulationRun, Sweep
from placement.evidence.selectors.evaluation import deciding_metric
from placement.evidence.services.runs import simulation_execute
from placement.plans.models import Plan
from tests.api.conftest import assert_error_body, session_client

pytestmark = pytest.mark.django_db

REQUEST = {
    "workloads": [
        {"name": "chat", "kind": "online_inference", "replicas": 8, "gpus_per_replica": 0.25, "gpu_memory_gib": 12,
         "p99_ms": 150, "tenants": 2},
        {"name": "train", "kind": "training", "replicas": 2, "gpus_per_replica": 4, "gpu_memory_gib": 40, "gang": True,
         "tenants": 2},
    ],
    "pool": {"gpu_model": "A100-80GB", "gpu_count": 16},
}


def test_evaluate_is_202_one_group_then_a_ranking_with_figures_and_disagreements(architect, django_capture_on_commit_callbacks):
    client = session_client(architect)
    with django_capture_on_commit_callbacks() as queued:
        response = client.post("/api/v1/stacks/evaluate/", {"request": REQUEST, "top": 3}, format="json")
    assert response.status_code == 202, response.content
    body = response.json()
    assert len(queued) == 1  # one Celery group for every stack, not one message per stack
    runs = list(SimulationRun.objects.filter(sweep_id=body["id"]).order_by("pk"))
    # each candidate runs its own plan: the run is named after the plan's digest
    candidates = list(EvaluationCandidate.objects.filter(sweep_id=body["id"]))
    assert [c.run_id for c in candidates] == [r.pk for r in runs] and len(runs) == 3
    assert all(r.scenario_name == f"plan-{Plan.model_validate(c.composition['plan']).digest}" for r, c in zip(runs, candidates))

    waiting = client.get(body["status_url"]).json()
    assert waiting["finished"] is False and waiting["progress"] == 0

    for run in runs:  # what the worker does for each member of the group
        simulation_execute(run.pk)
    result = client.get(body["status_url"]).json()
    assert result["finished"] is True and result["progress"] == 1
    rows = result["stacks"]
    assert [r["rules_rank"] for r in rows] == [1, 2, 3]
    assert sorted(r["evidence_rank"] for r in rows) == [1, 2, 3]
    for row in rows:
        figures = row["figures"]
        assert row["rules_score"] is not None and row["p99_target_ms"] == 150
        assert {"slo_attainment", "p99_ms", "oom_kills", "utilisation", "queue_wait_p95_s", "starved_tenants"} <= set(figures)
    for row in rows:  # a disagreement names the metric that decided
        if row["evidence_rank"] < row["rules_rank"]:
            assert "decided" in row["disagreement"] and any(m in row["disagreement"] for m in result["metrics_order"])


def test_the_first_metric_that_differs_beyond_its_tolerance_decides():
    a = {"slo_attainment": 0.99, "oom_kills": 3, "starved_tenants": [], "queue_wait_p95_s": 10, "utilisation": 0.5}
    b = {"slo_attainment": 0.992, "oom_kills": 0, "starved_tenants": [], "queue_wait_p95_s": 900, "utilisation": 0.9}
    assert deciding_metric(a, b) == (1, "OOM kills")  # SLO within 0.5 points: a tie; OOM kills decide
    assert deciding_metric(b, a) == (-1, "OOM kills")


def test_evaluate_needs_a_user_who_may_run_simulations(reader):
    assert_error_body(session_client(reader).post("/api/v1/stacks/evaluate/", {"request": REQUEST}, format="json"), 403)
    assert not Sweep.objects.exists()


@pytest.mark.parametrize("body, field", [
    ({"request": {**REQUEST, "workloads": [{**REQUEST["workloads"][0], "replicas": -1}]}}, "request.workloads[0].replicas"),
    ({"request": REQUEST, "top": 0}, "top"),
    ({"request": REQUEST, "scenario_name": "no-such-scenario"}, "scenario_name"),
])
def test_bad_evaluate_input_is_a_400_and_queues_nothing(architect, body, field):
    assert_error_body(session_client(architect).post("/api/v1/stacks/evaluate/", body, format="json"), 400, field)
    assert not SimulationRun.objects.exists()


def test_the_evaluation_group_reaches_the_worker_once_the_request_commits(architect, django_capture_on_commit_callbacks):
    # Embedded mode (no broker): the group's tasks run in-process when the transaction commits.
    client = session_client(architect)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/api/v1/stacks/evaluate/", {"request": REQUEST, "top": 2}, format="json")
    assert response.status_code == 202, response.content
    runs = list(SimulationRun.objects.filter(sweep_id=response.json()["id"]))
    assert len(runs) == 2
    assert all(r.status == SimulationRun.SUCCEEDED and r.task_id for r in runs), [(r.status, r.error) for r in runs]
