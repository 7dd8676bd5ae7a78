"""Catalog endpoints: maps, layers, capabilities, profiles, scenarios, projects and placements."""

from __future__ import annotations

import json

from django.db.models.fields.json import KeyTransform
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import extend_schema
from rest_framework import filters, generics, status
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from placement.catalog.filtersets import LayerFilterSet, PlacementFilterSet, ProjectFilterSet
from placement.catalog.models import Capability, Layer, Map, Project, ProjectLayer
from placement.catalog.page_cache import cached_payload, catalog_read
from placement.catalog.selectors.catalog import (
    catalog_vocabulary,
    landscape_stale,
    project_document,
    project_list_queryset,
)
from placement.catalog.selectors.scenarios import builtin_scenarios
from placement.catalog.serializers import (
    BuiltinScenarioSerializer,
    CapabilitySerializer,
    LayerSerializer,
    MapSerializer,
    ProfileSerializer,
    ProjectDetail,
    ProjectListSerializer,
    ProjectPlacementSerializer,
    ProjectProposal,
    project_row,
)
from placement.common.api import AtlasViewMixin, LazyDjangoFilterBackend, parse_body
from placement.review import services as review_services
from placement.review.models import Revision
from placement.review.selectors import revisions_visible_to
from placement.review.serializers import RevisionSerializer
from placement.rules import builtin_rules


def _json_response(request, body: bytes):
    if getattr(request, "accepted_renderer", None) is None or request.accepted_renderer.format == "json":
        return HttpResponse(body, content_type="application/json")
    return Response(json.loads(body))  # the browsable API renders the same payload


class CatalogReadMixin:
    """ETag and Last-Modified on the catalog version, 304 on a match (`page_cache.catalog_read`)."""

    @catalog_read
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class MapList(CatalogReadMixin, AtlasViewMixin, generics.ListAPIView):
    """The maps (five-layer control plane, planes, four-layer architecture) with their layers."""

    serializer_class = MapSerializer
    queryset = Map.objects.prefetch_related("layers")
    filter_backends: list = []


class MapDetail(CatalogReadMixin, AtlasViewMixin, generics.RetrieveAPIView):
    serializer_class = MapSerializer
    queryset = Map.objects.prefetch_related("layers")
    lookup_field = "slug"


class LayerList(CatalogReadMixin, AtlasViewMixin, generics.ListAPIView):
    serializer_class = LayerSerializer
    queryset = Layer.objects.select_related("map")
    filter_backends = [DjangoFilterBackend, filters.SearchFilter]
    filterset_class = LayerFilterSet
    search_fields = ["code", "name", "description"]


class CapabilityList(CatalogReadMixin, AtlasViewMixin, generics.ListAPIView):
    """Capabilities and the layer that owns each (what a misuse check is judged against)."""

    serializer_class = CapabilitySerializer
    queryset = Capability.objects.all()
    filter_backends = [filters.SearchFilter]
    search_fields = ["slug", "name", "description"]


class CapabilityDetail(CatalogReadMixin, AtlasViewMixin, generics.RetrieveAPIView):
    serializer_class = CapabilitySerializer
    queryset = Capability.objects.all()
    lookup_field = "slug"


class ProfileList(AtlasViewMixin, generics.GenericAPIView):
    """Workload profiles accepted by compose and compatible."""

    serializer_class = ProfileSerializer
    pagination_class = None
    filter_backends: list = []

    @extend_schema(responses=ProfileSerializer(many=True))
    def get(self, request):
        rows = [
            {"profile": p.profile, "name": p.name, "description": p.description, "default_slo": p.default_slo.model_dump(mode="json")}
            for p in builtin_rules().profiles
        ]
        return Response(ProfileSerializer(rows, many=True).data)


class ScenarioList(AtlasViewMixin, generics.GenericAPIView):
    """Built-in simulation scenarios (names for POST /api/v1/simulations/)."""

    serializer_class = BuiltinScenarioSerializer
    pagination_class = None
    filter_backends: list = []

    @extend_schema(responses=BuiltinScenarioSerializer(many=True))
    def get(self, request):
        rows = [{"name": s.name, "title": s.title, "description": s.description} for s in builtin_scenarios()]
        return Response(BuiltinScenarioSerializer(rows, many=True).data)


PROJECT_LIST_DESCRIPTION = """Accepted projects, with the same filters as the list page (`/projects/?plane=data`):
q (words in the template), plane, layer, unit, enforcement, capability, kind; `search` matches name,
slug and summary; `ordering` by name, slug or updated_at (`-updated_at` for newest first).

POST proposes a new project: the whole template plus a `reason`. It is not on the map (nor in
this list) until a reviewer accepts the proposal; the response names the revision to review."""


