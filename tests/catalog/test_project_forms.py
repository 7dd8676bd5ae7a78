"""Create and edit forms: inline field errors, nothing saved on error, a valid form proposes."""

import pytest

from placement.catalog.forms import ProjectForm
from placement.catalog.models import Project
from placement.catalog.schemas import ProjectDocument
from placement.catalog.selectors.catalog import catalog_vocabulary
from placement.review.models import Revision

pytestmark = pytest.mark.django_db


def form_post_data(doc_data: dict, reason="Adding it for the inference platform") -> dict:
    doc = ProjectDocument.model_validate(doc_data)
    initial = ProjectForm.initial_from(doc)
    data = {}
    for key, value in initial.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):  # repeatable rows
            for i, row in enumerate(value):
                data.update({f"{key}-r{i}-{column}": v for column, v in row.items()})
        else:
            data[key] = value
    data["reason"] = reason
    data["action"] = "submit"
    return data


def test_create_form_with_errors_shows_them_inline_and_saves_nothing(client, architect, new_project_data):
    client.force_login(architect)
    data = form_post_data(new_project_data)
    data["sources-r0-url"] = "not-a-url"
    data["promise"] = ""
    before = (Project.objects.count(), Revision.objects.count())
    response = client.post("/projects/new/", data)
    assert response.status_code == 400
    html = response.content.decode()
    assert 'id="field-sources"' in html and "Source 1, address" in html and "starts with https://" in html
    assert "String should match pattern" not in html
    assert "This field is required." in html
    assert (Project.objects.count(), Revision.objects.count()) == before


def test_errors_use_the_labels_on_the_screen_not_internal_values(client, architect, new_project_data):
    client.force_login(architect)
    data = form_post_data(new_project_data)
    data["contract_points-r0-units"] = ["whole-gpu"]  # a tampered or stale value
    data["sources-r1-tag"] = "verified"
    response = client.post("/projects/new/", data)
    html = response.content.decode()
    assert response.status_code == 400
    assert "Contract point 1, for resource units: Choose one of: Whole GPU, MIG instance" in html
    assert "Source 2, evidence grade: Choose one of: V: verified in upstream docs" in html
    assert "Input should be" not in html and "&#x27;whole_gpu&#x27;" not in html


def test_nothing_typed_is_lost_when_the_form_has_an_error(client, architect, new_project_data):
    client.force_login(architect)
    data = form_post_data(new_project_data)
    data["homepage"] = "not a url"
    data["contract_points-r9-how"] = "A row I added and typed into"
    data["contract_points-r9-point"] = "allocate"
    response = client.post("/projects/new/", data)
    html = response.content.decode()
    assert response.status_code == 400
    assert ">\nA row I added and typed into</textarea>" in html
    assert html.index("A row I added") > html.index(new_project_data["placement"]["contract_points"][-1]["how"][:30])
    for source in new_project_data["placement"]["sources"]:
        assert f'value="{source.get("url") or source["section"]}"' in html
    assert new_project_data["placement"]["misuses"][0]["why"][:40] in html


def test_the_placement_comes_first_and_its_preview_marks_the_cell(client, architect):
    client.force_login(architect)
    html = client.get("/projects/new/").content.decode()
    assert html.index('id="section-placement"') < html.index('id="field-name"') < html.index('id="field-sources"')
    preview = client.get("/projects/form/preview/", {"map_control-plane_primary": "L1", "map_planes_primary": "control", "name": "My queue"})
    page = preview.content.decode()
    assert preview.status_code == 200 and 'class="lands primary"' in page and "My queue" in page
    cell = page.split('class="lands primary"', 1)[1].split("</td>", 1)[0]
    assert "My queue" in cell and "next to" in cell  # the projects already on that layer are named


def test_a_new_row_comes_from_the_server_with_labelled_inputs(client, architect):
    client.force_login(architect)
    html = client.get("/projects/form/rows/sources/").content.decode()
    assert 'name="sources-' in html and "Evidence grade" in html and "Remove this source" in html
    assert client.get("/projects/form/rows/summary/").status_code == 404


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
    from placement.catalog.selectors.catalog import project_document

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
