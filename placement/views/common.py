"""Small helpers every page view uses: read access and rendering full page or htmx fragment."""

from __future__ import annotations

from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.shortcuts import render

from placement.services.access import can


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


def render_page_or_fragment(request, page: str, fragment: str, context: dict, status: int = 200):
    """NetBox style: an htmx request gets only the fragment that changes."""
    htmx = getattr(request, "htmx", None)
    # A history-restore request (htmx cache miss on back/forward) needs the whole page.
    partial = bool(htmx) and not htmx.boosted and not htmx.history_restore_request
    template = fragment if partial else page
    return render(request, template, context, status=status)


def apply_service_errors(form, exc) -> None:
    """Show a service's ValidationError on the form's fields (non-field errors otherwise)."""
    for field, messages in getattr(exc, "message_dict", {"__all__": exc.messages}).items():
        for message in messages:
            form.add_error(field if field in form.fields else None, message)
