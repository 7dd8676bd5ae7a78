"""GET /api/v1/: where everything is."""

from django.urls import reverse
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import generics, serializers
from rest_framework.response import Response

from placement.common.api import AtlasViewMixin

_LINKS = {
    "maps": "api-map-list",
    "layers": "api-layer-list",
    "capabilities": "api-capability-list",
    "profiles": "api-profile-list",
    "scenarios": "api-scenario-list",
    "projects": "api-project-list",
    "placements": "api-placement-list",
    "revisions": "api-revision-list",
    "compare": "api-compare",
    "misuse": "api-misuse",
    "compose": "api-compose",
    "compatible": "api-compatible",
    "stacks": "api-stack-list",
    "simulations": "api-simulation-list",
    "tokens": "api-token",
    "schema": "api-schema",
    "docs": "api-docs",
}


class ApiRoot(AtlasViewMixin, generics.GenericAPIView):
    filter_backends: list = []
    pagination_class = None

    @extend_schema(
        responses=inline_serializer("ApiRoot", {name: serializers.CharField() for name in _LINKS}),
        description="Links to every collection of API v1, the schema and the docs.",
    )
    def get(self, request):
        return Response({name: reverse(url_name) for name, url_name in _LINKS.items()})
