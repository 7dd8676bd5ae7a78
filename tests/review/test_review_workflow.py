"""Proposals with reasons and diffs, approval, conflicts, history and restore."""

import copy

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from placement.catalog.models import Project
from placement.catalog.schemas import ProjectDocument
from placement.catalog.selectors.catalog import project_document
from placement.review import services as review
from placement.review.models import Revision

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


def kueue_with(**changes) -> ProjectDocument:
    """Kueue's current document with top-level or placement fields replaced."""
    data = copy.deepcopy(project_document(Project.objects.get(slug="kueue")).model_dump(mode="json"))
    for name, value in changes.items():
        (data if name in data else data["placement"])[name] = value
    return ProjectDocument.model_validate(data)


def test_second_proposal_from_the_same_base_becomes_conflicting_and_must_be_rebased(architect, other_architect, reviewer):
    project = Project.objects.get(slug="kueue")
    first = review.revision_propose(project, kueue_with(summary="Summary accepted first."), user=architect, reason="one")
    second = review.revision_propose(project, kueue_with(promise="Second."), user=other_architect, reason="two")
    review.revision_accept(first, user=reviewer)
    second.refresh_from_db()
    assert second.status == Revision.CONFLICTING
    with pytest.raises(review.ProposalConflict):
        review.revision_accept(second, user=reviewer)
    review.revision_rebase(second, user=other_architect)
    second.refresh_from_db()
    assert second.status == Revision.PROPOSED and second.base_version == Project.objects.get(slug="kueue").version


def test_rebase_onto_a_change_of_another_field_keeps_the_accepted_change(architect, other_architect, reviewer):
    # The data-loss case: the proposals edit different fields; rebasing must not revert the first.
    project = Project.objects.get(slug="kueue")
    original_promise = project.placement["promise"]
    first = review.revision_propose(project, kueue_with(summary="Summary accepted first."), user=architect, reason="one")
    second = review.revision_propose(project, kueue_with(promise="Promise of the second."), user=other_architect, reason="two")
    review.revision_accept(first, user=reviewer)
    second.refresh_from_db()
    review.revision_rebase(second, user=other_architect)
    second.refresh_from_db()
    assert [(c.path, c.old, c.new) for c in review.revision_diff(second)] == [
        ("placement.promise", original_promise, "Promise of the second.")
    ]
    review.revision_accept(second, user=reviewer)
    project.refresh_from_db()
    assert project.summary == "Summary accepted first."
    assert project.placement["promise"] == "Promise of the second."


def test_rebase_of_a_field_changed_by_both_waits_for_the_authors_choice(architect, other_architect, reviewer):
    project = Project.objects.get(slug="kueue")
    first = review.revision_propose(
        project, kueue_with(promise="First.", summary="Summary accepted first."), user=architect, reason="one"
    )
    second = review.revision_propose(project, kueue_with(promise="Second."), user=other_architect, reason="two")
    review.revision_accept(first, user=reviewer)
    second.refresh_from_db()
    document_before = second.document

    plan = review.rebase_plan(second)
    assert [(c.path, c.accepted, c.proposed) for c in plan.conflicts] == [("placement.promise", "First.", "Second.")]
    assert plan.kept_from_accepted == ["summary"]
    with pytest.raises(ValidationError) as exc:
        review.revision_rebase(second, user=other_architect)
    assert "placement.promise" in " ".join(exc.value.message_dict["resolutions"])
    second.refresh_from_db()
    assert second.status == Revision.CONFLICTING and second.document == document_before  # nothing half-done
    with pytest.raises(ValidationError):
        review.revision_rebase(second, user=other_architect, resolutions={"placement.promise": "mine"})

    review.revision_rebase(second, user=other_architect, resolutions={"placement.promise": "proposed"})
    review.revision_accept(second, user=reviewer)
    project.refresh_from_db()
    assert project.placement["promise"] == "Second."
    assert project.summary == "Summary accepted first."


def test_rebase_resolved_for_the_accepted_value_keeps_it(architect, other_architect, reviewer):
    project = Project.objects.get(slug="kueue")
    first = review.revision_propose(project, kueue_with(promise="First."), user=architect, reason="one")
    second = review.revision_propose(
        project, kueue_with(promise="Second.", summary="Summary of the second."), user=other_architect, reason="two"
    )
    review.revision_accept(first, user=reviewer)
    review.revision_rebase(second, user=other_architect, resolutions={"placement.promise": "accepted"})
    second.refresh_from_db()
    assert [c.path for c in review.revision_diff(second)] == ["summary"]
    assert second.document["placement"]["promise"] == "First."


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
