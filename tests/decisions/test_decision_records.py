"""Decision records: proposal and review follow the catalog's roles, accepted rings reach the radar
and the map, a changed catalog fact flags the record stale with the diff, evidence re-runs."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from placement.catalog.models import Project
from placement.catalog.schemas import ProjectDocument
from placement.catalog.selectors.catalog import project_document_data
from placement.decisions.document import DecisionDocument
from placement.decisions.models import DecisionRecord, ProjectRing
from placement.decisions.selectors import decisions as selectors
from placement.decisions.services import decisions as services
from placement.review import services as review
from tests.decisions.conftest import proposal

pytestmark = pytest.mark.django_db


def _propose(stacks, user, **extra) -> DecisionRecord:
    return services.decision_propose(DecisionDocument.model_validate(proposal(stacks, **extra)), user=user)


def test_accepted_record_sets_the_rings_shown_on_the_radar(stacks, architect, reviewer):
    record = _propose(stacks, architect)
    assert not ProjectRing.objects.exists(), "a proposal sets no ring before review"
    services.decision_accept(record, user=reviewer, comment="agreed")
    rings = {r.project.slug: (r.ring, r.decision_id) for r in ProjectRing.objects.select_related("project")}
    assert rings == {"kueue": ("adopt", record.pk), "hami": ("hold", record.pk)}
    entries = {e.slug: e for e in selectors.radar_entries()}
    assert entries["hami"].ring == "hold" and entries["hami"].quadrant == selectors.quadrant_of(
        Project.objects.get(slug="hami").placement
    )
    assert [e.slug for e in selectors.radar_entries("adopt")] == ["kueue"]


def test_nobody_reviews_their_own_record_and_readers_cannot_propose(stacks, architect, reviewer, reader):
    with pytest.raises(PermissionDenied):
        _propose(stacks, reader)
    own = _propose(stacks, reviewer)
    with pytest.raises(PermissionDenied):
        services.decision_accept(own, user=reviewer)
    with pytest.raises(PermissionDenied):
        services.decision_accept(_propose(stacks, architect), user=architect)


def test_rejecting_needs_a_reason_and_a_decided_record_cannot_be_reviewed_again(stacks, architect, reviewer):
    record = _propose(stacks, architect)
    with pytest.raises(ValidationError) as exc:
        services.decision_reject(record, user=reviewer, comment="  ")
    assert "comment" in exc.value.message_dict
    services.decision_reject(record, user=reviewer, comment="no evidence attached")
    with pytest.raises(ValidationError) as exc:
        services.decision_accept(record, user=reviewer)
    assert "status" in exc.value.message_dict
    assert not ProjectRing.objects.exists()


def test_references_that_do_not_exist_are_named_and_nothing_is_written(stacks, architect):
    with pytest.raises(ValidationError) as exc:
        _propose(stacks, architect, evidence_runs=[999999], rings=[{"project": "no-such-project", "ring": "adopt"}], supersedes=424242)
    errors = exc.value.message_dict
    assert {"evidence_runs", "rings[0].project", "supersedes"} <= set(errors), errors
    assert not DecisionRecord.objects.exists()


def test_chosen_stack_must_be_one_of_the_options(stacks, architect):
    whole, hami = stacks
    with pytest.raises(ValidationError) as exc:
        _propose(stacks, architect, options=[whole.pk], chosen=hami.pk)
    assert "chosen" in exc.value.message_dict


def test_accepting_a_superseding_record_marks_the_old_one_superseded(stacks, architect, reviewer):
    old = _propose(stacks, architect)
    services.decision_accept(old, user=reviewer)
    new = _propose(stacks, architect, supersedes=old.pk, rings=[{"project": "hami", "ring": "trial", "reason": "cap now covers vLLM"}])
    services.decision_accept(new, user=reviewer)
    old.refresh_from_db()
    assert old.status == DecisionRecord.SUPERSEDED
    assert ProjectRing.objects.get(project__slug="hami").ring == "trial"
    assert ProjectRing.objects.get(project__slug="kueue").decision_id == old.pk  # untouched by the new record


def _change_non_promise(slug: str, architect, reviewer, line: str) -> None:
    project = Project.objects.get(slug=slug)
    data = project_document_data(project)
    data["placement"]["non_promise"] = [*data["placement"]["non_promise"], line]
    revision = review.revision_propose(project, ProjectDocument.model_validate(data), user=architect, reason="corrected fact")
    review.revision_accept(revision, user=reviewer)


def test_a_changed_fact_the_record_relied_on_flags_it_stale_with_the_field_diff(stacks, architect, reviewer):
    record = _propose(stacks, architect)
    services.decision_accept(record, user=reviewer)
    assert selectors.decision_staleness(record) == []
    other = Project.objects.exclude(slug__in=record.relied_on).first()
    _change_non_promise(other.slug, architect, reviewer, "Unrelated change.")
    assert selectors.decision_staleness(record) == [], "a change to an entry it did not rely on is not staleness"
    _change_non_promise("hami", architect, reviewer, "The memory cap does not cover CUDA graphs in runtime X.")
    stale = selectors.decision_staleness(record)
    assert [f.slug for f in stale] == ["hami"]
    assert any(c.path == "placement.non_promise[]" and c.kind == "added" and "CUDA graphs" in c.new for c in stale[0].changes)


def test_rerun_on_an_unchanged_simulator_returns_the_stored_result(stacks, architect, reviewer, finished_run,
                                                                   django_capture_on_commit_callbacks):
    record = _propose(stacks, architect, evidence_runs=[finished_run.pk])
    with django_capture_on_commit_callbacks(execute=True):
        pairs = services.decision_rerun(record, user=architect)
    assert pairs == [(finished_run.pk, finished_run.pk)]
    (pair,) = selectors.decision_reruns(record)
    assert pair.same_run and not pair.disagreements


def test_rerun_on_a_changed_simulator_recomputes_and_shows_where_it_disagrees(stacks, architect, finished_run, monkeypatch,
                                                                              django_capture_on_commit_callbacks):
    # The stored result came from an older simulator that counted fewer completed jobs.
    original = dict(finished_run.metrics)
    original["jobs"] = {**original["jobs"], "completed": original["jobs"]["completed"] // 2}
    finished_run.metrics = original
    finished_run.save(update_fields=["metrics"])
    monkeypatch.setattr("placement.evidence.services.runs.code_digest", lambda: "a-newer-simulator")
    record = _propose(stacks, architect, evidence_runs=[finished_run.pk])
    with django_capture_on_commit_callbacks(execute=True):
        ((old_id, new_id),) = services.decision_rerun(record, user=architect)
    assert new_id != old_id
    (pair,) = selectors.decision_reruns(record)
    assert pair.finished and not pair.same_run
    assert "jobs.completed" in {d.name for d in pair.disagreements}


def test_rerun_without_attached_runs_says_so(stacks, architect):
    record = _propose(stacks, architect)
    with pytest.raises(ValidationError) as exc:
        services.decision_rerun(record, user=architect)
    assert "evidence_runs" in exc.value.message_dict
