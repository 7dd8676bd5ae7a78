"""Every role against every write path: pages, services and the admin. Nothing is written by a
role that may not write, whichever path it takes."""

import copy
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.test import Client

from placement.catalog.models import Project
from placement.catalog.schemas import ProjectDocument
from placement.catalog.selectors.catalog import project_document
from placement.evidence.services import runs as evidence
from placement.review import services as review
from placement.review.models import Revision
from placement.stacks.models import Stack
from placement.stacks.services import stacks as rules
from tests.catalog.test_project_forms import form_post_data
from tests.conftest import make_user

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]

COMPOSE = {"profile": "training", "pool": {"gpu_model": "A100-80GB", "gpu_count": 16}}


def kueue_doc(promise="Changed promise for the test.") -> ProjectDocument:
    data = copy.deepcopy(project_document(Project.objects.get(slug="kueue")).model_dump(mode="json"))
    data["placement"]["promise"] = promise
    return ProjectDocument.model_validate(data)


def users():
    return {
        "anonymous": None,
        "reader": make_user("m-reader", "reader"),
        "architect": make_user("m-architect", "architect"),
        "reviewer": make_user("m-reviewer", "reviewer"),
        "admin": User.objects.create_superuser("m-admin", "a@example.invalid", "pw"),
    }


def client_for(user) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def writes() -> tuple[int, int, int]:
    return Project.objects.count(), Revision.objects.exclude(status=Revision.ACCEPTED).count(), Stack.objects.count()


@pytest.mark.parametrize(
    "role, may_propose",
    [("anonymous", False), ("reader", False), ("architect", True), ("reviewer", True), ("admin", True)],
)
def test_propose_and_create_pages_follow_the_role(role, may_propose, new_project_data):
    user = users()[role]
    client = client_for(user)
    before = writes()
    create = client.post("/projects/new/", form_post_data(new_project_data))
    edit = client.post("/projects/kueue/edit/", form_post_data(kueue_doc().model_dump(mode="json")))
    if may_propose:
        assert create.status_code == 302 and edit.status_code == 302
        assert writes()[1] == before[1] + 2
    else:
        expected = 302 if user is None else 403
        assert create.status_code == expected and edit.status_code == expected
        if user is None:
            assert "/login/" in create["Location"]
        assert writes() == before


@pytest.mark.parametrize(
    "role, may_review", [("anonymous", False), ("reader", False), ("architect", False), ("reviewer", True), ("admin", True)]
)
def test_accept_and_reject_pages_follow_the_role(role, may_review):
    everyone = users()
    author = make_user("m-author", "architect")
    first = review.revision_propose(Project.objects.get(slug="kueue"), kueue_doc("One."), user=author, reason="one")
    client = client_for(everyone[role])
    client.post(f"/revisions/{first.pk}/accept/")
    first.refresh_from_db()
    if may_review:
        assert first.status == Revision.ACCEPTED
    else:
        assert first.status == Revision.PROPOSED
        second = review.revision_propose(Project.objects.get(slug="kueue"), kueue_doc("Two."), user=author, reason="two")
        client.post(f"/revisions/{second.pk}/reject/", {"comment": "no"})
        second.refresh_from_db()
        assert second.status == Revision.PROPOSED


@pytest.mark.parametrize("role", ["reader"])
def test_services_refuse_a_reader_on_every_write(role, new_project_data):
    reader = users()[role]
    author = make_user("m-author2", "architect")
    proposal = review.revision_propose(Project.objects.get(slug="kueue"), kueue_doc(), user=author, reason="x")
    before = writes()
    calls = [
        lambda: review.project_create(ProjectDocument.model_validate(new_project_data), user=reader, reason="x"),
        lambda: review.revision_propose(Project.objects.get(slug="kueue"), kueue_doc(), user=reader, reason="x"),
        lambda: review.revision_accept(proposal, user=reader),
        lambda: review.revision_reject(proposal, user=reader, comment="no"),
        lambda: rules.stack_save(user=reader, request_data=COMPOSE, rank=1),
        lambda: evidence.simulation_start(user=reader, stack=None, scenario_name="x"),
    ]
    for call in calls:
        with pytest.raises(PermissionDenied):
            call()
    assert writes() == before


def test_architect_may_not_accept_even_through_the_service():
    author = make_user("m-author3", "architect")
    other = make_user("m-other", "architect")
    proposal = review.revision_propose(Project.objects.get(slug="kueue"), kueue_doc(), user=author, reason="x")
    for user in (author, other):
        with pytest.raises(PermissionDenied):
            review.revision_accept(proposal, user=user)


def test_staff_reader_cannot_change_projects_in_the_admin():
    staff_reader = make_user("m-staff", "reader", is_staff=True)
    staff_reader.user_permissions.add(*__import__("django.contrib.auth.models", fromlist=["Permission"]).Permission.objects.filter(
        content_type__app_label="placement"
    ))
    client = client_for(staff_reader)
    project = Project.objects.get(slug="kueue")
    response = client.post(f"/admin/placement/project/{project.pk}/change/", {"name": "Hacked"})
    assert response.status_code == 403
    assert client.post("/admin/placement/project/add/", {"slug": "x"}).status_code == 403
    assert Project.objects.get(slug="kueue").name == "Kueue"


