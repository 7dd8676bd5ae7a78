"""What each review step leaves behind for the people involved: who proposed and reviewed, from which
version, the comment, which other proposals must be rebased, the webhook event, and the reasons a
refused step gives (the mutation audit of placement/review/services.py, docs/testing.md)."""

from __future__ import annotations

import copy

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from placement.catalog.models import Project
from placement.catalog.schemas import ProjectDocument
from placement.catalog.selectors.catalog import project_document
from placement.decisions.models import Webhook, WebhookDelivery
from placement.review import services as review
from placement.review.models import Revision
from tests.conftest import make_user

pytestmark = pytest.mark.django_db


def kueue_with(**changes) -> ProjectDocument:
    data = copy.deepcopy(project_document(Project.objects.get(slug="kueue")).model_dump(mode="json"))
    for name, value in changes.items():
        (data if name in data else data["placement"])[name] = value
    return ProjectDocument.model_validate(data)


def kueue() -> Project:
    return Project.objects.get(slug="kueue")


def messages(exc: pytest.ExceptionInfo, field: str) -> list[str]:
    return exc.value.message_dict[field]


# -- new projects ---------------------------------------------------------------------------------


def test_a_new_project_waits_off_the_map_as_a_proposal_from_version_zero(architect, new_project_data):
    doc = ProjectDocument.model_validate(new_project_data)
    project = review.project_create(doc, user=architect)
    project.refresh_from_db()
    assert (project.slug, project.name, project.kind, project.homepage, project.summary) == (
        doc.slug, doc.name, doc.kind.value, doc.homepage, doc.summary
    )
    assert project.placement == doc.placement.model_dump(mode="json")
    assert (project.version, project.accepted, project.created_by) == (0, False, architect)
    revision = project.revisions.get()
    assert (revision.status, revision.base_version, revision.author) == (Revision.PROPOSED, 0, architect)
    assert revision.reason == "New project Example Queue"  # the default reason names the project
    assert revision.document == doc.model_dump(mode="json")


def test_a_new_project_saved_as_a_draft_is_not_submitted_and_keeps_its_reason(architect, new_project_data):
    project = review.project_create(
        ProjectDocument.model_validate(new_project_data), user=architect, reason="  Our queue  ", submit=False
    )
    revision = project.revisions.get()
    assert (revision.status, revision.reason) == (Revision.DRAFT, "Our queue")


def test_a_taken_slug_is_refused_with_its_name(architect, kueue_data):
    with pytest.raises(ValidationError) as exc:
        review.project_create(ProjectDocument.model_validate(kueue_data), user=architect, reason="again")
    assert messages(exc, "slug") == ["A project with slug 'kueue' already exists."]


# -- proposals and edits --------------------------------------------------------------------------


def test_a_proposal_remembers_its_author_its_base_version_and_a_trimmed_reason(architect):
    project = kueue()
    revision = review.revision_propose(project, kueue_with(promise="P."), user=architect, reason="  Sharper  ")
    revision.refresh_from_db()
    assert (revision.author, revision.base_version, revision.reason, revision.status) == (
        architect, project.version, "Sharper", Revision.PROPOSED
    )
    assert revision.document["placement"]["promise"] == "P."
    draft = review.revision_propose(project, kueue_with(promise="D."), user=architect, reason="later", submit=False)
    assert draft.status == Revision.DRAFT


def test_a_blank_reason_is_refused_saying_a_reason_is_required(architect):
    with pytest.raises(ValidationError) as exc:
        review.revision_propose(kueue(), kueue_with(promise="P."), user=architect, reason="   ")
    assert messages(exc, "reason") == ["A reason for the change is required."]


def test_a_proposal_cannot_rename_the_project(architect):
    with pytest.raises(ValidationError) as exc:
        review.revision_propose(kueue(), kueue_with(slug="kueue-2"), user=architect, reason="rename")
    assert messages(exc, "slug") == ["The slug of an existing project cannot change."]


def test_the_author_edits_a_draft_and_submits_it(architect):
    draft = review.revision_propose(kueue(), kueue_with(promise="D."), user=architect, reason="later", submit=False)
    review.revision_update(draft, kueue_with(promise="Done."), user=architect, reason=" ready ", submit=True)
    draft.refresh_from_db()
    assert (draft.status, draft.reason, draft.document["placement"]["promise"]) == (Revision.PROPOSED, "ready", "Done.")
    review.revision_update(draft, kueue_with(promise="Back."), user=architect, reason="not yet", submit=False)
    draft.refresh_from_db()
    assert draft.status == Revision.DRAFT


