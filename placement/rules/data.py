"""The rules as data: fixtures/rules/*.yaml loaded into pydantic models.

`capabilities.yaml` (capability -> owning layer) belongs to the catalog vocabulary in
`placement.catalog.schemas`; the other files belong to the rules engine:

- `units.yaml`        what each resource unit isolates, and which GPU models are MIG-capable
- `comparison.yaml`   valid comparison axes per verdict, and the three contract points
- `composition.yaml`  stack slots, cluster baseline, component cost, SLO isolation/goal/tenancy
- `profiles.yaml`     workload profiles: pools, required capabilities, unit and capability points

`load_rules()` validates them against each other and the vocabulary, so a review board's edit that
names an unknown capability or unit fails loudly instead of silently scoring nothing.
"""

from __future__ import annotations

import functools
import hashlib
import json
from enum import StrEnum
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from placement.catalog.schemas import FIXTURES_DIR, CatalogVocabulary, ContractPoint, ResourceUnit, builtin_vocabulary
from placement.rules.errors import RulesDataError
from placement.rules.workloads import WorkloadClass

RULES_DIR = FIXTURES_DIR / "rules"


class Isolation(StrEnum):
    """Isolation an SLO asks for (and a unit provides): see composition.yaml `isolation`."""

    HARD = "hard"
    SOFT = "soft"
    NONE = "none"


class Verdict(StrEnum):
    COMPARABLE = "comparable"
    UNIT_MISMATCH = "unit_mismatch"
    CROSS_LAYER = "cross_layer"
    PLATFORM_VS_MECHANISM = "platform_vs_mechanism"
    OVERLAPPING = "overlapping"
    ALTERNATIVE_HANDOFF = "alternative_handoff"


class SlotName(StrEnum):
    WORKLOAD_UNIT = "workload_unit"
    ADMISSION_QUOTA = "admission_quota"
    SCHEDULING_POLICY = "scheduling_policy"
    DEVICE_HANDOFF = "device_handoff"
    DATA_PLANE_UNIT = "data_plane_unit"
    PLATFORM_LIFECYCLE = "platform_lifecycle"
    OBSERVABILITY = "observability"


