"""Simulation evidence pages: start a run, watch its progress (htmx polling), charts, side-by-side
comparison of stacks and seed sweeps with confidence intervals. Thin: services do the work."""

from __future__ import annotations

import json

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from placement.access.decorators import action_required, read_required
from placement.catalog.selectors.scenarios import builtin_scenarios
from placement.common.pages import render_progress
from placement.common.parsing import ParseProblem, load_yaml
from placement.evidence.charts import comparison_charts, run_charts
from placement.evidence.models import SimulationRun, StoryBand, Sweep
from placement.evidence.selectors.runs import run_timeline, side_by_side, sweep_summary
from placement.evidence.services import runs as evidence_services
from placement.evidence.services.story_band import story_bands_requested
from placement.stacks.models import Stack

MAX_UPLOAD_BYTES = 512 * 1024


def _uploaded_scenario(request) -> dict | None:
    upload = request.FILES.get("scenario_file")
    if upload is None:
        return None
    if upload.size > MAX_UPLOAD_BYTES:
        raise ValidationError({"scenario_file": [f"The file is larger than {MAX_UPLOAD_BYTES // 1024} KiB."]})
    try:
        data = load_yaml(upload.read())
    except ParseProblem as exc:
        problem = f"Not a YAML or JSON document: {exc}" if exc.syntax else str(exc)
        raise ValidationError({"scenario_file": [problem]}) from None
    if not isinstance(data, dict):
        raise ValidationError({"scenario_file": ["A scenario file holds a mapping (YAML or JSON object)."]})
    return data


def _seed(value: str) -> int | None:
    if value in (None, ""):
        return None
    try:
        return int(value)
    except ValueError:
        raise ValidationError({"seed": ["A seed is a whole number."]}) from None


def _errors_text(exc: ValidationError) -> str:
    return "; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())


@require_POST
@action_required("run_simulation")
def simulation_start(request, pk: int):
    stack = get_object_or_404(Stack, pk=pk)
    try:
        document = _uploaded_scenario(request)
        run, created = evidence_services.simulation_start(
            user=request.user,
            stack=stack,
            scenario_name=None if document is not None else request.POST.get("scenario_name") or None,
            scenario_document=document,
            seed=_seed(request.POST.get("seed", "")),
        )
    except ValidationError as exc:
        messages.error(request, f"Nothing was queued. {_errors_text(exc)}")
        return redirect("stack-detail", pk=stack.pk)
    except evidence_services.RunNotAccepted as exc:
        messages.error(request, exc.message)
        return redirect("stack-detail", pk=stack.pk)
    if not created:
        messages.info(request, "This stack, scenario and seed ran before: showing the stored evidence.")
    return redirect("run-detail", pk=run.pk)


@read_required
def run_detail(request, pk: int):
    evidence_services.simulation_fail_stale()
    run = get_object_or_404(SimulationRun.objects.select_related("stack"), pk=pk)
    charts = run_charts(run) if run.status == SimulationRun.SUCCEEDED else []
    timeline = run_timeline(run, request.GET.get("kind", ""))
    return render(request, "placement/run_detail.html", {"run": run, "charts": charts, "timeline": timeline})


@read_required
def run_progress(request, pk: int):
    """Polled by htmx every second; when the run finishes it tells the page to reload for charts."""
    evidence_services.simulation_fail_stale()
    run = get_object_or_404(SimulationRun, pk=pk)
    return render_progress(request, "placement/_run_progress.html", {"run": run}, run)


