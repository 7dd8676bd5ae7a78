from django import template
from django.utils.html import format_html

from placement.evidence.selectors.runs import flatten_metrics
from placement.evidence.selectors.runs import scenario_label as _scenario_label
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


@register.filter
def as_value(value):
    """A document value as HTML: records as term lists, lists as bullet lists, nested as deep as
    they go, so a reviewer reads a changed source or contract point, not a Python dict."""
    from django.utils.html import conditional_escape, format_html_join
    from django.utils.safestring import mark_safe

    if isinstance(value, dict):
        return format_html(
            '<dl class="value">{}</dl>',
            format_html_join("", "<dt>{}</dt><dd>{}</dd>", ((k, as_value(v)) for k, v in value.items())),
        )
    if isinstance(value, list):
        if not value:
            return mark_safe("<em>(none)</em>")
        return format_html('<ul class="value">{}</ul>', format_html_join("", "<li>{}</li>", ((as_value(v),) for v in value)))
    return conditional_escape("" if value is None else value)


@register.filter
def field_label(path: str) -> str:
    """`placement.costs.overhead` -> `Costs › overhead`; `placement.sources[2].url` -> `Sources › 3 › url`."""
    import re

    parts: list[str] = []
    for i, part in enumerate(path.removeprefix("placement.").split(".")):
        name = part.split("[")[0].replace("_", " ")
        parts.append(name.capitalize() if i == 0 else name)
        parts.extend(str(int(n) + 1) for n in re.findall(r"\[(\d+)\]", part))
    return " › ".join(p for p in parts if p)


@register.filter
def md_cell(value):
    """Text safe inside one Markdown table cell: no pipe ends the cell, no newline ends the row."""
    return " ".join(str(value).split()).replace("|", "\\|")


@register.filter
def catalog_version_text(version):
    """A catalog version as a reader says it: '61 entries as of 2026-12-03 09:12 UTC'."""
    from datetime import datetime

    count, _, stamp = str(version or "").partition(":")
    try:
        when = datetime.fromisoformat(stamp)
    except ValueError:
        return f"catalog version {version}" if version else "—"
    return f"the catalog of {count} entries as of {when:%Y-%m-%d %H:%M} UTC"


@register.filter
def spaced(value):
    """An API value as words: 'online_inference' -> 'online inference'."""
    return str(value or "").replace("_", " ")


@register.filter
def teams(value):
    """A class's teams as a person reads them: `vision, nlp` for names, `3 teams` for a number."""
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value} team{'s' if value != 1 else ''}"
    return value if value not in (None, "") else "—"


@register.filter
def teams_summary(workloads):
    """Who submits the composed classes, in one line: the shared teams once, else per class."""
    def of(w):
        return w.tenants if hasattr(w, "tenants") else (w or {}).get("tenants", 1)

    workloads = list(workloads or [])
    if not workloads:
        return ""
    values = [of(w) for w in workloads]
    names = [tuple(v) if isinstance(v, (list, tuple)) else None for v in values]
    if names[0] is not None and all(n == names[0] for n in names):
        return f"Teams {teams(values[0])} submit every class: each gets one namespace and one queue."
    parts = [f"{w.name if hasattr(w, 'name') else w.get('name')}: {teams(v)}" for w, v in zip(workloads, values)]
    return "Teams per class: " + "; ".join(parts) + "."


@register.filter
def scenario_label(name):
    """`plan-<digest>` (a run of the stack's own plan) in words; other scenario names as they are."""
    return _scenario_label(str(name or ""))
