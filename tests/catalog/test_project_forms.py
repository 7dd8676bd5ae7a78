"""Create and edit forms: inline field errors, nothing saved on error, a valid form proposes."""

import pytest

from placement.forms import ProjectForm
from placement.models import Project, Revision
from placement.schemas import ProjectDocument
from placement.selectors.catalog import catalog_vocabulary

pytestmark = pytest.mark.django_db


def form_post_data(doc_data: dict, reason="Adding it for the inference platform") -> dict:
    doc = ProjectDocument.model_validate(doc_data)
    initial = ProjectForm.initial_from(doc)
    data = {}
    for key, value in initial.items():
        data[key] = value
    data["reason"] = reason
    data["action"] = "submit"
    return data


def test_create_form_with_errors_shows_them_inline_and_saves_nothing(client, architect, new_project_data):
    client.force_login(architect)
    data = form_post_data(new_project_data)
    data["sources"] = "Kueue docs | not-a-url | V"
    data["promise"] = ""
    before = (Project.objects.count(), Revision.objects.count())
    response = client.post("/projects/new/", data)
    assert response.status_code == 400
    html = response.content.decode()
    assert 'id="field-sources"' in html and "line 1: url: String should match pattern" in html
    assert "This field is required." in html
    assert (Project.objects.count(), Revision.objects.count()) == before


def test_valid_create_form_makes_a_proposal_not_yet_on_the_map(client, architect, new_project_data):
    client.force_login(architect)
    response = client.post("/projects/new/", form_post_data(new_project_data))
    assert response.status_code == 302
    project = Project.objects.get(slug="example-queue")
    assert not project.accepted
    assert project.revisions.get().status == Revision.PROPOSED
    assert 'href="/projects/example-queue/"' not in client.get("/").content.decode()


def test_edit_form_prefills_the_whole_template(client, architect):
    client.force_login(architect)
    html = client.get("/projects/volcano/edit/").content.decode()
    assert "gang-scheduling" in html
    assert 'name="reason"' in html


def test_edit_without_reason_is_refused_inline(client, architect):
    client.force_login(architect)
    project = Project.objects.get(slug="kueue")
    from placement.selectors.catalog import project_document

    data = form_post_data(project_document(project).model_dump(mode="json"), reason="")
    response = client.post("/projects/kueue/edit/", data)
    assert response.status_code == 400
    assert "This field is required." in response.content.decode()
    assert not project.revisions.exclude(status=Revision.ACCEPTED).exists()


def test_form_round_trips_a_document_unchanged(new_project_data):
    doc = ProjectDocument.model_validate(new_project_data)
    data = form_post_data(new_project_data)
    form = ProjectForm(data, vocabulary=catalog_vocabulary(), project_choices=[("kube-scheduler", "kube-scheduler")])
    assert form.is_valid(), form.errors
    assert form.document == doc


def test_reader_cannot_open_the_create_form(client, reader):
    client.force_login(reader)
    assert client.get("/projects/new/").status_code == 403


def test_anonymous_user_is_sent_to_login_for_writing(client):
    response = client.get("/projects/new/")
    assert response.status_code == 302 and "/login/" in response["Location"]
