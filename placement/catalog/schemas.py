"""The one-page placement template as one pydantic model.

This module is the single definition of a catalog entry. The project form, the YAML import and
export, the REST API and the rules engine all validate through `ProjectDocument`. It imports no
Django so that `placement.rules` and benchmarks can use it alone.

Vocabularies that a review board may extend (maps and their layers, capabilities) are data in
`fixtures/`; they reach validation through a `CatalogVocabulary` passed as pydantic context, or the
built-in fixtures when no context is given.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationInfo,
    field_validator,
    model_validator,
)

FIXTURES_DIR = Path(__file__).resolve().parents[2] / "fixtures"

Slug = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]+(?:-[a-z0-9]+)*$", max_length=80)]
Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=4000)]
ShortText = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=300)]


class Kind(StrEnum):
    """What sort of thing a project is; decides the platform_vs_mechanism verdict."""

    MECHANISM = "mechanism"  # a hardware/driver/runtime feature: MIG, MPS, time-slicing, vGPU
    COMPONENT = "component"  # a deployable piece: a scheduler, a device plugin, an exporter
    API = "api"  # a Kubernetes API or framework: device plugin API, DRA, ResourceQuota
    PLATFORM = "platform"  # a product bundling many layers: GPU Operator, GPUStack


class ResourceUnit(StrEnum):
    WHOLE_GPU = "whole_gpu"
    MIG_INSTANCE = "mig_instance"
    VGPU = "vgpu"
    TIME_SLICE = "time_slice"
    MEMORY_COMPUTE_SHARE = "memory_compute_share"  # memory quota + compute share (HAMi style)
    MPS_SHARE = "mps_share"
    DRA_DEVICE = "dra_device"
    FRACTION = "fraction"  # scheduler-accounted fraction without enforcement (KAI)
    NODE = "node"  # node-level facts: labels, topology, health (NFD, GFD, exporters)


RESOURCE_UNIT_LABELS = {
    ResourceUnit.WHOLE_GPU: "Whole GPU",
    ResourceUnit.MIG_INSTANCE: "MIG instance",
    ResourceUnit.VGPU: "vGPU",
    ResourceUnit.TIME_SLICE: "Time slice",
    ResourceUnit.MEMORY_COMPUTE_SHARE: "Memory quota + compute share",
    ResourceUnit.MPS_SHARE: "MPS share",
    ResourceUnit.DRA_DEVICE: "DRA device",
    ResourceUnit.FRACTION: "Fraction (accounting only)",
    ResourceUnit.NODE: "Node-level facts",
}


class EnforcementPoint(StrEnum):
    DRIVER_HARDWARE = "driver_hardware"
    RUNTIME_INTERCEPTION = "runtime_interception"
    NODE_AGENT = "node_agent"  # kubelet, device plugin, DRA driver
    SCHEDULER = "scheduler"
    ADMISSION = "admission"
    WORKLOAD_CONTROLLER = "workload_controller"  # creates and restarts the pods of a workload (KubeRay, JobSet, LWS)
    PLATFORM = "platform"


ENFORCEMENT_POINT_LABELS = {
    EnforcementPoint.DRIVER_HARDWARE: "Driver / hardware",
    EnforcementPoint.RUNTIME_INTERCEPTION: "Runtime / interception",
    EnforcementPoint.NODE_AGENT: "Node agent (kubelet, device plugin, DRA driver)",
    EnforcementPoint.SCHEDULER: "Scheduler",
    EnforcementPoint.ADMISSION: "Admission",
    EnforcementPoint.WORKLOAD_CONTROLLER: "Workload controller",
    EnforcementPoint.PLATFORM: "Platform",
}


class ContractPoint(StrEnum):
    """The three contract points between control plane and data plane (seeds/000)."""

    ADVERTISE = "advertise"  # the node exposes GPUs or instances as resources
    BIND = "bind"  # the scheduler picks a node and binds the pod
    ALLOCATE = "allocate"  # the kubelet asks the plugin / DRA driver to hand the device over


class SourceTag(StrEnum):
    """Evidence grade, as in reference/domain-facts.md."""

    VERIFIED = "V"
    VERIFIED_CODE = "V-code"
    DERIVED = "D"
    SECONDARY = "S"
    UNVERIFIED = "U"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, use_enum_values=False)


# The template fields a source can support (`Source.supports`): the placement's own fields and the
# landscape facts one by one, so a reader sees which source backs the licence and which the release.
SUPPORTABLE_FIELDS = (
    "summary", "maps", "resource_units", "enforcement_points", "promise", "non_promise", "costs", "observability",
    "dependencies", "failure_modes", "contract_points", "capabilities", "denied_capabilities", "misuses", "bundles",
    "conflicts_with", "landscape.license", "landscape.repository", "landscape.cncf_status", "landscape.vendor",
    "landscape.latest_release", "landscape.kubernetes_versions", "landscape.archived",
)
# Grades that count as having read the source (U is recalled, not read).
READ_GRADES = frozenset({SourceTag.VERIFIED, SourceTag.VERIFIED_CODE, SourceTag.DERIVED, SourceTag.SECONDARY})


class Source(_Strict):
    """Where a fact comes from: an upstream page by URL, or a book chapter / reference note by
    title and section (files beside the project are not part of it, so a path is no citation).
    A source without a grade is accepted here so that `lint_catalog` can name it; the shipped
    catalog must grade every source. `supports` names the template fields it backs and `checked`
    the day it was read (for a git snapshot: the snapshot's date); the entry's `as_of` is derived
    from them."""

    title: ShortText
    url: Annotated[str, StringConstraints(pattern=r"^https?://\S+$", max_length=1000)] | None = None
    section: ShortText | None = Field(None, description="chapter and section when the source is cited by title")
    tag: SourceTag | None = Field(None, description="evidence grade; lint_catalog rejects a source without one")
    supports: list[str] = Field(default_factory=list, description="template fields this source backs, e.g. landscape.license")
    checked: dt.date | None = Field(None, description="the day the source was read (YYYY-MM-DD)")

    @field_validator("supports")
    @classmethod
    def _known_fields(cls, value: list[str]) -> list[str]:
        unknown = [f for f in value if f not in SUPPORTABLE_FIELDS]
        if unknown:
            raise ValueError(f"unknown field {unknown[0]!r} (known: {', '.join(SUPPORTABLE_FIELDS)})")
        if len(set(value)) != len(value):
            raise ValueError("values repeat")
        return value

    @model_validator(mode="after")
    def _cited_somewhere(self) -> "Source":
        if not self.url and not self.section:
            raise ValueError("a source needs a url (upstream page) or a section (book chapter or reference note)")
        return self

    @property
    def read(self) -> bool:
        """Read on a known day with a grade that means it was read (not recalled)."""
        return self.checked is not None and self.tag in READ_GRADES


class CncfStatus(StrEnum):
    SANDBOX = "sandbox"
    INCUBATING = "incubating"
    GRADUATED = "graduated"
    NONE = "none"  # not a CNCF project (vendor product, other foundation, Kubernetes itself is "graduated")


class Release(_Strict):
    version: ShortText
    date: dt.date


class Landscape(_Strict):
    """Landscape metadata of an entry, true as of `as_of` (lint_catalog flags entries past their review age)."""

    license: ShortText = Field(description="SPDX identifier, or 'Proprietary' / 'NVIDIA EULA' for closed software and hardware features")
    repository: Annotated[str, StringConstraints(pattern=r"^https?://\S+$", max_length=500)]
    cncf_status: CncfStatus
    vendor: ShortText = Field(description="who maintains it: a company, a foundation SIG or a community")
    latest_release: Release = Field(description="newest release known on the as_of date")
    kubernetes_versions: ShortText = Field(description="the Kubernetes versions it needs, e.g. '>= 1.32'")
    archived: bool = Field(False, description="no longer maintained upstream; hidden from the map unless asked for")
    as_of: dt.date | None = Field(
        None, description="the date of the evidence these facts come from; derived from the newest read source when left out")
    evidence: SourceTag = Field(description="grade of these facts: V read upstream, D derived from a stored snapshot, U recalled")
    note: ShortText | None = Field(None, description="why a latest release far older than as_of is still right (e.g. no release since)")


class Costs(_Strict):
    """Key costs (seeds/002): overhead, reconfiguration, intrusiveness, compatibility."""

    overhead: Text
    reconfiguration: Text
    intrusiveness: Text
    compatibility: Text


class Dependencies(_Strict):
    """What is needed upstream and downstream to close the loop, in words and by project slug."""

    upstream: list[Text] = Field(min_length=1)
    downstream: list[Text] = Field(min_length=1)
    requires: list[Slug] = Field(default_factory=list, description="catalog projects it cannot work without")


class ContractRole(_Strict):
    """A contract point this project takes part in, for which resource units."""

    point: ContractPoint
    units: list[ResourceUnit] = Field(min_length=1)
    how: Text


class Misuse(_Strict):
    """A known misuse: something expected of the project that its layer does not own."""

    expectation: ShortText
    capability: Slug
    why: Text


class MapPlacement(_Strict):
    primary: Annotated[str, StringConstraints(min_length=1, max_length=40)]
    secondary: list[Annotated[str, StringConstraints(min_length=1, max_length=40)]] = Field(default_factory=list)

    @model_validator(mode="after")
    def _secondary_differs(self) -> "MapPlacement":
        if self.primary in self.secondary:
            raise ValueError(f"layer {self.primary!r} is both primary and secondary")
        if len(set(self.secondary)) != len(self.secondary):
            raise ValueError("secondary layers repeat")
        return self


class Placement(_Strict):
    """The one-page placement template (seeds/002), extended with what the rules engine needs."""

    maps: dict[str, MapPlacement]
    resource_units: list[ResourceUnit] = Field(min_length=1)
    enforcement_points: list[EnforcementPoint] = Field(min_length=1)
    promise: Text
    non_promise: list[Text] = Field(min_length=1)
    costs: Costs
    observability: list[Text] = Field(min_length=1, description="observability and metering signals")
    dependencies: Dependencies
    failure_modes: list[Text] = Field(min_length=1)
    contract_points: list[ContractRole] = Field(default_factory=list)
    capabilities: list[Slug] = Field(min_length=1)
    denied_capabilities: list[Slug] = Field(
        default_factory=list,
        description="capabilities a reader may expect but its non-promises rule out; lint_catalog checks none is also claimed",
    )
    misuses: list[Misuse] = Field(min_length=1)
    bundles: list[Slug] = Field(default_factory=list, description="catalog projects it ships or embeds")
    conflicts_with: list[Slug] = Field(default_factory=list)
    sources: list[Source] = Field(min_length=1)
    landscape: Landscape | None = Field(None, description="landscape metadata; required of every shipped entry by lint_catalog")

    @field_validator("resource_units", "enforcement_points", "capabilities", "denied_capabilities", "bundles", "conflicts_with")
    @classmethod
    def _no_repeats(cls, value: list[Any]) -> list[Any]:
        if len(set(value)) != len(value):
            raise ValueError("values repeat")
        return value

    @model_validator(mode="after")
    def _derive_as_of(self) -> "Placement":
        if self.landscape is not None and self.landscape.as_of is None:
            self.landscape.as_of = newest_read(self.sources)
        return self

    @model_validator(mode="after")
    def _check_vocabulary(self, info: ValidationInfo) -> "Placement":
        vocabulary = vocabulary_from(info)
        errors = vocabulary.placement_errors(self)
        if errors:
            raise ValueError("; ".join(errors))
        return self

    @property
    def plane(self) -> str:
        return self.maps["planes"].primary if "planes" in self.maps else ""

    def layers_on(self, map_slug: str) -> list[str]:
        placed = self.maps.get(map_slug)
        return [placed.primary, *placed.secondary] if placed else []


def newest_read(sources: list[Source]) -> dt.date | None:
    """The day of the newest source read with a grade: what an entry's `as_of` may claim at most."""
    return max((s.checked for s in sources if s.read), default=None)


def sources_by_field(sources: list[Source]) -> dict[str, list[Source]]:
    """Field -> the sources that support it, in template order (the project page lists them)."""
    found = {f: [s for s in sources if f in s.supports] for f in SUPPORTABLE_FIELDS}
    return {f: backing for f, backing in found.items() if backing}


def units_served(placement: dict) -> list[str]:
    """The resource units the unit filters find a project by: every unit of a data-plane project
    (it hands them all out), else its primary unit and the units of its contract points. A workload
    controller or quota API lists every unit a pod may request; it does not make MIG live there.
    Takes the stored JSON so that the map and the list index share it."""
    units = list(placement.get("resource_units") or ())
    if not units or ((placement.get("maps") or {}).get("planes") or {}).get("primary") == "data":
        return units
    served = {units[0]} | {u for role in placement.get("contract_points") or () for u in role.get("units") or ()}
    return [u for u in units if u in served]


class ProjectDocument(_Strict):
    """One catalog file: the project and its placement."""

    slug: Slug
    name: ShortText
    kind: Kind
    homepage: Annotated[str, StringConstraints(pattern=r"^https?://\S+$", max_length=500)]
    summary: Text
    placement: Placement


# --- vocabulary: maps, layers and capabilities, loaded from fixtures ------------------------------


class LayerDefinition(_Strict):
    code: Annotated[str, StringConstraints(min_length=1, max_length=40)]
    name: ShortText
    description: Text


class MapDefinition(_Strict):
    slug: Slug
    name: ShortText
    description: Text
    order: int
    layers: list[LayerDefinition] = Field(min_length=1)


class CapabilityDefinition(_Strict):
    """A capability and the layer that owns it (rules are data: a review board can extend them)."""

    slug: Slug
    name: ShortText
    owner_map: Slug = "control-plane"
    owner_layers: list[str] = Field(min_length=1)
    owner_plane: str
    description: Text


class CatalogVocabulary(BaseModel):
    maps: list[MapDefinition]
    capabilities: list[CapabilityDefinition]

    @functools.cached_property
    def layer_codes(self) -> dict[str, list[str]]:
        return {m.slug: [layer.code for layer in m.layers] for m in self.maps}

    @functools.cached_property
    def capability_slugs(self) -> set[str]:
        return {c.slug for c in self.capabilities}

    def placement_errors(self, placement: Placement) -> list[str]:
        errors: list[str] = []
        for map_slug in self.layer_codes:
            if map_slug not in placement.maps:
                errors.append(f"maps: no placement on map {map_slug!r}")
        for map_slug, placed in placement.maps.items():
            codes = self.layer_codes.get(map_slug)
            if codes is None:
                errors.append(f"maps: unknown map {map_slug!r} (known: {', '.join(self.layer_codes)})")
                continue
            for code in [placed.primary, *placed.secondary]:
                if code not in codes:
                    errors.append(f"maps.{map_slug}: unknown layer {code!r} (known: {', '.join(codes)})")
        unknown = [c for c in placement.capabilities if c not in self.capability_slugs]
        unknown += [m.capability for m in placement.misuses if m.capability not in self.capability_slugs]
        unknown += [c for c in placement.denied_capabilities if c not in self.capability_slugs]
        for slug in dict.fromkeys(unknown):
            errors.append(f"capabilities: unknown capability {slug!r}")
        return errors


def _read_yaml(path: Path) -> Any:
    with path.open(encoding="utf-8") as handle:
        return yaml.safe_load(handle)


@functools.lru_cache(maxsize=1)
def builtin_vocabulary() -> CatalogVocabulary:
    return CatalogVocabulary(
        maps=[MapDefinition.model_validate(m) for m in _read_yaml(FIXTURES_DIR / "maps" / "maps.yaml")],
        capabilities=[
            CapabilityDefinition.model_validate(c)
            for c in _read_yaml(FIXTURES_DIR / "rules" / "capabilities.yaml")
        ],
    )


def vocabulary_from(info: ValidationInfo | None) -> CatalogVocabulary:
    context = info.context if info is not None else None
    if isinstance(context, dict) and isinstance(context.get("vocabulary"), CatalogVocabulary):
        return context["vocabulary"]
    return builtin_vocabulary()


def format_error_location(loc: tuple[Any, ...]) -> str:
    """`('placement', 'sources', 0, 'url')` -> `placement.sources[0].url`."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(document)"


_SLUG_RE = re.compile(r"[^a-z0-9]+")


def slugify(text: str) -> str:
    return _SLUG_RE.sub("-", text.lower()).strip("-")
