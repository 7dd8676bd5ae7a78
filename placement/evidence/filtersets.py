"""Filters of the simulation run list (API)."""

import django_filters

from placement.common.api import IdFilter
from placement.evidence.models import SimulationRun


class SimulationRunFilterSet(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(choices=SimulationRun.STATUSES)
    stack = IdFilter(field_name="stack_id", min_value=1, max_value=2**63 - 1)

    class Meta:
        model = SimulationRun
        fields = ["status", "stack"]
