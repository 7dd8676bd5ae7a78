"""Small helpers every page view uses: render a full page or its htmx fragment, show a service's errors on a form."""

from __future__ import annotations

from django.shortcuts import render


def render_page_or_fragment(request, page: str, fragment: str, context: dict, status: int = 200):
    """NetBox style: an htmx request gets only the fragment that changes."""
    htmx = getattr(request, "htmx", None)
    # A history-restore request (htmx cache miss on back/forward) needs the whole page.
    partial = bool(htmx) and not htmx.boosted and not htmx.history_restore_request
    template = fragment if partial else page
    return render(request, template, context, status=status)


def render_progress(request, fragment: str, context: dict, task) -> object:
    """A polled progress fragment of a background task (a run, a control-plane trial): when the task has
    finished since the page was drawn (`?was=<status>`), HX-Refresh makes the page reload once to show the result."""
    response = render(request, fragment, context)
    if task.is_finished and request.GET.get("was") != task.status:
        response["HX-Refresh"] = "true"
    return response


def apply_service_errors(form, exc) -> None:
    """Show a service's ValidationError on the form's fields (non-field errors otherwise)."""
    for field, messages in getattr(exc, "message_dict", {"__all__": exc.messages}).items():
        for message in messages:
            form.add_error(field if field in form.fields else None, message)
