"""Every parser entry point bounded the same way (issues 39.3 and 37.6): a 20,000-digit integer, a
document that is not UTF-8, a pod asking for 10^9 GPUs and two objects of one name give a clear
error naming the file, where and why on the scenario and cluster uploads (pages) and from the
import_cluster and import_catalog commands (`file: where: reason`): no 500, no traceback, nothing
written."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest
import yaml
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client

from placement.catalog.models import Project
from placement.evidence.models import SimulationRun
from placement.stacks.services import stacks as rules
from tests.api.test_malformed_input import BASE

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "fixtures" / "clusters" / "sample"
HUGE = "9" * 20_000
TOO_LONG = "a number of 20,000 digits; numbers here have at most 64"


@pytest.fixture
def stack(architect):
    return rules.stack_save(user=architect, request_data={"profile": "training"}, rank=1, name="s")


@pytest.fixture
def page(architect):
    client = Client()
    client.force_login(architect)
    return client


def _sample(name: str) -> dict:
    return json.loads((SAMPLE / f"{name}.json").read_text())


def _upload_cluster(page, stack, nodes: bytes, pods: bytes) -> str:
    response = page.post(f"/stacks/{stack.pk}/simulate-cluster/", {
        "nodes_file": SimpleUploadedFile("nodes.json", nodes),
        "pods_file": SimpleUploadedFile("pods.json", pods),
    }, follow=True)
    assert response.status_code == 200
    return response.content.decode()


def _upload_scenario(page, stack, text: bytes) -> str:
    upload = SimpleUploadedFile("s.yaml", text, content_type="application/octet-stream")
    response = page.post(f"/stacks/{stack.pk}/simulate/", {"scenario_file": upload}, follow=True)
    assert response.status_code == 200
    return response.content.decode()


def _with_huge_resource_version() -> bytes:
    text = (SAMPLE / "nodes.json").read_text()
    return text.replace('"kind": "Node"', f'"kind": "Node", "resourceVersion": {HUGE}', 1).encode()


def test_a_20000_digit_seed_in_a_scenario_upload_is_a_clear_error(page, stack):
    text = _upload_scenario(page, stack, (f"seed: {HUGE}\n" + yaml.safe_dump(BASE)).encode())
    assert "Nothing was queued." in text and "scenario_file: line 1 column 7: " + TOO_LONG in text
    assert not SimulationRun.objects.exists()


def test_a_scenario_upload_that_is_not_utf8_names_the_byte(page, stack):
    text = _upload_scenario(page, stack, b"name: caf\xe9\n")
    assert "scenario_file: not UTF-8 text: byte 0xe9 at offset 9" in text
    assert not SimulationRun.objects.exists()


def test_a_20000_digit_resource_version_in_a_cluster_upload_is_a_clear_error(page, stack):
    text = _upload_cluster(page, stack, _with_huge_resource_version(), (SAMPLE / "pods.json").read_bytes())
    assert "Nothing was imported. nodes_file: items[0]: " + TOO_LONG in text
    assert not SimulationRun.objects.exists()


def test_a_20000_digit_number_in_the_queues_file_of_a_cluster_upload_is_a_clear_error(page, stack):
    queues = (SAMPLE / "queues.json").read_text().replace('"kind": "List"', f'"kind": "List", "resourceVersion": {HUGE}', 1)
    response = page.post(f"/stacks/{stack.pk}/simulate-cluster/", {
        "nodes_file": SimpleUploadedFile("nodes.json", (SAMPLE / "nodes.json").read_bytes()),
        "pods_file": SimpleUploadedFile("pods.json", (SAMPLE / "pods.json").read_bytes()),
        "queues_file": SimpleUploadedFile("queues.json", queues.encode()),
    }, follow=True)
    assert response.status_code == 200
    assert "Nothing was imported. queues_file: (document): " + TOO_LONG in response.content.decode()
    assert not SimulationRun.objects.exists()


def test_lint_catalog_names_the_file_where_and_why_for_a_20000_digit_number(tmp_path, capsys):
    shutil.copytree(ROOT / "fixtures" / "catalog", tmp_path / "catalog")
    path = tmp_path / "catalog" / "aibrix.yaml"
    path.write_text(path.read_text(encoding="utf-8") + f"\nstars: {HUGE}\n", encoding="utf-8")
    with pytest.raises(CommandError):
        call_command("lint_catalog", str(tmp_path / "catalog"))
    err = capsys.readouterr().err
    assert "error: aibrix.yaml: line " in err and TOO_LONG in err


def test_import_cluster_names_the_file_where_and_why_for_a_20000_digit_number(tmp_path):
    nodes = tmp_path / "nodes.json"
    nodes.write_bytes(_with_huge_resource_version())
    with pytest.raises(CommandError) as caught:
        call_command("import_cluster", str(nodes), str(SAMPLE / "pods.json"), "-o", str(tmp_path / "out.yaml"))
    assert f"{nodes}: items[0]: {TOO_LONG}" in str(caught.value)
    assert not (tmp_path / "out.yaml").exists()


def test_import_catalog_names_the_file_where_and_why_for_a_20000_digit_number(tmp_path, capsys):
    shutil.copytree(ROOT / "fixtures" / "catalog", tmp_path / "catalog")
    path = tmp_path / "catalog" / "aibrix.yaml"
    path.write_text(path.read_text(encoding="utf-8") + f"\nstars: {HUGE}\n", encoding="utf-8")
    before = Project.objects.count()
    with pytest.raises(CommandError):
        call_command("import_catalog", str(tmp_path / "catalog"))
    assert "error: aibrix.yaml: line " in capsys.readouterr().err
    assert Project.objects.count() == before


def test_a_pod_asking_for_a_billion_gpus_is_refused_naming_it(page, stack):
    pods = _sample("pods")
    pods["items"][0]["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = "1000000000"
    pods["items"][0]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "1000000000"
    text = _upload_cluster(page, stack, (SAMPLE / "nodes.json").read_bytes(), json.dumps(pods).encode())
    assert "team-research/llm-pretrain-master-0" in text and "1,000,000,000 GPUs" in text
    assert not SimulationRun.objects.exists()


def test_two_nodes_of_one_name_are_refused_with_the_name(page, stack):
    nodes = _sample("nodes")
    twin = copy.deepcopy(nodes["items"][0])
    nodes["items"].append(twin)
    name = twin["metadata"]["name"]
    text = _upload_cluster(page, stack, json.dumps(nodes).encode(), (SAMPLE / "pods.json").read_bytes())
    assert f"duplicate node name &#x27;{name}&#x27;" in text
    assert not SimulationRun.objects.exists()
