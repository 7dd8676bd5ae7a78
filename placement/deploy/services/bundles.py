"""A saved stack as the objects to apply: the scenario its run used (or a built-in scenario with the
stack laid onto it, as a run would) exported by placement.deploy."""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import ValidationError

from placement.deploy import Export, ExportError, export_scenario
from placement.evidence.models import SimulationRun
from placement.stacks.models import Stack
from placement.stacks.services.scenario import ScenarioInvalid, scenario_for_stack, stack_plan

# A stack with a MIG pool and a shared pool needs a scenario with a MIG node group (form C).
DEFAULT_SCENARIO = "form-b-hami-kueue"
MIXED_SCENARIO = "form-c-mig-hami-volcano"


@dataclass
class StackExport:
    export: Export
    source: str          # what the numbers come from, for the page and the API
    scenario_name: str
    run: SimulationRun | None
    scenario: object = None  # the scheduler_core Scenario exported (the local plane's trial reuses it)


def default_scenario_name(stack: Stack) -> str:
    planes = {p.get("data_plane") for p in stack.composition.get("pools", [])}
    return MIXED_SCENARIO if len(planes) > 1 else DEFAULT_SCENARIO


def latest_run(stack: Stack) -> SimulationRun | None:
    return stack.runs.filter(status=SimulationRun.SUCCEEDED).order_by("-created_at").first()


def stack_export(stack: Stack, *, run_id=None, scenario_name: str | None = None) -> StackExport:
    """Export from run `run_id` of this stack, else from `scenario_name`, else from the stack's latest
    succeeded run, else from the default scenario for its pools. ValidationError names the field."""
    from scheduler_core.scenario import ScenarioError, parse_scenario

    plan = stack_plan(stack)
    run = None
    if run_id not in (None, ""):
        try:
            run = stack.runs.get(pk=int(run_id))
        except (ValueError, TypeError, SimulationRun.DoesNotExist):
            raise ValidationError({"run": [f"Stack {stack.pk} has no run {run_id}."]}) from None
    elif not scenario_name:
        run = latest_run(stack)
    try:
        if run is not None:
            scenario = parse_scenario(run.scenario, source=f"run {run.pk}")
            source = f"run {run.pk} (scenario {run.scenario_name}, seed {run.seed}): the scenario that ran"
        elif not scenario_name and plan is not None:
            scenario = scenario_for_stack(stack, scenario_name=None, document=None, seed=None)
            source = f"the stack's plan {plan.digest} (no run yet): its node groups, tenants and quotas"
        else:
            scenario_name = scenario_name or default_scenario_name(stack)
            scenario = scenario_for_stack(stack, scenario_name=scenario_name, document=None, seed=None)
            source = (f"what-if: built-in scenario {scenario_name} with this stack laid onto it; its pool and tenants "
                      "are the scenario's, not the stack's plan")
        # objects follow the plan (kinds, resource names) whenever the scenario is the plan's own
        planned = plan if plan is not None and scenario.name == f"plan-{plan.digest}" else None
        export = export_scenario(scenario, stack_name=stack.name, projects=stack.project_slugs, plan=planned)
    except ScenarioInvalid as exc:
        raise ValidationError(exc.field_errors) from None
    except ScenarioError as exc:
        raise ValidationError({"run": [f"{loc}: {msg}" for loc, msg in exc.errors]}) from None
    except ExportError as exc:
        raise ValidationError({"stack": [str(exc)]}) from None
    return StackExport(export, source, scenario.name, run, scenario)
