"""What a review board needs beside the catalog: two projects' templates side by side, the diff of
two saved stacks, the way from a ranked stack to its evidence, one search box in the header, and a
page to create an API token (writing granted only by an admin)."""

import re

import pytest
from rest_framework.authtoken.models import Token

from placement.access.models import ApiAccess
from placement.evidence.models import SimulationRun
from placement.stacks.services import stacks as rules_services
from tests.conftest import make_user

pytestmark = pytest.mark.django_db

TRAINING = {"profile": "training", "pool": {"gpu_model": "A100-80GB", "gpu_count": 32}, "constraints": {}}
INFERENCE = {"profile": "online_inference", "pool": {"gpu_model": "A100-80GB", "gpu_count": 32}, "constraints": {}}


def test_two_templates_side_by_side_mark_the_fields_that_differ(client):
    html = client.get("/projects/side-by-side/?slugs=hami&slugs=volcano").content.decode()
    assert "HAMi" in html and "Volcano" in html
    for label in ("Summary", "Promise", "Resource units", "Costs: overhead", "Contract points", "Sources", "Placement: Five-layer control-plane map"):
        assert f"<th scope=\"row\">{label}" in html, label
    assert 'class="differs"' in html
    assert "Memory quota + compute share" in html  # labels, not internal values
    only = client.get("/projects/side-by-side/?slugs=hami&slugs=volcano&differences=1").content.decode()
    assert only.count("<tr") < html.count("<tr")
    assert 'Read their templates side by side' in client.get("/compare/?slugs=hami&slugs=volcano").content.decode()


def test_side_by_side_with_nothing_chosen_shows_an_example_pair_and_a_choice(client):
    html = client.get("/projects/side-by-side/").content.decode()
    assert "An example (pick your own above)" in html and 'class="differs"' in html
    assert html.count('<select id="sbs-') == 3
    assert "Pick two projects" in client.get("/projects/side-by-side/?slugs=hami").content.decode()


def test_diff_of_two_saved_stacks_names_the_slots_and_contracts_that_differ(client, architect):
    a = rules_services.stack_save(user=architect, request_data=TRAINING, rank=1, name="Training")
    b = rules_services.stack_save(user=architect, request_data=INFERENCE, rank=1, name="Inference")
    html = client.get(f"/stacks/diff/?a={a.pk}&b={b.pk}").content.decode()
    assert "Training" in html and "Inference" in html
    assert "Only in B:" in html and "hami" in html
    changed = re.findall(r'<tr class="changed"><th scope="row">([^<]+)', html)
    assert any(row.startswith("device_handoff") for row in changed), changed
    assert any(row.startswith(("Advertise", "Bind", "Allocate")) for row in changed), changed
    # With no query it diffs the two most recent stacks rather than showing nothing.
    assert "Only in" in client.get("/stacks/diff/").content.decode()
    assert f"/stacks/diff/?a={a.pk}" in client.get(f"/stacks/{a.pk}/").content.decode()


def test_a_ranked_stack_links_to_the_evidence_of_the_same_saved_stack(client, architect, django_capture_on_commit_callbacks):
    from placement.evidence.services import runs as evidence
    from tests.evidence.scenarios import batch_scenario

    saved = rules_services.stack_save(user=architect, request_data=TRAINING, rank=1, name="Our training stack")
    with django_capture_on_commit_callbacks(execute=True):
        run, _ = evidence.simulation_start(user=architect, stack=saved, scenario_document=batch_scenario(40))
    assert SimulationRun.objects.get(pk=run.pk).status == SimulationRun.SUCCEEDED
    html = client.get("/compose/", {"profile": "training", "gpu_model": "A100-80GB", "gpu_count": "32"}).content.decode()
    cards = html.split('class="stack-card"')[1:]
    assert f'href="/stacks/{saved.pk}/#evidence">Our training stack</a> (1 run' in cards[0]
    assert f'href="/runs/{run.pk}/"' in cards[0]
    assert "none saved yet" in cards[1]


def test_the_header_search_finds_projects_capabilities_and_stacks(client, architect):
    rules_services.stack_save(user=architect, request_data=TRAINING, rank=1, name="Gang training")
    home = client.get("/").content.decode()
    assert 'role="search"' in home and 'action="/search/"' in home
    html = client.get("/search/?q=gang").content.decode()
    assert 'href="/projects/volcano/"' in html
    assert "Gang scheduling" in html or "gang-scheduling" in html
    assert "Gang training" in html
    assert "0 results" in client.get("/search/?q=zzzz-nothing").content.decode()
    assert "Every word must match" in client.get("/search/").content.decode()


def test_a_user_creates_a_token_on_a_page_and_sees_it_once(client, architect):
    client.force_login(architect)
    page = client.get("/account/token/").content.decode()
    assert "none yet" in page and "read-only" in page and "Grant or withdraw writing" not in page
    created = client.post("/account/token/", {"action": "rotate"}).content.decode()
    key = Token.objects.get(user=architect).key
    assert key in created
    assert key not in client.get("/account/token/").content.decode()  # shown only once
    assert client.get("/api/v1/projects/?limit=1", HTTP_AUTHORIZATION=f"Token {key}").status_code == 200


def test_only_an_admin_grants_writing_from_the_token_page(client, architect, reviewer):
    client.force_login(reviewer)
    refused = client.post("/account/token/", {"action": "grant", "username": architect.username, "can_write": "1"}, follow=True)
    assert "Only admins grant writing" in refused.content.decode()
    assert not ApiAccess.objects.filter(user=architect, token_can_write=True).exists()
    admin = make_user("root", is_superuser=True, is_staff=True)
    client.force_login(admin)
    assert "Grant or withdraw writing" in client.get("/account/token/").content.decode()
    response = client.post("/account/token/", {"action": "grant", "username": architect.username, "can_write": "1"}, follow=True)
    assert f"The token of {architect.username} may now write" in response.content.decode()
    assert ApiAccess.objects.get(user=architect).token_can_write
    unknown = client.post("/account/token/", {"action": "grant", "username": "nobody", "can_write": "1"}, follow=True)
    assert "No user" in unknown.content.decode()


def test_the_token_page_needs_a_login(client):
    response = client.get("/account/token/")
    assert response.status_code == 302 and "/login/" in response["Location"]
