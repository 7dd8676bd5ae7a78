"""The review workflow: proposals with a mandatory reason, review with a diff, accept atomically,
reject with a comment, conflicts between proposals from the same base, history and restore.

Every function checks permissions itself, so no page, API or admin path can skip them.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone
from pydantic import ValidationError as PydanticValidationError

from placement.access.services import require
from placement.catalog.models import Project
from placement.catalog.schemas import ProjectDocument, format_error_location
from placement.catalog.selectors.catalog import catalog_vocabulary, project_document_data
from placement.catalog.services import catalog as catalog_services
from placement.decisions.services import webhooks
from placement.review.diff import Change, diff_documents
from placement.review.merge import RESOLUTIONS, MergeResult, merge_documents
from placement.review.models import Revision


class ProposalConflict(Exception):
    """The project changed since the proposal was made; it must be rebased before review."""


def _reason(reason: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise ValidationError({"reason": ["A reason for the change is required."]})
    return reason


def _document_json(doc: ProjectDocument) -> dict:
    return doc.model_dump(mode="json")


@transaction.atomic
def project_create(doc: ProjectDocument, *, user, reason: str = "", submit: bool = True) -> Project:
    """A new project starts as a proposal; it reaches the map once a reviewer accepts it."""
    require(user, "create_project")
    if Project.objects.filter(slug=doc.slug).exists():
        raise ValidationError({"slug": [f"A project with slug {doc.slug!r} already exists."]})
    project = Project.objects.create(
        slug=doc.slug,
        name=doc.name,
        kind=doc.kind.value,
        homepage=doc.homepage,
        summary=doc.summary,
        placement=doc.placement.model_dump(mode="json"),
        version=0,
        accepted=False,
        created_by=user,
    )
    Revision.objects.create(
        project=project,
        document=_document_json(doc),
        base_version=0,
        reason=_reason(reason or f"New project {doc.name}"),
        status=Revision.PROPOSED if submit else Revision.DRAFT,
        author=user,
    )
    return project


def _require_change(project: Project, doc: ProjectDocument) -> None:
    """A proposal that changes nothing would only fill the review queue (a restore of the current
    version, a form saved unchanged)."""
    stored = Project.objects.get(pk=project.pk)  # the stored version, not a caller's copy it may have edited
    if stored.accepted and _document_json(doc) == project_document_data(stored):
        raise ValidationError(
            {"document": [f"This proposal changes nothing: it is identical to version {project.version} of {project.name}."]}
        )


def revision_propose(project: Project, doc: ProjectDocument, *, user, reason: str, submit: bool = True) -> Revision:
    require(user, "propose")
    if doc.slug != project.slug:
        raise ValidationError({"slug": ["The slug of an existing project cannot change."]})
    if submit:  # a draft may start as a copy of the current version
        _require_change(project, doc)
    return Revision.objects.create(
        project=project,
        document=_document_json(doc),
        base_version=project.version,
        reason=_reason(reason),
        status=Revision.PROPOSED if submit else Revision.DRAFT,
        author=user,
    )


def _require_author(revision: Revision, user) -> None:
    require(user, "propose")
    if revision.author_id != user.pk and not user.is_superuser:
        raise PermissionDenied("only the author may change this proposal")


# What the author can do instead, by the status that stops an edit.
_NOT_EDITABLE = {
    Revision.CONFLICTING: "A conflicting proposal cannot be edited; rebase it first.",
    Revision.ACCEPTED: "An accepted proposal cannot be edited; propose a new change to the project.",
    Revision.REJECTED: "A rejected proposal cannot be edited; propose a new change to the project.",
}


def revision_update(revision: Revision, doc: ProjectDocument, *, user, reason: str, submit: bool) -> Revision:
    """Edit one's own draft (or a proposal not yet reviewed). The row is read again under a lock:
    the author's page may hold a copy from before a reviewer accepted or rejected it."""
    _require_author(revision, user)
    with transaction.atomic():  # a block, not the decorator: mutmut 3 skips decorated functions
        revision = Revision.objects.select_for_update(of=("self",)).select_related("project").get(pk=revision.pk)
        if revision.status not in (Revision.DRAFT, Revision.PROPOSED):
            raise ValidationError({"status": [_NOT_EDITABLE[revision.status]]})
        if doc.slug != revision.project.slug:
            raise ValidationError({"slug": ["The slug of an existing project cannot change."]})
        revision.document = _document_json(doc)
        revision.reason = _reason(reason)
        revision.status = Revision.PROPOSED if submit else Revision.DRAFT
        revision.save()
    return revision


def rebase_plan(revision: Revision, project: Project | None = None) -> MergeResult:
    """The three-way merge of a proposal onto the current version: base is the accepted revision the
    proposal started from, so fields only the accepted revision changed are kept, not reverted."""
    project = project or revision.project
    base = (
        Revision.objects.filter(project=project, status=Revision.ACCEPTED, number=revision.base_version)
        .values_list("document", flat=True)
        .first()
    )
    return merge_documents(base, project_document_data(project), revision.document)


