"""Reads about access: the audit trail of API token grants."""

from __future__ import annotations


def grant_history(*, username: str | None = None):
    """The grant audit trail, newest first (admin log entries on ApiAccess rows)."""
    from django.contrib.admin.models import LogEntry
    from django.contrib.contenttypes.models import ContentType

    from placement.access.models import ApiAccess

    entries = LogEntry.objects.filter(content_type=ContentType.objects.get_for_model(ApiAccess)).select_related("user")
    if username is not None:
        ids = ApiAccess.objects.filter(user__username=username).values_list("pk", flat=True)
        entries = entries.filter(object_id__in=[str(pk) for pk in ids])
    return entries.order_by("-action_time", "-pk")
