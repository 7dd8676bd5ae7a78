"""Filters of the API lists other than projects (projects reuse placement.filtersets.ProjectFilterSet)."""

import django_filters
from django import forms

from placement.models import Layer, ProjectLayer, Revision, SimulationRun


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


class RevisionFilterSet(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(choices=Revision.STATUSES)
    project = django_filters.CharFilter(field_name="project__slug", label="Project slug")

    class Meta:
        model = Revision
        fields = ["status", "project"]


class IdFilter(django_filters.NumberFilter):
    """A row id: a whole number (NumberFilter alone takes 53.62 and finds nothing)."""

    field_class = forms.IntegerField


class SimulationRunFilterSet(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(choices=SimulationRun.STATUSES)
    stack = IdFilter(field_name="stack_id", min_value=1, max_value=2**63 - 1)

    class Meta:
        model = SimulationRun
        fields = ["status", "stack"]
