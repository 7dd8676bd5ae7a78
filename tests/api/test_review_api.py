"""Proposals through the API: create, propose, list, diff, accept, reject, rebase."""

from __future__ import annotations

import copy

import pytest

from placement.catalog.models import Project
from placement.catalog.selectors.catalog import project_document
from placement.review.models import Revision
from tests.api.conftest import assert_error_body, session_client

pytestmark = pytest.mark.django_db


def kueue_body(promise: str = "Governs admission through quotas.", reason: str = "Sharper promise") -> dict:
    data = copy.deepcopy(project_document(Project.objects.get(slug="kueue")).model_dump(mode="json"))
    data["placement"]["promise"] = promise
    return {**data, "reason": reason}


def test_architect_proposes_a_new_project_which_stays_off_the_list_until_accepted(architect, reviewer, new_project_data):
    response = session_client(architect).post("/api/v1/projects/", {**new_project_data, "reason": "A queue"}, format="json")
    assert response.status_code == 201, response.content
    revision = response.json()
    assert revision["status"] == "proposed" and revision["project"] == "example-queue" and revision["author"] == "arch"
    assert Project.objects.get(slug="example-queue").accepted is False
    listed = session_client(reviewer).get("/api/v1/projects/?limit=200").json()["results"]
    assert "example-queue" not in {r["slug"] for r in listed}

    accepted = session_client(reviewer).post(f"/api/v1/revisions/{revision['id']}/accept/", {"comment": "ok"}, format="json")
    assert accepted.status_code == 200 and accepted.json()["status"] == "accepted"
    detail = session_client(reviewer).get("/api/v1/projects/example-queue/").json()
    assert detail["accepted"] is True and detail["version"] == 1


def test_a_template_error_is_a_400_naming_the_nested_field(architect, new_project_data):
    data = copy.deepcopy(new_project_data)
    data["placement"]["sources"][0]["url"] = "not a url"
    data["surprise"] = 1
    client = session_client(architect)
    body = assert_error_body(client.post("/api/v1/projects/", data, format="json"), 400)
    assert "placement.sources[0].url" in body["errors"] and "surprise" in body["errors"]
    # the vocabulary (maps, layers, capabilities) is checked against the database's catalog
    data = copy.deepcopy(new_project_data)
    data["placement"]["maps"]["control-plane"]["primary"] = "L9"
    body = assert_error_body(client.post("/api/v1/projects/", data, format="json"), 400, "placement")
    assert any("L9" in m for m in body["errors"]["placement"])
    assert not Project.objects.filter(slug="example-queue").exists()


def test_an_existing_slug_cannot_be_created_again(architect, kueue_data):
    assert_error_body(
        session_client(architect).post("/api/v1/projects/", {**kueue_data, "reason": "again"}, format="json"), 400, "slug"
    )


def test_a_homepage_longer_than_the_column_is_a_400_not_a_500(architect, new_project_data):
    data = {**new_project_data, "homepage": "https://example.org/" + "a" * 600, "reason": "x"}
    assert_error_body(session_client(architect).post("/api/v1/projects/", data, format="json"), 400, "homepage")


def test_proposing_a_change_needs_a_reason_and_shows_a_diff(architect):
    client = session_client(architect)
    assert_error_body(client.post("/api/v1/projects/kueue/revisions/", kueue_body(reason="  "), format="json"), 400, "reason")
    response = client.post("/api/v1/projects/kueue/revisions/", kueue_body(), format="json")
    assert response.status_code == 201
    revision_id = response.json()["id"]
    detail = client.get(f"/api/v1/revisions/{revision_id}/").json()
    assert detail["document"]["placement"]["promise"] == "Governs admission through quotas."
    assert {"path": "placement.promise", "kind": "changed"}.items() <= next(
        c for c in detail["diff"] if c["path"] == "placement.promise"
    ).items()
    history = client.get("/api/v1/projects/kueue/revisions/").json()["results"]
    assert history[0]["id"] == revision_id and history[0]["status"] == "proposed"
    queue = client.get("/api/v1/revisions/?status=proposed").json()["results"]
    assert [r["id"] for r in queue] == [revision_id]


