"""No 500s on malformed input: wrong-typed scenario sections (API and page upload), absurd nesting,
OPTIONS on the POST-only rules endpoints, and the one JSON error body for 413 and 500 too."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from placement.evidence.models import SimulationRun
from placement.stacks.services import stacks as rules
from tests.api.conftest import assert_error_body, session_client

pytestmark = pytest.mark.django_db

BASE = {
    "name": "malformed",
    "horizon": 600,
    "pool": {"node_groups": [{"name": "a", "count": 1}]},
    "workloads": [{"kind": "training", "name": "t", "duration": 60}],
}
WRONG_TYPES = [
    ({"workloads": [1]}, "scenario.workloads.0"),
    ({"tenants": ["x"]}, "scenario.tenants.0"),
    ({"pool": []}, "scenario.pool"),
    ({"pool": {"node_groups": 5}}, "scenario.pool.node_groups"),
    ({"stack": "x"}, "scenario.stack"),
]


@pytest.fixture
def stack(architect):
    return rules.stack_save(user=architect, request_data={"profile": "training"}, rank=1, name="s")


@pytest.mark.parametrize("with_stack", [False, True], ids=["scenario-alone", "on-a-stack"])
@pytest.mark.parametrize(("change", "field"), WRONG_TYPES, ids=[f for _, f in WRONG_TYPES])
def test_a_wrong_typed_scenario_section_is_a_400_naming_it(architect, stack, change, field, with_stack):
    body = {"scenario": {**BASE, **change}, **({"stack": stack.pk} if with_stack else {})}
    response = session_client(architect).post("/api/v1/simulations/", body, format="json")
    assert_error_body(response, 400, field)
    assert not SimulationRun.objects.exists()


@pytest.mark.parametrize(("change", "field"), WRONG_TYPES, ids=[f for _, f in WRONG_TYPES])
def test_a_wrong_typed_scenario_upload_on_the_stack_page_says_what_is_wrong(architect, stack, change, field):
    client = Client()
    client.force_login(architect)
    upload = SimpleUploadedFile("s.json", json.dumps({**BASE, **change}).encode(), content_type="application/json")
    response = client.post(f"/stacks/{stack.pk}/simulate/", {"scenario_file": upload}, follow=True)
    assert response.status_code == 200
    text = response.content.decode()
    assert "Nothing was queued." in text and field in text
    assert not SimulationRun.objects.exists()


def test_a_scenario_nested_100000_deep_is_a_clear_error_on_the_api_and_the_page(architect, stack):
    deep = "[" * 100_000 + "]" * 100_000
    response = session_client(architect).generic(
        "POST", "/api/v1/simulations/", f'{{"scenario": {deep}}}', content_type="application/json")
    body = assert_error_body(response, 400)
    assert "nested too deeply" in body["detail"]
    client = Client()
    client.force_login(architect)
    for name, text in (("deep.json", deep), ("deep.yaml", "a: " + deep)):
        upload = SimpleUploadedFile(name, text.encode(), content_type="application/octet-stream")
        page = client.post(f"/stacks/{stack.pk}/simulate/", {"scenario_file": upload}, follow=True)
        assert page.status_code == 200 and "nested too deeply" in page.content.decode()
    assert not SimulationRun.objects.exists()


@pytest.mark.parametrize("path", ["/api/v1/compare/", "/api/v1/stacks/compose/", "/api/v1/stacks/compatible/",
                                  "/api/v1/misuse/", "/api/v1/simulations/"])
def test_options_describes_every_endpoint(architect, path):
    response = session_client(architect).options(path)
    assert response.status_code == 200, response.content[:300]
    assert response.json()["name"]


def test_a_body_over_the_upload_limit_is_a_413_with_the_json_error_body(architect, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    client = Client(raise_request_exception=False)
    client.force_login(architect)
    response = client.post("/api/v1/compare/", json.dumps({"projects": ["x" * 100] * 200}), content_type="application/json")
    body = assert_error_body(response, 413)
    assert "at most 10,000 bytes" in body["detail"]


def test_an_unexpected_server_error_is_a_500_with_the_json_error_body(architect, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("database on fire")

    monkeypatch.setattr(rules, "compare_projects", broken)
    client = Client(raise_request_exception=False)
    client.force_login(architect)
    response = client.post("/api/v1/compare/", {"slugs": ["kueue", "volcano"]}, content_type="application/json")
    body = assert_error_body(response, 500)
    assert "database on fire" not in response.content.decode()
    assert body["detail"].startswith("Server error.")
