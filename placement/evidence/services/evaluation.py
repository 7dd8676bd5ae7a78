"""Rank by evidence: the top composed stacks simulated on one scenario, then re-ranked by what the
simulator measured (DESIGN.md §4 "Evidence ranking").

`evaluation_start` composes the request again, saves the top N stacks (each with its plan), simulates
each stack's own plan (or, as a what-if, a built-in scenario) and queues one run per stack as ONE Celery group
(the sweep machinery of placement.evidence.services.runs). `placement.evidence.selectors.evaluation` reads it back:
per stack the rules score next to the measured metrics, the evidence order, and each place where
rules and evidence disagree with the metric that decided.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction

from placement.access.services import require
from placement.evidence.models import Sweep
from placement.evidence.selectors.evaluation import EVALUATION_PREFIX
from placement.evidence.services import runs as evidence
from placement.rules.models import ComposeRequest
from placement.stacks.models import Stack
from placement.stacks.services.stacks import compose_stacks

MAX_TOP = 8


def evaluation_start(*, user, request_data, top: int = 5, scenario_name: str | None = None) -> Sweep:
    """Compose, save the top `top` stacks and queue one run each on one scenario as one Celery group."""
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
    with transaction.atomic():
        sweep = Sweep.objects.create(
            name=f"{EVALUATION_PREFIX}: {result.profile}, top {min(top, len(result.stacks))}",
            scenario_name=scenario_name or "each stack's own plan", seeds=1,
            created_by=user if getattr(user, "is_authenticated", False) else None,
        )
        new_runs = []
        for chosen in result.stacks[:top]:
            stack = Stack.objects.create(
                name=f"#{chosen.rank} {chosen.title}"[:200], profile=result.profile,
                request=request.model_dump(mode="json"), composition=chosen.model_dump(mode="json"),
                created_by=user if getattr(user, "is_authenticated", False) else None,
            )
            sweep.stacks.add(stack)
            # no scenario named: each stack runs its own plan (placement/plans/scenario.py)
            run, created = evidence.run_for(user, stack, scenario_name, None, 1, sweep)
            if created:
                new_runs.append(run.pk)
        if new_runs:
            evidence.queue_group(user, new_runs)
    return sweep
