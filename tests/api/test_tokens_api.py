"""API tokens: created from a session, read-only unless granted, roles still apply."""

from __future__ import annotations

import copy
import json

import pytest
from django.test import Client
from drf_spectacular.generators import SchemaGenerator
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from placement.access.models import ApiAccess
from placement.catalog.models import Project
from placement.catalog.selectors.catalog import project_document
from placement.decisions.models import DecisionRecord, Webhook
from placement.evidence.models import SimulationRun
from placement.review.models import Revision
from placement.stacks.models import Stack
from tests.api.conftest import assert_error_body, session_client, token_client
from tests.api.test_evidence_api import SCENARIO
from tests.conftest import make_user

pytestmark = pytest.mark.django_db


def kueue_proposal(promise="Governs admission through quotas.") -> dict:
    data = copy.deepcopy(project_document(Project.objects.get(slug="kueue")).model_dump(mode="json"))
    data["placement"]["promise"] = promise
    return {**data, "reason": "Sharper promise"}


def unsafe_operations() -> set[tuple[str, str]]:
    """Every write operation in the live schema, except the POSTs that only read."""
    schema = SchemaGenerator().get_schema(request=None, public=True)
    read_only_posts = {"/api/v1/compare/", "/api/v1/stacks/compose/"}
    return {
        (method.upper(), path)
        for path, operations in schema["paths"].items()
        for method in operations
        if method in ("post", "put", "patch", "delete") and path not in read_only_posts
    }


def valid_write_requests(new_project_data, revision_id: int, decision_id: int = 0) -> dict[tuple[str, str], tuple[str, dict]]:
    decision = {"title": "A decision", "options": [1], "reason": "why"}
    return {
        ("POST", "/api/v1/decisions/"): ("/api/v1/decisions/", decision),
        ("POST", "/api/v1/decisions/{id}/accept/"): (f"/api/v1/decisions/{decision_id}/accept/", {"comment": "ok"}),
        ("POST", "/api/v1/decisions/{id}/reject/"): (f"/api/v1/decisions/{decision_id}/reject/", {"comment": "no"}),
        ("POST", "/api/v1/decisions/{id}/rerun/"): (f"/api/v1/decisions/{decision_id}/rerun/", {}),
        ("POST", "/api/v1/webhooks/"): ("/api/v1/webhooks/", {"name": "h", "url": "https://example.org/h", "events": ["catalog.changed"]}),
        ("POST", "/api/v1/projects/"): ("/api/v1/projects/", {**new_project_data, "reason": "new"}),
        ("POST", "/api/v1/projects/{slug}/revisions/"): ("/api/v1/projects/kueue/revisions/", kueue_proposal()),
        ("POST", "/api/v1/revisions/{id}/accept/"): (f"/api/v1/revisions/{revision_id}/accept/", {"comment": "ok"}),
        ("POST", "/api/v1/revisions/{id}/reject/"): (f"/api/v1/revisions/{revision_id}/reject/", {"comment": "no"}),
        ("POST", "/api/v1/revisions/{id}/rebase/"): (f"/api/v1/revisions/{revision_id}/rebase/", {}),
        ("POST", "/api/v1/stacks/"): ("/api/v1/stacks/", {"request": {"profile": "training"}, "rank": 1}),
        ("POST", "/api/v1/simulations/"): ("/api/v1/simulations/", {"scenario": SCENARIO}),
        ("POST", "/api/v1/stacks/evaluate/"): ("/api/v1/stacks/evaluate/", {"request": {"profile": "training"}, "top": 1}),
        ("POST", "/api/v1/tokens/"): ("/api/v1/tokens/", {}),
        ("POST", "/api/v1/tokens/grants/"): ("/api/v1/tokens/grants/", {"username": "rita", "can_write": True}),
    }


def state() -> tuple:
    return (
        Project.objects.count(),
        list(Revision.objects.order_by("pk").values_list("pk", "status")),
        Stack.objects.count(),
        SimulationRun.objects.count(),
        list(ApiAccess.objects.values_list("user_id", "token_can_write")),
        list(Token.objects.values_list("key", flat=True)),
        list(DecisionRecord.objects.values_list("pk", "status")),
        Webhook.objects.count(),
    )


@pytest.mark.parametrize("granted", [False, True], ids=["read-only token", "token granted writing"])
def test_a_reader_token_cannot_write_through_any_endpoint(reader, architect, new_project_data, granted):
    revision_id = session_client(architect).post("/api/v1/projects/kueue/revisions/", kueue_proposal(), format="json").json()["id"]
    client = token_client(reader, can_write=granted)
    decision_id = DecisionRecord.objects.create(title="Pool training", reason="board", author=architect).pk
    requests = valid_write_requests(new_project_data, revision_id, decision_id)
    assert set(requests) == unsafe_operations(), "a new write endpoint needs a case here"
    before = state()
    for (method, _), (url, body) in requests.items():
        assert_error_body(client.generic(method, url, data=json.dumps(body), content_type="application/json"), 403)
    assert state() == before