def test_only_the_author_or_an_admin_edits_a_proposal(architect, other_architect):
    revision = review.revision_propose(kueue(), kueue_with(promise="Mine."), user=architect, reason="mine")
    with pytest.raises(PermissionDenied) as exc:
        review.revision_update(revision, kueue_with(promise="Theirs."), user=other_architect, reason="x", submit=True)
    assert str(exc.value) == "only the author may change this proposal"
    admin = make_user("boss2", is_superuser=True)
    review.revision_update(revision, kueue_with(promise="Admin."), user=admin, reason="fix", submit=True)
    revision.refresh_from_db()
    assert revision.document["placement"]["promise"] == "Admin."


def test_a_rejected_proposal_cannot_be_edited_nor_renamed_by_an_edit(architect, reviewer):
    revision = review.revision_propose(kueue(), kueue_with(promise="Mine."), user=architect, reason="mine")
    with pytest.raises(ValidationError) as exc:
        review.revision_update(revision, kueue_with(slug="other"), user=architect, reason="x", submit=True)
    assert messages(exc, "slug") == ["The slug of an existing project cannot change."]
    review.revision_reject(revision, user=reviewer, comment="no")
    with pytest.raises(ValidationError) as exc:
        review.revision_update(revision, kueue_with(promise="Again."), user=architect, reason="x", submit=True)
    assert messages(exc, "status") == ["A rejected proposal cannot be edited; propose a new change to the project."]
    revision.refresh_from_db()
    assert revision.document["placement"]["promise"] == "Mine."


# -- accept and reject ----------------------------------------------------------------------------


def test_accepting_records_the_reviewer_the_trimmed_comment_and_when(architect, reviewer):
    revision = review.revision_propose(kueue(), kueue_with(promise="A."), user=architect, reason="a")
    review.revision_accept(revision, user=reviewer, comment="  looks right  ")
    revision.refresh_from_db()
    assert (revision.reviewer, revision.review_comment) == (reviewer, "looks right")
    assert revision.reviewed_at is not None and revision.number == kueue().version


def test_accepting_sends_other_open_proposals_and_drafts_to_rebase_but_not_closed_ones(
    architect, other_architect, reviewer
):
    project = kueue()
    accepted = review.revision_propose(project, kueue_with(promise="A."), user=architect, reason="a")
    proposed = review.revision_propose(project, kueue_with(promise="B."), user=other_architect, reason="b")
    draft = review.revision_propose(project, kueue_with(promise="C."), user=other_architect, reason="c", submit=False)
    rejected = review.revision_propose(project, kueue_with(promise="D."), user=other_architect, reason="d")
    review.revision_reject(rejected, user=reviewer, comment="no")
    review.revision_accept(accepted, user=reviewer)
    statuses = dict(Revision.objects.filter(pk__in=[accepted.pk, proposed.pk, draft.pk, rejected.pk]).values_list("pk", "status"))
    assert statuses == {
        accepted.pk: Revision.ACCEPTED,
        proposed.pk: Revision.CONFLICTING,
        draft.pk: Revision.CONFLICTING,
        rejected.pk: Revision.REJECTED,
    }


def test_accepting_publishes_catalog_changed_with_project_version_revision_and_reason(architect, reviewer):
    Webhook.objects.create(name="hook", url="https://example.org/h", secret="s", events=["catalog.changed"])
    revision = review.revision_propose(kueue(), kueue_with(promise="A."), user=architect, reason="Sharper promise")
    review.revision_accept(revision, user=reviewer)
    (delivery,) = WebhookDelivery.objects.all()
    assert delivery.event == "catalog.changed"
    assert delivery.payload["data"] == {
        "project": "kueue", "version": kueue().version, "revision": revision.pk, "reason": "Sharper promise"
    }


