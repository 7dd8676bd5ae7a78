"""Review pages: the queue, a proposal with its diff, decisions, history, compare and restore."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Count
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from placement.access.decorators import action_required, read_required
from placement.access.services import can
from placement.catalog.forms import ProjectForm, project_form
from placement.catalog.models import Project
from placement.catalog.schemas import ProjectDocument
from placement.catalog.selectors.catalog import placement_preview, project_template_context
from placement.common.pages import apply_service_errors, render_page_or_fragment
from placement.review import services as review_services
from placement.review.models import Revision
from placement.review.selectors import revisions_visible_to


@read_required
def review_queue(request):
    status = request.GET.get("status", Revision.PROPOSED)
    visible = revisions_visible_to(request.user)
    revisions = visible.select_related("project", "author").order_by("created_at")
    if status != "all":
        revisions = revisions.filter(status=status)
    if request.GET.get("project"):
        revisions = revisions.filter(project__slug=request.GET["project"])
    counts = dict(visible.values_list("status").annotate(n=Count("id")))
    context = {
        "revisions": list(revisions[:200]),
        "status": status,
        "status_counts": [(s, counts.get(s, 0)) for s, _ in Revision.STATUSES],
    }
    return render_page_or_fragment(request, "placement/review_queue.html", "placement/_review_table.html", context)


@read_required
def revision_detail(request, pk: int):
    visible = revisions_visible_to(request.user)
    revision = get_object_or_404(visible.select_related("project", "author", "reviewer"), pk=pk)
    against = None
    if request.GET.get("against"):
        against = get_object_or_404(visible, pk=request.GET["against"], project=revision.project)
    new_project = against is None and not revision.project.accepted
    context = {
        "revision": revision,
        "project": revision.project,
        "new_project": new_project,
        "rebase": review_services.rebase_plan(revision) if revision.status == Revision.CONFLICTING else None,
        "changes": review_services.revision_diff(revision, against),
        "against": against,
        "can_review": can(request.user, "review") and revision.author_id != request.user.pk,
        "is_author": request.user.is_authenticated and revision.author_id == request.user.pk,
    }
    if new_project:
        # A new project is reviewed as the page it will become, placed on the map, not as a diff.
        doc = ProjectDocument.model_validate(revision.document)
        columns, rows = placement_preview(doc)
        context.update(project_template_context(doc), columns=columns, rows=rows)
    return render(request, "placement/revision_detail.html", context)


def _decide(request, pk: int, decision):
    revision = get_object_or_404(revisions_visible_to(request.user), pk=pk)
    try:
        decided = decision(revision, user=request.user, comment=request.POST.get("comment", ""))
        if decided.status == decided.ACCEPTED:
            messages.success(request, f"Accepted: {decided.project.name} is now at version {decided.number}.")
        elif decided.status == decided.REJECTED:
            messages.success(request, f"Rejected: the proposal for {decided.project.name} was returned to its author.")
    except review_services.ProposalConflict as exc:
        messages.error(request, f"Conflict: {exc}.")
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    except PermissionDenied as exc:
        messages.error(request, str(exc) or "You may not review this proposal.")
    return redirect("revision-detail", pk=revision.pk)


@require_POST
@action_required("review")
def revision_accept(request, pk: int):
    return _decide(request, pk, review_services.revision_accept)


@require_POST
@action_required("review")
def revision_reject(request, pk: int):
    return _decide(request, pk, review_services.revision_reject)


@require_POST
@action_required("propose")
def revision_rebase(request, pk: int):
    revision = get_object_or_404(revisions_visible_to(request.user), pk=pk)
    resolutions = {
        key.removeprefix("resolution:"): value for key, value in request.POST.items() if key.startswith("resolution:")
    }
    try:
        review_services.revision_rebase(revision, user=request.user, resolutions=resolutions)
        messages.success(request, "Rebased on the current version; it is in the review queue again.")
    except (ValidationError, PermissionDenied) as exc:
        messages.error(request, " ".join(getattr(exc, "messages", [str(exc)])))
    return redirect("revision-detail", pk=revision.pk)


@action_required("propose")
def revision_edit(request, pk: int):
    revision = get_object_or_404(revisions_visible_to(request.user).select_related("project"), pk=pk)
    if revision.author_id != request.user.pk:
        raise PermissionDenied
    if request.method == "POST":
        data = request.POST.copy()
        data["slug"] = revision.project.slug
        form = project_form(data=data)
        if form.is_valid():
            try:
                review_services.revision_update(
                    revision,
                    form.document,
                    user=request.user,
                    reason=form.cleaned_data["reason"],
                    submit=request.POST.get("action", "submit") != "draft",
                )
            except ValidationError as exc:
                apply_service_errors(form, exc)
            else:
                return redirect("revision-detail", pk=revision.pk)
        return render(request, "placement/project_form.html", {"form": form, "revision": revision}, status=400)
    initial = ProjectForm.initial_from(ProjectDocument.model_validate(revision.document))
    initial["reason"] = revision.reason
    form = project_form(initial=initial)
    return render(request, "placement/project_form.html", {"form": form, "revision": revision})


@read_required
def project_history(request, slug: str):
    project = get_object_or_404(Project, slug=slug)
    revisions = list(revisions_visible_to(request.user, project.revisions.select_related("author", "reviewer"))
                     .order_by("-created_at", "-id"))
    accepted = [r for r in revisions if r.status == Revision.ACCEPTED]
    timeline = []
    for rev in accepted:
        previous = next((r for r in accepted if r.number == (rev.number or 0) - 1), None)
        changes = review_services.revision_diff(rev, previous) if previous else []
        timeline.append({"revision": rev, "previous": previous, "moved": [c.path for c in changes][:12]})
    return render(
        request,
        "placement/project_history.html",
        {"project": project, "timeline": timeline, "open": [r for r in revisions if r.is_open]},
    )


@require_POST
@action_required("propose")
def revision_restore(request, pk: int):
    revision = get_object_or_404(revisions_visible_to(request.user), pk=pk)
    reason = request.POST.get("reason", "") or f"Restore revision {revision.number}"
    try:
        restored = review_services.revision_restore(revision, user=request.user, reason=reason)
    except (ValidationError, PermissionDenied) as exc:
        messages.error(request, " ".join(getattr(exc, "messages", [str(exc)])))
        return redirect("project-history", slug=revision.project.slug)
    messages.success(request, f"Restoring revision {revision.number} was proposed for review.")
    return redirect("revision-detail", pk=restored.pk)