@transaction.atomic
def revision_rebase(revision: Revision, *, user, resolutions: dict[str, str] | None = None) -> Revision:
    """Take a conflicting proposal onto the current accepted version by a three-way merge; fields
    changed by both need a resolution ('accepted' or 'proposed') from the author. Reviewed again."""
    _require_author(revision, user)
    project = Project.objects.select_for_update().get(pk=revision.project_id)
    revision = Revision.objects.select_for_update().get(pk=revision.pk)
    if revision.status != Revision.CONFLICTING:
        raise ValidationError({"status": ["Only a conflicting proposal needs a rebase."]})
    plan = rebase_plan(revision, project)
    resolutions = dict(resolutions or {})
    conflicts = {c.path: c for c in plan.conflicts}
    errors = [f"{path}: not a field changed by both sides" for path in resolutions if path not in conflicts]
    errors += [
        f"{path}: choose {' or '.join(RESOLUTIONS)}, not {choice!r}"
        for path, choice in resolutions.items()
        if path in conflicts and choice not in RESOLUTIONS
    ]
    errors += [
        f"{c.path}: changed by revision {project.version} (accepted {c.accepted!r}) and by this proposal "
        f"({c.proposed!r}); keep 'accepted' or 'proposed'"
        for c in plan.conflicts
        if c.path not in resolutions
    ]
    if errors:
        raise ValidationError({"resolutions": errors})
    try:
        doc = ProjectDocument.model_validate(plan.resolved(resolutions), context={"vocabulary": catalog_vocabulary()})
    except PydanticValidationError as exc:
        raise ValidationError(
            {"resolutions": [f"{format_error_location(tuple(e['loc']))}: {e['msg']}" for e in exc.errors()]}
        ) from None
    revision.document = _document_json(doc)
    revision.base_version = project.version
    revision.status = Revision.PROPOSED
    revision.save()
    return revision


def _check_reviewer(revision: Revision, user) -> None:
    require(user, "review")
    if revision.author_id == user.pk:
        raise PermissionDenied("nobody may review their own proposal")
    if revision.status == Revision.CONFLICTING:
        # The documented answer for a review conflict (409 in the API), not an input error.
        raise ProposalConflict(f"{revision.project.slug} moved since this proposal was made; rebase it first")
    if revision.status != Revision.PROPOSED:
        raise ValidationError({"status": [f"Only a proposed revision can be reviewed; this one is {revision.status}."]})


def revision_accept(revision: Revision, *, user, comment: str = "") -> Revision:
    """Apply the proposal to the project atomically, or mark it conflicting if the base moved."""
    accepted, conflict = _accept(revision, user, comment)
    if conflict:
        # Raised after the transaction committed the 'conflicting' mark.
        raise ProposalConflict(conflict)
    return accepted


@transaction.atomic
def _accept(revision: Revision, user, comment: str) -> tuple[Revision, str]:
    project = Project.objects.select_for_update().get(pk=revision.project_id)
    revision = Revision.objects.select_for_update().get(pk=revision.pk)
    _check_reviewer(revision, user)
    if revision.base_version != project.version:
        revision.status = Revision.CONFLICTING
        revision.save(update_fields=["status", "updated_at"])
        return revision, f"{project.slug} moved from version {revision.base_version} to {project.version}; rebase the proposal"
    doc = ProjectDocument.model_validate(revision.document)
    catalog_services.project_apply(project, doc)
    revision.status = Revision.ACCEPTED
    revision.number = project.version
    revision.reviewer = user
    revision.review_comment = comment.strip()
    revision.reviewed_at = timezone.now()
    revision.save()
    # Every other open proposal started from the old base: it must be rebased before review.
    Revision.objects.filter(project=project, status__in=[Revision.PROPOSED, Revision.DRAFT]).exclude(
        pk=revision.pk
    ).filter(base_version__lt=project.version).update(status=Revision.CONFLICTING, updated_at=timezone.now())
    webhooks.event_publish(
        "catalog.changed",
        {"project": project.slug, "version": project.version, "revision": revision.pk, "reason": revision.reason},
    )
    return revision, ""


def revision_reject(revision: Revision, *, user, comment: str) -> Revision:
    """Reject with a comment. The row is read again under a lock, as accepting does: a second
    reviewer's copy from before an accept must not turn the accepted revision into a rejected one."""
    with transaction.atomic():  # a block, not the decorator: mutmut 3 skips decorated functions
        revision = Revision.objects.select_for_update(of=("self",)).select_related("project").get(pk=revision.pk)
        _check_reviewer(revision, user)
        if not (comment or "").strip():
            raise ValidationError({"comment": ["Say why the proposal is rejected."]})
        revision.status = Revision.REJECTED
        revision.reviewer = user
        revision.review_comment = comment.strip()
        revision.reviewed_at = timezone.now()
        revision.save()
    return revision


def revision_restore(revision: Revision, *, user, reason: str) -> Revision:
    """Restoring an earlier accepted revision is a new proposal holding its document."""
    if revision.status != Revision.ACCEPTED:
        raise ValidationError({"revision": ["Only an accepted revision can be restored."]})
    project = Project.objects.get(pk=revision.project_id)  # the current version, not a cached one
    doc = ProjectDocument.model_validate(revision.document)
    restored = revision_propose(project, doc, user=user, reason=reason)
    restored.restored_from = revision
    restored.save(update_fields=["restored_from"])
    return restored


def revision_diff(revision: Revision, against: Revision | None = None) -> list[Change]:
    """What the proposal changes against `against`, or against the project's current state."""
    if against is not None:
        old = against.document
    elif revision.project.accepted:
        old = project_document_data(revision.project)
    else:
        old = {}
    return diff_documents(old, revision.document)
