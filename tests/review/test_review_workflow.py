"""Proposals with reasons and diffs, approval, conflicts, history and restore."""

import copy

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from placement.models import Project, Revision
from placement.schemas import ProjectDocument
from placement.selectors.catalog import project_document
from placement.services import review

pytestmark = pytest.mark.django_db


def changed_kueue(promise: str) -> ProjectDocument:
    data = project_document(Project.objects.get(slug="kueue")).model_dump(mode="json")
    data = copy.deepcopy(data)
    data["placement"]["promise"] = promise
    data["placement"]["observability"].append("Admission latency histogram")
    return ProjectDocument.model_validate(data)


def test_reason_is_mandatory(architect):
    with pytest.raises(ValidationError) as exc:
        review.revision_propose(Project.objects.get(slug="kueue"), changed_kueue("x" * 20), user=architect, reason=" ")
    assert "reason" in exc.value.message_dict


def test_reviewer_sees_a_field_by_field_diff_including_nested_lists(architect):
    revision = review.revision_propose(
        Project.objects.get(slug="kueue"), changed_kueue("Governs admission."), user=architect, reason="Sharper promise"
    )
    changes = {(c.path, c.kind) for c in review.revision_diff(revision)}
    assert ("placement.promise", "changed") in changes
    assert ("placement.observability[]", "added") in changes


def test_accepting_applies_the_change_and_keeps_it_in_history(client, architect, reviewer):
    project = Project.objects.get(slug="kueue")
    version = project.version
    revision = review.revision_propose(project, changed_kueue("Governs admission."), user=architect, reason="Sharper")
    review.revision_accept(revision, user=reviewer, comment="ok")
    project.refresh_from_db()
    assert project.version == version + 1
    assert project.placement["promise"] == "Governs admission."
    revision.refresh_from_db()
    assert revision.status == Revision.ACCEPTED and revision.number == project.version
    html = client.get("/projects/kueue/history/").content.decode()
    assert "Sharper" in html and f"Revision {project.version}" in html and "placement.promise" in html


def test_rejecting_keeps_the_proposal_with_the_comment(architect, reviewer):
    project = Project.objects.get(slug="kueue")
    revision = review.revision_propose(project, changed_kueue("Nope."), user=architect, reason="Try")
    with pytest.raises(ValidationError):
        review.revision_reject(revision, user=reviewer, comment="")
    review.revision_reject(revision, user=reviewer, comment="Not accurate")
    revision.refresh_from_db()
    assert revision.status == Revision.REJECTED and revision.review_comment == "Not accurate"
    project.refresh_from_db()
    assert project.placement["promise"] != "Nope."


def test_second_proposal_from_the_same_base_becomes_conflicting_and_must_be_rebased(architect, other_architect, reviewer):
    project = Project.objects.get(slug="kueue")
    first = review.revision_propose(project, changed_kueue("First."), user=architect, reason="one")
    second = review.revision_propose(project, changed_kueue("Second."), user=other_architect, reason="two")
    review.revision_accept(first, user=reviewer)
    second.refresh_from_db()
    assert second.status == Revision.CONFLICTING
    with pytest.raises(review.ProposalConflict):
        review.revision_accept(second, user=reviewer)
    review.revision_rebase(second, user=other_architect)
    second.refresh_from_db()
    assert second.status == Revision.PROPOSED and second.base_version == Project.objects.get(slug="kueue").version
    diff = {c.path: c for c in review.revision_diff(second)}
    assert diff["placement.promise"].old == "First." and diff["placement.promise"].new == "Second."
    review.revision_accept(second, user=reviewer)
    assert Project.objects.get(slug="kueue").placement["promise"] == "Second."


def test_stale_accept_is_caught_even_if_not_marked_yet(architect, other_architect, reviewer):
    project = Project.objects.get(slug="kueue")
    stale = review.revision_propose(project, changed_kueue("Stale."), user=other_architect, reason="two")
    Revision.objects.filter(pk=stale.pk).update(base_version=project.version - 1)
    with pytest.raises(review.ProposalConflict):
        review.revision_accept(stale, user=reviewer)
    stale.refresh_from_db()
    assert stale.status == Revision.CONFLICTING


def test_an_earlier_revision_is_restored_through_a_new_proposal(architect, reviewer):
    project = Project.objects.get(slug="kueue")
    original = project.revisions.get(number=project.version)
    original_promise = project.placement["promise"]
    change = review.revision_propose(project, changed_kueue("Changed."), user=architect, reason="change")
    review.revision_accept(change, user=reviewer)
    restore = review.revision_restore(original, user=architect, reason="The old promise was right")
    assert restore.status == Revision.PROPOSED and restore.restored_from == original
    review.revision_accept(restore, user=reviewer)
    project.refresh_from_db()
    assert project.placement["promise"] == original_promise
    assert project.revisions.filter(status=Revision.ACCEPTED).count() == project.version


def test_new_project_appears_on_the_map_only_after_acceptance(client, architect, reviewer, new_project_data):
    doc = ProjectDocument.model_validate(new_project_data)
    project = review.project_create(doc, user=architect, reason="New queue controller")
    assert 'href="/projects/example-queue/"' not in client.get("/").content.decode()
    review.revision_accept(project.revisions.get(), user=reviewer)
    assert 'href="/projects/example-queue/"' in client.get("/").content.decode()
    assert 'href="/projects/example-queue/"' in client.get("/projects/?layer=L1").content.decode()


def test_nobody_approves_their_own_proposal_not_even_a_reviewer(reviewer):
    revision = review.revision_propose(Project.objects.get(slug="kueue"), changed_kueue("Mine."), user=reviewer, reason="x")
    with pytest.raises(PermissionDenied):
        review.revision_accept(revision, user=reviewer)
    revision.refresh_from_db()
    assert revision.status == Revision.PROPOSED


def test_review_queue_lists_pending_proposals_with_counts(client, architect):
    review.revision_propose(Project.objects.get(slug="kueue"), changed_kueue("Queued."), user=architect, reason="queue me")
    html = client.get("/review/").content.decode()
    assert "queue me" in html and "proposed (1)" in html


def test_layer_map_marks_projects_with_a_change_pending_review(client, architect):
    assert "pending review</span>" not in client.get("/").content.decode()
    review.revision_propose(Project.objects.get(slug="kueue"), changed_kueue("Pending."), user=architect, reason="mark me")
    html = client.get("/").content.decode()
    assert html.count("pending review</span>") == 1
