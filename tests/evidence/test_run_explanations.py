"""A stored run says why workloads wait and what the schedulers did: in the API and on the run page."""

import pytest

from placement.evidence.models import SimulationRun
from placement.evidence.services import runs as evidence
from tests.api.conftest import session_client

pytestmark = pytest.mark.django_db

# One 8-GPU node, a 6-GPU job for the whole horizon, a 4-GPU job that can never fit, two that preempt nothing.
SCENARIO = {
    "name": "why-test",
    "horizon": "2h",
    "pool": {"node_groups": [{"name": "dgx", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8}]},
    "workloads": [
        {"kind": "batch", "name": "hog", "gpus_per_worker": 6, "duration": "4h"},
        {"kind": "batch", "name": "late", "gpus_per_worker": 4, "duration": "1h", "arrival": {"at": 60}},
    ],
}
REASON = "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."


def _run(user, capture) -> SimulationRun:
    with capture(execute=True):
        run, _ = evidence.simulation_start(user=user, stack=None, scenario_document=SCENARIO)
    run.refresh_from_db()
    assert run.status == SimulationRun.SUCCEEDED, run.error
    return run


def test_the_api_returns_pending_reasons_and_the_event_log(architect, django_capture_on_commit_callbacks):
    run = _run(architect, django_capture_on_commit_callbacks)
    body = session_client(architect).get(f"/api/v1/simulations/{run.pk}/").json()
    assert body["metrics"]["pending"]["by_reason"] == [{"reason": REASON, "workloads": 1}]
    assert [(e["kind"], e["workload"]) for e in body["metrics"]["events"]["entries"]] == [("bind", "hog")]


def test_the_run_page_shows_why_and_a_timeline_filterable_by_kind(client, architect, django_capture_on_commit_callbacks):
    run = _run(architect, django_capture_on_commit_callbacks)
    client.force_login(architect)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert REASON in page and "1 pod(s): dgx-0 x1" in page
    filtered = client.get(f"/runs/{run.pk}/?kind=preempt").content.decode()
    assert "1 pod(s): dgx-0 x1" not in filtered  # no preemption happened: the bind row is filtered out