def test_a_conflict_says_which_version_the_project_moved_to(architect, other_architect, reviewer):
    project = kueue()
    version = project.version
    first = review.revision_propose(project, kueue_with(promise="A."), user=architect, reason="a")
    stale = review.revision_propose(project, kueue_with(promise="B."), user=other_architect, reason="b")
    review.revision_accept(first, user=reviewer)
    Revision.objects.filter(pk=stale.pk).update(status=Revision.PROPOSED)  # not marked yet
    with pytest.raises(review.ProposalConflict) as exc:
        review.revision_accept(stale, user=reviewer)
    assert str(exc.value) == f"kueue moved from version {version} to {version + 1}; rebase the proposal"
    stale.refresh_from_db()
    assert stale.status == Revision.CONFLICTING
    with pytest.raises(review.ProposalConflict) as exc:  # now marked: the review itself refuses
        review.revision_reject(stale, user=reviewer, comment="no")
    assert str(exc.value) == "kueue moved since this proposal was made; rebase it first"


def test_rejecting_records_the_reviewer_the_trimmed_comment_and_when(architect, reviewer):
    revision = review.revision_propose(kueue(), kueue_with(promise="R."), user=architect, reason="r")
    with pytest.raises(ValidationError) as exc:
        review.revision_reject(revision, user=reviewer, comment="   ")
    assert messages(exc, "comment") == ["Say why the proposal is rejected."]
    review.revision_reject(revision, user=reviewer, comment="  not accurate ")
    revision.refresh_from_db()
    assert (revision.status, revision.reviewer, revision.review_comment) == (Revision.REJECTED, reviewer, "not accurate")
    assert revision.reviewed_at is not None


def test_a_rejected_proposal_cannot_be_reviewed_again_and_says_why(architect, reviewer):
    revision = review.revision_propose(kueue(), kueue_with(promise="R."), user=architect, reason="r")
    review.revision_reject(revision, user=reviewer, comment="no")
    with pytest.raises(ValidationError) as exc:
        review.revision_reject(revision, user=reviewer, comment="still no")
    assert messages(exc, "status") == ["Only a proposed revision can be reviewed; this one is rejected."]
    revision.refresh_from_db()
    assert revision.review_comment == "no"


def test_a_reviewer_cannot_reject_their_own_proposal(reviewer):
    revision = review.revision_propose(kueue(), kueue_with(promise="Own."), user=reviewer, reason="own")
    with pytest.raises(PermissionDenied) as exc:
        review.revision_reject(revision, user=reviewer, comment="no")
    assert str(exc.value) == "nobody may review their own proposal"


# -- rebase ---------------------------------------------------------------------------------------


def _conflicting_pair(architect, other_architect, reviewer) -> tuple[Revision, int]:
    project = kueue()
    first = review.revision_propose(project, kueue_with(promise="First."), user=architect, reason="one")
    second = review.revision_propose(project, kueue_with(promise="Second."), user=other_architect, reason="two")
    review.revision_accept(first, user=reviewer)
    second.refresh_from_db()
    return second, kueue().version


def test_a_conflicting_proposal_is_not_edited_but_rebased(architect, other_architect, reviewer):
    second, _ = _conflicting_pair(architect, other_architect, reviewer)
    with pytest.raises(ValidationError) as exc:
        review.revision_update(second, kueue_with(promise="Edited."), user=other_architect, reason="x", submit=True)
    assert messages(exc, "status") == ["A conflicting proposal cannot be edited; rebase it first."]


def test_a_proposal_that_does_not_conflict_needs_no_rebase(architect):
    revision = review.revision_propose(kueue(), kueue_with(promise="P."), user=architect, reason="p")
    with pytest.raises(ValidationError) as exc:
        review.revision_rebase(revision, user=architect)
    assert messages(exc, "status") == ["Only a conflicting proposal needs a rebase."]


def test_only_the_author_rebases_a_conflicting_proposal(architect, other_architect, reviewer):
    second, _ = _conflicting_pair(architect, other_architect, reviewer)
    with pytest.raises(PermissionDenied):
        review.revision_rebase(second, user=architect, resolutions={"placement.promise": "proposed"})
    second.refresh_from_db()
    assert second.status == Revision.CONFLICTING


def test_rebase_explains_each_missing_unknown_or_invalid_resolution(architect, other_architect, reviewer):
    second, version = _conflicting_pair(architect, other_architect, reviewer)
    with pytest.raises(ValidationError) as exc:
        review.revision_rebase(second, user=other_architect)
    assert messages(exc, "resolutions") == [
        f"placement.promise: changed by revision {version} (accepted 'First.') and by this proposal ('Second.'); "
        "keep 'accepted' or 'proposed'"
    ]
    with pytest.raises(ValidationError) as exc:
        review.revision_rebase(second, user=other_architect, resolutions={"summary": "proposed", "placement.promise": "mine"})
    assert messages(exc, "resolutions") == [
        "summary: not a field changed by both sides",
        "placement.promise: choose accepted or proposed, not 'mine'",
    ]


