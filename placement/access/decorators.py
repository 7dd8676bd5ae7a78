"""Page guards: read access (login unless anonymous reading is open) and actions by role."""

from __future__ import annotations

from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied

from placement.access.services import can


def _login_unless(action: str):
    def decorator(view):
        @wraps(view)
        def wrapper(request, *args, **kwargs):
            if not can(request.user, action):
                return redirect_to_login(request.get_full_path())
            return view(request, *args, **kwargs)

        return wrapper

    return decorator


# Pages need a login unless ATLAS_ANONYMOUS_READ opens them; embeds also open with ATLAS_PUBLIC_EMBEDS.
read_required = _login_unless("read")
embed_read_required = _login_unless("read_embed")


def action_required(action: str):
    """Page-level guard; the services check the same permission again."""

    def decorator(view):
        @wraps(view)
        def wrapper(request, *args, **kwargs):
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            if not can(request.user, action):
                raise PermissionDenied
            return view(request, *args, **kwargs)

        return wrapper

    return decorator


