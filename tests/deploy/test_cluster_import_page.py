"""Import as its own page: a cluster snapshot in, a scenario out (read, downloaded, simulated as found
or under a saved stack); it says when the snapshot carries no traffic and what a run can tell, and
swapped files are named in one line."""

from pathlib import Path

import pytest
import yaml
from django.core.files.uploadedfile import SimpleUploadedFile

from placement.evidence.models import SimulationRun
from placement.stacks.models import Stack

pytestmark = pytest.mark.django_db

SAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "clusters" / "sample"


def _files(nodes="nodes", pods="pods", queues="queues") -> dict:
    files = {"nodes_file": SimpleUploadedFile("nodes.json", (SAMPLE / f"{nodes}.json").read_bytes()),
             "pods_file": SimpleUploadedFile("pods.json", (SAMPLE / f"{pods}.json").read_bytes())}
    if queues:
        files["queues_file"] = SimpleUploadedFile("queues.json", (SAMPLE / f"{queues}.json").read_bytes())
    return files


def test_import_is_in_the_menu_and_has_its_own_page(client):
    assert 'href="/import/">Import</a>' in client.get("/").content.decode()
    page = client.get("/import/").content.decode()
    assert "<h1>Import a cluster</h1>" in page and 'name="nodes_file"' in page


def test_reading_a_snapshot_shows_its_shape_and_says_it_has_no_traffic(client):
    response = client.post("/import/", {**_files(), "action": "preview"})
    page = response.content.decode()
    assert response.status_code == 200
    assert "10 GPU nodes (72 GPUs) in 3 groups" in page
    assert "all-2g.20gb" in page and "team-product-ranker" in page
    assert "<strong>No traffic:</strong>" in page and "every job holds its GPUs for the whole horizon" in page
    assert SimulationRun.objects.count() == 0, "reading writes nothing"


def test_swapped_files_are_named_in_one_line(client):
    response = client.post("/import/", {**_files(nodes="pods", pods="nodes", queues=None), "action": "preview"})
    page = response.content.decode()
    assert response.status_code == 400
    errors = page.split("<h2>Nothing was imported</h2>", 1)[1].split("</ul>", 1)[0]
    assert errors.count("<li>") == 1 and "swapped" in errors


def test_the_scenario_downloads_as_yaml(client):
    response = client.post("/import/", {**_files(), "action": "download", "name": "prod-east"})
    assert response["Content-Disposition"] == 'attachment; filename="prod-east.yaml"'
    document = yaml.safe_load(response.content)
    assert document["name"] == "prod-east" and len(document["pool"]["node_groups"]) == 3


def test_simulating_as_found_or_under_a_saved_stack(client, architect):
    client.force_login(architect)
    response = client.post("/import/", {**_files(), "action": "simulate"})
    assert response.status_code == 302
    run = SimulationRun.objects.get()
    assert run.stack is None and response["Location"] == f"/runs/{run.pk}/"
    stack = Stack.objects.create(name="Whole GPUs + Kueue", profile="training", created_by=architect,
                                 request={"profile": "training"}, composition={"components": ["kueue"]})
    client.post("/import/", {**_files(), "action": "simulate", "stack": str(stack.pk)})
    assert SimulationRun.objects.filter(stack=stack).count() == 1


def test_a_reader_cannot_start_a_simulation_from_the_import_page(client, reader):
    client.force_login(reader)
    response = client.post("/import/", {**_files(), "action": "simulate"})
    assert response.status_code == 400 and "needs an architect or reviewer login" in response.content.decode()
    assert SimulationRun.objects.count() == 0
