"""Who may do what, as a user meets it: roles, inactive accounts, anonymous and embed reading, token
rotation and grants with their audit entry, and the API's read-only token rule (the mutation audit of
placement/access/services.py and placement/access/permissions.py, docs/testing.md)."""

from __future__ import annotations

import copy

import pytest
from django.contrib.admin.models import ADDITION, CHANGE, LogEntry
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied, ValidationError
from rest_framework.authtoken.models import Token

from placement.access import services as access
from placement.access.models import ApiAccess
from placement.access.permissions import READ_ONLY_TOKEN
from placement.catalog.models import Project
from placement.catalog.selectors.catalog import project_document
from tests.api.conftest import assert_error_body, session_client, token_client
from tests.conftest import make_user

pytestmark = pytest.mark.django_db


def test_an_inactive_architect_holds_no_role_and_cannot_propose():
    user = make_user("gone", "architect", is_active=False)
    assert access.user_roles(user) == set()
    with pytest.raises(PermissionDenied) as exc:
        access.require(user, "propose")
    assert str(exc.value) == "only architects and reviewers propose changes"


def test_an_admin_holds_every_role_without_belonging_to_a_group():
    admin = make_user("root", is_superuser=True)
    assert access.user_roles(admin) == {"reader", "architect", "reviewer"}
    assert all(access.can(admin, action) for action in access.ACTIONS)


def test_roles_come_from_the_users_groups_only(architect):
    architect.groups.create(name="unrelated-team")
    assert access.user_roles(architect) == {"architect"}
    assert access.can(architect, "propose") and not access.can(architect, "review")


def test_a_reader_may_read_but_each_write_is_refused_with_its_reason(reader):
    assert access.can(reader, "read")
    for action, reason in [
        ("create_project", "only architects and reviewers create projects"),
        ("review", "only reviewers approve or reject proposals"),
        ("save_stack", "only architects and reviewers save stacks"),
        ("run_simulation", "only architects and reviewers start simulations"),
    ]:
        with pytest.raises(PermissionDenied) as exc:
            access.require(reader, action)
        assert str(exc.value) == reason


def test_any_account_may_read_even_without_a_role_but_an_anonymous_visitor_may_not(settings):
    settings.ATLAS_ANONYMOUS_READ = False
    settings.ATLAS_PUBLIC_EMBEDS = False
    nobody = make_user("norole")
    assert access.can(nobody, "read") and not access.can(nobody, "propose")
    assert not access.can(AnonymousUser(), "read") and not access.can(None, "read")
    with pytest.raises(PermissionDenied) as exc:
        access.require(AnonymousUser(), "read")
    assert str(exc.value) == "reading the Atlas needs a login"
    settings.ATLAS_ANONYMOUS_READ = True
    assert access.can(AnonymousUser(), "read") and not access.can(AnonymousUser(), "propose")


def test_public_embeds_open_only_the_embeds_to_anonymous_visitors(settings):
    settings.ATLAS_ANONYMOUS_READ = False
    settings.ATLAS_PUBLIC_EMBEDS = False
    assert not access.can(AnonymousUser(), "read_embed")
    assert access.can(make_user("someone"), "read_embed")  # reading an embed is reading
    settings.ATLAS_PUBLIC_EMBEDS = True
    assert access.can(AnonymousUser(), "read_embed") and not access.can(AnonymousUser(), "read")


def test_rotating_a_token_replaces_the_key(architect):
    old = access.token_rotate(user=architect).key
    new = access.token_rotate(user=architect)
    assert new.key != old and list(Token.objects.filter(user=architect).values_list("key", flat=True)) == [new.key]