@read_required
def stack_compare(request):
    """2-4 stacks on one scenario side by side: the latest succeeded run of each."""
    ids = [int(i) for i in request.GET.getlist("stacks") if i.isdigit()][:4]
    scenario_name = request.GET.get("scenario_name", "")
    stacks = list(Stack.objects.filter(pk__in=ids))
    runs = []
    for stack in stacks:
        run = (
            stack.runs.filter(scenario_name__in=[scenario_name, _title_of(scenario_name)], status=SimulationRun.SUCCEEDED)
            .order_by("-finished_at")
            .first()
        )
        runs.append(run)
    present = [r for r in runs if r is not None]
    context = {
        "stacks": stacks,
        "runs": runs,
        "scenario_name": scenario_name,
        "table": side_by_side(present) if present else {},
        "charts": comparison_charts(present) if len(present) >= 2 else [],
        "all_stacks": Stack.objects.all()[:100],
        "scenarios": builtin_scenarios(),
    }
    return render(request, "placement/stack_compare.html", context)


def _title_of(name: str) -> str:
    return next((s.title for s in builtin_scenarios() if s.name == name), name)


@require_POST
@action_required("run_simulation")
def stack_compare_run(request):
    """Queue the chosen scenario for every chosen stack, then show the comparison."""
    ids = [int(i) for i in request.POST.getlist("stacks") if i.isdigit()]
    stacks = list(Stack.objects.filter(pk__in=ids))
    scenario_name = request.POST.get("scenario_name", "")
    if not 2 <= len(stacks) <= 4:
        messages.error(request, "Pick between 2 and 4 stacks to compare.")
        return redirect(reverse("stack-compare"))
    try:
        for stack in stacks:
            evidence_services.simulation_start(user=request.user, stack=stack, scenario_name=scenario_name, seed=_seed(request.POST.get("seed", "")))
    except ValidationError as exc:
        messages.error(request, f"Nothing more was queued. {_errors_text(exc)}")
    except evidence_services.RunNotAccepted as exc:
        messages.error(request, exc.message)
    query = "&".join(f"stacks={s.pk}" for s in stacks)
    return redirect(f"{reverse('stack-compare')}?{query}&scenario_name={scenario_name}")


@require_POST
@action_required("run_simulation")
def sweep_start(request):
    ids = [int(i) for i in request.POST.getlist("stacks") if i.isdigit()]
    try:
        seeds = int(request.POST.get("seeds", "5"))
    except ValueError:
        seeds = 0
    try:
        sweep = evidence_services.sweep_start(
            user=request.user,
            stacks=list(Stack.objects.filter(pk__in=ids)),
            scenario_name=request.POST.get("scenario_name", ""),
            seeds=seeds,
        )
    except ValidationError as exc:
        messages.error(request, f"Nothing was queued. {_errors_text(exc)}")
        return redirect(request.POST.get("back") or "stack-list")
    except evidence_services.RunNotAccepted as exc:
        messages.error(request, exc.message)
        return redirect(request.POST.get("back") or "stack-list")
    return redirect("sweep-detail", pk=sweep.pk)


@read_required
def sweep_detail(request, pk: int):
    evidence_services.simulation_fail_stale()
    sweep = get_object_or_404(Sweep, pk=pk)
    if sweep.candidates.exists():  # an evidence ranking: its candidates are read on its own page
        return redirect("evaluation-detail", pk=sweep.pk)
    summary = sweep_summary(sweep)
    return render(request, "placement/sweep_detail.html", {"sweep": sweep, "s": summary})


@read_required
def run_scenario_download(request, pk: int):
    run = get_object_or_404(SimulationRun, pk=pk)
    response = HttpResponse(json.dumps(run.scenario, indent=2), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="run-{run.pk}-scenario.json"'
    return response


@read_required
def run_band(request, pk: int):
    """htmx fragment: the verdicts this run's scenario takes part in, over seeds and under the band."""
    run = get_object_or_404(SimulationRun, pk=pk)
    bands = story_bands_requested(run.scenario_name)
    return render(request, "placement/_run_band.html", {
        "run": run, "verdicts": [b.summary for b in bands if b.status == StoryBand.DONE],
        "computing": any(b.status == StoryBand.COMPUTING for b in bands),
        "failed": [b for b in bands if b.status == StoryBand.FAILED], "stories": bool(bands)})
