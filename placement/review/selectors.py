"""Reads of revisions: an unsubmitted draft is seen only by its author and by reviewers."""

from __future__ import annotations

from django.db.models import Q, QuerySet

from placement.access.services import can
from placement.review.models import Revision


def revisions_visible_to(user, revisions: QuerySet | None = None) -> QuerySet:
    """`revisions` (default: all) without the drafts `user` may not read."""
    revisions = Revision.objects.all() if revisions is None else revisions
    if can(user, "review"):
        return revisions
    if user is not None and user.is_authenticated:
        return revisions.filter(~Q(status=Revision.DRAFT) | Q(author=user))
    return revisions.exclude(status=Revision.DRAFT)
