"""Project filters shared by the list page and the API: the same URL parameters in both."""

import django_filters
from django.db.models import Exists, OuterRef, Q

from placement.catalog.models import Capability, Layer, Project, ProjectFacet, ProjectLayer
from placement.catalog.schemas import (
    ENFORCEMENT_POINT_LABELS,
    RESOURCE_UNIT_LABELS,
    CncfStatus,
    EnforcementPoint,
    Kind,
    ResourceUnit,
)


def _facet(facet: str, value: str):
    return Exists(ProjectFacet.objects.filter(project=OuterRef("pk"), facet=facet, value=value))


def _layer(map_slug: str | None, code: str, primary_only: bool = False):
    links = ProjectLayer.objects.filter(project=OuterRef("pk"), layer__code=code)
    if map_slug:
        links = links.filter(layer__map__slug=map_slug)
    if primary_only:
        links = links.filter(role=ProjectLayer.PRIMARY)
    return Exists(links)


def _capability_choices():
    return [(c.slug, c.name) for c in Capability.objects.all()]


class ProjectFilterSet(django_filters.FilterSet):
    q = django_filters.CharFilter(label="Search", method="filter_text")
    plane = django_filters.ChoiceFilter(
        label="Plane",
        choices=[("data", "Data plane"), ("control", "Control plane"), ("platform", "Platform layer")],
        method="filter_plane",
    )
    layer = django_filters.ChoiceFilter(
        label="Layer",
        choices=[(f"L{i}", f"L{i}") for i in range(5)],
        method="filter_layer",
    )
    unit = django_filters.ChoiceFilter(
        label="Resource unit", choices=[(u.value, RESOURCE_UNIT_LABELS[u]) for u in ResourceUnit], method="filter_unit"
    )
    enforcement = django_filters.ChoiceFilter(
        label="Enforcement point",
        choices=[(e.value, ENFORCEMENT_POINT_LABELS[e]) for e in EnforcementPoint],
        method="filter_enforcement",
    )
    capability = django_filters.ChoiceFilter(label="Capability", choices=_capability_choices, method="filter_capability")
    kind = django_filters.ChoiceFilter(label="Kind", choices=[(k.value, k.value) for k in Kind])
    cncf = django_filters.ChoiceFilter(
        label="CNCF status", choices=[(c.value, c.value) for c in CncfStatus], method="filter_cncf"
    )
    status = django_filters.ChoiceFilter(
        label="Upstream status", choices=[("active", "active"), ("archived", "archived")], method="filter_status"
    )

    class Meta:
        model = Project
        fields = ["q", "plane", "layer", "unit", "enforcement", "capability", "kind", "cncf", "status"]

    def filter_text(self, queryset, name, value: str):
        terms = value.lower().split()
        condition = Q()
        for term in terms:
            condition &= Q(search_text__contains=term)
        return queryset.filter(condition)

    def filter_plane(self, queryset, name, value: str):
        # A project belongs to a plane by its primary placement on the planes map.
        return queryset.filter(_layer("planes", value, primary_only=True))

    def filter_layer(self, queryset, name, value: str):
        return queryset.filter(_layer("control-plane", value))

    def filter_unit(self, queryset, name, value: str):
        return queryset.filter(_facet(ProjectFacet.UNIT, value))

    def filter_enforcement(self, queryset, name, value: str):
        return queryset.filter(_facet(ProjectFacet.ENFORCEMENT, value))

    def filter_capability(self, queryset, name, value: str):
        return queryset.filter(_facet(ProjectFacet.CAPABILITY, value))

    def filter_cncf(self, queryset, name, value: str):
        return queryset.filter(_facet(ProjectFacet.CNCF, value))

    def filter_status(self, queryset, name, value: str):
        return queryset.filter(_facet(ProjectFacet.STATUS, value))




class LayerFilterSet(django_filters.FilterSet):
    map = django_filters.CharFilter(field_name="map__slug", label="Map slug")

    class Meta:
        model = Layer
        fields = ["map"]


class PlacementFilterSet(django_filters.FilterSet):
    map = django_filters.CharFilter(field_name="layer__map__slug", label="Map slug")
    layer = django_filters.CharFilter(field_name="layer__code", label="Layer code, e.g. L2 or data")
    role = django_filters.ChoiceFilter(choices=[(ProjectLayer.PRIMARY, "primary"), (ProjectLayer.SECONDARY, "secondary")])
    project = django_filters.CharFilter(field_name="project__slug", label="Project slug")

    class Meta:
        model = ProjectLayer
        fields = ["map", "layer", "role", "project"]


