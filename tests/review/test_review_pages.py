"""What a reviewer and an author see: a new project as the page it will become, placed on the layer
map; a change as a per-field diff with nested records; confirmation before a decision; a rebase
that shows fields changed by both side by side."""

import copy

import pytest
from django.core.exceptions import ValidationError
from django.utils.html import escape

from placement.catalog.models import Project
from placement.catalog.schemas import ProjectDocument
from placement.catalog.selectors.catalog import project_document
from placement.review import services as review
from placement.review.models import Revision

pytestmark = pytest.mark.django_db


def kueue_data() -> dict:
    return copy.deepcopy(project_document(Project.objects.get(slug="kueue")).model_dump(mode="json"))


def test_a_new_project_is_reviewed_as_its_rendered_page_placed_on_the_map(client, architect, reviewer, new_project_data):
    doc = ProjectDocument.model_validate(new_project_data)
    project = review.project_create(doc, user=architect, reason="New queue controller")
    client.force_login(reviewer)
    html = client.get(f"/revisions/{project.revisions.get().pk}/").content.decode()
    # the template as a page: sections, labels and links, not one row holding a raw dict
    assert "The proposed project, as its page will read" in html
    assert "<h2>Known misuses</h2>" in html and "<h2>Contract points</h2>" in html
    for source in new_project_data["placement"]["sources"]:
        assert escape(source["title"]) in html
        assert "url" not in source or f'href="{source["url"]}"' in html
    assert "&#x27;placement&#x27;" not in html and "{&#x27;" not in html
    assert 'class="diff"' not in html
    # its cell on the layer map is marked beside the projects already there
    primary = new_project_data["placement"]["maps"]["control-plane"]["primary"]
    assert 'td class="proposed"' in html and "Example Queue (primary, proposed)" in html
    row = html[html.index(f'<span class="code">{primary}</span>', html.index("Where Example Queue lands")) :]
    row = row[: row.index("</tr>")]
    assert "Example Queue (primary, proposed)" in row and ">Kueue</span>" in row


def test_a_change_is_a_per_field_diff_with_nested_records(client, architect, reviewer):
    data = kueue_data()
    data["placement"]["sources"].insert(
        0, {"title": "Kueue TAS concepts", "url": "https://kueue.sigs.k8s.io/docs/concepts/topology_aware_scheduling/", "tag": "V"}
    )
    data["placement"]["contract_points"][0]["how"] = "Admits workloads by quota before pods exist."
    revision = review.revision_propose(
        Project.objects.get(slug="kueue"), ProjectDocument.model_validate(data), user=architect, reason="More sources"
    )
    paths = [c.path for c in review.revision_diff(revision)]
    # an inserted record is one addition, not every later source shown as changed
    assert sorted(paths) == ["placement.contract_points[0].how", "placement.sources[0]"]
    client.force_login(reviewer)
    html = client.get(f"/revisions/{revision.pk}/").content.decode()
    assert "Contract points › 1 › how" in html and "Sources › 1" in html
    assert "<dt>url</dt><dd>https://kueue.sigs.k8s.io/docs/concepts/topology_aware_scheduling/</dd>" in html
    assert "{&#x27;title&#x27;" not in html


def test_accept_and_reject_ask_for_confirmation(client, architect, reviewer):
    data = kueue_data()
    data["placement"]["promise"] = "Governs admission."
    revision = review.revision_propose(
        Project.objects.get(slug="kueue"), ProjectDocument.model_validate(data), user=architect, reason="Sharper"
    )
    client.force_login(reviewer)
    html = client.get(f"/revisions/{revision.pk}/").content.decode()
    assert f'action="/revisions/{revision.pk}/accept/" data-confirm="Accept this proposal?' in html
    assert f'action="/revisions/{revision.pk}/reject/" data-confirm="Reject this proposal?' in html
    assert "window.confirm(form.dataset.confirm)" in html


