"""From decision to cluster and back: a saved stack's deploy page and .zip (services.deploy), the
import page (a cluster snapshot in, a scenario out, simulated as found or under a saved stack) and the
upload on a stack's page (services.cluster_import, services.evidence), and a stack tried on the local
control plane (services.trial)."""

from __future__ import annotations

import yaml
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from placement.access.decorators import action_required, read_required
from placement.access.services import can
from placement.catalog.selectors.scenarios import builtin_scenarios
from placement.common.pages import render_progress
from placement.common.queue import RunNotAccepted
from placement.deploy.models import PlaneTrial
from placement.deploy.services import trial as trial_services
from placement.deploy.services.bundles import stack_export
from placement.deploy.services.imports import (
    check_file_roles,
    decode_snapshot_file,
    snapshot_limits,
    snapshot_scenario,
    snapshot_summary,
    upload_budget,
)
from placement.evidence.selectors.runs import stack_evidence
from placement.evidence.services import runs as evidence_services
from placement.stacks.models import Stack


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


@require_POST
@action_required("run_simulation")
def stack_simulate_cluster(request, pk: int):
    """Upload kubectl JSON of a cluster: its shape becomes the scenario this stack is simulated on."""
    stack = get_object_or_404(Stack, pk=pk)
    try:
        document = _snapshot_document(request)
        # A what-if changes only the node groups named here; empty: every group takes the stack.
        chosen = request.POST.get("node_groups", "").replace(",", " ").split()
        run, _created = evidence_services.simulation_start(user=request.user, stack=stack, scenario_document=document,
                                                           node_groups=chosen or None)
    except ValidationError as exc:
        for field, problems in exc.message_dict.items():
            for problem in problems:
                messages.error(request, f"Nothing was imported. {field}: {problem}")
        return redirect("stack-detail", pk=stack.pk)
    except evidence_services.RunNotAccepted as exc:  # broker down, too many active runs
        messages.error(request, exc.message)
        return redirect("stack-detail", pk=stack.pk)
    return redirect("run-detail", pk=run.pk)


def _snapshot_document(request) -> dict:
    """The uploaded files as one scenario document, or ValidationError naming the file and reason."""
    files = {}
    kept = upload_budget()  # one budget for the three files of one snapshot
    for field in ("nodes_file", "pods_file", "queues_file"):
        upload = request.FILES.get(field)
        if upload is None and field != "queues_file":
            raise ValidationError({field: ["Upload the output of kubectl get nodes/pods -o json."]})
        files[field] = decode_snapshot_file(upload, field, field.removesuffix("_file"), kept) if upload is not None else None
    check_file_roles(files["nodes_file"], files["pods_file"])
    return snapshot_scenario(files["nodes_file"], files["pods_file"], files["queues_file"],
                             name=(request.POST.get("name") or "imported-cluster").strip())


@read_required
def cluster_import(request):
    """Import a cluster: its snapshot becomes a scenario to read, download, simulate as found or
    simulate under a saved stack. Nothing is stored until a simulation is started."""
    context = {"stacks": Stack.objects.order_by("-pk")[:100], "can_run": can(request.user, "run_simulation"),
               "limits": snapshot_limits()}
    if request.method != "POST":
        return render(request, "placement/cluster_import.html", context)
    action = request.POST.get("action", "preview")
    try:
        document = _snapshot_document(request)
        if action == "simulate":
            if not context["can_run"]:
                raise ValidationError({"action": ["Starting a simulation needs an architect or reviewer login."]})
            stack_id = request.POST.get("stack", "")
            stack = get_object_or_404(Stack, pk=int(stack_id)) if stack_id.isdigit() else None
            chosen = request.POST.get("node_groups", "").replace(",", " ").split() if stack else []
            run, _created = evidence_services.simulation_start(user=request.user, stack=stack, scenario_document=document,
                                                               node_groups=chosen or None)
            return redirect("run-detail", pk=run.pk)
    except ValidationError as exc:
        context["errors"] = [(field.replace("_", " "), problem) for field, problems in exc.message_dict.items() for problem in problems]
        return render(request, "placement/cluster_import.html", context, status=400)
    except evidence_services.RunNotAccepted as exc:
        context["errors"] = [("simulation", exc.message)]
        return render(request, "placement/cluster_import.html", context, status=503)
    text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
    if action == "download":
        response = HttpResponse(text, content_type="application/yaml; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{document["name"]}.yaml"'
        return response
    context.update(summary=snapshot_summary(document), scenario_yaml=text)
    return render(request, "placement/cluster_import.html", context)



@require_POST
@action_required("run_simulation")
def stack_try(request, pk: int):
    """Queue a trial of the stack's bundle on the local control plane and show its progress."""
    stack = get_object_or_404(Stack, pk=pk)
    try:
        trial = trial_services.trial_start(request.user, stack, run_id=request.POST.get("run") or None,
                                           scenario_name=request.POST.get("scenario_name", "").strip())
    except ValidationError as exc:
        for field, problems in exc.message_dict.items():
            for problem in problems:
                messages.error(request, f"No trial was started. {field}: {problem}")
        return redirect("stack-detail", pk=stack.pk)
    except RunNotAccepted as exc:  # the plane is busy, or the broker is down
        messages.error(request, exc.message)
        return redirect("stack-detail", pk=stack.pk)
    return redirect("plane-trial", pk=trial.pk)


@read_required
def plane_trial(request, pk: int):
    trial_services.trial_fail_lost()
    trial = get_object_or_404(PlaneTrial.objects.select_related("stack"), pk=pk)
    return render(request, "placement/plane_trial.html", {"trial": trial})


@read_required
def plane_trial_progress(request, pk: int):
    """Polled by htmx every 2 s; when the trial ends the page reloads to show the result."""
    trial_services.trial_fail_lost()
    trial = get_object_or_404(PlaneTrial, pk=pk)
    return render_progress(request, "placement/_plane_trial_progress.html", {"trial": trial}, trial)