def test_a_rebased_proposal_starts_from_the_current_version_and_is_reviewed_again(architect, other_architect, reviewer):
    second, version = _conflicting_pair(architect, other_architect, reviewer)
    rebased = review.revision_rebase(second, user=other_architect, resolutions={"placement.promise": "proposed"})
    rebased.refresh_from_db()
    assert (rebased.status, rebased.base_version) == (Revision.PROPOSED, version)
    assert rebased.document["placement"]["promise"] == "Second."


# -- restore and diff -----------------------------------------------------------------------------


def test_only_an_accepted_revision_can_be_restored(architect):
    proposal = review.revision_propose(kueue(), kueue_with(promise="P."), user=architect, reason="p")
    with pytest.raises(ValidationError) as exc:
        review.revision_restore(proposal, user=architect, reason="back")
    assert messages(exc, "revision") == ["Only an accepted revision can be restored."]


def test_a_restore_proposal_points_at_the_revision_it_restores(architect, reviewer):
    project = kueue()
    original = project.revisions.get(number=project.version)
    change = review.revision_propose(project, kueue_with(promise="Changed."), user=architect, reason="change")
    review.revision_accept(change, user=reviewer)
    restore = review.revision_restore(original, user=architect, reason="back")
    restore.refresh_from_db()
    assert restore.restored_from == original and restore.base_version == kueue().version


def test_the_diff_against_an_earlier_revision_shows_what_changed_since(architect, reviewer):
    project = kueue()
    original = project.revisions.get(number=project.version)
    first = review.revision_propose(project, kueue_with(promise="First."), user=architect, reason="one")
    review.revision_accept(first, user=reviewer)
    second = review.revision_propose(kueue(), kueue_with(promise="First.", summary="S."), user=architect, reason="two")
    assert [c.path for c in review.revision_diff(second)] == ["summary"]
    assert [c.path for c in review.revision_diff(second, against=original)] == ["summary", "placement.promise"]


def test_a_new_projects_diff_shows_every_field_as_added(architect, new_project_data):
    project = review.project_create(ProjectDocument.model_validate(new_project_data), user=architect)
    changes = review.revision_diff(project.revisions.get())
    assert changes and all(c.kind == "added" for c in changes)
    assert "slug" in {c.path for c in changes}


# -- a page's copy of a proposal that was reviewed meanwhile --------------------------------------


def test_a_proposal_accepted_meanwhile_cannot_be_rejected_from_an_older_copy(architect, reviewer):
    revision = review.revision_propose(kueue(), kueue_with(promise="A."), user=architect, reason="a")
    second_reviewers_copy = Revision.objects.get(pk=revision.pk)  # loaded before the accept
    review.revision_accept(revision, user=reviewer)
    other_reviewer = make_user("rev2", "reviewer")
    with pytest.raises(ValidationError) as exc:
        review.revision_reject(second_reviewers_copy, user=other_reviewer, comment="no")
    assert messages(exc, "status") == ["Only a proposed revision can be reviewed; this one is accepted."]
    revision.refresh_from_db()
    assert (revision.status, revision.reviewer, revision.review_comment) == (Revision.ACCEPTED, reviewer, "")


def test_a_proposal_accepted_meanwhile_cannot_be_edited_from_an_older_copy(architect, reviewer):
    revision = review.revision_propose(kueue(), kueue_with(promise="A."), user=architect, reason="a")
    authors_copy = Revision.objects.get(pk=revision.pk)  # the author's edit page, loaded before the accept
    review.revision_accept(revision, user=reviewer)
    with pytest.raises(ValidationError) as exc:
        review.revision_update(authors_copy, kueue_with(promise="B."), user=architect, reason="b", submit=True)
    assert messages(exc, "status") == ["An accepted proposal cannot be edited; propose a new change to the project."]
    revision.refresh_from_db()
    assert (revision.status, revision.document["placement"]["promise"]) == (Revision.ACCEPTED, "A.")
