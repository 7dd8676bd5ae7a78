"""Compare, compose and saved stacks: thin views over placement.stacks.services.stacks and evidence."""

from __future__ import annotations

import json

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST
from pydantic import ValidationError as PydanticValidationError

from placement.access.decorators import action_required, read_required
from placement.access.services import can
from placement.catalog.models import Project
from placement.catalog.selectors.scenarios import builtin_scenarios
from placement.common.pages import render_page_or_fragment
from placement.decisions.selectors.board import ranked_stack_evidence, shared_score_reasons, stack_comparison
from placement.evidence.models import Sweep
from placement.evidence.selectors.evaluation import EVALUATION_PREFIX, evaluation_summary
from placement.evidence.selectors.runs import stack_evidence
from placement.evidence.services import evaluation as evaluation_services
from placement.evidence.services import runs as evidence_services
from placement.evidence.services.runs import RunNotAccepted
from placement.rules import builtin_rules
from placement.stacks.forms import WORKLOAD_ROWS, ComposeForm, WorkloadClassForm, apply_compose_errors
from placement.stacks.models import Stack
from placement.stacks.services import stacks as rules_services
from placement.stacks.services.scenario import stack_plan


def _project_choices():
    return list(Project.objects.filter(accepted=True).order_by("name").values_list("slug", "name"))


def _profiles():
    return [(p.profile, p.name) for p in builtin_rules().profiles]


@read_required
def compare(request):
    slugs = request.GET.getlist("slugs")
    result, errors = None, {}
    if slugs:
        try:
            result = rules_services.compare_projects({"slugs": slugs})
        except ValidationError as exc:
            errors = exc.message_dict
    context = {"projects": _project_choices(), "selected": slugs, "result": result, "errors": errors}
    return render_page_or_fragment(request, "placement/compare.html", "placement/_compare_result.html", context)


@read_required
def compose(request):
    form = ComposeForm(request.GET or None, profiles=_profiles(), project_choices=_project_choices())
    rows = [WorkloadClassForm(request.GET or None, prefix=f"w{i + 1}") for i in range(WORKLOAD_ROWS)]
    result, request_data, errors, derived = None, None, {}, []
    if request.GET and form.is_valid() and all([row.is_valid() for row in rows]):
        used = [row for row in rows if row.workload()]
        workloads = [row.workload() for row in used]
        derived = form.derive_shares(workloads)
        request_data = form.request_data(workloads)
        try:
            result = rules_services.compose_stacks(request_data)
        except ValidationError as exc:
            errors = apply_compose_errors(form, used, exc.message_dict)
    context = {
        "form": form,
        "workload_rows": rows,
        "scenarios": builtin_scenarios() if result and result.stacks else [],
        "result": result,
        "evidence": ranked_stack_evidence(result.stacks) if result else {},
        "comparison": stack_comparison(result.stacks) if result and result.stacks else [],
        "shared_reasons": shared_score_reasons(result.stacks) if result and result.stacks else [],
        "project_names": dict(Project.objects.filter(accepted=True).values_list("slug", "name")) if result else {},
        "errors": errors,
        "derived": derived,
        "request_json": json.dumps(request_data) if request_data else "",
    }
    return render_page_or_fragment(request, "placement/compose.html", "placement/_compose_result.html", context)


