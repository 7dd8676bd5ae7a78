"""The interactive layer map (plotly), its accessible list twin and the embeddable read-only views.

Thin: the filter form reads the URL, `placement.catalog.selectors.layer_map` builds the data, the figure
and the list. An htmx request (the filter form) gets only the fragment that changes, and the
response names the canonical URL to push, so the filter state is always the address bar.
"""

from __future__ import annotations

from django import forms
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.clickjacking import xframe_options_exempt

from placement.access.decorators import embed_read_required, read_required
from placement.catalog.map_figure import layer_map_figure
from placement.catalog.map_frame import first_frame
from placement.catalog.page_cache import catalog_page
from placement.catalog.schemas import CncfStatus
from placement.catalog.selectors.catalog import catalog_vocabulary
from placement.catalog.selectors.layer_map import (
    DEFAULT_VIEW,
    ENFORCEMENT_LABELS,
    UNIT_LABELS,
    VIEWS,
    MapFilters,
    contract_rows,
    describe,
    layer_map_data,
    layer_map_groups,
    stack_choices,
)
from placement.stacks.models import Stack


class LayerMapFilterForm(forms.Form):
    view = forms.ChoiceField(label="View", required=False, choices=[(v.slug, v.label) for v in VIEWS.values()])
    unit = forms.ChoiceField(label="Resource unit", required=False)
    enforcement = forms.ChoiceField(label="Enforcement point", required=False)
    capability = forms.ChoiceField(label="Capability", required=False)
    pending = forms.BooleanField(label="Pending review only", required=False)
    cncf = forms.ChoiceField(
        label="CNCF status", required=False, choices=[("", "any")] + [(c.value, c.value) for c in CncfStatus]
    )
    archived = forms.BooleanField(label="Show archived projects", required=False)
    stack = forms.TypedChoiceField(label="Lay a saved stack over the map", required=False, coerce=int, empty_value=None)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["unit"].choices = [("", "any")] + list(UNIT_LABELS.items())
        self.fields["enforcement"].choices = [("", "any")] + list(ENFORCEMENT_LABELS.items())
        self.fields["capability"].choices = [("", "any")] + [(c.slug, c.name) for c in catalog_vocabulary().capabilities]
        self.fields["stack"].choices = [("", "none")] + [(str(pk), name) for pk, name in stack_choices()]

    def filters(self) -> MapFilters:
        """Valid fields as filters; an invalid value (a stale link) is dropped and shown as an error."""
        self.is_valid()
        data = getattr(self, "cleaned_data", {})
        return MapFilters(
            view=data.get("view") or DEFAULT_VIEW,
            unit=data.get("unit") or "",
            enforcement=data.get("enforcement") or "",
            capability=data.get("capability") or "",
            pending=bool(data.get("pending")),
            stack=data.get("stack") or None,
            cncf=data.get("cncf") or "",
            archived=bool(data.get("archived")),
        )


def _wants_fragment(request) -> bool:
    htmx = getattr(request, "htmx", None)
    return bool(htmx) and not htmx.boosted and not htmx.history_restore_request


def _map_context(request) -> dict:
    form = LayerMapFilterForm(request.GET)
    filters = form.filters()
    data = layer_map_data(filters)
    query = filters.query()
    return {
        "form": form,
        "filters": filters,
        "data": data,
        "query": query,
        "views": [(v, f"view={v.slug}" + _without_view(query)) for v in VIEWS.values()],
        "description": describe(data),
        "contracts": contract_rows(data),
    }


def _figures(data) -> dict:
    """The map drawn wide and as one column for phones; the page's script picks by its width."""
    wide, narrow = layer_map_figure(data), layer_map_figure(data, narrow=True)
    # the first frame: the same figures as static SVG, shown with the HTML until plotly has drawn
    frame = mark_safe(first_frame(wide, "wide") + first_frame(narrow, "narrow"))  # noqa: S308 (escaped by map_frame)
    return {"figure": wide, "figure_narrow": narrow, "frame": frame}


def _without_view(query: str) -> str:
    rest = "&".join(part for part in query.split("&") if part and not part.startswith("view="))
    return f"&{rest}" if rest else ""


def _page(request, page: str, fragment: str, context: dict, url_name: str):
    response = render(request, fragment if _wants_fragment(request) else page, context)
    if _wants_fragment(request):
        # hx-push-url pushes this clean URL rather than the raw form serialisation.
        response["HX-Push-Url"] = f"{reverse(url_name)}?{context['query']}"
    return response


@read_required
@catalog_page
def layer_map(request):
    context = _map_context(request)
    context.update(_figures(context["data"]))
    return _page(request, "placement/layer_map.html", "placement/_map_figure.html", context, "layer-map")


@read_required
@catalog_page
def layer_map_list(request):
    context = _map_context(request)
    context["groups"] = layer_map_groups(context["data"])
    return _page(request, "placement/layer_map_list.html", "placement/_map_list.html", context, "layer-map-list")


@xframe_options_exempt
@embed_read_required
@catalog_page
def embed_map(request):
    """Read-only map for iframes: no navigation, no forms; the URL carries the same filters."""
    context = _map_context(request)
    context.update(_figures(context["data"]))
    return render(request, "placement/embed_map.html", context)


@xframe_options_exempt
@embed_read_required
def embed_stack(request, pk: int):
    """Read-only stack for iframes: its slots, contract checks and its overlay on the layer map."""
    stack = get_object_or_404(Stack, pk=pk)
    form = LayerMapFilterForm({"view": request.GET.get("view", DEFAULT_VIEW), "stack": str(stack.pk)})
    filters = form.filters()
    data = layer_map_data(filters)
    return render(
        request,
        "placement/embed_stack.html",
        {
            "stack": stack,
            "c": stack.composition,
            "data": data,
            **_figures(data),
            "description": describe(data),
            "contracts": contract_rows(data),
            "query": filters.query(),
        },
    )
