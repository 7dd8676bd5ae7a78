"""Proposed revisions of a project's template and their review."""

from django.conf import settings
from django.db import models

from placement.catalog.models import Project


class Revision(models.Model):
    DRAFT = "draft"
    PROPOSED = "proposed"
    ACCEPTED = "accepted"
    REJECTED = "rejected"
    CONFLICTING = "conflicting"
    STATUSES = [
        (DRAFT, "draft"),
        (PROPOSED, "proposed"),
        (ACCEPTED, "accepted"),
        (REJECTED, "rejected"),
        (CONFLICTING, "conflicting"),
    ]

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="revisions")
    # The whole ProjectDocument as JSON, so any earlier state can be shown and restored.
    document = models.JSONField()
    # project.version when the proposal was made (0 for a new project); accepted only if unchanged.
    base_version = models.PositiveIntegerField()
    # Set when accepted: this revision made project.version == number.
    number = models.PositiveIntegerField(null=True, blank=True)
    reason = models.TextField()
    status = models.CharField(max_length=12, choices=STATUSES, default=PROPOSED, db_index=True)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    review_comment = models.TextField(blank=True, default="")
    restored_from = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    reviewed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "number"], name="revision_number_unique_per_project")
        ]

    def __str__(self) -> str:
        return f"{self.project.slug} revision {self.number or '#' + str(self.pk)} ({self.status})"

    @property
    def is_open(self) -> bool:
        return self.status in (self.DRAFT, self.PROPOSED, self.CONFLICTING)
