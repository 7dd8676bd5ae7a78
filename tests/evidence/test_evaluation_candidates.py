"""An evidence ranking keeps its candidates as an evaluation, not as saved stacks (issue 36, Build
item 3): the saved-stack list shows only what people saved; a person saves one candidate from the
evaluation page (its plan and run come along); the page and the API keep their shape."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from placement.evidence.models import SimulationRun, Sweep
from placement.evidence.services.runs import simulation_execute
from placement.stacks.models import Stack
from placement.stacks.services import stacks as rules_services
from tests.api.conftest import session_client

pytestmark = pytest.mark.django_db

REQUEST = {"workloads": [{"name": "chat", "kind": "online_inference", "replicas": 8, "gpus_per_replica": 0.25,
                          "gpu_memory_gib": 12, "p99_ms": 150, "tenants": 2}],
           "pool": {"gpu_model": "A100-80GB", "gpu_count": 8}}
ROW_KEYS = {"stack_id", "title", "rules_rank", "rules_score", "run_id", "status", "progress", "error", "figures", "p99_target_ms"}
TOP_KEYS = {"id", "name", "title", "scenario", "finished", "progress", "stacks", "winner", "stack_ids", "run_ids",
            "metrics_order", "definitions"}


def _evaluate(architect, capture, top=3) -> dict:
    client = session_client(architect)
    with capture():
        response = client.post("/api/v1/stacks/evaluate/", {"request": REQUEST, "top": top}, format="json")
    assert response.status_code == 202, response.content
    for run in SimulationRun.objects.filter(sweep_id=response.json()["id"]):
        simulation_execute(run.pk)
    return response.json()


def test_an_evaluation_leaves_the_saved_stack_list_unchanged(client, architect, django_capture_on_commit_callbacks):
    mine = rules_services.stack_save(user=architect, request_data=REQUEST, rank=1, name="My own stack")
    client.force_login(architect)
    before = client.get(reverse("stack-list")).content.decode()
    body = _evaluate(architect, django_capture_on_commit_callbacks)
    assert list(Stack.objects.values_list("pk", flat=True)) == [mine.pk], "no stack saved behind the person's back"
    after = client.get(reverse("stack-list")).content.decode()
    assert re.findall(r'href="/stacks/(\d+)/"', after) == re.findall(r'href="/stacks/(\d+)/"', before) == [str(mine.pk)]
    assert session_client(architect).get("/api/v1/stacks/").json()["count"] == 1
    # the candidates are the evaluation's, each with its composition (plan included) and its run
    from placement.evidence.models import EvaluationCandidate

    candidates = list(EvaluationCandidate.objects.filter(sweep_id=body["id"]))
    assert [c.rank for c in candidates] == [1, 2, 3]
    assert all(c.composition["plan"] and c.run and c.run.sweep_id == body["id"] for c in candidates)
    assert Sweep.objects.get(pk=body["id"]).request["workloads"][0]["name"] == "chat"


def test_the_ranking_keeps_its_shape_with_runs_linked_and_no_stack_saved(architect, django_capture_on_commit_callbacks):
    body = _evaluate(architect, django_capture_on_commit_callbacks)
    result = session_client(architect).get(body["status_url"]).json()
    assert TOP_KEYS <= set(result) and result["finished"] is True
    assert all(ROW_KEYS <= set(row) for row in result["stacks"])
    assert [r["stack_id"] for r in result["stacks"]] == [None] * 3 and result["stack_ids"] == []
    assert sorted(result["run_ids"]) == sorted(SimulationRun.objects.filter(sweep_id=body["id"]).values_list("pk", flat=True))
    assert all(r["status"] == "succeeded" and r["figures"] for r in result["stacks"])
    assert result["winner"]["evidence_rank"] == 1 and result["stacks"][0] is not None


def test_a_person_saves_one_candidate_from_the_evaluation_page(client, architect, django_capture_on_commit_callbacks):
    from placement.evidence.models import EvaluationCandidate

    body = _evaluate(architect, django_capture_on_commit_callbacks)
    client.force_login(architect)
    url = reverse("evaluation-detail", args=[body["id"]])
    page = client.get(url).content.decode()
    assert page.count('<button type="submit">Save as stack</button>') == 3
    candidate = EvaluationCandidate.objects.get(sweep_id=body["id"], rank=2)
    response = client.post(reverse("evaluation-candidate-save", args=[body["id"]]), {"rank": "2", "name": "Chat on shares"})
    stack = Stack.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("stack-detail", args=[stack.pk])
    assert stack.name == "Chat on shares" and stack.created_by == architect
    assert stack.composition == candidate.composition and stack.request["workloads"][0]["name"] == "chat"
    assert list(stack.runs.values_list("pk", flat=True)) == [candidate.run_id], "its run is the saved stack's evidence"
    # saving again is the same stack; the page now links it
    client.post(reverse("evaluation-candidate-save", args=[body["id"]]), {"rank": "2"})
    assert Stack.objects.count() == 1
    page = client.get(url).content.decode()
    assert f'href="/stacks/{stack.pk}/">saved</a>' in page and page.count("Save as stack</button>") == 2
    assert session_client(architect).get(body["status_url"]).json()["stack_ids"] == [stack.pk]
    # deleting the saved stack leaves the ranking its run
    rules_services.stack_delete(stack, user=architect)
    candidate.refresh_from_db()
    assert candidate.run is not None and candidate.run.stack_id is None
    assert all(r["status"] == "succeeded" for r in session_client(architect).get(body["status_url"]).json()["stacks"])


def test_recording_a_decision_saves_the_ranked_stacks_as_its_options(client, architect, django_capture_on_commit_callbacks):
    body = _evaluate(architect, django_capture_on_commit_callbacks, top=2)
    client.force_login(architect)
    response = client.post(reverse("evaluation-decide", args=[body["id"]]))
    assert response.status_code == 302 and response["Location"].startswith(reverse("decision-create") + "?options=")
    stacks = list(Stack.objects.order_by("pk"))
    assert len(stacks) == 2 and all(s.runs.count() == 1 for s in stacks)
    form = client.get(response["Location"]).content.decode()
    for s in stacks:
        assert re.search(rf'value="{s.pk}"[^>]*checked', form), "each saved candidate is a ticked option"
    for run in SimulationRun.objects.filter(sweep_id=body["id"]):
        assert re.search(rf'value="{run.pk}"[^>]*checked', form), "each run is ticked evidence"


def test_a_reader_sees_the_ranking_without_save_buttons(client, reader, architect, django_capture_on_commit_callbacks):
    body = _evaluate(architect, django_capture_on_commit_callbacks, top=1)
    client.force_login(reader)
    page = client.get(reverse("evaluation-detail", args=[body["id"]])).content.decode()
    assert "Evidence winner:" in page and "Save as stack" not in page
    assert client.post(reverse("evaluation-candidate-save", args=[body["id"]]), {"rank": "1"}).status_code == 403
    assert not Stack.objects.exists()
