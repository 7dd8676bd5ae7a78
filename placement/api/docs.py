"""The API reference pages, served offline.

/api/docs/ is Swagger UI under the Atlas's header with a "start here" section: how to get a token,
a worked example per main endpoint (curl and Python), and the compose form's labels beside the API's
field names, read from the form classes so the two cannot drift apart.

Swagger UI and Redoc come from drf-spectacular-sidecar under /static/. drf-spectacular's Redoc
template also links Google Fonts, which a machine without internet waits on and a strict CSP
blocks; this view renders the same page without those links (Redoc falls back to system fonts).
"""

from django.http import HttpResponse
from django.template import engines
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularRedocView, SpectacularSwaggerView

from placement.stacks.forms import ComposeForm, WorkloadClassForm

# The compose form's fields and the request paths they fill (ComposeForm.request_data).
_COMPOSE_PATHS = {
    "profile": "profile",
    "tenants": "tenants",
    "isolation": "slo.isolation",
    "goal": "slo.goal",
    "multi_tenant": "slo.multi_tenant",
    "gpu_model": "pool.gpu_model",
    "gpu_count": "pool.gpu_count",
    "mig_capable": "pool.mig_capable",
    "require": "constraints.require",
    "exclude": "constraints.exclude",
    "keep_default_scheduler": "constraints.keep_default_scheduler",
}
_TRI = {"yes": "true", "no": "false"}


def _values(field, *, tri: bool = False) -> str:
    choices = [(v, label) for v, label in getattr(field, "choices", []) if v]
    if not choices or len(choices) > 8:
        return ""
    return ", ".join(f"{_TRI.get(v, v) if tri else v} = {label}" for v, label in choices)


def compose_field_labels() -> list[dict[str, str]]:
    """Rows of (API field, the compose page's label, accepted values with their labels)."""
    form_fields = ComposeForm.base_fields
    rows = [
        {"path": path, "label": str(form_fields[name].label), "values": _values(form_fields[name], tri=name in ("multi_tenant", "mig_capable"))}
        for name, path in _COMPOSE_PATHS.items()
    ]
    rows += [
        {"path": f"workloads[].{name}", "label": f"Workload classes: {str(field.label).removesuffix(' *')}", "values": _values(field)}
        for name, field in WorkloadClassForm.base_fields.items()
    ]
    teams = "a number (4: team-1..4) or a list of names, [\"vision\", \"nlp\"]; the page takes 4 or: vision, nlp"
    for row in rows:
        if row["path"] in ("tenants", "workloads[].tenants"):
            row["values"] = teams
    return rows

_REDOC = engines["django"].from_string(
    """{% extends "drf_spectacular/redoc.html" %}
{% block head %}
    <title>{{ title|default:"Redoc" }}</title>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <style>body { margin: 0; padding: 0; }</style>
{% endblock head %}"""
)


class OfflineRedocView(SpectacularRedocView):
    @extend_schema(exclude=True)
    def get(self, request, *args, **kwargs):
        data = super().get(request, *args, **kwargs).data
        return HttpResponse(_REDOC.render(data, request), content_type="text/html; charset=utf-8")


class AtlasSwaggerView(SpectacularSwaggerView):
    """Swagger UI with the Atlas's header, how to authenticate, worked examples and the form labels."""

    template_name = "placement/api_docs.html"

    @extend_schema(exclude=True)
    def get(self, request, *args, **kwargs):
        response = super().get(request, *args, **kwargs)
        response.data.update(
            base_url=request.build_absolute_uri("/").rstrip("/"),
            field_labels=compose_field_labels(),
            user=request.user,
        )
        return response