@require_POST
@action_required("save_stack")
def stack_save(request):
    try:
        request_data = json.loads(request.POST.get("request", "") or "null")
        rank = int(request.POST.get("rank", "0"))
    except (ValueError, TypeError):
        messages.error(request, "The stack to save was not understood; compose again.")
        return redirect("compose")
    try:
        stack = rules_services.stack_save(user=request.user, request_data=request_data, rank=rank, name=request.POST.get("name", ""))
    except ValidationError as exc:
        messages.error(request, " ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items()))
        return redirect("compose")
    messages.success(request, f"Saved stack {stack.name}.")
    return redirect("stack-detail", pk=stack.pk)


@require_POST
@action_required("run_simulation")
def evaluation_start(request):
    """Rank by evidence: simulate the top stacks of the composed request, then show the ranking."""
    try:
        request_data = json.loads(request.POST.get("request", "") or "null")
        top = int(request.POST.get("top", "5") or 5)
    except (ValueError, TypeError):
        messages.error(request, "The request to evaluate was not understood; compose again.")
        return redirect("compose")
    try:
        sweep = evaluation_services.evaluation_start(
            user=request.user, request_data=request_data, top=top, scenario_name=request.POST.get("scenario_name") or None
        )
    except (ValidationError, PydanticValidationError, RunNotAccepted) as exc:
        text = (" ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())
                if isinstance(exc, ValidationError) and hasattr(exc, "error_dict") else str(exc))
        messages.error(request, f"Rank by evidence was refused: {text}")
        return redirect("compose")
    return redirect("evaluation-detail", pk=sweep.pk)


@read_required
def evaluation_detail(request, pk: int):
    evidence_services.simulation_fail_stale()
    sweep = get_object_or_404(Sweep, pk=pk, name__startswith=EVALUATION_PREFIX)
    return render(request, "placement/evaluation_detail.html",
                  {"e": evaluation_summary(sweep), "can_save": can(request.user, "save_stack")})


@require_POST
@action_required("save_stack")
def evaluation_candidate_save(request, pk: int):
    """Save one candidate of an evidence ranking as a stack; `then=deploy` goes on to its bundle."""
    sweep = get_object_or_404(Sweep, pk=pk, name__startswith=EVALUATION_PREFIX)
    try:
        stack = evaluation_services.candidate_save(user=request.user, sweep=sweep, rank=int(request.POST.get("rank", "0")),
                                                   name=request.POST.get("name", ""))
    except (ValueError, ValidationError) as exc:
        messages.error(request, "Not saved: " + " ".join(getattr(exc, "messages", [str(exc)])))
        return redirect("evaluation-detail", pk=pk)
    messages.success(request, f"Saved stack {stack.name}, with its run from this evidence ranking.")
    return redirect("stack-deploy" if request.POST.get("then") == "deploy" else "stack-detail", pk=stack.pk)


@require_POST
@action_required("save_stack")
def evaluation_decide(request, pk: int):
    """Record a decision from an evidence ranking: its finished candidates are saved as the options."""
    sweep = get_object_or_404(Sweep, pk=pk, name__startswith=EVALUATION_PREFIX)
    try:
        stacks = evaluation_services.candidates_save(user=request.user, sweep=sweep)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return redirect("evaluation-detail", pk=pk)
    runs = evaluation_summary(sweep)["run_ids"]
    query = "&".join([*(f"options={s.pk}" for s in stacks), *(f"runs={r}" for r in runs), f"sweeps={sweep.pk}"])
    messages.success(request, f"Saved the {len(stacks)} ranked stack{'s' if len(stacks) != 1 else ''} as the decision's options.")
    return redirect(f"{reverse('decision-create')}?{query}")


@read_required
def stack_list(request):
    stacks = Stack.objects.select_related("created_by").all()[:200]
    return render(request, "placement/stack_list.html", {"stacks": stacks})


@read_required
def stack_detail(request, pk: int):
    stack = get_object_or_404(Stack, pk=pk)
    return render(
        request,
        "placement/stack_detail.html",
        {
            "stack": stack,
            "c": stack.composition,
            "plan": stack_plan(stack),
            "runs": stack_evidence(stack),
            "scenarios": builtin_scenarios(),
            "run_time_limit": settings.CELERY_TASK_SOFT_TIME_LIMIT,
            "other_stacks": Stack.objects.exclude(pk=stack.pk)[:50],
            "trials": stack.plane_trials.all()[:10],
            "can_change": can(request.user, "review") or (can(request.user, "save_stack") and stack.created_by_id == request.user.pk),
        },
    )


@read_required
def misuse_check(request, slug: str):
    """Ask a project for a capability: does its layer own it, and if not, who does (htmx fragment)."""
    capability = request.GET.get("capability", "")
    verdict, errors = None, {}
    try:
        verdict = rules_services.misuse_check(slug, capability)
    except ValidationError as exc:
        errors = exc.message_dict
    return render(request, "placement/_misuse_verdict.html", {"verdict": verdict, "errors": errors})


@require_POST
@action_required("save_stack")
def stack_rename(request, pk: int):
    stack = get_object_or_404(Stack, pk=pk)
    try:
        rules_services.stack_rename(stack, user=request.user, name=request.POST.get("name", ""))
        messages.success(request, f"Renamed to {stack.name}.")
    except (ValidationError, PermissionDenied) as exc:
        messages.error(request, " ".join(getattr(exc, "messages", [str(exc)])))
    return redirect("stack-detail", pk=pk)


@require_POST
@action_required("save_stack")
def stack_delete(request, pk: int):
    stack = get_object_or_404(Stack, pk=pk)
    name = stack.name
    try:
        rules_services.stack_delete(stack, user=request.user)
    except (ValidationError, PermissionDenied) as exc:
        messages.error(request, "Not deleted: " + " ".join(getattr(exc, "messages", [str(exc)])))
        return redirect("stack-detail", pk=pk)
    messages.success(request, f"Deleted the stack {name} and its runs.")
    return redirect("stack-list")
