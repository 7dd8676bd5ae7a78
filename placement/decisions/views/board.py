"""Pages for a review board: templates side by side, the diff of two saved stacks, one search box,
and the page where a user creates an API token (the token services decide who may do what)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from rest_framework.authtoken.models import Token

from placement.access.decorators import read_required
from placement.access.permissions import token_can_write
from placement.access.services import token_grant, token_rotate
from placement.catalog.models import Project
from placement.decisions.selectors.board import atlas_search, stack_diff, templates_side_by_side
from placement.stacks.models import Stack

EXAMPLE_PAIR = ("hami", "volcano")


def _project_choices() -> list[tuple[str, str]]:
    return list(Project.objects.filter(accepted=True).order_by("name").values_list("slug", "name"))


@read_required
def side_by_side(request):
    slugs = [s for s in request.GET.getlist("slugs") if s][:3]
    example = not slugs
    if example:  # the confusion the Atlas exists for: "HAMi or Volcano?"
        slugs = [s for s in EXAMPLE_PAIR if Project.objects.filter(slug=s, accepted=True).exists()]
    projects, rows = templates_side_by_side(slugs) if len(slugs) >= 2 else ([], [])
    only_differences = request.GET.get("differences") == "1"
    shown = [r for r in rows if r.differs] if only_differences else rows
    context = {
        "projects": projects,
        "rows": shown,
        "differing": sum(1 for r in rows if r.differs),
        "total": len(rows),
        "choices": _project_choices(),
        "selected": slugs + [""] * (3 - len(slugs)),
        "only_differences": only_differences,
        "example": example,
    }
    return render(request, "placement/side_by_side.html", context)


@read_required
def stacks_diff(request):
    stacks = list(Stack.objects.order_by("-created_at").values_list("pk", "name")[:200])
    a_id, b_id = request.GET.get("a", ""), request.GET.get("b", "")
    if not (a_id.isdigit() and b_id.isdigit()) and len(stacks) >= 2:
        a_id, b_id = str(stacks[1][0]), str(stacks[0][0])  # the two most recent: what changed lately
    diff = None
    if a_id.isdigit() and b_id.isdigit():
        diff = stack_diff(get_object_or_404(Stack, pk=int(a_id)), get_object_or_404(Stack, pk=int(b_id)))
    context = {"stacks": stacks, "diff": diff, "a_id": a_id, "b_id": b_id}
    return render(request, "placement/stack_diff.html", context)


@read_required
def search(request):
    query = request.GET.get("q", "").strip()[:200]
    return render(request, "placement/search.html", {"results": atlas_search(query), "query": query})


@login_required
def api_token(request):
    """Create or rotate one's API token (shown once), and, for whoever the grant service allows,
    decide whether a user's token may write."""
    new_key = None
    if request.method == "POST" and request.POST.get("action") == "rotate":
        new_key = token_rotate(user=request.user).key
        messages.success(request, "A new token was created; the previous one no longer works.")
    elif request.method == "POST" and request.POST.get("action") == "grant":
        username = request.POST.get("username", "").strip()
        can_write = request.POST.get("can_write") == "1"
        try:
            if not request.user.is_superuser:
                raise PermissionDenied("Only admins grant writing to API tokens.")
            access = token_grant(user=request.user, username=username, can_write=can_write)
        except PermissionDenied as exc:
            messages.error(request, str(exc) or "You may not grant writing to tokens.")
        except ValidationError as exc:
            messages.error(request, " ".join(m for msgs in exc.message_dict.values() for m in msgs))
        else:
            verb = "may now write" if access.token_can_write else "is read-only now"
            messages.success(request, f"The token of {access.user.username} {verb}.")
        return redirect("api-token")
    token = Token.objects.filter(user=request.user).first()
    context = {
        "token": token,
        "new_key": new_key,
        "can_write": token_can_write(request.user),
        "may_grant": request.user.is_superuser,  # admins grant writing; the service checks again
    }
    return render(request, "placement/api_token.html", context)
