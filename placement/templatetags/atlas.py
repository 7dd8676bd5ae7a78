from django import template

from placement.selectors.evidence import flatten_metrics

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