def test_the_slug_of_an_existing_project_cannot_change_by_proposal(architect):
    body = {**kueue_body(), "slug": "kueue-two"}
    assert_error_body(session_client(architect).post("/api/v1/projects/kueue/revisions/", body, format="json"), 400, "slug")


def test_reject_needs_a_comment_and_keeps_the_project(architect, reviewer):
    revision_id = session_client(architect).post("/api/v1/projects/kueue/revisions/", kueue_body("Nope."), format="json").json()["id"]
    client = session_client(reviewer)
    assert_error_body(client.post(f"/api/v1/revisions/{revision_id}/reject/", {}, format="json"), 400, "comment")
    response = client.post(f"/api/v1/revisions/{revision_id}/reject/", {"comment": "Not accurate"}, format="json")
    assert response.status_code == 200 and response.json()["status"] == "rejected"
    assert response.json()["review_comment"] == "Not accurate"
    assert Project.objects.get(slug="kueue").placement["promise"] != "Nope."


def test_architect_cannot_accept_through_the_api(architect):
    revision_id = session_client(architect).post("/api/v1/projects/kueue/revisions/", kueue_body(), format="json").json()["id"]
    assert_error_body(session_client(architect).post(f"/api/v1/revisions/{revision_id}/accept/", {}, format="json"), 403)
    assert Revision.objects.get(pk=revision_id).status == Revision.PROPOSED


def test_a_reviewer_cannot_accept_their_own_proposal(reviewer):
    revision_id = session_client(reviewer).post("/api/v1/projects/kueue/revisions/", kueue_body(), format="json").json()["id"]
    body = assert_error_body(session_client(reviewer).post(f"/api/v1/revisions/{revision_id}/accept/", {}, format="json"), 403)
    assert "own" in body["detail"]
    assert Revision.objects.get(pk=revision_id).status == Revision.PROPOSED


def test_a_proposal_from_an_old_base_is_a_409_then_rebased_and_accepted(architect, other_architect, reviewer):
    first = session_client(architect).post("/api/v1/projects/kueue/revisions/", kueue_body("First."), format="json").json()
    second = session_client(other_architect).post("/api/v1/projects/kueue/revisions/", kueue_body("Second."), format="json").json()
    rev = session_client(reviewer)
    assert rev.post(f"/api/v1/revisions/{first['id']}/accept/", {}, format="json").status_code == 200
    # accepting marked the other open proposal conflicting: it must be rebased before review
    body = assert_error_body(rev.post(f"/api/v1/revisions/{second['id']}/accept/", {}, format="json"), 409, "status")
    assert "rebase" in body["detail"]
    assert_error_body(rev.post(f"/api/v1/revisions/{second['id']}/reject/", {"comment": "no"}, format="json"), 409, "status")
    Revision.objects.filter(pk=second["id"]).update(status=Revision.PROPOSED)  # as if it slipped through
    assert_error_body(rev.post(f"/api/v1/revisions/{second['id']}/accept/", {}, format="json"), 409, "status")
    Revision.objects.filter(pk=second["id"]).update(status=Revision.CONFLICTING)
    author = session_client(other_architect)
    # both changed the promise: the author must say which one to keep, and sees both in the error
    unresolved = assert_error_body(author.post(f"/api/v1/revisions/{second['id']}/rebase/", {}, format="json"), 400, "resolutions")
    assert "placement.promise" in unresolved["errors"]["resolutions"][0] and "First." in unresolved["errors"]["resolutions"][0]
    rebased = author.post(
        f"/api/v1/revisions/{second['id']}/rebase/", {"resolutions": {"placement.promise": "proposed"}}, format="json"
    )
    assert rebased.status_code == 200 and rebased.json()["status"] == "proposed"
    assert rev.post(f"/api/v1/revisions/{second['id']}/accept/", {}, format="json").status_code == 200
    assert Project.objects.get(slug="kueue").placement["promise"] == "Second."


def test_unknown_revision_is_a_404(reviewer):
    assert_error_body(session_client(reviewer).post("/api/v1/revisions/999999/accept/", {}, format="json"), 404)
    assert_error_body(session_client(reviewer).get(f"/api/v1/revisions/{2**70}/"), 404)
