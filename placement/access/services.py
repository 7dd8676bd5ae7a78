"""Who may do what. Every write service calls `require`, so no path (form, API, admin) skips it.

Roles are Django groups: reader, architect, reviewer. Superusers are admins and hold every role.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone

READER = "reader"
ARCHITECT = "architect"
REVIEWER = "reviewer"
ROLES = (READER, ARCHITECT, REVIEWER)

# action -> roles allowed to do it
ACTIONS: dict[str, set[str]] = {
    "read": {READER, ARCHITECT, REVIEWER},
    "create_project": {ARCHITECT, REVIEWER},
    "propose": {ARCHITECT, REVIEWER},
    "review": {REVIEWER},
    "save_stack": {ARCHITECT, REVIEWER},
    "run_simulation": {ARCHITECT, REVIEWER},
}

ACTION_REASONS = {
    "read": "reading the Atlas needs a login",
    "create_project": "only architects and reviewers create projects",
    "propose": "only architects and reviewers propose changes",
    "review": "only reviewers approve or reject proposals",
    "save_stack": "only architects and reviewers save stacks",
    "run_simulation": "only architects and reviewers start simulations",
}


def user_roles(user) -> set[str]:
    if user is None or not user.is_authenticated or not user.is_active:
        return set()
    if user.is_superuser:
        return set(ROLES)
    cached = getattr(user, "_atlas_roles", None)
    if cached is None:
        cached = set(user.groups.filter(name__in=ROLES).values_list("name", flat=True))
        user._atlas_roles = cached
    return cached


def can(user, action: str) -> bool:
    if action == "read_embed":
        # Embeds are read-only pages portals frame; ATLAS_PUBLIC_EMBEDS opens them to anonymous
        # visitors even where reading otherwise needs a login (production).
        return bool(getattr(settings, "ATLAS_PUBLIC_EMBEDS", False)) or can(user, "read")
    if action == "read" and getattr(settings, "ATLAS_ANONYMOUS_READ", False):
        return True
    if action == "read" and user is not None and user.is_authenticated:
        return True  # any account may read; roles add writing
    return bool(user_roles(user) & ACTIONS[action])


def require(user, action: str) -> None:
    if not can(user, action):
        raise PermissionDenied(ACTION_REASONS[action])


@transaction.atomic
def token_rotate(*, user):
    """A fresh API key for `user`; the old one stops working at once."""
    from rest_framework.authtoken.models import Token

    Token.objects.filter(user=user).delete()
    return Token.objects.create(user=user)


def can_grant(user) -> bool:
    """Only admins decide whether a token may write: a reviewer holding a write-enabled token must
    not be able to widen its own or anyone else's access."""
    return bool(user is not None and user.is_authenticated and user.is_active and user.is_superuser)


@transaction.atomic
def token_grant(*, user, username: str, can_write: bool):
    """An admin grants or withdraws writing for another user's token; each grant is recorded in the
    audit history (Django's admin log, on the user's ApiAccess row)."""
    from django.contrib.admin.models import ADDITION, CHANGE, LogEntry

    from placement.access.models import ApiAccess

    if not can_grant(user):
        raise PermissionDenied("only admins grant API tokens writing")
    target = get_user_model().objects.filter(username=username).first()
    if target is None:
        raise ValidationError({"username": [f"No user {username!r}."]})
    if target.pk == user.pk:
        raise PermissionDenied("nobody grants their own token: ask another admin")
    access, created = ApiAccess.objects.select_for_update().get_or_create(user=target)
    before = access.token_can_write
    access.token_can_write = can_write
    access.granted_by = user
    access.granted_at = timezone.now()
    access.save()
    LogEntry.objects.log_actions(
        user.pk,
        ApiAccess.objects.filter(pk=access.pk),
        ADDITION if created else CHANGE,
        f"token writing {'granted' if can_write else 'withdrawn'} for {target.username} "
        f"(was {'write' if before else 'read-only'})",
        single_object=True,
    )
    return access

