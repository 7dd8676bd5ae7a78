"""The project and placement form. It collects fields in a friendly shape and validates them through `placement.catalog.schemas.ProjectDocument`, so the form, YAML import and API share one model."""

from __future__ import annotations

import re
from typing import Any

from django import forms
from pydantic import ValidationError

from placement.catalog.models import Project
from placement.catalog.schemas import (
    ENFORCEMENT_POINT_LABELS,
    RESOURCE_UNIT_LABELS,
    CatalogVocabulary,
    CncfStatus,
    ContractPoint,
    EnforcementPoint,
    Kind,
    ProjectDocument,
    ResourceUnit,
    SourceTag,
)
from placement.catalog.selectors.catalog import catalog_vocabulary
from placement.common.widgets import Column, PickerWidget, RowsField, RowSpec

TEXTAREA = forms.Textarea(attrs={"rows": 3})
CONTRACT_POINT_LABELS = {ContractPoint.ADVERTISE: "Advertise", ContractPoint.BIND: "Bind", ContractPoint.ALLOCATE: "Allocate"}
SOURCE_TAG_LABELS = {
    SourceTag.VERIFIED: "V: verified in upstream docs",
    SourceTag.VERIFIED_CODE: "V-code: verified in upstream code",
    SourceTag.DERIVED: "D: derived",
    SourceTag.SECONDARY: "S: secondary source",
    SourceTag.UNVERIFIED: "U: unverified",
}
SOURCE_TAG_CHOICES = tuple((t.value, SOURCE_TAG_LABELS[t]) for t in SourceTag) + (("", "not graded yet"),)
UNIT_CHOICES = [(u.value, RESOURCE_UNIT_LABELS[u]) for u in ResourceUnit]
# Every enum value the template knows, with the words the form shows for it (for error messages).
VALUE_LABELS = {
    **{u.value: label for u, label in RESOURCE_UNIT_LABELS.items()},
    **{e.value: label for e, label in ENFORCEMENT_POINT_LABELS.items()},
    **{c.value: label for c, label in CONTRACT_POINT_LABELS.items()},
    **{t.value: label for t, label in SOURCE_TAG_LABELS.items()},
    **{k.value: k.value.title() for k in Kind},
}
# Sections of the page, in order: where the project sits first. Fields not named here (added to
# the template later) are shown in a last section, so the form stays generic.
SECTIONS = [
    ("placement", "Where it sits", ["maps", "primary_unit", "resource_units", "enforcement_points"]),
    ("project", "The project", ["name", "slug", "kind", "homepage", "summary"]),
    ("promise", "Promise and non-promise", ["promise", "non_promise"]),
    ("costs", "Key costs", ["overhead", "reconfiguration", "intrusiveness", "compatibility"]),
    ("contracts", "Contracts, capabilities and misuses", ["contract_points", "capabilities", "denied_capabilities", "misuses"]),
    ("dependencies", "Observability and dependencies", ["observability", "upstream", "downstream", "requires", "bundles", "conflicts_with"]),
    ("failures", "Failure modes and sources", ["failure_modes", "sources"]),
    ("landscape", "Landscape facts (optional)", ["landscape_*"]),
    ("reason", "Why", ["reason"]),
]


def _lines(value: str) -> list[str]:
    return [line.strip() for line in (value or "").splitlines() if line.strip()]


def _in_order(selected: list[str], order: str) -> list[str]:
    """`selected` in the order recorded in the hidden order field; newly ticked values follow, in
    the order they were posted (the order of the choices)."""
    rank = {value: i for i, value in enumerate(v for v in (order or "").split(",") if v)}
    return sorted(selected, key=lambda value: rank.get(value, len(rank)))


