"""The review board's memory: decision records with their evidence, the organisation's radar
rings they set, and the outgoing webhooks that tell other systems about decisions and catalog changes.
"""

from django.conf import settings
from django.db import models

from placement.catalog.models import Project
from placement.evidence.models import SimulationRun, Sweep
from placement.stacks.models import Stack


class DecisionRecord(models.Model):
    PROPOSED = "proposed"
    ACCEPTED = "accepted"
    REJECTED = "rejected"
    SUPERSEDED = "superseded"
    STATUSES = [(PROPOSED, "proposed"), (ACCEPTED, "accepted"), (REJECTED, "rejected"), (SUPERSEDED, "superseded")]

    title = models.CharField(max_length=200)
    # The workload classes, SLO and pool the decision is about (a compose request, as JSON).
    context = models.JSONField(default=dict)
    context_text = models.TextField(blank=True, default="")
    options = models.ManyToManyField(Stack, related_name="decision_options", blank=True)
    chosen = models.ForeignKey(Stack, null=True, blank=True, on_delete=models.PROTECT, related_name="decisions_chosen")
    # Evidence attached by reference: the runs and sweeps the board weighed.
    evidence_runs = models.ManyToManyField(SimulationRun, related_name="decisions", blank=True)
    evidence_sweeps = models.ManyToManyField(Sweep, related_name="decisions", blank=True)
    consequences = models.TextField(blank=True, default="")
    # [{"project": slug, "ring": adopt|trial|assess|hold, "reason": "..."}], applied when accepted.
    rings = models.JSONField(default=list)
    status = models.CharField(max_length=12, choices=STATUSES, default=PROPOSED, db_index=True)
    supersedes = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="superseded_by")
    # The catalog facts the decision relied on: catalog version and, per project, the version and
    # the template document as they were when the record was proposed (for the staleness diff).
    catalog_version = models.CharField(max_length=80, blank=True, default="")
    relied_on = models.JSONField(default=dict)
    reason = models.TextField()
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    review_comment = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"ADR-{self.pk}: {self.title}"


class DecisionEvent(models.Model):
    """The record's history: who proposed, accepted, rejected, re-ran or superseded it, and why."""

    record = models.ForeignKey(DecisionRecord, on_delete=models.CASCADE, related_name="events")
    action = models.CharField(max_length=20)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    reason = models.TextField(blank=True, default="")
    data = models.JSONField(default=dict)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["at", "id"]


class ProjectRing(models.Model):
    """The organisation's ring for a project, set by the accepted decision record that names it."""

    ADOPT, TRIAL, ASSESS, HOLD = "adopt", "trial", "assess", "hold"
    RINGS = [(ADOPT, "Adopt"), (TRIAL, "Trial"), (ASSESS, "Assess"), (HOLD, "Hold")]

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="ring")
    ring = models.CharField(max_length=8, choices=RINGS)
    reason = models.TextField(blank=True, default="")
    decision = models.ForeignKey(DecisionRecord, on_delete=models.CASCADE, related_name="ring_assignments")
    set_at = models.DateTimeField(auto_now=True)


class Webhook(models.Model):
    """An outgoing webhook: a signed POST per event, retried with backoff, every attempt logged."""

    EVENTS = ["decision.accepted", "catalog.changed"]

    name = models.CharField(max_length=200)
    url = models.URLField(max_length=500)
    secret = models.CharField(max_length=128)
    events = models.JSONField(default=list)
    active = models.BooleanField(default=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "id"]


class WebhookDelivery(models.Model):
    """One event for one webhook (an outbox row): written with the change itself, so a broker or a
    receiver that is down loses nothing; the delivery is retried, then failed with the reason."""

    PENDING, DELIVERED, FAILED = "pending", "delivered", "failed"
    STATUSES = [(PENDING, "pending"), (DELIVERED, "delivered"), (FAILED, "failed")]

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=40)
    payload = models.JSONField()
    status = models.CharField(max_length=10, choices=STATUSES, default=PENDING, db_index=True)
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True, db_index=True)
    last_error = models.TextField(blank=True, default="")
    response_code = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
