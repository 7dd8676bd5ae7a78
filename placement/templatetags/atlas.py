from django import template

from placement.selectors.evidence import flatten_metrics
from scheduler_core import labels

register = template.Library()


@register.filter
def get_item(mapping, key):
    return mapping.get(key, "") if hasattr(mapping, "get") else ""


@register.filter
def items_of(mapping):
    return sorted(mapping.items()) if hasattr(mapping, "items") else []


@register.filter
def flat_metrics(metrics):
    return sorted(flatten_metrics(metrics).items())


@register.filter
def metric_rows(metrics):
    """(label, value with unit, dotted name) rows: human labels, unbounded P99 spelled out."""
    return labels.metric_rows(metrics)


@register.filter
def headline_rows(metrics):
    """The metrics that show each failure story, failures first."""
    return labels.headline(metrics) if isinstance(metrics, dict) else []


@register.filter
def metric_label(name):
    return labels.label(name)


@register.filter
def metric_value(value, name):
    return labels.format_value(name, value)
