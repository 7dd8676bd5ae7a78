"""The API reference pages, served offline.

Swagger UI and Redoc come from drf-spectacular-sidecar under /static/. drf-spectacular's Redoc
template also links Google Fonts, which a machine without internet waits on and a strict CSP
blocks; this view renders the same page without those links (Redoc falls back to system fonts).
"""

from django.http import HttpResponse
from django.template import engines
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularRedocView

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