def test_even_a_superuser_changes_placements_only_through_review_in_the_admin():
    admin = User.objects.create_superuser("m-admin2", "a@example.invalid", "pw")
    client = client_for(admin)
    project = Project.objects.get(slug="kueue")
    assert client.get(f"/admin/placement/project/{project.pk}/change/").status_code == 200  # view only
    client.post(f"/admin/placement/project/{project.pk}/change/", {"name": "Hacked"})
    assert Project.objects.get(slug="kueue").name == "Kueue"


def test_every_form_post_needs_a_csrf_token(architect):
    client = Client(enforce_csrf_checks=True)
    client.force_login(architect)
    for url in ("/projects/new/", "/projects/kueue/edit/", "/stacks/save/", "/logout/"):
        assert client.post(url, {}).status_code == 403, url


def test_htmx_requests_carry_the_csrf_token_header(client):
    html = client.get("/projects/").content.decode()
    assert 'hx-headers=\'{"X-CSRFToken": "' in html


def test_reading_needs_a_login_unless_anonymous_read_is_open(client, settings, reader):
    settings.ATLAS_ANONYMOUS_READ = False
    response = client.get("/projects/")
    assert response.status_code == 302 and "/login/" in response["Location"]
    client.force_login(reader)
    assert client.get("/projects/").status_code == 200


def test_login_and_logout_pages_work(client, reader):
    assert client.get("/login/").status_code == 200
    response = client.post("/login/", {"username": "rita", "password": "pw-rita"})
    assert response.status_code == 302
    assert client.post("/logout/").status_code == 302


def test_production_settings_pass_check_deploy_with_secrets_from_the_environment():
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="config.settings_production", DJANGO_SECRET_KEY=secrets.token_urlsafe(64))
    result = subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_production_settings_refuse_to_start_without_a_secret():
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="config.settings_production")
    env.pop("DJANGO_SECRET_KEY", None)
    result = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY must be set" in result.stderr


def test_a_valid_admin_edit_by_a_superuser_is_still_refused():
    """The post below is a complete, valid change form for the project (checked with a model form):
    only the read-only admin stops it, not a validation error."""
    import json

    from django.db.models import URLField
    from django.forms import modelform_factory
    from django.forms.models import model_to_dict

    admin_user = User.objects.create_superuser("m-admin3", "a@example.invalid", "pw")
    project = Project.objects.get(slug="kueue")
    data = {k: ("" if v is None else v) for k, v in model_to_dict(project).items()}
    data["placement"] = json.dumps(data["placement"])
    data["name"] = "Kueue (edited in the admin)"
    form = modelform_factory(
        Project, fields="__all__",
        # as the admin builds it (ReadOnlyAdmin.formfield_overrides): URLs assume https
        formfield_callback=lambda f, **kw: f.formfield(**({"assume_scheme": "https"} if isinstance(f, URLField) else {}), **kw),
    )(data, instance=Project.objects.get(slug="kueue"))
    assert form.is_valid(), form.errors
    response = client_for(admin_user).post(f"/admin/placement/project/{project.pk}/change/", {**data, "_save": "Save"})
    assert response.status_code == 403
    project.refresh_from_db()
    assert project.name == "Kueue" and project.version == Project.objects.get(slug="kueue").version


@pytest.mark.parametrize("role", ["reviewer", "admin"])
def test_each_role_allowed_to_review_can_reject_with_a_comment(role):
    user = users()[role]
    author = make_user("m-author4", "architect")
    proposal = review.revision_propose(Project.objects.get(slug="kueue"), kueue_doc("Rejected."), user=author, reason="x")
    response = client_for(user).post(f"/revisions/{proposal.pk}/reject/", {"comment": "Not what Kueue promises"})
    assert response.status_code == 302
    proposal.refresh_from_db()
    assert proposal.status == Revision.REJECTED and proposal.reviewer == user
    assert proposal.review_comment == "Not what Kueue promises"
    assert Project.objects.get(slug="kueue").placement["promise"] != "Rejected."


@pytest.mark.parametrize("status", [Revision.REJECTED, Revision.DRAFT])
def test_a_rejected_or_draft_revision_cannot_be_accepted(status):
    from django.core.exceptions import ValidationError

    reviewer = users()["reviewer"]
    author = make_user("m-author5", "architect")
    project = Project.objects.get(slug="kueue")
    version = project.version
    proposal = review.revision_propose(
        project, kueue_doc("Never accepted."), user=author, reason="x", submit=status != Revision.DRAFT
    )
    if status == Revision.REJECTED:
        review.revision_reject(proposal, user=reviewer, comment="no")
    proposal.refresh_from_db()
    assert proposal.status == status
    with pytest.raises(ValidationError):
        review.revision_accept(proposal, user=reviewer)
    client_for(reviewer).post(f"/revisions/{proposal.pk}/accept/")
    proposal.refresh_from_db()
    project.refresh_from_db()
    assert proposal.status == status and proposal.number is None
    assert project.version == version and project.placement["promise"] != "Never accepted."