class _Data(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# --- units.yaml -----------------------------------------------------------------------------------


class UnitRule(_Data):
    unit: ResourceUnit
    isolation: Literal["hard", "soft", "none", "not_applicable"]
    memory_isolation: bool
    compute_isolation: bool
    fault_isolation: bool
    needs_mig_capable: bool
    needs_data_plane_project: bool
    granularity: str
    reconfiguration: str
    note: str


class GpuModel(_Data):
    model: str
    mig_capable: bool
    memory_gb: int


# --- feasibility.yaml ----------------------------------------------------------------------------


class UnitFit(_Data):
    unit: ResourceUnit
    max_gpus_per_replica: int = Field(ge=1)
    memory: Literal["gpu", "mig_profile", "share"]
    peer_to_peer: bool
    source: str


class ServedGangApi(_Data):
    """How a scheduler without the gang capability places gangs through a Kubernetes API it serves
    (feasibility.yaml gang.served_api: kube-scheduler and the Workload API)."""

    kubernetes: str = Field(description="The Kubernetes minor version from which the API is served, e.g. 1.37")
    points: float = Field(le=0, description="What depending on that version and its feature gate costs")
    why: str


class GangRule(_Data):
    capability: str
    why: str
    source: str
    served_api: ServedGangApi | None = None


# --- interfaces.yaml -----------------------------------------------------------------------------


class CarriedUnit(_Data):
    """A unit a scheduler's binder hands to containers on a device that a device handoff advertises and
    allocates as another unit (KAI's fractions ride on a whole GPU held by its reservation pod)."""

    carrier: ResourceUnit = Field(description="The unit the device handoff advertises and allocates (to the holder pod)")
    handoffs: list[str] = Field(description="The device handoffs whose carrier devices the binder hands out (NVIDIA_VISIBLE_DEVICES)")
    names: list[str] = Field(description="What a pod asks with (annotations), beside the carrier's resource names")
    how: str
    source: str


class ProjectInterface(_Data):
    """The concrete interface facts of one project (fixtures/rules/interfaces.yaml)."""

    advertises: dict[ResourceUnit, list[str]] = Field(default_factory=dict)
    carries: dict[ResourceUnit, CarriedUnit] = Field(default_factory=dict)
    binder: str | None = None
    scheduler_name: str | None = None
    inside: bool = False
    rewrites_scheduler_name: str | None = None
    keeps: list[str] = Field(default_factory=list)
    bound_by: list[str] = Field(default_factory=list)
    ships_allocator: str | None = None
    disable_with: str | None = None
    quota: str | None = None
    dra_quota: str | None = None
    integrations: list[str] = Field(default_factory=list)
    suspend: str | None = None
    source: str


# --- comparison.yaml ------------------------------------------------------------------------------


class VerdictRule(_Data):
    verdict: Verdict
    name: str
    meaning: str
    axes: list[str]
    control_axes: list[str] = Field(default_factory=list, description="axes for control-plane pairs (L0-L3); empty = axes")


class OverlapRule(_Data):
    min_shared: int = Field(ge=1)
    why: str




class AxisRule(_Data):
    axis: str
    name: str
    question: str
    capabilities: list[str] = Field(default_factory=list, description="control-plane axes: the capabilities it reads")
    keywords: list[str] = Field(default_factory=list, description="words that pick the project's own sentences for it")


class RoleRule(_Data):
    """Projects that do one job, compared on that job's axes (comparison.yaml `roles`)."""

    role: str
    name: str
    members: list[str] = Field(min_length=2)
    axes: list[str] = Field(min_length=1)
    source: str


class IntegrationRule(_Data):
    """An interface one project implements for another (integrations.yaml): they complement each other."""

    between: list[str] = Field(min_length=2, max_length=2)
    kind: str
    name: str
    interface: str
    source: str


class ContractPointRule(_Data):
    point: ContractPoint
    name: str
    order: int
    sides: list[str]
    meaning: str
    failure: str


# --- composition.yaml and profiles.yaml -----------------------------------------------------------


class Points(_Data):
    points: float
    why: str


class ComponentCost(Points):
    kinds: list[str] = Field(default_factory=lambda: ["component", "platform"], description="project kinds that cost a component")


class UnitPreference(_Data):
    unit: ResourceUnit
    points: float
    why: str


class CapabilityPreference(_Data):
    capability: str
    points: float
    why: str


class RequiredCapability(_Data):
    capability: str
    why: str


class SlotRule(_Data):
    slot: SlotName
    name: str
    question: str
    map: str
    layers: list[str]
    secondary_ok: bool = True
    kinds: list[str] = Field(default_factory=list, description="allowed project kinds; empty = any")
    any_capability: list[str] = Field(default_factory=list, description="eligible if it provides one; empty = any")
    contract_roles: list[ContractPoint] = Field(default_factory=list)
    unit_must_be_primary: bool = Field(False, description="per-pool slot: the pool unit must be the project's first unit")
    per_pool: bool = False
    required: bool = True
    empty_reason: str = ""


class IsolationRule(_Data):
    level: Isolation
    accepts: list[Isolation]
    why: str


class GoalRule(_Data):
    goal: str
    unit_preferences: list[UnitPreference] = Field(default_factory=list)
    capability_preferences: list[CapabilityPreference] = Field(default_factory=list)


class TenancyRule(_Data):
    multi_tenant: bool
    required_capabilities: list[RequiredCapability] = Field(default_factory=list)
    capability_preferences: list[CapabilityPreference] = Field(default_factory=list)


class CapabilityCondition(_Data):
    capabilities: list[str] = Field(min_length=1)
    needs: str = Field(pattern="^(multi_tenant|sharing)$")
    why: str


class LatencyRouting(_Data):
    capability: str
    points: float
    why: str


class BatchOnly(_Data):
    projects: list[str] = Field(default_factory=list)
    source: str = ""


class EnforcementAddon(_Data):
    project: str
    unit: ResourceUnit
    isolation: Isolation
    note: str = Field(description="What it enforces and what stays shared, said beside the unit's points")
    source: str


class ElasticAdmit(_Data):
    project: str
    how: str
    source: str


class ElasticRule(_Data):
    """Who starts an elastic job (min_replicas below replicas) with fewer than all its replicas."""

    points: float = 0.0
    why: str = ""
    admits: list[ElasticAdmit] = Field(default_factory=list)


class AdmissionNote(_Data):
    admission: str
    when: str = Field(pattern="^(interactive|multi_tenant)$")
    note: str
    source: str


class DefaultSlo(_Data):
    isolation: Isolation
    goal: str
    multi_tenant: bool


class PoolTemplate(_Data):
    name: str
    accepts: list[Isolation] | Literal["from_slo"]
    share: float = Field(gt=0, le=1)
    serves: str


class PresetWorkload(WorkloadClass):
    """A profile's preset workload class, placed in one of the profile's pool templates."""

    pool: str = Field(description="The pool template (profiles.yaml `pools`) this class runs in.")


class ProfileRule(_Data):
    profile: str
    name: str
    description: str
    default_slo: DefaultSlo
    default_scheduler_points: Points = Points(points=0, why="")
    pools: list[PoolTemplate] = Field(min_length=1)
    required_capabilities: list[RequiredCapability] = Field(default_factory=list)
    unit_preferences: list[UnitPreference] = Field(default_factory=list)
    capability_preferences: list[CapabilityPreference] = Field(default_factory=list)
    workloads: list[PresetWorkload] = Field(min_length=1, description="The classes this profile stands for.")


class RulesData(_Data):
    units: list[UnitRule]
    excluded_capabilities: list[RequiredCapability] = Field(default_factory=list)
    gpu_models: list[GpuModel]
    verdicts: list[VerdictRule]
    overlap: OverlapRule
    axes: list[AxisRule]
    contract_points: list[ContractPointRule]
    cluster_baseline: list[str]
    default_scheduler: str
    component_cost: ComponentCost
    native_handoff: Points
    slots: list[SlotRule]
    isolation: list[IsolationRule]
    goals: list[GoalRule]
    tenancy: list[TenancyRule]
    profiles: list[ProfileRule]
    max_gpus_per_node: int = Field(ge=1)
    max_gpus_per_node_source: str
    gang: GangRule
    unit_fit: list[UnitFit]
    mig_profiles: dict[str, dict[str, float]]
    mig_profiles_source: str
    interfaces: dict[str, ProjectInterface] = Field(default_factory=dict)
    roles: list[RoleRule] = Field(default_factory=list)
    capability_conditions: list[CapabilityCondition] = Field(default_factory=list)
    latency_routing: LatencyRouting | None = None
    batch_only: BatchOnly = Field(default_factory=BatchOnly)
    enforcement_addons: list[EnforcementAddon] = Field(default_factory=list)
    elastic: ElasticRule = Field(default_factory=ElasticRule)
    admission_notes: list[AdmissionNote] = Field(default_factory=list)
    role_axes: list[AxisRule] = Field(default_factory=list)
    integrations: list[IntegrationRule] = Field(default_factory=list)

    # lookups (computed once; the model is frozen)
    @functools.cached_property
    def unit(self) -> dict[ResourceUnit, UnitRule]:
        return {u.unit: u for u in self.units}

    @functools.cached_property
    def fit(self) -> dict[ResourceUnit, UnitFit]:
        return {f.unit: f for f in self.unit_fit}

    def mig_profiles_for(self, model: str) -> dict[str, float]:
        wanted = model.strip().lower()
        return next((p for name, p in self.mig_profiles.items() if name.lower() == wanted), {})

    @functools.cached_property
    def binder_sensitive(self) -> frozenset[str]:
        """Projects that decide who may bind (a webhook rewriting schedulerName, resources only some bind)."""
        return frozenset(slug for slug, i in self.interfaces.items() if i.rewrites_scheduler_name or i.bound_by)

    @functools.cached_property
    def largest_gpu(self) -> GpuModel:
        return max(self.gpu_models, key=lambda m: m.memory_gb)

    @functools.cached_property
    def verdict(self) -> dict[Verdict, VerdictRule]:
        return {v.verdict: v for v in self.verdicts}

    @functools.cached_property
    def axis(self) -> dict[str, AxisRule]:
        return {a.axis: a for a in [*self.axes, *self.role_axes]}

    def role_of(self, slug: str) -> RoleRule | None:
        return next((r for r in self.roles if slug in r.members), None)

    def integration(self, a: str, b: str) -> IntegrationRule | None:
        return next((i for i in self.integrations if {a, b} == set(i.between)), None)

    @functools.cached_property
    def contract_point(self) -> dict[ContractPoint, ContractPointRule]:
        return {c.point: c for c in self.contract_points}

    @functools.cached_property
    def slot(self) -> dict[SlotName, SlotRule]:
        return {s.slot: s for s in self.slots}

    @functools.cached_property
    def profile(self) -> dict[str, ProfileRule]:
        return {p.profile: p for p in self.profiles}

    @functools.cached_property
    def goal(self) -> dict[str, GoalRule]:
        return {g.goal: g for g in self.goals}

    @functools.cached_property
    def isolation_accepts(self) -> dict[Isolation, list[Isolation]]:
        return {i.level: list(i.accepts) for i in self.isolation}

    def tenancy_for(self, multi_tenant: bool) -> TenancyRule:
        for rule in self.tenancy:
            if rule.multi_tenant == multi_tenant:
                return rule
        return TenancyRule(multi_tenant=multi_tenant)

    def gpu_model(self, name: str) -> GpuModel | None:
        wanted = name.strip().lower()
        for model in self.gpu_models:
            if model.model.lower() == wanted:
                return model
        return None

    @functools.cached_property
    def fingerprint(self) -> str:
        payload = json.dumps(self.model_dump(mode="json"), sort_keys=True).encode()
        return hashlib.sha256(payload).hexdigest()[:16]

    def problems(self, vocabulary: CatalogVocabulary) -> list[str]:
        """Cross-checks: every capability, map, layer, goal and unit named must exist."""
        found: list[str] = []
        caps = vocabulary.capability_slugs
        layer_codes = vocabulary.layer_codes

        def cap(where: str, slug: str) -> None:
            if slug not in caps:
                found.append(f"{where}: unknown capability {slug!r}")

        if set(self.unit) != set(ResourceUnit):
            found.append(f"units: missing {_names(set(ResourceUnit) - set(self.unit))}")
        for role in self.roles:
            found.extend(f"roles.{role.role}: unknown axis {a!r}" for a in role.axes if a not in self.axis)
        for a in self.role_axes:
            for c in a.capabilities:
                cap(f"role_axes.{a.axis}", c)
        if set(self.verdict) != set(Verdict):
            found.append(f"verdicts: missing {_names(set(Verdict) - set(self.verdict))}")
        if set(self.contract_point) != set(ContractPoint):
            found.append(f"contract_points: missing {_names(set(ContractPoint) - set(self.contract_point))}")
        if set(self.slot) != set(SlotName):
            found.append(f"slots: missing {_names(set(SlotName) - set(self.slot))}")
        if set(self.isolation_accepts) != set(Isolation):
            found.append(f"isolation: missing {_names(set(Isolation) - set(self.isolation_accepts))}")
        cap("gang", self.gang.capability)
        missing_fit = {u for u in ResourceUnit if u != ResourceUnit.NODE} - set(self.fit)
        if missing_fit:
            found.append(f"unit_fit: missing {_names(missing_fit)}")
        for v in self.verdicts:
            for a in [*v.axes, *v.control_axes]:
                if a not in self.axis:
                    found.append(f"verdicts.{v.verdict}: unknown axis {a!r}")
        for c in self.excluded_capabilities:
            cap("excluded_capabilities", c.capability)
        for s in self.slots:
            if s.map not in layer_codes:
                found.append(f"slots.{s.slot}: unknown map {s.map!r}")
            else:
                for code in s.layers:
                    if code not in layer_codes[s.map]:
                        found.append(f"slots.{s.slot}: unknown layer {code!r} on map {s.map!r}")
            for c in s.any_capability:
                cap(f"slots.{s.slot}", c)
        for g in self.goals:
            for c in g.capability_preferences:
                cap(f"goals.{g.goal}", c.capability)
        for t in self.tenancy:
            for c in [*t.required_capabilities, *t.capability_preferences]:
                cap(f"tenancy.{t.multi_tenant}", c.capability)
        for p in self.profiles:
            if p.default_slo.goal not in self.goal:
                found.append(f"profiles.{p.profile}: unknown goal {p.default_slo.goal!r}")
            for c in [*p.required_capabilities, *p.capability_preferences]:
                cap(f"profiles.{p.profile}", c.capability)
            names = [pool.name for pool in p.pools]
            if len(set(names)) != len(names):
                found.append(f"profiles.{p.profile}: pool names repeat")
            for w in p.workloads:
                if w.pool not in names:
                    found.append(f"profiles.{p.profile}.workloads.{w.name}: unknown pool {w.pool!r}")
        return found


def _names(members) -> list[str]:
    """Enum members as the names a rules file spells ('fraction', not <ResourceUnit.FRACTION: ...>)."""
    return sorted(str(m) for m in members)


def _read(path: Path) -> dict:
    with path.open(encoding="utf-8") as handle:
        data = yaml.safe_load(handle)
    if not isinstance(data, dict):
        raise RulesDataError([f"{path.name}: expected a mapping at the top level"])
    return data


def read_rules(directory: Path | None = None, vocabulary: CatalogVocabulary | None = None) -> RulesData:
    """Read and cross-check the rules files of `directory` (default fixtures/rules)."""
    directory = Path(directory) if directory else RULES_DIR
    merged: dict = {}
    for name in ("units.yaml", "comparison.yaml", "composition.yaml", "profiles.yaml", "feasibility.yaml", "interfaces.yaml",
                 "integrations.yaml"):
        merged.update(_read(directory / name))
    rules = RulesData.model_validate(merged)
    problems = rules.problems(vocabulary or builtin_vocabulary())
    if problems:
        raise RulesDataError(problems)
    return rules


@functools.lru_cache(maxsize=1)
def builtin_rules() -> RulesData:
    return read_rules()