class ProjectList(AtlasViewMixin, generics.ListAPIView):
    serializer_class = ProjectListSerializer
    filter_backends = [LazyDjangoFilterBackend, filters.SearchFilter, filters.OrderingFilter]
    filterset_class = ProjectFilterSet
    ordering_fields = ["name", "slug", "updated_at"]
    ordering = ["name"]
    search_fields = ["name", "slug", "summary"]

    def get_queryset(self):
        return project_list_queryset()

    @extend_schema(description=PROJECT_LIST_DESCRIPTION)
    @catalog_read
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def list(self, request, *args, **kwargs):
        """A page is computed once per catalog version and query (`page_cache.cached_payload`),
        kept as rendered JSON: a hit costs neither queries nor serialisation. Misses compute the
        page with `list_page`."""
        body = cached_payload(request, "project-list", lambda: JSONRenderer().render(self.list_page(request).data))
        return _json_response(request, body)

    def list_page(self, request):
        """The selector's queryset, filtered, searched and ordered; then rows as plain values.

        `project_list_queryset()` prefetches the layer links with `select_related("layer__map")`:
        three model instances per link (~500 for a 50-row page), most of a list request's time.
        The page is read as values instead, and its layer links in one values query: three
        queries whatever the page size, no model instances."""
        queryset = self.filter_queryset(self.get_queryset()).prefetch_related(None)
        rows = queryset.values(
            "id", "slug", "name", "kind", "summary", "updated_at",
            resource_units=KeyTransform("resource_units", "placement"),
            enforcement_points=KeyTransform("enforcement_points", "placement"),
            capabilities=KeyTransform("capabilities", "placement"),
            landscape=KeyTransform("landscape", "placement"),
        )  # fmt: skip
        page = self.paginate_queryset(rows)
        links: dict[int, list[dict]] = {row["id"]: [] for row in page}
        for project_id, map_slug, code, role in (
            ProjectLayer.objects.filter(project_id__in=links)
            .order_by("layer__map__order", "layer__order", "role")
            .values_list("project_id", "layer__map__slug", "layer__code", "role")
        ):
            links[project_id].append({"map": map_slug, "code": code, "role": role})
        return self.get_paginated_response([project_row(row, links[row["id"]]) for row in page])

    @extend_schema(
        request=ProjectProposal,
        responses={201: RevisionSerializer},
        description="Propose a new project (architects and reviewers). 201 with the proposal to review.",
    )
    def post(self, request):
        body = parse_body(ProjectProposal, request.data, context={"vocabulary": catalog_vocabulary()})
        project = review_services.project_create(body.document(), user=request.user, reason=body.reason, submit=body.submit)
        revision = Revision.objects.select_related("project", "author").filter(project=project).latest("created_at")
        return Response(RevisionSerializer(revision).data, status=status.HTTP_201_CREATED)


class ProjectDetailView(AtlasViewMixin, generics.GenericAPIView):
    filter_backends: list = []
    pagination_class = None

    @extend_schema(responses=ProjectDetail, description="The whole one-page template of a project and its state.")
    @catalog_read
    def get(self, request, slug: str):
        body = cached_payload(request, "project-detail", lambda: self.detail(slug))
        if body is None:
            get_object_or_404(Project, slug=slug)  # the API's 404 body
        return _json_response(request, body)

    def detail(self, slug: str) -> bytes | None:
        project = Project.objects.filter(slug=slug).first()
        if project is None:
            return None
        doc = project_document(project)
        data = doc.model_dump(mode="json")
        data.update(
            stale=landscape_stale(doc.placement.landscape),
            version=project.version,
            accepted=project.accepted,
            updated_at=project.updated_at.isoformat().replace("+00:00", "Z"),
            url=reverse("api-project-detail", kwargs={"slug": project.slug}),
            revisions_url=reverse("api-project-revisions", kwargs={"slug": project.slug}),
        )
        return JSONRenderer().render(data)


class PlacementList(CatalogReadMixin, AtlasViewMixin, generics.ListAPIView):
    """Where every accepted project sits: one row per (project, map, layer) with its role."""

    serializer_class = ProjectPlacementSerializer
    filterset_class = PlacementFilterSet
    ordering_fields = ["project__name", "layer__code"]
    ordering = ["layer__map__order", "layer__order", "project__name"]
    filter_backends = [DjangoFilterBackend, filters.OrderingFilter]

    def get_queryset(self):
        return ProjectLayer.objects.filter(project__accepted=True).select_related("project", "layer__map")


class ProjectRevisionList(AtlasViewMixin, generics.ListAPIView):
    """A project's revisions, newest first (history and open proposals)."""

    serializer_class = RevisionSerializer
    filter_backends: list = []

    def get_queryset(self):
        project = get_object_or_404(Project, slug=self.kwargs["slug"])
        return revisions_visible_to(
            self.request.user, Revision.objects.filter(project=project).select_related("project", "author", "reviewer"))

    @extend_schema(
        request=ProjectProposal,
        responses={201: RevisionSerializer},
        description="Propose a change: the whole template as it should read, and a `reason` (required).",
    )
    def post(self, request, slug: str):
        project = get_object_or_404(Project, slug=slug)
        body = parse_body(ProjectProposal, request.data, context={"vocabulary": catalog_vocabulary()})
        revision = review_services.revision_propose(
            project, body.document(), user=request.user, reason=body.reason, submit=body.submit
        )
        return Response(RevisionSerializer(revision).data, status=status.HTTP_201_CREATED)
