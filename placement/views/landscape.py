"""The landscape export: a landscape-style page and the same catalog as CSV."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render

from placement.page_cache import catalog_page
from placement.schemas import CncfStatus
from placement.selectors.landscape import landscape_csv, landscape_groups
from placement.views.common import read_required


@read_required
@catalog_page
def landscape(request):
    cncf = request.GET.get("cncf", "")
    cncf = cncf if cncf in {c.value for c in CncfStatus} else ""
    include_archived = request.GET.get("archived") == "1"
    return render(request, "placement/landscape.html", {
        "groups": landscape_groups(include_archived=include_archived, cncf=cncf),
        "cncf": cncf, "include_archived": include_archived, "statuses": [c.value for c in CncfStatus],
    })


@read_required
@catalog_page
def landscape_export_csv(request):
    response = HttpResponse(landscape_csv(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="gpu-placement-atlas-landscape.csv"'
    return response