def test_an_architect_token_without_a_grant_cannot_propose(architect):
    body = assert_error_body(
        token_client(architect).post("/api/v1/projects/kueue/revisions/", kueue_proposal(), format="json"), 403
    )
    assert "read-only" in body["detail"]
    assert not Revision.objects.filter(author=architect).exists()
    # reading with it is fine
    assert token_client(architect).get("/api/v1/projects/kueue/").status_code == 200


def test_an_architect_token_with_a_grant_proposes_but_cannot_accept_its_own_proposal(architect):
    client = token_client(architect, can_write=True)
    response = client.post("/api/v1/projects/kueue/revisions/", kueue_proposal(), format="json")
    assert response.status_code == 201, response.content
    revision_id = response.json()["id"]
    assert_error_body(client.post(f"/api/v1/revisions/{revision_id}/accept/", {"comment": "mine"}, format="json"), 403)
    assert Revision.objects.get(pk=revision_id).status == Revision.PROPOSED


def test_a_session_user_creates_and_rotates_a_token_and_the_old_key_stops_working(architect):
    client = session_client(architect)
    first = client.post("/api/v1/tokens/")
    assert first.status_code == 201 and first.json()["can_write"] is False and first.json()["username"] == "arch"
    second = client.post("/api/v1/tokens/").json()
    assert second["token"] != first.json()["token"]
    old = APIClient()
    old.credentials(HTTP_AUTHORIZATION=f"Token {first.json()['token']}")
    assert_error_body(old.get("/api/v1/projects/"), 401)
    new = APIClient()
    new.credentials(HTTP_AUTHORIZATION=f"Token {second['token']}")
    status = new.get("/api/v1/tokens/").json()
    assert status == {"username": "arch", "has_token": True, "created": status["created"], "can_write": False}


def test_a_token_cannot_mint_tokens_and_the_session_needs_its_csrf_token(architect):
    assert_error_body(token_client(architect, can_write=True).post("/api/v1/tokens/"), 403)
    key = Token.objects.get(user=architect).key
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(architect)
    assert_error_body(browser.post("/api/v1/tokens/"), 403)
    assert Token.objects.get(user=architect).key == key  # a minted token would have replaced it


@pytest.fixture
def admin_user(db):
    return make_user("boss", is_superuser=True, is_staff=True)


def _grant(client, username: str, can_write: bool = True):
    return client.post("/api/v1/tokens/grants/", {"username": username, "can_write": can_write}, format="json")


def test_admins_grant_writing(admin_user, architect):
    response = _grant(session_client(admin_user), "arch")
    assert response.status_code == 200 and response.json()["granted_by"] == "boss"
    assert ApiAccess.objects.get(user=architect).token_can_write is True
    assert token_client(architect).post("/api/v1/projects/kueue/revisions/", kueue_proposal(), format="json").status_code == 201
    _grant(session_client(admin_user), "arch", False)
    assert_error_body(token_client(architect).post("/api/v1/projects/kueue/revisions/", kueue_proposal("x"), format="json"), 403)
    assert_error_body(_grant(session_client(admin_user), "nobody"), 400, "username")


@pytest.mark.parametrize("via", ["session", "write token"])
def test_a_reviewer_cannot_grant_its_own_token_or_change_anyones_grant(reviewer, architect, admin_user, via):
    client = session_client(reviewer) if via == "session" else token_client(reviewer, can_write=True)
    ApiAccess.objects.update_or_create(user=architect, defaults={"token_can_write": True})
    before = ApiAccess.objects.filter(user=reviewer).first()
    assert_error_body(_grant(client, "rev"), 403)
    assert_error_body(_grant(client, "arch", False), 403)
    assert_error_body(_grant(client, "boss"), 403)
    assert ApiAccess.objects.get(user=architect).token_can_write is True
    assert (ApiAccess.objects.filter(user=reviewer).first() or before) == before
    assert not ApiAccess.objects.filter(user=admin_user).exists()
    assert_error_body(_grant(session_client(architect), "arch"), 403)


def test_nobody_grants_their_own_token_not_even_an_admin(admin_user):
    body = assert_error_body(_grant(session_client(admin_user), "boss"), 403)
    assert "own token" in body["detail"]
    assert not ApiAccess.objects.filter(user=admin_user).exists()


def test_every_grant_is_in_the_audit_history(admin_user, architect, reader):
    from placement.access.selectors import grant_history

    admin = session_client(admin_user)
    _grant(admin, "arch")
    _grant(admin, "rita")
    _grant(admin, "arch", False)
    history = list(grant_history())
    assert [(e.user.username, e.get_change_message()) for e in history] == [
        ("boss", "token writing withdrawn for arch (was write)"),
        ("boss", "token writing granted for rita (was read-only)"),
        ("boss", "token writing granted for arch (was read-only)"),
    ]
    assert len(grant_history(username="arch")) == 2


def test_anonymous_writes_are_401(api):
    assert_error_body(api.post("/api/v1/stacks/", {"request": {"profile": "training"}, "rank": 1}, format="json"), 401)
