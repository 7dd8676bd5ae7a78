"""Teams declared once on the compose page (issue 36, Build item 1), followed from the form to the
saved stack's plan, the API and the deploy bundle's Kueue queues."""

import html
import io
import zipfile

import pytest
import yaml
from django.urls import reverse

from placement.stacks.models import Stack
from tests.api.conftest import session_client

pytestmark = pytest.mark.django_db
TEAMS = ["vision", "nlp", "speech", "platform"]
ROWS = {"w1-name": "train", "w1-kind": "training", "w1-replicas": "4", "w1-gpus_per_replica": "2", "w1-gpu_memory_gib": "60",
        "w1-gang": "on", "w2-name": "chat", "w2-kind": "online_inference", "w2-replicas": "8", "w2-gpus_per_replica": "0.25",
        "w2-gpu_memory_gib": "18", "w2-p99_ms": "200"}


def _compose(client, **extra):
    params = {"gpu_model": "A100-80GB", "gpu_count": "32", "require": "kueue", **ROWS, **extra}
    return client.get("/compose/", params).content.decode()


def test_four_teams_entered_once_share_every_class_from_the_form_to_the_bundle(client, architect):
    page = _compose(client, tenants="Vision, nlp, speech, platform")
    assert 'name="tenants"' in page.split('<fieldset class="workload-classes">', 1)[1], "the field sits with the classes"
    assert "Teams vision, nlp, speech, platform submit every class" in page
    assert "-team-" not in page, "no invented team names"
    request_json = html.unescape(page.split('name="request" value="', 1)[1].split('"', 1)[0])
    assert '"tenants": ["vision", "nlp", "speech", "platform"]' in request_json

    client.force_login(architect)
    response = client.post(reverse("stack-save"), {"request": request_json, "rank": "1", "name": "shared teams"})
    assert response.status_code == 302, response.content
    stack = Stack.objects.get(name="shared teams")
    assert [q["name"] for q in stack.composition["plan"]["queues"]] == TEAMS
    detail = client.get(reverse("stack-detail", args=[stack.pk])).content.decode()
    for team in TEAMS:
        assert f"<td>{team}</td>" in detail, team

    archive = zipfile.ZipFile(io.BytesIO(client.get(reverse("stack-deploy-zip", args=[stack.pk])).content))
    local = next(n for n in archive.namelist() if n.endswith("kueue/localqueues.yaml"))
    queues = [o for o in yaml.safe_load_all(archive.read(local)) if o]
    assert sorted((q["metadata"]["namespace"], q["spec"]["clusterQueue"]) for q in queues) == sorted((t, t) for t in TEAMS)


def test_a_class_with_teams_of_its_own_keeps_them_on_the_page(client):
    page = _compose(client, tenants="4", **{"w2-tenants": "web"})
    assert "Teams per class: train: team-1, team-2, team-3, team-4; chat: web." in page


def test_a_bad_team_name_is_said_next_to_the_field_in_words(client):
    page = _compose(client, tenants="vision, nlp_team")
    field = page.split('id="field-tenants"', 1)[1].split("</div>", 1)[0]
    assert "lowercase letters, digits and dashes" in field and "nlp_team" in field
    cell = _compose(client, **{"w2-tenants": "web!"}).split('name="w2-tenants"', 1)[1].split("</td>", 1)[0]
    assert "lowercase letters, digits and dashes" in cell


def test_the_api_takes_teams_once_and_per_class_numbers_as_before(architect):
    client = session_client(architect)
    body = {"tenants": TEAMS, "workloads": [{"name": "chat", "kind": "online_inference", "replicas": 8, "gpus_per_replica": 0.25,
                                             "gpu_memory_gib": 18},
                                            {"name": "batch", "kind": "batch_inference", "replicas": 4, "gpus_per_replica": 1,
                                             "gpu_memory_gib": 40, "tenants": 2}]}
    result = client.post("/api/v1/stacks/compose/", body, format="json").json()
    assert [w["tenants"] for w in result["workloads"]] == [TEAMS, 2]
    queues = [q["name"] for q in result["stacks"][0]["plan"]["queues"]]
    assert queues == [*TEAMS, "batch-team-1", "batch-team-2"]
