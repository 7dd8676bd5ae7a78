"""Filters of the revision list (API)."""

import django_filters

from placement.review.models import Revision


class RevisionFilterSet(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(choices=Revision.STATUSES)
    project = django_filters.CharFilter(field_name="project__slug", label="Project slug")

    class Meta:
        model = Revision
        fields = ["status", "project"]


