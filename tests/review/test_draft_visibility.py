"""An unsubmitted draft is read only by its author and by reviewers: page, list filter and API."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.test import APIClient

from placement.catalog.models import Project
from placement.review import services as review
from tests.api.conftest import session_client
from tests.review.test_review_workflow import changed_kueue

pytestmark = pytest.mark.django_db

SECRET = "Unsubmitted idea about admission."


@pytest.fixture
def draft(architect):
    return review.revision_propose(Project.objects.get(slug="kueue"), changed_kueue(SECRET), user=architect,
                                   reason="Half-baked", submit=False)


def _page_client(user=None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def _sees(user, draft) -> dict[str, bool]:
    page = _page_client(user)
    api = session_client(user) if user is not None else APIClient()
    return {
        "page": page.get(f"/revisions/{draft.pk}/").status_code == 200,
        "queue": "Half-baked" in page.get("/review/?status=draft").content.decode(),
        "history": "Half-baked" in page.get("/projects/kueue/history/").content.decode(),
        "api detail": api.get(f"/api/v1/revisions/{draft.pk}/").status_code == 200,
        "api list": draft.pk in [r["id"] for r in api.get("/api/v1/revisions/?status=draft").json().get("results", [])],
        "api project revisions": draft.pk in [r["id"] for r in api.get("/api/v1/projects/kueue/revisions/").json().get("results", [])],
    }


def test_readers_other_architects_and_visitors_do_not_see_a_draft(draft, reader, other_architect):
    for user in (reader, other_architect, None):
        assert not any(_sees(user, draft).values()), (user, _sees(user, draft))


def test_the_author_and_reviewers_see_a_draft(draft, architect, reviewer):
    for user in (architect, reviewer):
        assert all(_sees(user, draft).values()), (user, _sees(user, draft))


def test_once_submitted_everyone_who_reads_sees_it(draft, architect, reader):
    review.revision_update(draft, changed_kueue(SECRET), user=architect, reason="Ready", submit=True)
    assert _page_client(reader).get(f"/revisions/{draft.pk}/").status_code == 200
