"""The landscape export: a landscape-style page and the same catalog as CSV."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render

from placement.access.decorators import read_required
from placement.catalog.page_cache import catalog_page
from placement.catalog.schemas import CncfStatus, Kind
from placement.catalog.selectors.landscape import LandscapeFilters, landscape_csv, landscape_groups

PLANES = ("data", "control", "platform")


@read_required
@catalog_page
def landscape(request):
    """A dense grid by layer and category; every filter is in the URL, every card has a permalink."""
    cncf = request.GET.get("cncf", "")
    kind = request.GET.get("kind", "")
    plane = request.GET.get("plane", "")
    filters = LandscapeFilters(
        cncf=cncf if cncf in {c.value for c in CncfStatus} else "",
        kind=kind if kind in {k.value for k in Kind} else "",
        plane=plane if plane in PLANES else "",
        q=request.GET.get("q", "").strip()[:100],
        include_archived=request.GET.get("archived") == "1",
    )
    groups = landscape_groups(filters)
    return render(request, "placement/landscape.html", {
        "groups": groups, "filters": filters, "shown": sum(len(g.documents) for g in groups),
        "statuses": [c.value for c in CncfStatus], "kinds": [k.value for k in Kind], "planes": PLANES,
        "query": request.GET.urlencode(),
    })


@read_required
@catalog_page
def landscape_export_csv(request):
    response = HttpResponse(landscape_csv(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="gpu-placement-atlas-landscape.csv"'
    return response
