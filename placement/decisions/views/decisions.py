"""Decision records, the organisation's radar and the Atom feed: thin views over
placement.decisions.services.decisions and placement.decisions.selectors.decisions."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.syndication.views import Feed
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.feedgenerator import Atom1Feed
from django.views.decorators.http import require_POST

from placement.access.decorators import action_required, read_required
from placement.access.services import can
from placement.catalog.models import Project
from placement.common.pages import apply_service_errors
from placement.decisions.document import RING_ORDER
from placement.decisions.forms import DecisionForm
from placement.decisions.models import DecisionRecord
from placement.decisions.selectors import decisions as selectors
from placement.decisions.services import board_pack
from placement.decisions.services import decisions as services

STATUSES = [s for s, _ in DecisionRecord.STATUSES]


@read_required
def decision_list(request):
    status = request.GET.get("status", "")
    records = selectors.decision_list()
    if status in STATUSES:
        records = records.filter(status=status)
    records = list(records[:200])
    stale = {r.pk for r in records if r.status == DecisionRecord.ACCEPTED and selectors.decision_staleness(r)}
    return render(
        request, "placement/decision_list.html",
        {"records": records, "stale": stale, "status": status, "statuses": STATUSES},
    )


def _superseded_choices():
    return [(r.pk, f"ADR-{r.pk}: {r.title}") for r in DecisionRecord.objects.filter(status=DecisionRecord.ACCEPTED)[:100]]


@action_required("propose")
def decision_create(request):
    if request.method == "POST":
        form = DecisionForm(request.POST, superseded_choices=_superseded_choices())
        doc = form.document({})  # the service takes the context from the options' compose request
        if doc is not None:
            try:
                record = services.decision_propose(doc, user=request.user)
            except ValidationError as exc:
                apply_service_errors(form, exc)
            else:
                messages.success(request, f"Proposed ADR-{record.pk}; a reviewer accepts or rejects it.")
                return redirect("decision-detail", pk=record.pk)
    else:
        initial = {
            "options": [int(v) for v in request.GET.getlist("options") if v.isdigit()],
            "evidence_runs": [int(v) for v in request.GET.getlist("runs") if v.isdigit()],
            "evidence_sweeps": [int(v) for v in request.GET.getlist("sweeps") if v.isdigit()],
        }
        form = DecisionForm(initial=initial, superseded_choices=_superseded_choices())
    return render(request, "placement/decision_form.html", {"form": form}, status=400 if form.errors else 200)


@read_required
def decision_detail(request, pk: int):
    record = get_object_or_404(
        DecisionRecord.objects.select_related("author", "reviewer", "chosen", "supersedes"), pk=pk
    )
    context = {
        "record": record,
        "options": list(record.options.all()),
        "runs": list(record.evidence_runs.select_related("stack").defer("scenario", "timeseries")),
        "sweeps": list(record.evidence_sweeps.all()),
        "superseded_by": list(record.superseded_by.all()),
        "stale": selectors.decision_staleness(record),
        "reruns": selectors.decision_reruns(record),
        "events": list(record.events.select_related("user")),
        "can_review": can(request.user, "review") and record.author_id != request.user.pk
        and record.status == DecisionRecord.PROPOSED,
        "can_rerun": can(request.user, "run_simulation"),
        "project_names": dict(Project.objects.values_list("slug", "name")),
    }
    return render(request, "placement/decision_detail.html", context)


def _review_action(request, pk: int, action):
    record = get_object_or_404(DecisionRecord, pk=pk)
    try:
        action(record)
    except PermissionDenied as exc:
        messages.error(request, str(exc) or "Not allowed.")
    except ValidationError as exc:
        messages.error(request, "; ".join(" ".join(v) for v in exc.message_dict.values()))
    return redirect("decision-detail", pk=pk)


def _record_action(permission: str, act, done: str):
    """A POST on one record: check the role, call the service, say what happened (or why not)."""

    @require_POST
    @action_required(permission)
    def view(request, pk: int):
        def run(record):
            result = act(record, request)
            messages.success(request, done.format(pk=record.pk, result=result))

        return _review_action(request, pk, run)

    return view


decision_accept = _record_action(
    "review",
    lambda record, request: services.decision_accept(record, user=request.user, comment=request.POST.get("comment", "")),
    "Accepted ADR-{pk}; its rings are on the radar.",
)
decision_reject = _record_action(
    "review",
    lambda record, request: services.decision_reject(record, user=request.user, comment=request.POST.get("comment", "")),
    "Rejected ADR-{pk}.",
)
decision_rerun = _record_action(
    "run_simulation",
    lambda record, request: len(services.decision_rerun(record, user=request.user)),
    "Re-running {result} run(s) with the current simulator.",
)


@read_required
def radar(request):
    ring = request.GET.get("ring", "")
    if ring and ring not in RING_ORDER:
        ring = ""
    entries = selectors.radar_entries(ring or None)
    return render(
        request, "placement/radar.html",
        {
            "entries": entries,
            "ring": ring,
            "rings": RING_ORDER,
            "quadrants": selectors.QUADRANTS,
            "ring_colors": selectors.RING_COLORS,
            **selectors.radar_layout(entries),
        },
    )


@read_required
def radar_json(request):
    data = selectors.radar_export(request.build_absolute_uri("/").rstrip("/"), timezone.now())
    response = JsonResponse(data, json_dumps_params={"indent": 2})
    response["Content-Disposition"] = 'inline; filename="radar.json"'
    return response


class AtlasFeed(Feed):
    """Accepted decisions and catalog changes, as an Atom feed (same read rule as every page)."""

    feed_type = Atom1Feed
    title = "GPU Placement Atlas: decisions and catalog changes"
    link = "/decisions/"
    subtitle = "Accepted decision records and accepted catalog revisions, newest first."

    def __call__(self, request, *args, **kwargs):
        if not can(request.user, "read"):
            raise Http404  # a feed reader cannot log in; do not reveal what exists
        return super().__call__(request, *args, **kwargs)

    def items(self):
        return selectors.feed_items()

    def item_title(self, item):
        return item.title

    def item_description(self, item):
        return item.description

    def item_link(self, item):
        return item.path

    def item_guid(self, item):
        return item.guid

    item_guid_is_permalink = False

    def item_updateddate(self, item):
        return item.at

    def item_pubdate(self, item):
        return item.at


@read_required
def decision_pack(request, pk: int):
    """The record as one page for the board (print-ready HTML, with Markdown and PDF links)."""
    record = get_object_or_404(DecisionRecord, pk=pk)
    return HttpResponse(board_pack.pack_html(record, request))


@read_required
def decision_pack_markdown(request, pk: int):
    record = get_object_or_404(DecisionRecord, pk=pk)
    response = HttpResponse(board_pack.pack_markdown(record), content_type="text/markdown; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="ADR-{record.pk}.md"'
    return response


@read_required
def decision_pack_pdf(request, pk: int):
    record = get_object_or_404(DecisionRecord, pk=pk)
    try:
        pdf = board_pack.pack_pdf(record)
    except board_pack.PdfUnavailable as exc:
        return HttpResponse(str(exc), status=503, content_type="text/plain; charset=utf-8")
    response = HttpResponse(pdf, content_type="application/pdf")
    response["Content-Disposition"] = f'attachment; filename="ADR-{record.pk}.pdf"'
    return response

