"""Saved stacks: a named composition, the request it answers and its plan."""

from django.conf import settings
from django.db import models


class Stack(models.Model):
    """A named composition: slot -> project(s), the profile and SLO it targets, its contract checks."""

    name = models.CharField(max_length=200)
    profile = models.CharField(max_length=40)
    # The compose request it came from (profile, SLO, pool, constraints) and the ranked stack as the
    # rules engine returned it (slots, contract checks, score breakdown), both as JSON.
    request = models.JSONField(default=dict)
    composition = models.JSONField(default=dict)
    notes = models.TextField(blank=True, default="")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.name

    @property
    def project_slugs(self) -> list[str]:
        """Distinct projects of the composition, in slot order."""
        return list(self.composition.get("components", []))


