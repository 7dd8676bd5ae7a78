"""Saving the rendered edit form unchanged changes nothing: order is data (the first resource unit
is the primary one), and checkboxes post in choice order, so the form must carry the order itself.

The page is parsed the way a browser submits it (tests/rendered_form.py), never fed its own
initial data."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from placement.catalog.models import Project
from placement.catalog.schemas import ProjectDocument
from placement.catalog.selectors.catalog import project_document_data
from placement.review import services as review_services
from placement.review.diff import diff_documents
from placement.review.models import Revision
from tests.rendered_form import as_post_data, rendered_form_fields

pytestmark = pytest.mark.django_db



def _post_rendered(client, url: str, **overrides):
    page = client.get(url)
    assert page.status_code == 200, url
    fields = rendered_form_fields(page.content.decode(), containing="reason")
    overrides.setdefault("reason", "Nothing but a save")
    overrides.setdefault("action", "submit")
    return client.post(url, as_post_data(fields, **overrides))


def test_saving_the_rendered_edit_form_of_every_catalog_entry_changes_no_field(client, architect):
    client.force_login(architect)
    projects = list(Project.objects.filter(accepted=True).order_by("slug"))
    assert len(projects) > 10
    moved = {}
    for project in projects:
        response = _post_rendered(client, f"/projects/{project.slug}/edit/", action="draft")
        assert response.status_code == 302, (project.slug, response.content.decode()[:2000])
        revision = project.revisions.exclude(status=Revision.ACCEPTED).get()
        changes = diff_documents(project_document_data(project), revision.document)
        if changes:
            moved[project.slug] = [c.path for c in changes]
    assert moved == {}


def test_submitting_the_edit_form_unchanged_is_refused_with_the_reason(client, architect):
    client.force_login(architect)
    response = _post_rendered(client, "/projects/kueue/edit/")
    assert response.status_code == 400
    assert "This proposal changes nothing" in response.content.decode()
    assert not Project.objects.get(slug="kueue").revisions.exclude(status=Revision.ACCEPTED).exists()


def test_editing_hamis_summary_keeps_its_primary_unit_and_moves_only_the_summary(client, architect, reviewer):
    hami = Project.objects.get(slug="hami")
    before = project_document_data(hami)
    assert before["placement"]["resource_units"][0] == "memory_compute_share"
    client.force_login(architect)
    page = client.get("/projects/hami/edit/").content.decode()
    fields = dict(rendered_form_fields(page, containing="reason"))
    summary = fields["summary"].replace(" ", "  ", 1).replace(".", ". Also on A100.", 1)
    response = _post_rendered(client, "/projects/hami/edit/", summary=summary, reason="Say it runs on A100")
    assert response.status_code == 302
    revision = hami.revisions.exclude(status=Revision.ACCEPTED).get()
    review_services.revision_accept(revision, user=reviewer)
    hami.refresh_from_db()
    after = project_document_data(hami)
    assert after["placement"]["resource_units"] == before["placement"]["resource_units"]
    assert after["placement"]["capabilities"] == before["placement"]["capabilities"]
    assert [c.path for c in diff_documents(before, after)] == ["summary"]
    history = client.get("/projects/hami/history/").content.decode()
    assert "Moved: <code>summary</code></p>" in history


def test_the_primary_unit_field_puts_a_unit_first(client, architect):
    client.force_login(architect)
    response = _post_rendered(client, "/projects/hami/edit/", primary_unit="whole_gpu", reason="Whole GPUs first")
    assert response.status_code == 302
    revision = Project.objects.get(slug="hami").revisions.exclude(status=Revision.ACCEPTED).get()
    assert revision.document["placement"]["resource_units"] == ["whole_gpu", "memory_compute_share", "mig_instance", "mps_share"]


def test_a_primary_unit_that_is_not_ticked_is_an_error_on_that_field(client, architect):
    client.force_login(architect)
    response = _post_rendered(client, "/projects/hami/edit/", primary_unit="vgpu")
    assert response.status_code == 400
    assert "Tick the primary resource unit among the resource units too." in response.content.decode()


ORDERED = ("resource_units", "enforcement_points", "capabilities", "denied_capabilities")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_rendered_form_round_trip_of_a_reordered_catalog_entry_changes_nothing(client, architect, data):
    """Any catalog entry, its list fields in any order and its texts holding `|`, saved as a draft
    and then saved again through its rendered edit page, is the same document."""
    slugs = sorted(Project.objects.filter(accepted=True).values_list("slug", flat=True))
    project = Project.objects.get(slug=data.draw(st.sampled_from(slugs), label="project"))
    doc = project_document_data(project)
    placement = doc["placement"]
    for name in ORDERED + ("bundles", "conflicts_with"):
        placement[name] = data.draw(st.permutations(placement[name]), label=name)
    placement["dependencies"]["requires"] = data.draw(st.permutations(placement["dependencies"]["requires"]))
    for placed in placement["maps"].values():
        placed["secondary"] = data.draw(st.permutations(placed["secondary"]))
    for misuse in placement["misuses"]:
        if data.draw(st.booleans(), label="pipe in why"):
            misuse["why"] += " | or so the docs say"
    for role in placement["contract_points"]:
        role["units"] = data.draw(st.permutations(role["units"]))
    revision = review_services.revision_propose(
        project, ProjectDocument.model_validate(doc), user=architect, reason="reordered", submit=False
    )
    client.force_login(architect)
    response = _post_rendered(client, f"/revisions/{revision.pk}/edit/", action="draft")
    assert response.status_code == 302, response.content.decode()[:2000]
    revision.refresh_from_db()
    assert diff_documents(doc, revision.document) == []
    revision.delete()