def _conflicting_pair(architect, other_architect, reviewer):
    project = Project.objects.get(slug="kueue")
    first, second = kueue_data(), kueue_data()
    first["placement"]["promise"], first["summary"] = "First promise.", "Summary accepted first."
    second["placement"]["promise"] = "Second promise."
    accepted = review.revision_propose(project, ProjectDocument.model_validate(first), user=architect, reason="one")
    pending = review.revision_propose(project, ProjectDocument.model_validate(second), user=other_architect, reason="two")
    review.revision_accept(accepted, user=reviewer)
    pending.refresh_from_db()
    assert pending.status == Revision.CONFLICTING
    return pending


def test_the_author_resolves_a_rebase_conflict_side_by_side_on_the_page(client, architect, other_architect, reviewer):
    pending = _conflicting_pair(architect, other_architect, reviewer)
    client.force_login(other_architect)
    html = client.get(f"/revisions/{pending.pk}/").content.decode()
    assert "Changed by both: choose which value to keep" in html
    assert "First promise." in html and "Second promise." in html
    assert 'name="resolution:placement.promise" value="accepted"' in html
    assert "Kept as accepted meanwhile: <code>summary</code>" in html

    # submitting without a choice changes nothing and says which field needs one
    response = client.post(f"/revisions/{pending.pk}/rebase/", follow=True)
    assert "placement.promise" in response.content.decode()
    pending.refresh_from_db()
    assert pending.status == Revision.CONFLICTING

    client.post(f"/revisions/{pending.pk}/rebase/", {"resolution:placement.promise": "proposed"})
    pending.refresh_from_db()
    assert pending.status == Revision.PROPOSED
    assert pending.document["placement"]["promise"] == "Second promise."
    assert pending.document["summary"] == "Summary accepted first."


def test_a_reviewer_sees_the_conflict_but_cannot_resolve_it(client, architect, other_architect, reviewer):
    pending = _conflicting_pair(architect, other_architect, reviewer)
    client.force_login(reviewer)
    html = client.get(f"/revisions/{pending.pk}/").content.decode()
    assert "First promise." in html and "Second promise." in html
    assert 'name="resolution:' not in html


def test_accepting_and_rejecting_say_what_happened_on_the_next_page(client, architect, reviewer):
    data = kueue_data()
    data["summary"] = "Summary changed for the confirmation test."
    project = Project.objects.get(slug="kueue")
    proposal = review.revision_propose(project, ProjectDocument.model_validate(data), user=architect, reason="why")
    client.force_login(reviewer)
    html = client.post(f"/revisions/{proposal.pk}/accept/", follow=True).content.decode()
    assert f"Accepted: Kueue is now at version {project.version + 1}." in html
    data["summary"] = "Another summary, to be rejected."
    other = review.revision_propose(Project.objects.get(slug="kueue"), ProjectDocument.model_validate(data), user=architect, reason="why")
    html = client.post(f"/revisions/{other.pk}/reject/", {"comment": "No."}, follow=True).content.decode()
    assert "Rejected: the proposal for Kueue was returned to its author." in html


def test_a_proposal_identical_to_the_current_version_is_refused(architect):
    project = Project.objects.get(slug="kueue")
    with pytest.raises(ValidationError) as refused:
        review.revision_propose(project, project_document(project), user=architect, reason="nothing")
    assert "changes nothing" in str(refused.value)
    assert not project.revisions.filter(status=Revision.PROPOSED).exists()


def test_restoring_the_current_version_is_refused_and_queues_nothing(architect, reviewer):
    project = Project.objects.get(slug="kueue")
    current = project.revisions.filter(status=Revision.ACCEPTED).order_by("-number").first()
    with pytest.raises(ValidationError) as refused:
        review.revision_restore(current, user=architect, reason="restore the same")
    assert "identical to version" in str(refused.value)
    assert not project.revisions.filter(status=Revision.PROPOSED).exists()
