"""A browser session is a credential a third-party page can ride on: every API write made with a
session needs its CSRF token, not only the token endpoint."""

import copy

import pytest
from rest_framework.test import APIClient

from placement.catalog.models import Project
from placement.catalog.schemas import ProjectDocument
from placement.catalog.selectors.catalog import project_document
from placement.review import services as review
from placement.review.models import Revision
from tests.api.conftest import assert_error_body

pytestmark = pytest.mark.django_db


def _proposal(promise: str) -> dict:
    data = copy.deepcopy(project_document(Project.objects.get(slug="kueue")).model_dump(mode="json"))
    data["placement"]["promise"] = promise
    return {**data, "reason": "Sharper promise"}


def _browser(user) -> tuple[APIClient, str]:
    """A logged-in client that checks CSRF as a real browser session does, and its CSRF token."""
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)
    assert client.get("/projects/new/").status_code == 200  # the page sets the csrftoken cookie
    return client, client.cookies["csrftoken"].value


def test_a_session_proposal_without_the_csrf_token_is_refused_and_writes_nothing(architect):
    client, token = _browser(architect)
    before = Revision.objects.count()
    body = assert_error_body(client.post("/api/v1/projects/kueue/revisions/", _proposal("No token."), format="json"), 403)
    assert "CSRF" in body["detail"]
    assert Revision.objects.count() == before
    ok = client.post("/api/v1/projects/kueue/revisions/", _proposal("With token."), format="json", HTTP_X_CSRFTOKEN=token)
    assert ok.status_code == 201, ok.content  # the refusal above was the missing token, nothing else


def test_a_session_review_decision_without_the_csrf_token_is_refused(architect, reviewer):
    revision = review.revision_propose(
        Project.objects.get(slug="kueue"),
        ProjectDocument.model_validate({k: v for k, v in _proposal("Pending.").items() if k != "reason"}),
        user=architect,
        reason="pending",
    )
    client, token = _browser(reviewer)
    assert_error_body(client.post(f"/api/v1/revisions/{revision.pk}/accept/", {}, format="json"), 403)
    revision.refresh_from_db()
    assert revision.status == Revision.PROPOSED
    ok = client.post(f"/api/v1/revisions/{revision.pk}/accept/", {}, format="json", HTTP_X_CSRFTOKEN=token)
    assert ok.status_code == 200, ok.content
