"""The deploy page of a saved stack (file tree, previews) and its .zip: thin over services.deploy."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render

from placement.models import Stack
from placement.selectors.evidence import builtin_scenarios, stack_evidence
from placement.services.deploy import stack_export
from placement.views.common import read_required


def _export_or_errors(request, stack):
    try:
        return stack_export(stack, run_id=request.GET.get("run"), scenario_name=request.GET.get("scenario_name")), {}
    except ValidationError as exc:
        return None, exc.message_dict


@read_required
def stack_deploy(request, pk: int):
    stack = get_object_or_404(Stack, pk=pk)
    result, errors = _export_or_errors(request, stack)
    context = {
        "stack": stack, "result": result, "errors": errors, "scenarios": builtin_scenarios(),
        "runs": [r for r in stack_evidence(stack) if r.status == "succeeded"],
        "query": request.GET.urlencode(),
    }
    return render(request, "placement/stack_deploy.html", context, status=400 if errors else 200)


@read_required
def stack_deploy_zip(request, pk: int):
    stack = get_object_or_404(Stack, pk=pk)
    result, errors = _export_or_errors(request, stack)
    if result is None:
        return render(request, "placement/stack_deploy.html", {"stack": stack, "errors": errors, "scenarios": builtin_scenarios()}, status=400)
    response = HttpResponse(result.export.zip_bytes(), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{result.export.name}.zip"'
    return response