def test_a_grant_records_who_granted_it_when_and_an_audit_entry_per_change(architect):
    admin = make_user("root", is_superuser=True)
    granted = access.token_grant(user=admin, username="arch", can_write=True)
    granted.refresh_from_db()
    assert (granted.user, granted.token_can_write, granted.granted_by) == (architect, True, admin)
    assert granted.granted_at is not None
    access.token_grant(user=admin, username="arch", can_write=False)
    entries = LogEntry.objects.filter(object_id=str(granted.pk)).order_by("pk")
    assert [(e.user, e.action_flag, e.object_repr and True, e.get_change_message()) for e in entries] == [
        (admin, ADDITION, True, "token writing granted for arch (was read-only)"),
        (admin, CHANGE, True, "token writing withdrawn for arch (was write)"),
    ]
    assert ApiAccess.objects.get(user=architect).token_can_write is False


def test_an_inactive_admin_cannot_grant_and_an_unknown_user_is_named(architect):
    retired = make_user("retired", is_superuser=True, is_active=False)
    with pytest.raises(PermissionDenied, match="only admins"):
        access.token_grant(user=retired, username="arch", can_write=True)
    assert not access.can_grant(AnonymousUser()) and not access.can_grant(None)
    admin = make_user("root", is_superuser=True)
    with pytest.raises(ValidationError) as exc:
        access.token_grant(user=admin, username="ghost", can_write=True)
    assert exc.value.message_dict == {"username": ["No user 'ghost'."]}
    assert not ApiAccess.objects.exists() and not LogEntry.objects.exists()


def _proposal() -> dict:
    data = copy.deepcopy(project_document(Project.objects.get(slug="kueue")).model_dump(mode="json"))
    data["placement"]["promise"] = "Governs admission through quotas."
    return {**data, "reason": "Sharper promise"}


def test_a_read_only_token_is_told_how_to_get_writing(architect):
    token_client(make_user("writer", "architect"), can_write=True)  # another user's grant is not this token's
    response = token_client(architect).post("/api/v1/projects/kueue/revisions/", _proposal(), format="json")
    body = assert_error_body(response, 403)
    assert body["detail"] == READ_ONLY_TOKEN


def test_a_signed_in_session_writes_without_a_token_grant(architect):
    response = session_client(architect).post("/api/v1/projects/kueue/revisions/", _proposal(), format="json")
    assert response.status_code == 201, response.content[:300]


def test_a_read_only_token_may_post_a_comparison_which_writes_nothing(reader):
    response = token_client(reader).post("/api/v1/compare/", {"slugs": ["hami", "volcano"]}, format="json")
    assert response.status_code == 200, response.content[:300]


def test_an_anonymous_visitor_may_compare_only_where_anonymous_reading_is_open(api, settings):
    settings.ATLAS_ANONYMOUS_READ = False
    assert api.post("/api/v1/compare/", {"slugs": ["hami", "volcano"]}, format="json").status_code in (401, 403)
    settings.ATLAS_ANONYMOUS_READ = True
    assert api.post("/api/v1/compare/", {"slugs": ["hami", "volcano"]}, format="json").status_code == 200


def test_where_reading_needs_a_login_a_signed_in_reader_reads_the_api_and_a_visitor_does_not(api, reader, settings):
    settings.ATLAS_ANONYMOUS_READ = False
    assert api.get("/api/v1/projects/").status_code in (401, 403)
    assert token_client(reader).get("/api/v1/projects/").status_code == 200
    assert session_client(reader).post("/api/v1/compare/", {"slugs": ["hami", "volcano"]}, format="json").status_code == 200


def test_without_the_read_settings_the_atlas_is_closed_to_anonymous_visitors(settings):
    # A settings module that defines neither ATLAS_ANONYMOUS_READ nor ATLAS_PUBLIC_EMBEDS: nothing is public.
    del settings.ATLAS_ANONYMOUS_READ
    del settings.ATLAS_PUBLIC_EMBEDS
    assert not access.can(AnonymousUser(), "read") and not access.can(AnonymousUser(), "read_embed")
    assert access.can(make_user("someone"), "read_embed")


def test_a_users_roles_are_looked_up_once_per_user_object(django_assert_num_queries):
    user = make_user("twice")
    with django_assert_num_queries(1):
        assert not access.can(user, "propose")
        assert not access.can(user, "review")
