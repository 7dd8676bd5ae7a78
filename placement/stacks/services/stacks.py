"""The rules engine as the app sees it: one graph per catalog version, built on first use and
rebuilt when an accepted change moves the catalog version."""

from __future__ import annotations

import threading

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from pydantic import ValidationError as PydanticValidationError

from placement import rules
from placement.access.services import can, require
from placement.catalog.schemas import format_error_location
from placement.catalog.selectors.catalog import catalog_documents, catalog_version, catalog_vocabulary
from placement.decisions.models import DecisionRecord
from placement.rules.errors import RulesInputError
from placement.rules.models import CompareRequest, ComposeRequest
from placement.stacks.models import Stack

_lock = threading.Lock()
_cache: dict[str, object] = {}


def catalog_graph():
    version = catalog_version()
    graph = _cache.get(version)
    if graph is None:
        with _lock:
            graph = _cache.get(version)
            if graph is None:
                graph = rules.build_graph(catalog_documents(), catalog_vocabulary(), version=version)
                _cache.clear()  # one version at a time: old graphs are garbage
                _cache[version] = graph
    return graph


def field_errors(exc: PydanticValidationError) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    for error in exc.errors():
        errors.setdefault(format_error_location(tuple(error["loc"])), []).append(
            error["msg"].removeprefix("Value error, ")
        )
    return errors


def _parse(model, data):
    try:
        return model.model_validate(data)
    except PydanticValidationError as exc:
        raise ValidationError(field_errors(exc)) from None


def _call(fn, *args):
    try:
        return fn(*args)
    except RulesInputError as exc:
        raise ValidationError(exc.errors) from None


def compare_projects(data) -> rules.ComparisonResult:
    request = data if isinstance(data, CompareRequest) else _parse(CompareRequest, data)
    return _call(rules.compare, catalog_graph(), request)


def compose_stacks(data) -> rules.ComposeResult:
    request = data if isinstance(data, ComposeRequest) else _parse(ComposeRequest, data)
    budget = rules.SearchBudget(pool_combinations=settings.ATLAS_COMPOSE_POOL_COMBINATIONS,
                                combinations=settings.ATLAS_COMPOSE_COMBINATIONS)
    return _call(rules.compose, catalog_graph(), request, budget)


def compose_refusal(request: ComposeRequest, result: rules.ComposeResult) -> dict | None:
    """The one refusal shape (issue 32, item 5): a request with `constraints.require` that no stack can
    satisfy is unprocessable, with one error per broken rule in the engine's words (the contract point
    first when one breaks). None when the request is answerable (feasible, or nothing was required)."""
    if not request.constraints.require or result.feasible:
        return None
    errors = [f"{f.contract_point.value}: {f.reason}" if f.contract_point else f.reason for f in result.failures]
    points = list(dict.fromkeys(f.contract_point.value for f in result.failures if f.contract_point))
    detail = (f"The required projects break the {', '.join(points)} contract point{'s' if len(points) > 1 else ''}."
              if points else "The required projects cannot be composed into any stack.")
    return {"detail": detail, "errors": {"constraints.require": errors or ["No stack holds every required project."]}}


def compatible_stacks(with_slug: str, profile: str) -> rules.CompatibleResult:
    errors = {}
    if not with_slug:
        errors["with"] = ["Name a catalog project slug."]
    if not profile:
        errors["profile"] = ["Name a workload profile."]
    if errors:
        raise ValidationError(errors)
    try:
        return rules.compatible(catalog_graph(), with_slug, profile)
    except RulesInputError as exc:
        # The query parameter is called `with`; the engine names it with_slug.
        raise ValidationError({("with" if k in ("with_slug", "slug") else k): v for k, v in exc.errors.items()}) from None


def misuse_check(slug: str, capability: str) -> rules.MisuseVerdict:
    return _call(rules.check_misuse, catalog_graph(), slug, capability)


@transaction.atomic
def stack_save(*, user, request_data, rank: int, name: str = "") -> Stack:
    """Compose again (the catalog may have moved) and save the stack at `rank`."""
    require(user, "save_stack")
    request = _parse(ComposeRequest, request_data)
    result = compose_stacks(request)
    chosen = next((s for s in result.stacks if s.rank == rank), None)
    if chosen is None:
        raise ValidationError({"rank": [f"No stack ranked {rank} for this request; {len(result.stacks)} were composed."]})
    return Stack.objects.create(
        name=(name or "").strip()[:200] or f"{chosen.title} for {result.profile}",
        profile=result.profile,
        request=request.model_dump(mode="json"),
        composition=chosen.model_dump(mode="json"),
        created_by=user,
    )


def _require_stack_owner(stack: Stack, user) -> None:
    """A saved stack is changed by whoever saved it, or by a reviewer."""
    require(user, "save_stack")
    if stack.created_by_id != user.pk and not can(user, "review"):
        raise PermissionDenied("only the architect who saved this stack, or a reviewer, may change it")


def stack_rename(stack: Stack, *, user, name: str) -> Stack:
    _require_stack_owner(stack, user)
    name = (name or "").strip()
    if not name or len(name) > 200:
        raise ValidationError({"name": ["A stack's name has 1 to 200 characters."]})
    stack.name = name
    stack.save(update_fields=["name"])
    return stack


@transaction.atomic
def stack_delete(stack: Stack, *, user) -> None:
    """Delete a saved stack and its runs (an evidence ranking keeps the runs it measured), unless a decision
    record relies on it or on one of its runs:
    a record's evidence is never lost."""
    _require_stack_owner(stack, user)
    records = sorted(
        set(DecisionRecord.objects.filter(options=stack).values_list("pk", flat=True))
        | set(DecisionRecord.objects.filter(chosen=stack).values_list("pk", flat=True))
        | set(DecisionRecord.objects.filter(evidence_runs__stack=stack).values_list("pk", flat=True))
    )
    if records:
        named = ", ".join(f"ADR-{pk}" for pk in records)
        raise ValidationError({"stack": [f"{named} relies on this stack or its runs; it stays as that record's evidence."]})
    # A run an evidence ranking measured stays that ranking's evidence: it leaves with the ranking, not the stack.
    stack.runs.filter(evaluation_candidates__isnull=False).update(stack=None)
    stack.delete()
