"""Catalog pages: the layer map, the project list with live filters, detail, create and edit."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render

from placement.access.decorators import action_required, read_required
from placement.catalog.filtersets import ProjectFilterSet
from placement.catalog.forms import ProjectForm, project_form
from placement.catalog.models import Project
from placement.catalog.page_cache import catalog_page
from placement.catalog.selectors.catalog import (
    draft_placement_preview,
    layer_map_grid,
    pending_project_ids,
    project_document,
    project_list_queryset,
    project_template_context,
)
from placement.common.pages import apply_service_errors, render_page_or_fragment
from placement.common.widgets import RowsField, new_row_key
from placement.decisions.document import RING_ORDER
from placement.decisions.selectors.decisions import project_ring, ring_by_project_id
from placement.review import services as review_services


@read_required
@catalog_page
def home(request):
    columns, rows = layer_map_grid()
    rings = ring_by_project_id()
    ring = request.GET.get("ring", "")
    if ring in RING_ORDER:
        # The radar's ring filter on the map: only the projects the organisation put in that ring.
        for row in rows:
            for cell in row.cells:
                cell.primary = [p for p in cell.primary if rings.get(p.pk) == ring]
                cell.secondary = [p for p in cell.secondary if rings.get(p.pk) == ring]
    else:
        ring = ""
    context = {"columns": columns, "rows": rows, "pending": pending_project_ids(), "rings": rings,
               "ring": ring, "ring_choices": RING_ORDER}
    return render(request, "placement/home.html", context)


@read_required
@catalog_page
def project_list(request):
    # Always bound: no query string means "no filter", so the menu link lists every project.
    filterset = ProjectFilterSet(request.GET, queryset=project_list_queryset())
    projects = list(filterset.qs) if filterset.is_valid() else []
    context = {"filter": filterset, "projects": projects, "query": request.GET.urlencode()}
    return render_page_or_fragment(request, "placement/project_list.html", "placement/_project_table.html", context)


@read_required
@catalog_page
def project_detail(request, slug: str):
    project = get_object_or_404(Project, slug=slug)
    doc = project_document(project)
    context = {"project": project, **project_template_context(doc), "ring": project_ring(project)}
    return render(request, "placement/project_detail.html", context)


@action_required("propose")
def project_form_row(request, field: str):
    """One empty row of a repeatable field (contract points, misuses, sources), added with htmx."""
    form = project_form()
    if not isinstance(form.fields.get(field), RowsField):
        raise Http404(field)
    row = form.fields[field].widget.row_context(field, new_row_key(), {})
    return render(request, "placement/widgets/row.html", {"row": row})


@read_required
def project_placement_preview(request):
    """The live preview beside the placement fields: where the project lands on the layer map."""
    form = project_form()
    placed = {
        map_slug: (request.GET.get(primary, ""), [c for c in request.GET.getlist(secondary) if c])
        for map_slug, primary, secondary in form.map_fields
    }
    context = {"preview": draft_placement_preview(placed), "name": request.GET.get("name", "").strip() or "This project"}
    return render(request, "placement/_form_placement_preview.html", context)


def _submit(request) -> bool:
    return request.POST.get("action", "submit") != "draft"


@action_required("create_project")
def project_create(request):
    form = project_form(data=request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            project = review_services.project_create(
                form.document, user=request.user, reason=form.cleaned_data["reason"], submit=_submit(request)
            )
        except ValidationError as exc:
            apply_service_errors(form, exc)
        else:
            messages.success(request, f"{project.name} was proposed; a reviewer must accept it before it is on the map.")
            return redirect("project-detail", slug=project.slug)
    status = 400 if request.method == "POST" else 200
    return render(request, "placement/project_form.html", {"form": form, "creating": True}, status=status)


@action_required("propose")
def project_edit(request, slug: str):
    project = get_object_or_404(Project, slug=slug, accepted=True)
    if request.method == "POST":
        data = request.POST.copy()
        data["slug"] = project.slug  # the slug is the identity; it does not change by proposal
        form = project_form(data=data)
        if form.is_valid():
            try:
                revision = review_services.revision_propose(
                    project, form.document, user=request.user, reason=form.cleaned_data["reason"], submit=_submit(request)
                )
            except ValidationError as exc:
                apply_service_errors(form, exc)
            else:
                messages.success(request, "Your change was proposed for review.")
                return redirect("revision-detail", pk=revision.pk)
        return render(request, "placement/project_form.html", {"form": form, "project": project}, status=400)
    form = project_form(initial=ProjectForm.initial_from(project_document(project)))
    return render(request, "placement/project_form.html", {"form": form, "project": project})
