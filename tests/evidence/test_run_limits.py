"""One request cannot exhaust a worker: the whole scenario is bounded, a run's cost is estimated and
refused over budget before anything is queued, and one user cannot fill the queue."""

from __future__ import annotations

import pytest

from placement.evidence.models import SimulationRun
from tests.api.conftest import assert_error_body, session_client

pytestmark = pytest.mark.django_db

SMALL = {
    "name": "limits-test",
    "horizon": 600,
    "pool": {"node_groups": [{"name": "a", "count": 1}]},
    "workloads": [{"kind": "training", "name": "t", "duration": 60}],
}


def _submit(client, scenario, **extra):
    return client.post("/api/v1/simulations/", {"scenario": scenario, **extra}, format="json")


def test_153_node_groups_of_4096_nodes_is_refused_naming_the_limits(architect):
    groups = [{"name": f"g{i}", "count": 4096, "gpus_per_node": 16} for i in range(153)]
    body = assert_error_body(_submit(session_client(architect), {**SMALL, "pool": {"node_groups": groups}}),
                             400, "scenario.pool.node_groups")
    messages = " ".join(body["errors"]["scenario.pool.node_groups"])
    assert "153 node groups; a scenario may have at most 64" in messages
    assert "626,688 nodes; a scenario may have at most 5,000" in messages
    assert "10,027,008 GPUs" in messages
    assert not SimulationRun.objects.exists()


def test_a_batch_workload_of_100_million_jobs_is_refused_naming_the_limit(architect):
    workloads = [{"kind": "batch", "name": "flood", "count": 100_000_000, "duration": 60}]
    body = assert_error_body(_submit(session_client(architect), {**SMALL, "workloads": workloads}), 400, "scenario.workloads")
    assert "100,000,000 training/batch jobs" in body["errors"]["scenario.workloads"][0]
    assert "at most 1,000,000" in body["errors"]["scenario.workloads"][0]
    assert not SimulationRun.objects.exists()


def test_a_run_over_this_installations_budget_is_refused_before_it_is_queued(architect, settings):
    client = session_client(architect)
    big_pool = {"node_groups": [{"name": "a", "count": 2048, "gpus_per_node": 16}]}  # 32,768 GPUs
    body = assert_error_body(_submit(client, {**SMALL, "pool": big_pool}), 400, "scenario.pool.node_groups")
    assert "(ATLAS_RUN_MAX_GPUS)" in body["errors"]["scenario.pool.node_groups"][0]
    many_jobs = [{"kind": "batch", "name": "b", "count": 300_000, "duration": 60}]
    body = assert_error_body(_submit(client, {**SMALL, "workloads": many_jobs}), 400, "scenario.workloads")
    assert "(ATLAS_RUN_MAX_JOBS)" in body["errors"]["scenario.workloads"][0]
    settings.ATLAS_RUN_MEMORY_BUDGET_MB = 80
    some_jobs = [{"kind": "batch", "name": "b", "count": 20_000, "duration": 60}]
    body = assert_error_body(_submit(client, {**SMALL, "workloads": some_jobs}), 400, "scenario")
    assert "(ATLAS_RUN_MEMORY_BUDGET_MB)" in body["errors"]["scenario"][0]
    assert not SimulationRun.objects.exists()


def test_one_user_cannot_have_more_runs_queued_than_the_cap(architect, reviewer, settings, django_capture_on_commit_callbacks):
    settings.ATLAS_RUN_MAX_ACTIVE_PER_USER = 2
    client = session_client(architect)
    with django_capture_on_commit_callbacks():  # captured, not sent: the runs stay queued
        for seed in (1, 2):
            assert _submit(client, SMALL, seed=seed).status_code == 202
        body = assert_error_body(_submit(client, SMALL, seed=3), 429)
    assert "ATLAS_RUN_MAX_ACTIVE_PER_USER" in body["detail"]
    assert SimulationRun.objects.filter(created_by=architect).count() == 2
    # The same stored run is still answered, and another user is not held back.
    assert _submit(client, SMALL, seed=1).status_code == 200
    with django_capture_on_commit_callbacks():
        assert _submit(session_client(reviewer), SMALL, seed=3).status_code == 202


def test_a_run_past_its_soft_time_limit_is_failed_with_the_reason(architect, monkeypatch, django_capture_on_commit_callbacks):
    from celery.exceptions import SoftTimeLimitExceeded

    from placement.evidence.services import runs as evidence

    with django_capture_on_commit_callbacks():
        run, _ = evidence.simulation_start(user=architect, stack=None, scenario_document=SMALL)

    def too_slow(*args, **kwargs):
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr("scheduler_core.simulate", too_slow)
    assert evidence.simulation_execute(run.pk) == "failed"
    run.refresh_from_db()
    assert run.status == SimulationRun.FAILED
    assert "longer than its time limit" in run.error and "ATLAS_RUN_SOFT_TIME_LIMIT" in run.error


def test_a_run_that_cannot_finish_within_the_time_limit_is_refused_with_the_estimate(architect):
    pool = {"node_groups": [{"name": "big", "count": 2048, "gpus_per_node": 8}]}
    workloads = [{"kind": "batch", "name": "flood", "count": 150_000, "duration": 60}]
    body = assert_error_body(_submit(session_client(architect), {**SMALL, "pool": pool, "workloads": workloads}), 400, "scenario")
    message = " ".join(body["errors"]["scenario"])
    assert "This run would take about" in message and "150,000 jobs on 2,048 nodes" in message
    assert "at most 600 s (ATLAS_RUN_SOFT_TIME_LIMIT)" in message
    assert "mostly placing each pod on every node it may use" in message
    assert not SimulationRun.objects.exists()


def test_a_service_its_memory_cap_restarts_all_run_long_is_refused_with_the_estimate(architect):
    # 800 HAMi replicas whose KV cache outgrows the 18 GiB gpumem cap every ten minutes: each kill and
    # restart settles the whole service. The estimate once counted 25 ms per replica (20 s) and let it in.
    pool = {"node_groups": [{"name": "infer", "count": 25, "gpus_per_node": 8}]}
    service = {"kind": "inference", "name": "chat", "replicas": 800, "model_memory_gib": 12, "memory_request_gib": 18,
               "kv_cache": {"initial_gib": 2, "growth_gib_per_hour": 24, "max_gib": 60}, "compute_fraction": 0.15,
               "arrival_rate": 100, "service_time": {"mean": "15ms"}, "slo": {"p99": "200ms"}, "unit": {"gpucores": 25}}
    scenario = {**SMALL, "horizon": "6h", "pool": pool, "stack": {"data_plane": {"mechanism": "hami"}},
                "workloads": [service]}
    body = assert_error_body(_submit(session_client(architect), scenario), 400, "scenario")
    message = " ".join(body["errors"]["scenario"])
    assert "This run would take about" in message and "800 inference replicas" in message
    assert "whenever an inference service changes (starts, rate steps, OOM kills)" in message
    assert not SimulationRun.objects.exists()


def test_the_stack_page_shows_each_scenarios_estimate_and_the_limit(architect):
    from django.test import Client

    from placement.stacks.services import stacks as rules

    stack = rules.stack_save(user=architect, request_data={"profile": "training"}, rank=1, name="s")
    client = Client()
    client.force_login(architect)
    page = client.get(f"/stacks/{stack.pk}/").content.decode()
    assert "a run estimated over 600 s is refused" in page
    assert "(about &lt; 1 s)" in page
