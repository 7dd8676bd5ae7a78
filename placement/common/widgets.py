"""Form pieces for the placement template: repeatable rows (contract points, misuses, sources) that
are added with htmx and removed in place, and a searchable checkbox picker for long choice lists.

A row's inputs are named `<field>-<key>-<column>`; rows post in the order they stand on the page,
so the order of a list survives a save. The key only ties a row's inputs together.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field, replace
from typing import Any

from django import forms


@dataclass(frozen=True)
class Column:
    name: str  # key in the row's dict (the template model's field name)
    label: str
    kind: str = "text"  # text | textarea | url | select | checkboxes
    choices: tuple[tuple[str, str], ...] = ()
    default: str = ""
    wide: bool = False


@dataclass
class RowSpec:
    """What a repeatable field is made of; the form fills in choices that come from the catalog."""

    columns: list[Column]
    add_label: str
    noun: str
    extra: dict[str, Any] = field(default_factory=dict)

    def column(self, name: str) -> Column | None:
        return next((c for c in self.columns if c.name == name), None)


def new_row_key() -> str:
    return "n" + secrets.token_hex(3)


class RowsWidget(forms.Widget):
    template_name = "placement/widgets/rows.html"

    def __init__(self, spec: RowSpec, attrs=None):
        super().__init__(attrs)
        self.spec = spec

    def value_from_datadict(self, data, files, name):
        prefix = f"{name}-"
        rows: dict[str, dict[str, Any]] = {}
        for key in data.keys():  # in the order the browser posted them: the order on the page
            if not key.startswith(prefix):
                continue
            row_key, _, column_name = key[len(prefix):].rpartition("-")
            column = self.spec.column(column_name)
            if not row_key or column is None:
                continue
            row = rows.setdefault(row_key, {"_key": row_key})
            many = column.kind == "checkboxes" and hasattr(data, "getlist")
            row[column.name] = data.getlist(key) if many else data.get(key, "")
        return list(rows.values())

    def value_omitted_from_data(self, data, files, name):
        return False  # no rows posted means the list was emptied

    def format_value(self, value):
        return value or []

    def get_context(self, name, value, attrs):
        context = super().get_context(name, value, attrs)
        context["widget"]["rows"] = [self.row_context(name, row.get("_key") or new_row_key(), row) for row in value or []]
        context["widget"]["spec"] = self.spec
        return context

    def row_context(self, name: str, key: str, row: dict[str, Any]) -> dict[str, Any]:
        cells = []
        for column in self.spec.columns:
            value = row.get(column.name, column.default)
            if column.kind == "checkboxes":
                chosen = [v for v in (value or []) if v]
                labels = dict(column.choices)
                # Ticked ones first, in their stored order: checkboxes post in page order.
                options = [(v, labels.get(v, v), True) for v in chosen] + [
                    (v, label, False) for v, label in column.choices if v not in chosen
                ]
                value = options
            cells.append({"column": column, "value": value, "name": f"{name}-{key}-{column.name}", "id": f"id_{name}-{key}-{column.name}"})
        return {"key": key, "field": name, "cells": cells, "noun": self.spec.noun}


class RowsField(forms.Field):
    """A list of dicts, one per row; rows left entirely blank are dropped."""

    def __init__(self, spec: RowSpec, **kwargs):
        self.spec = spec
        kwargs.setdefault("widget", RowsWidget(spec))
        super().__init__(**kwargs)

    def to_python(self, value) -> list[dict[str, Any]]:
        rows = []
        for row in value or []:
            cleaned = {}
            for column in self.spec.columns:
                raw = row.get(column.name, [] if column.kind == "checkboxes" else "")
                cleaned[column.name] = [v for v in raw if v] if column.kind == "checkboxes" else str(raw).strip()
            typed = [cleaned[c.name] for c in self.spec.columns if c.kind in ("text", "textarea", "url")]
            if any(typed) or any(cleaned[c.name] for c in self.spec.columns if c.kind == "checkboxes"):
                cleaned["_key"] = row.get("_key", "")
                rows.append(cleaned)
        return rows

    def set_choices(self, column_name: str, choices) -> None:
        """Choices known only at run time (from the catalog), on this form's copy of the field."""
        columns = [replace(c, choices=tuple(choices)) if c.name == column_name else c for c in self.spec.columns]
        self.spec = replace(self.spec, columns=columns)
        self.widget.spec = self.spec

    def validate(self, value):
        if self.required and not value:
            raise forms.ValidationError(f"Add at least one {self.spec.noun}.", code="required")

    def bound_data(self, data, initial):
        return data  # re-show every row as typed, blank ones included


class PickerWidget(forms.CheckboxSelectMultiple):
    """Checkboxes with a filter box: type part of a name to narrow a long list."""

    template_name = "placement/widgets/picker.html"