class ProjectForm(forms.Form):
    slug = forms.SlugField(max_length=80, help_text="Lower-case words joined by hyphens, e.g. my-device-plugin.")
    name = forms.CharField(max_length=300)
    kind = forms.ChoiceField(choices=[(k.value, k.value.title()) for k in Kind])
    homepage = forms.URLField(max_length=500, assume_scheme="https")
    summary = forms.CharField(widget=TEXTAREA)
    primary_unit = forms.ChoiceField(
        required=False,
        label="Primary resource unit",
        choices=[("", "the first one ticked below")] + [(u.value, RESOURCE_UNIT_LABELS[u]) for u in ResourceUnit],
        help_text="The unit it hands out first; compare and compose judge it by this one.",
    )
    resource_units = forms.MultipleChoiceField(
        choices=[(u.value, RESOURCE_UNIT_LABELS[u]) for u in ResourceUnit], widget=forms.CheckboxSelectMultiple
    )
    enforcement_points = forms.MultipleChoiceField(
        choices=[(e.value, ENFORCEMENT_POINT_LABELS[e]) for e in EnforcementPoint],
        widget=forms.CheckboxSelectMultiple,
    )
    promise = forms.CharField(widget=TEXTAREA, help_text="What it solves, in one sentence.")
    non_promise = forms.CharField(widget=TEXTAREA, label="Non-promise", help_text="What it does not solve; one per line.")
    overhead = forms.CharField(widget=TEXTAREA, label="Cost: overhead")
    reconfiguration = forms.CharField(widget=TEXTAREA, label="Cost: reconfiguration")
    intrusiveness = forms.CharField(widget=TEXTAREA, label="Cost: intrusiveness")
    compatibility = forms.CharField(widget=TEXTAREA, label="Cost: compatibility")
    observability = forms.CharField(widget=TEXTAREA, label="Observability and metering", help_text="One signal per line.")
    upstream = forms.CharField(widget=TEXTAREA, label="Upstream dependencies", help_text="One per line.")
    downstream = forms.CharField(widget=TEXTAREA, label="Downstream dependencies", help_text="One per line.")
    requires = forms.MultipleChoiceField(required=False, label="Requires projects", widget=PickerWidget)
    failure_modes = forms.CharField(widget=TEXTAREA, label="Typical failure modes", help_text="One per line.")
    contract_points = RowsField(
        RowSpec(
            columns=[
                Column("point", "Contract point", "select", tuple((c.value, CONTRACT_POINT_LABELS[c]) for c in ContractPoint)),
                Column("units", "For resource units", "checkboxes", tuple(UNIT_CHOICES)),
                Column("how", "How it takes part", "textarea", wide=True),
            ],
            add_label="Add a contract point",
            noun="contract point",
        ),
        required=False,
        label="Contract points",
        help_text="Where it meets the other plane: Advertise (the node exposes the unit), Bind (the scheduler "
        "places the pod), Allocate (the device is handed to the container).",
    )
    capabilities = forms.MultipleChoiceField(widget=PickerWidget)
    denied_capabilities = forms.MultipleChoiceField(
        widget=PickerWidget,
        required=False,
        label="Capabilities its non-promises rule out",
        help_text="What a reader may expect but the project does not provide; never also a capability above.",
    )
    misuses = RowsField(
        RowSpec(
            columns=[
                Column("capability", "Capability expected of it", "select"),
                Column("expectation", "What people expect", wide=True),
                Column("why", "Why that is a misuse", "textarea", wide=True),
            ],
            add_label="Add a known misuse",
            noun="misuse",
        ),
        label="Known misuses",
    )
    bundles = forms.MultipleChoiceField(required=False, label="Bundles projects", widget=PickerWidget)
    conflicts_with = forms.MultipleChoiceField(required=False, label="Conflicts with projects", widget=PickerWidget)
    sources = RowsField(
        RowSpec(
            columns=[
                Column("title", "Title", wide=True),
                Column("url", "Address of the upstream page (https://...)", "url", wide=True),
                Column("section", "Or, for a book chapter or reference note: its chapter and section", wide=True),
                Column("tag", "Evidence grade", "select", SOURCE_TAG_CHOICES, SourceTag.VERIFIED.value),
                Column("supports", "Fields it supports, comma-separated (e.g. promise, landscape.license)", wide=True),
                Column("checked", "Read on (YYYY-MM-DD)"),
            ],
            add_label="Add a source",
            noun="source",
        ),
    )
    # Landscape metadata (placement.landscape); leave every landscape field empty to omit it.
    landscape_license = forms.CharField(required=False, label="License", help_text="SPDX identifier, e.g. Apache-2.0.")
    landscape_repository = forms.CharField(required=False, label="Repository URL")
    landscape_cncf_status = forms.ChoiceField(
        required=False, label="CNCF status", choices=[("", "---")] + [(c.value, c.value) for c in CncfStatus]
    )
    landscape_vendor = forms.CharField(required=False, label="Vendor or maintainer")
    landscape_release_version = forms.CharField(required=False, label="Latest release")
    landscape_release_date = forms.CharField(required=False, label="Latest release date", help_text="YYYY-MM-DD")
    landscape_kubernetes_versions = forms.CharField(required=False, label="Kubernetes versions needed")
    landscape_archived = forms.BooleanField(required=False, label="Archived upstream")
    landscape_as_of = forms.CharField(
        required=False, label="Landscape facts as of",
        help_text="YYYY-MM-DD; leave empty to take the day of the newest source read",
    )
    landscape_note = forms.CharField(
        required=False, label="Landscape note", help_text="Why a latest release over a year old is still the latest, if it is.")
    landscape_evidence = forms.ChoiceField(
        required=False, label="Landscape evidence grade", choices=[("", "---")] + [(t.value, t.value) for t in SourceTag]
    )
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2}),
        label="Reason for the change",
        help_text="Required: reviewers see it beside the diff and it stays in the history.",
    )

    def __init__(self, *args, vocabulary: CatalogVocabulary, project_choices: list[tuple[str, str]], **kwargs):
        super().__init__(*args, **kwargs)
        self.vocabulary = vocabulary
        self.map_fields: list[tuple[str, str, str]] = []
        for map_def in vocabulary.maps:
            choices = [(layer.code, f"{layer.code} - {layer.name}" if map_def.slug == "control-plane" else layer.name) for layer in map_def.layers]
            primary, secondary = f"map_{map_def.slug}_primary", f"map_{map_def.slug}_secondary"
            self.fields[primary] = forms.ChoiceField(choices=[("", "---")] + choices, label=f"{map_def.name}: primary layer")
            self.fields[secondary] = forms.MultipleChoiceField(
                choices=choices, required=False, label=f"{map_def.name}: secondary layers", widget=forms.CheckboxSelectMultiple
            )
            self.map_fields.append((map_def.slug, primary, secondary))
        self.fields["capabilities"].choices = [(c.slug, c.name) for c in vocabulary.capabilities]
        self.fields["denied_capabilities"].choices = self.fields["capabilities"].choices
        self.fields["misuses"].set_choices("capability", [("", "---")] + self.fields["capabilities"].choices)
        for name in ("requires", "bundles", "conflicts_with"):
            self.fields[name].choices = project_choices
        for name in [n for n, f in self.fields.items() if isinstance(f, forms.MultipleChoiceField)]:
            self.fields[self.order_field(name)] = forms.CharField(required=False, widget=forms.HiddenInput)
        self.document: ProjectDocument | None = None

    @staticmethod
    def order_field(name: str) -> str:
        return f"{name}_order"

    # --- document <-> form data ------------------------------------------------------------------

    @classmethod
    def initial_from(cls, doc: ProjectDocument) -> dict[str, Any]:
        p = doc.placement
        initial: dict[str, Any] = {
            "slug": doc.slug,
            "name": doc.name,
            "kind": doc.kind.value,
            "homepage": doc.homepage,
            "summary": doc.summary,
            "resource_units": [u.value for u in p.resource_units],
            "enforcement_points": [e.value for e in p.enforcement_points],
            "promise": p.promise,
            "non_promise": "\n".join(p.non_promise),
            "overhead": p.costs.overhead,
            "reconfiguration": p.costs.reconfiguration,
            "intrusiveness": p.costs.intrusiveness,
            "compatibility": p.costs.compatibility,
            "observability": "\n".join(p.observability),
            "upstream": "\n".join(p.dependencies.upstream),
            "downstream": "\n".join(p.dependencies.downstream),
            "requires": list(p.dependencies.requires),
            "failure_modes": "\n".join(p.failure_modes),
            "contract_points": [
                {"point": c.point.value, "units": [u.value for u in c.units], "how": c.how} for c in p.contract_points
            ],
            "capabilities": list(p.capabilities),
            "denied_capabilities": list(p.denied_capabilities),
            "misuses": [{"capability": m.capability, "expectation": m.expectation, "why": m.why} for m in p.misuses],
            "bundles": list(p.bundles),
            "conflicts_with": list(p.conflicts_with),
            "sources": [
                {"title": s.title, "url": s.url or "", "section": s.section or "", "tag": s.tag.value if s.tag else "",
                 "supports": ", ".join(s.supports), "checked": s.checked.isoformat() if s.checked else ""}
                for s in p.sources
            ],
        }
        initial["primary_unit"] = p.resource_units[0].value
        if p.landscape is not None:
            meta = p.landscape
            initial.update({
                "landscape_license": meta.license, "landscape_repository": meta.repository,
                "landscape_cncf_status": meta.cncf_status.value, "landscape_vendor": meta.vendor,
                "landscape_release_version": meta.latest_release.version,
                "landscape_release_date": meta.latest_release.date.isoformat(),
                "landscape_kubernetes_versions": meta.kubernetes_versions, "landscape_archived": meta.archived,
                "landscape_as_of": meta.as_of.isoformat() if meta.as_of else "", "landscape_evidence": meta.evidence.value,
                "landscape_note": meta.note or "",
            })
        for map_slug, placed in p.maps.items():
            initial[f"map_{map_slug}_primary"] = placed.primary
            initial[f"map_{map_slug}_secondary"] = list(placed.secondary)
        for name, value in list(initial.items()):
            if isinstance(value, list) and not (value and isinstance(value[0], dict)):
                initial[cls.order_field(name)] = ",".join(value)
        return initial

    def _ordered(self, data: dict[str, Any], name: str) -> list[str]:
        return _in_order(list(data.get(name) or []), data.get(self.order_field(name)) or "")

    def _resource_units(self, data: dict[str, Any]) -> list[str]:
        units = self._ordered(data, "resource_units")
        primary = data.get("primary_unit") or ""
        if primary and primary in units:
            units.remove(primary)
            units.insert(0, primary)
        return units

    def _document_data(self, data: dict[str, Any]) -> dict[str, Any]:
        def rows(name: str, *columns: str) -> list[dict[str, Any]]:
            return [{c: row.get(c) for c in columns} for row in data.get(name) or []]

        contract_points = rows("contract_points", "point", "units", "how")
        misuses = rows("misuses", "capability", "expectation", "why")
        # A source cites an upstream page (url) or a book chapter / reference note (section); an
        # empty part or grade is absent from the document, as in the YAML.
        sources = [{k: v for k, v in row.items() if v or k == "title"}
                   for row in rows("sources", "title", "url", "section", "tag", "supports", "checked")]
        for source in sources:
            if isinstance(source.get("supports"), str):
                source["supports"] = [f.strip() for f in source["supports"].split(",") if f.strip()]
        return {
            "slug": data.get("slug", ""),
            "name": data.get("name", ""),
            "kind": data.get("kind", ""),
            "homepage": data.get("homepage", ""),
            "summary": data.get("summary", ""),
            "placement": {
                "maps": {
                    map_slug: {"primary": data.get(primary) or "", "secondary": self._ordered(data, secondary)}
                    for map_slug, primary, secondary in self.map_fields
                },
                "resource_units": self._resource_units(data),
                "enforcement_points": self._ordered(data, "enforcement_points"),
                "promise": data.get("promise", ""),
                "non_promise": _lines(data.get("non_promise", "")),
                "costs": {k: data.get(k, "") for k in ("overhead", "reconfiguration", "intrusiveness", "compatibility")},
                "observability": _lines(data.get("observability", "")),
                "dependencies": {
                    "upstream": _lines(data.get("upstream", "")),
                    "downstream": _lines(data.get("downstream", "")),
                    "requires": self._ordered(data, "requires"),
                },
                "failure_modes": _lines(data.get("failure_modes", "")),
                "contract_points": contract_points,
                "capabilities": self._ordered(data, "capabilities"),
                "denied_capabilities": self._ordered(data, "denied_capabilities"),
                "misuses": misuses,
                "bundles": self._ordered(data, "bundles"),
                "conflicts_with": self._ordered(data, "conflicts_with"),
                "sources": sources,
                **self._landscape(data),
            },
        }

    _LANDSCAPE_TEXT = ("license", "repository", "cncf_status", "vendor", "release_version", "release_date",
                       "kubernetes_versions", "as_of", "evidence", "note")

    def _landscape(self, data: dict[str, Any]) -> dict[str, Any]:
        values = {k: (data.get(f"landscape_{k}") or "").strip() for k in self._LANDSCAPE_TEXT}
        if not any(values.values()):
            return {}
        return {"landscape": {
            "license": values["license"], "repository": values["repository"], "cncf_status": values["cncf_status"],
            "vendor": values["vendor"],
            "latest_release": {"version": values["release_version"], "date": values["release_date"]},
            "kubernetes_versions": values["kubernetes_versions"], "archived": bool(data.get("landscape_archived")),
            "as_of": values["as_of"] or None, "evidence": values["evidence"],
            **({"note": values["note"]} if values["note"] else {}),
        }}

    # --- pydantic error -> form field --------------------------------------------------------------

    def _field_for(self, loc: tuple[Any, ...]) -> tuple[str | None, str]:
        """Map a pydantic error location to (form field, prefix naming the line or part)."""
        if not loc:
            return None, ""
        if loc[0] != "placement":
            return (loc[0] if loc[0] in self.fields else None), ""
        rest = loc[1:]
        if not rest:
            return None, ""
        head = rest[0]
        if head in ("costs", "dependencies") and len(rest) > 1:
            return str(rest[1]), (f"line {rest[2] + 1}: " if len(rest) > 2 and isinstance(rest[2], int) else "")
        if head == "landscape" and len(rest) > 1:
            name = "release_" + str(rest[2]) if rest[1] == "latest_release" and len(rest) > 2 else str(rest[1])
            return (f"landscape_{name}" if f"landscape_{name}" in self.fields else None), ""
        if head == "maps" and len(rest) > 1:
            for map_slug, primary, secondary in self.map_fields:
                if rest[1] == map_slug:
                    return (secondary if "secondary" in rest else primary), ""
            return None, ""
        prefix = ""
        field = self.fields.get(str(head))
        if len(rest) > 1 and isinstance(rest[1], int):
            if isinstance(field, RowsField):
                column = field.spec.column(str(rest[2])) if len(rest) > 2 else None
                prefix = f"{field.spec.noun.capitalize()} {rest[1] + 1}" + (f", {column.label.lower()}: " if column else ": ")
            else:
                prefix = f"line {rest[1] + 1}: "
        return (str(head) if field is not None else None), prefix

    def _message(self, error: dict[str, Any]) -> str:
        """The pydantic error in the words the form shows: labels, not internal values."""
        kind, loc = error["type"], tuple(error["loc"])
        names = {**VALUE_LABELS, **{c.slug: c.name for c in self.vocabulary.capabilities}}
        if kind == "enum":
            expected = re.findall(r"'([^']*)'", str((error.get("ctx") or {}).get("expected", "")))
            return "Choose one of: " + ", ".join(names.get(v, v) for v in expected) + "."
        if kind == "too_short" and isinstance(error.get("input"), list):
            return "Add at least one."
        if kind in ("string_too_short", "missing") or (kind == "string_pattern_mismatch" and error.get("input") == ""):
            return "This cannot be empty."
        if kind == "string_pattern_mismatch":
            if loc[-1] == "url":
                return "Enter an address that starts with https:// or http://, with no spaces (cite a book or a reference note by its section instead)."
            if loc[-1] == "homepage":
                return "Enter an address that starts with https:// or http://."
            return "Use lower-case letters and digits joined by single hyphens, e.g. my-device-plugin."
        message = error["msg"].removeprefix("Value error, ")
        return re.sub(r"'([^']+)'", lambda m: f"'{names.get(m.group(1), m.group(1))}'", message)

    def sections(self) -> list[dict[str, Any]]:
        """The visible fields grouped into the page's sections, placement first."""
        named: set[str] = set()
        out = []
        for key, title, names in SECTIONS:
            expanded = [n for name in names for n in self._expand(name)]
            fields = [self[n] for n in expanded if n in self.fields and not self.fields[n].widget.is_hidden]
            named.update(expanded)
            out.append({"key": key, "title": title, "fields": fields})
        rest = [f for f in self.visible_fields() if f.name not in named]
        if rest:
            out.insert(len(out) - 1, {"key": "more", "title": "More about the project", "fields": rest})
        return out

    def _expand(self, name: str) -> list[str]:
        if name == "maps":
            return [n for _, primary, secondary in self.map_fields for n in (primary, secondary)]
        if name.endswith("*"):
            return [n for n in self.fields if n.startswith(name[:-1])]
        return [name]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        primary = cleaned.get("primary_unit")
        if primary and "resource_units" in cleaned and primary not in cleaned["resource_units"]:
            self.add_error("primary_unit", "Tick the primary resource unit among the resource units too.")
        # Validate through the template model even when some fields already failed, so every
        # problem shows at once; fields with a Django error keep only that error.
        try:
            self.document = ProjectDocument.model_validate(
                self._document_data(cleaned), context={"vocabulary": self.vocabulary}
            )
        except ValidationError as exc:
            for error in exc.errors():
                field, prefix = self._field_for(tuple(error["loc"]))
                message = prefix + self._message(error)
                if field in self.fields and field in self.errors:
                    continue
                self.add_error(field if field in self.fields else None, message)
            self.document = None
        return cleaned


def project_form(data=None, initial=None) -> ProjectForm:
    """The project form with the catalog's current vocabulary and the accepted projects to depend on."""
    choices = list(Project.objects.filter(accepted=True).order_by("name").values_list("slug", "name"))
    return ProjectForm(data, initial=initial, vocabulary=catalog_vocabulary(), project_choices=choices)
