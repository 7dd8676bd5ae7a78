"""Decision records: propose with a reason, accept or reject by a reviewer (never one's own), rings
set on acceptance, superseding, and re-running the evidence with the current simulator.

Roles, reasons and history follow the catalog revisions (placement.review.services).
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone

from placement.access.services import require
from placement.catalog.models import Project
from placement.catalog.selectors.catalog import catalog_version, project_document_data
from placement.decisions.document import DecisionDocument
from placement.decisions.models import DecisionEvent, DecisionRecord, ProjectRing
from placement.decisions.services import webhooks
from placement.evidence.models import SimulationRun, Sweep
from placement.evidence.services import runs as evidence_services
from placement.stacks.models import Stack


def _relied_on(doc: DecisionDocument, stacks: list[Stack]) -> dict:
    """The catalog entries the decision leans on, as they are now: every project of every option
    and every project given a ring."""
    slugs = {slug for stack in stacks for slug in stack.project_slugs} | {r.project for r in doc.rings}
    projects = Project.objects.filter(slug__in=slugs, accepted=True)
    return {p.slug: {"version": p.version, "document": project_document_data(p)} for p in projects}


def _context_of(stacks: list[Stack]) -> dict:
    """The compose request behind the first option that has one (its workload classes, SLO and pool),
    when the proposal does not state its context itself."""
    for stack in sorted(stacks, key=lambda s: s.pk):
        if stack.request:
            return stack.request
    return {}


def _check_references(doc: DecisionDocument) -> tuple[list[Stack], list[SimulationRun], list[Sweep], DecisionRecord | None]:
    errors: dict[str, list[str]] = {}
    stacks = list(Stack.objects.filter(pk__in=doc.options))
    missing = sorted(set(doc.options) - {s.pk for s in stacks})
    if missing:
        errors["options"] = [f"No saved stack with id {', '.join(map(str, missing))}."]
    if doc.chosen is not None and doc.chosen not in doc.options:
        errors["chosen"] = ["The chosen stack must be one of the options."]
    runs = list(SimulationRun.objects.filter(pk__in=doc.evidence_runs).defer("scenario", "timeseries"))
    missing = sorted(set(doc.evidence_runs) - {r.pk for r in runs})
    if missing:
        errors["evidence_runs"] = [f"No simulation run with id {', '.join(map(str, missing))}."]
    sweeps = list(Sweep.objects.filter(pk__in=doc.evidence_sweeps))
    missing = sorted(set(doc.evidence_sweeps) - {s.pk for s in sweeps})
    if missing:
        errors["evidence_sweeps"] = [f"No sweep with id {', '.join(map(str, missing))}."]
    ring_slugs = [r.project for r in doc.rings]
    known = set(Project.objects.filter(slug__in=ring_slugs, accepted=True).values_list("slug", flat=True))
    for i, slug in enumerate(ring_slugs):
        if slug not in known:
            errors[f"rings[{i}].project"] = [f"No accepted catalog project {slug!r}."]
        elif ring_slugs.index(slug) != i:
            errors[f"rings[{i}].project"] = [f"{slug!r} already has a ring in this record."]
    supersedes = None
    if doc.supersedes is not None:
        supersedes = DecisionRecord.objects.filter(pk=doc.supersedes).first()
        if supersedes is None:
            errors["supersedes"] = [f"No decision record with id {doc.supersedes}."]
        elif supersedes.status != DecisionRecord.ACCEPTED:
            errors["supersedes"] = [f"Only an accepted record can be superseded; ADR-{supersedes.pk} is {supersedes.status}."]
    if errors:
        raise ValidationError(errors)
    return stacks, runs, sweeps, supersedes


@transaction.atomic
def decision_propose(doc: DecisionDocument, *, user) -> DecisionRecord:
    require(user, "propose")
    stacks, runs, sweeps, supersedes = _check_references(doc)
    record = DecisionRecord.objects.create(
        title=doc.title,
        context=doc.context or _context_of(stacks),
        context_text=doc.context_text,
        chosen_id=doc.chosen,
        consequences=doc.consequences,
        rings=[r.model_dump() for r in doc.rings],
        supersedes=supersedes,
        catalog_version=catalog_version(),
        relied_on=_relied_on(doc, stacks),
        reason=doc.reason,
        author=user,
    )
    record.options.set(stacks)
    record.evidence_runs.set(runs)
    record.evidence_sweeps.set(sweeps)
    DecisionEvent.objects.create(record=record, action="proposed", user=user, reason=doc.reason)
    return record


def _check_reviewer(record: DecisionRecord, user) -> None:
    require(user, "review")
    if record.author_id == user.pk:
        raise PermissionDenied("nobody may review their own decision record")
    if record.status != DecisionRecord.PROPOSED:
        raise ValidationError({"status": [f"Only a proposed record can be reviewed; this one is {record.status}."]})


@transaction.atomic
def decision_accept(record: DecisionRecord, *, user, comment: str = "") -> DecisionRecord:
    """Accept: the record's rings become the organisation's rings, a superseded record says so, and
    subscribers hear of it (after commit)."""
    record = DecisionRecord.objects.select_for_update().get(pk=record.pk)
    _check_reviewer(record, user)
    now = timezone.now()
    record.status = DecisionRecord.ACCEPTED
    record.reviewer = user
    record.review_comment = (comment or "").strip()
    record.decided_at = now
    record.save()
    if record.supersedes_id:
        DecisionRecord.objects.filter(pk=record.supersedes_id, status=DecisionRecord.ACCEPTED).update(
            status=DecisionRecord.SUPERSEDED
        )
        DecisionEvent.objects.create(
            record_id=record.supersedes_id, action="superseded", user=user, reason=f"Superseded by ADR-{record.pk}"
        )
    projects = {p.slug: p for p in Project.objects.filter(slug__in=[r["project"] for r in record.rings])}
    for ring in record.rings:
        project = projects.get(ring["project"])
        if project is not None:
            ProjectRing.objects.update_or_create(
                project=project, defaults={"ring": ring["ring"], "reason": ring.get("reason", ""), "decision": record}
            )
    DecisionEvent.objects.create(record=record, action="accepted", user=user, reason=record.review_comment)
    webhooks.event_publish("decision.accepted", decision_payload(record))
    return record


@transaction.atomic
def decision_reject(record: DecisionRecord, *, user, comment: str) -> DecisionRecord:
    record = DecisionRecord.objects.select_for_update().get(pk=record.pk)
    _check_reviewer(record, user)
    if not (comment or "").strip():
        raise ValidationError({"comment": ["Say why the decision is rejected."]})
    record.status = DecisionRecord.REJECTED
    record.reviewer = user
    record.review_comment = comment.strip()
    record.decided_at = timezone.now()
    record.save()
    DecisionEvent.objects.create(record=record, action="rejected", user=user, reason=record.review_comment)
    return record


def decision_rerun(record: DecisionRecord, *, user) -> list[tuple[int, int]]:
    """Submit every attached run again, same stack, scenario and seed, on the current simulator.
    Returns (original run id, new run id) pairs; the pairs are kept in the record's history."""
    require(user, "run_simulation")
    originals = list(record.evidence_runs.select_related("stack").order_by("pk"))
    if not originals:
        raise ValidationError({"evidence_runs": ["This record has no simulation runs to re-run."]})
    pairs = []
    for run in originals:
        new, _ = evidence_services.simulation_start(
            user=user, stack=run.stack, scenario_document=run.scenario, seed=run.seed
        )
        pairs.append((run.pk, new.pk))
    DecisionEvent.objects.create(
        record=record, action="rerun", user=user, reason="Evidence re-run with the current simulator",
        data={"pairs": pairs},
    )
    return pairs


def decision_payload(record: DecisionRecord) -> dict:
    """What a webhook or the feed says of a record (ids and names, never the whole evidence)."""
    return {
        "id": record.pk,
        "title": record.title,
        "status": record.status,
        "chosen": record.chosen_id,
        "options": sorted(record.options.values_list("pk", flat=True)),
        "rings": record.rings,
        "supersedes": record.supersedes_id,
        "catalog_version": record.catalog_version,
        "decided_at": record.decided_at.isoformat() if record.decided_at else None,
    }
