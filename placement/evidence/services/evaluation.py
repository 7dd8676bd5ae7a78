"""Rank by evidence: the top composed stacks simulated on one scenario, then re-ranked by what the
simulator measured (DESIGN.md §4 "Evidence ranking").

`evaluation_start` composes the request again, keeps the top N stacks as the evaluation's candidates
(each with its plan; they are not saved stacks, so the saved-stack list shows only what people saved),
simulates each candidate's own plan (or, as a what-if, a built-in scenario) and queues one run per
candidate as ONE Celery group (the sweep machinery of placement.evidence.services.runs).
`placement.evidence.selectors.evaluation` reads it back: per candidate the rules score next to the
measured metrics, the evidence order, and each place where rules and evidence disagree with the
metric that decided. `candidate_save` saves one candidate as a stack when a person asks for it.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction

from placement.access.services import require
from placement.evidence.models import EvaluationCandidate, SimulationRun, Sweep
from placement.evidence.selectors.evaluation import EVALUATION_PREFIX, OWN_PLANS
from placement.evidence.services import runs as evidence
from placement.rules.models import ComposeRequest
from placement.stacks.models import Stack
from placement.stacks.services.stacks import compose_stacks

MAX_TOP = 8


def evaluation_start(*, user, request_data, top: int = 5, scenario_name: str | None = None) -> Sweep:
    """Compose, keep the top `top` stacks as candidates and queue one run each on one scenario as one Celery group."""
    require(user, "run_simulation")
    if not isinstance(top, int) or isinstance(top, bool) or not 1 <= top <= MAX_TOP:
        raise ValidationError({"top": [f"Simulate between 1 and {MAX_TOP} stacks."]})
    request = request_data if isinstance(request_data, ComposeRequest) else ComposeRequest.model_validate(request_data)
    request = request.model_copy(update={"limit": max(request.limit, top)})
    result = compose_stacks(request)
    if not result.stacks:
        raise ValidationError({"request": ["No stack to evaluate: " + " ".join(f.reason for f in result.failures)]})
    unplanned = [f"#{s.rank} {s.title}: {s.plan_error}" for s in result.stacks[:top] if s.plan is None]
    if not scenario_name and unplanned:
        raise ValidationError({"request": ["No plan to simulate: " + "; ".join(unplanned)]})
    author = user if getattr(user, "is_authenticated", False) else None
    with transaction.atomic():
        # named by what it was for: the request's classes (its profile only when it has none)
        subject = ", ".join(w.name for w in request.workloads) or result.profile
        sweep = Sweep.objects.create(
            name=f"{EVALUATION_PREFIX}: {subject}, top {min(top, len(result.stacks))}"[:200],
            scenario_name=scenario_name or OWN_PLANS, seeds=1, created_by=author,
            request=request.model_dump(mode="json"),
        )
        new_runs = []
        for chosen in result.stacks[:top]:
            composition = chosen.model_dump(mode="json")
            # Simulated as the stack it would be if saved, without saving it: the run belongs to the
            # evaluation (no scenario named: the candidate's own plan, placement/plans/scenario.py).
            as_stack = Stack(name=f"#{chosen.rank} {chosen.title}"[:200], profile=result.profile,
                             request=sweep.request, composition=composition)
            run, created = evidence.run_for(user, as_stack, scenario_name, None, 1, sweep)
            EvaluationCandidate.objects.create(sweep=sweep, rank=chosen.rank, title=chosen.title[:500],
                                               profile=result.profile, composition=composition, run=run)
            if created:
                new_runs.append(run.pk)
        if new_runs:
            evidence.queue_group(user, new_runs)
    return sweep


@transaction.atomic
def candidate_save(*, user, sweep: Sweep, rank: int, name: str = "") -> Stack:
    """Save one candidate of an evidence ranking as a stack, as it was simulated (its plan and its run
    come along: the run is the new stack's evidence too). Saving it again returns the same stack."""
    require(user, "save_stack")
    candidate = EvaluationCandidate.objects.select_for_update().filter(sweep=sweep, rank=rank).first()
    if candidate is None:
        raise ValidationError({"rank": [f"This evidence ranking has no stack ranked {rank}."]})
    if candidate.saved_stack_id is not None:
        return candidate.saved_stack
    name = (name or "").strip()[:200] or candidate.title[:200]
    stack = Stack.objects.create(
        name=name, profile=candidate.profile, request=sweep.request or {}, composition=candidate.composition,
        created_by=user,
    )
    candidate.saved_stack = stack
    candidate.save(update_fields=["saved_stack"])
    if candidate.run_id is not None:
        SimulationRun.objects.filter(pk=candidate.run_id, stack=None).update(stack=stack)
    return stack


def candidates_save(*, user, sweep: Sweep) -> list[Stack]:
    """Save every candidate whose run succeeded (the options of a decision), best rules rank first."""
    ranks = list(sweep.candidates.filter(run__status=SimulationRun.SUCCEEDED).values_list("rank", flat=True))
    if not ranks:
        raise ValidationError({"sweep": ["No candidate of this evidence ranking has finished its run yet."]})
    return [candidate_save(user=user, sweep=sweep, rank=rank) for rank in ranks]

