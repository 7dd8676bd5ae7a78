"""A stack tried on the local control plane from its page: the request, the progress the worker
reports while the plane starts and the controllers act, and the trial (placement.deploy.localplane)."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from placement.stacks.models import Stack


class PlaneTrial(models.Model):
    QUEUED, RUNNING, SUCCEEDED, FAILED = "queued", "running", "succeeded", "failed"
    STATUSES = [(QUEUED, "queued"), (RUNNING, "running"), (SUCCEEDED, "succeeded"), (FAILED, "failed")]

    stack = models.ForeignKey(Stack, on_delete=models.CASCADE, related_name="plane_trials")
    # Where the bundle's numbers come from, as on the deploy page: a run of the stack or a built-in scenario.
    run_id = models.PositiveIntegerField(null=True, blank=True)
    scenario_name = models.CharField(max_length=200, blank=True, default="")
    status = models.CharField(max_length=12, choices=STATUSES, default=QUEUED)
    # One plane runs at a time on an installation (its ports): True while queued or running, and a
    # partial unique constraint lets only one row hold it, whatever two requests race.
    active = models.BooleanField(default=True)
    log = models.JSONField(default=list, blank=True)  # [{"s": seconds since start, "message": ...}]
    result = models.JSONField(null=True, blank=True)  # Trial.as_dict() plus the stack and the numbers' source
    error = models.TextField(blank=True, default="")
    task_id = models.CharField(max_length=64, blank=True, default="")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["active"], condition=Q(active=True), name="one_plane_trial_at_a_time")]

    @property
    def is_finished(self) -> bool:
        return self.status in (self.SUCCEEDED, self.FAILED)

    def __str__(self) -> str:
        return f"trial {self.pk} of stack {self.stack_id}"
