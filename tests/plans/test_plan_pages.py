"""The plan where a reader finds it: the API, the stack page, the run page, the export source."""

import pytest
from django.urls import reverse

from placement.deploy.services.bundles import stack_export
from placement.evidence.models import SimulationRun
from placement.stacks.models import Stack
from placement.stacks.services.scenario import stack_plan
from placement.stacks.services.stacks import compose_stacks

pytestmark = pytest.mark.django_db

REQUEST = {"workloads": [{"name": "chat", "kind": "online_inference", "replicas": 6, "gpus_per_replica": 0.25,
                          "gpu_memory_gib": 18, "tenants": 2}], "pool": {"gpu_model": "A100-80GB", "gpu_count": 16}}


def _saved() -> Stack:
    chosen = next(s for s in compose_stacks(REQUEST).stacks if s.plan)
    return Stack.objects.create(name=chosen.title, profile="online_inference", request=REQUEST,
                                composition=chosen.model_dump(mode="json"))


def test_the_plan_api_answers_the_stored_plan_with_its_digest(client, reader):
    stack = _saved()
    client.force_login(reader)
    body = client.get(f"/api/v1/stacks/{stack.pk}/plan/").json()
    assert body["digest_hex"] == stack_plan(stack).digest
    assert sum(g["count"] * g["gpus_per_node"] for g in body["node_groups"]) == 16


def test_a_stack_saved_before_plans_is_a_404_saying_why(client, reader):
    stack = _saved()
    stack.composition = {k: v for k, v in stack.composition.items() if k != "plan"}
    stack.save()
    client.force_login(reader)
    response = client.get(f"/api/v1/stacks/{stack.pk}/plan/")
    assert response.status_code == 404 and "saved before plans" in response.content.decode()


def test_the_stack_page_shows_the_plan_and_the_run_page_names_its_digest(client, reader):
    stack = _saved()
    digest = stack_plan(stack).digest
    client.force_login(reader)
    page = client.get(reverse("stack-detail", args=[stack.pk])).content.decode()
    assert f"<code>{digest}</code>" in page and "Queues and quotas" in page
    run = SimulationRun.objects.create(stack=stack, scenario_name=f"plan-{digest}", scenario={}, seed=1, fingerprint="x")
    page = client.get(reverse("run-detail", args=[run.pk])).content.decode()
    assert f"it simulated the stack's plan <code>{digest}</code>" in page


def test_export_without_a_run_renders_the_plan_not_a_builtin_scenario():
    stack = _saved()
    result = stack_export(stack)
    assert result.scenario_name == f"plan-{stack_plan(stack).digest}"
    queues = [o for f in result.export.files for o in f.objects or [] if o.get("kind") in ("Queue", "ClusterQueue")]
    assert sorted(q["metadata"]["name"] for q in queues) == ["chat-team-1", "chat-team-2"]
