"""Simulation runs, seed sweeps and the story bands computed over them."""

from django.conf import settings
from django.db import models

from placement.stacks.models import Stack


class Sweep(models.Model):
    """N seeds of one or more stacks on one scenario, run as a Celery group."""

    name = models.CharField(max_length=200)
    scenario_name = models.CharField(max_length=200)
    seeds = models.PositiveIntegerField()
    stacks = models.ManyToManyField(Stack, related_name="sweeps")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    # An evidence ranking keeps the compose request it answers and its candidates (EvaluationCandidate),
    # not saved stacks: `stacks` stays empty for it (it held the auto-saved stacks of older rankings).
    request = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]


class SimulationRun(models.Model):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    STATUSES = [(QUEUED, "queued"), (RUNNING, "running"), (SUCCEEDED, "succeeded"), (FAILED, "failed")]

    stack = models.ForeignKey(Stack, null=True, blank=True, on_delete=models.CASCADE, related_name="runs")
    sweep = models.ForeignKey(Sweep, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs")
    scenario_name = models.CharField(max_length=200)
    # The exact scenario document that ran (stack already applied), so a run can be reproduced.
    scenario = models.JSONField()
    seed = models.BigIntegerField()
    # sha256 of (stack composition, scenario, seed): a resubmission returns the stored evidence.
    fingerprint = models.CharField(max_length=64, db_index=True)
    status = models.CharField(max_length=10, choices=STATUSES, default=QUEUED, db_index=True)
    progress = models.FloatField(default=0.0)
    metrics = models.JSONField(null=True, blank=True)
    timeseries = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True, default="")
    task_id = models.CharField(max_length=64, blank=True, default="")
    attempts = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Written with progress; the stale-run sweep fails runs whose heartbeat stopped.
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"run {self.pk} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in (self.SUCCEEDED, self.FAILED)

    @property
    def wall_seconds(self) -> float | None:
        if self.started_at and self.finished_at:
            return (self.finished_at - self.started_at).total_seconds()
        return None


class StoryBand(models.Model):
    """One naive-vs-right verdict over 10 seeds with its sensitivity band (~60 short simulations),
    computed by a Celery task and kept here so web workers only read it. `key` hashes the two
    scenario files and the metric, so a changed scenario gets a new band."""

    COMPUTING, DONE, FAILED = "computing", "done", "failed"
    STATUSES = [(COMPUTING, "computing"), (DONE, "done"), (FAILED, "failed")]

    key = models.CharField(max_length=64, unique=True)
    story = models.CharField(max_length=200)
    status = models.CharField(max_length=12, choices=STATUSES, default=COMPUTING)
    summary = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True, default="")
    updated_at = models.DateTimeField(auto_now=True)


class EvaluationCandidate(models.Model):
    """One ranked stack an evidence ranking simulated: the composition as the rules returned it (its
    plan included), the run that measured it, and the stack a person saved from it, if any. It is not
    a saved stack: the saved-stack list shows only what people saved."""

    sweep = models.ForeignKey(Sweep, on_delete=models.CASCADE, related_name="candidates")
    rank = models.PositiveIntegerField(help_text="The rules rank of the stack in the composed result")
    title = models.CharField(max_length=500)
    profile = models.CharField(max_length=40, help_text="The workload profile the request was composed for")
    composition = models.JSONField(default=dict)
    run = models.ForeignKey(SimulationRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="evaluation_candidates")
    saved_stack = models.ForeignKey(Stack, null=True, blank=True, on_delete=models.SET_NULL, related_name="evaluation_candidates")

    class Meta:
        ordering = ["sweep", "rank"]
        constraints = [models.UniqueConstraint(fields=["sweep", "rank"], name="evaluation_candidate_rank_once")]

    def __str__(self) -> str:
        return f"#{self.rank} {self.title}"
