"""Request and result models of the rules engine.

These are the bodies of the REST API (`POST /api/v1/compare/`, `POST /api/v1/stacks/compose/`,
`GET /api/v1/stacks/compatible/`) and what pages render, so every field says what it means.
Enums serialise to their string values (`model_dump(mode="json")`).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator

from placement.catalog.schemas import ContractPoint, Kind, ResourceUnit
from placement.plans.models import Plan
from placement.rules.data import Isolation, SlotName, Verdict
from placement.rules.workloads import MAX_NAMED_TEAMS, MAX_TEAMS, TEAM_NAME, Teams, WorkloadClass, check_teams, team_names

Slug = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=80)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --- shared pieces --------------------------------------------------------------------------------


class ProjectRef(_Model):
    """A catalog project as results name it."""

    slug: str
    name: str
    kind: Kind
    layer: str = Field(description="Primary layer on the five-layer control-plane map (L0-L4).")
    plane: str = Field(description="Primary plane: data, control or platform.")


class LayerRef(_Model):
    map: str = Field(description="Map slug, e.g. control-plane or planes.")
    code: str = Field(description="Layer code on that map, e.g. L2 or platform.")
    name: str


class GraphStep(_Model):
    """One edge of a path through the catalog graph; nodes are `project:<slug>`, `unit:<unit>`, ..."""

    source: str
    relation: str = Field(description="advertises, binds, allocates, depends_on, bundles, ...")
    target: str
    forward: bool = Field(True, description="False when the edge is read against its direction.")


# --- compare --------------------------------------------------------------------------------------


class CompareRequest(_Model):
    """Body of POST /api/v1/compare/."""

    slugs: list[Slug] = Field(min_length=2, max_length=50, description="Two or more catalog project slugs.")

    @field_validator("slugs")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("slugs repeat")
        return value


class AxisValue(_Model):
    slug: str
    value: str


class ComparisonAxis(_Model):
    """A dimension on which this pair may legitimately be compared, with each side's value."""

    axis: str
    name: str
    question: str
    values: list[AxisValue] = Field(default_factory=list, description="What each project's placement says on this axis.")


class ContractRoleRef(_Model):
    slug: str
    point: ContractPoint
    units: list[ResourceUnit]
    how: str


class ContractJoin(_Model):
    """The contract that joins two cross-layer projects: what to compare instead of the projects."""

    points: list[ContractPoint] = Field(description="Contract point(s) where they meet, in pipeline order.")
    units: list[ResourceUnit] = Field(description="Resource units both sides handle at those points.")
    kind: str = Field(description="shared_point (both take part in one point) or handoff (one side's point feeds the other's).")
    roles: list[ContractRoleRef]
    summary: str


class PairVerdict(_Model):
    a: ProjectRef
    b: ProjectRef
    verdict: Verdict
    verdict_name: str
    layer_a: LayerRef = Field(description="The layer used for the comparison (platform plane, or control-plane primary layer).")
    layer_b: LayerRef
    primary_unit_a: ResourceUnit = Field(description="The unit a hands out (first unit of its placement).")
    primary_unit_b: ResourceUnit
    units_a: list[ResourceUnit] = Field(description="Every unit a handles.")
    units_b: list[ResourceUnit]
    shared_units: list[ResourceUnit]
    axes: list[ComparisonAxis] = Field(description="The only comparison axes valid for this pair.")
    contracts: list[ContractJoin] = Field(default_factory=list, description="For cross-layer pairs: the contract(s) joining them.")
    path: list[GraphStep] = Field(default_factory=list, description="Graph path joining the pair (cross-layer, overlapping, platform).")
    explanation: str


class ComparisonResult(_Model):
    """Body of the compare response: a verdict for every pair of the requested projects."""

    catalog_version: str
    projects: list[ProjectRef]
    pairs: list[PairVerdict]
    comparable_groups: list[list[str]] = Field(description="Sets of requested projects that may be compared head to head.")
    summary: str


# --- misuse ---------------------------------------------------------------------------------------


class MisuseStatus(StrEnum):
    PROVIDED = "provided"  # the project provides the capability
    DECLARED_MISUSE = "declared_misuse"  # the catalog records this expectation as a known misuse
    WRONG_LAYER = "wrong_layer"  # none of the project's layers owns the capability
    NOT_PROVIDED = "not_provided"  # its layer owns the capability, but this project does not provide it


class MisuseVerdict(_Model):
    """Whether asking `project` for `capability` is asking the right layer."""

    project: ProjectRef
    capability: str
    capability_name: str
    is_misuse: bool
    status: MisuseStatus = Field(
        description=(
            "provided: the project provides it; declared_misuse: the catalog lists this expectation as a known "
            "misuse; wrong_layer: the project's layers do not own the capability; not_provided: its layer owns "
            "the capability but this project does not provide it."
        )
    )
    expectation: str = Field("", description="The mistaken expectation in words, when the catalog records one.")
    project_layers: list[LayerRef] = Field(description="The project's layers on the map that owns the capability.")
    owner_layers: list[LayerRef] = Field(description="Layers that own the capability (fixtures/rules/capabilities.yaml).")
    owner_plane: str
    layer_owns: bool = Field(description="True if one of the project's layers owns the capability.")
    providers: list[ProjectRef] = Field(description="Catalog projects on an owning layer that provide the capability.")
    reason: str


# --- compose --------------------------------------------------------------------------------------


class Slo(_Model):
    isolation: Isolation = Field(description="hard: memory and fault isolation; soft: memory cap, shared fault domain; none.")
    goal: str = Field("throughput_first", description="latency_sensitive or throughput_first.")
    multi_tenant: bool = Field(True, description="Several teams share the pool.")


class Pool(_Model):
    gpu_model: str = Field("A100-80GB", min_length=1, max_length=40, description="GPU model, e.g. A100-80GB, H100-80GB, L40S.")
    gpu_count: int = Field(8, ge=1, le=100000, description="GPUs in the pool; a mixed profile splits them into pools.")
    mig_capable: bool | None = Field(None, description="Unset: taken from the GPU model table (fixtures/rules/units.yaml).")


class Constraints(_Model):
    require: list[Slug] = Field(default_factory=list, description="Projects every stack must contain.")
    exclude: list[Slug] = Field(default_factory=list, description="Projects no stack may contain.")
    keep_default_scheduler: bool = Field(False, description="The scheduling slot must be the default scheduler or run inside it.")


class ComposeRequest(_Model):
    """Body of POST /api/v1/stacks/compose/. Give workload classes, a profile (a preset of classes), or both."""

    profile: str | None = Field(
        None,
        description=(
            "Workload profile: training, online_inference, batch_inference, interactive, mixed. A preset: without "
            "`workloads` its classes are used; with them it only sets the preferences. Unset: derived from the classes' kinds."
        ),
    )
    workloads: list[WorkloadClass] = Field(
        default_factory=list, max_length=8, description="Workload classes; one pool is derived per class."
    )
    tenants: Teams | None = Field(
        None,
        description=(
            "Teams that share every workload class, declared once: how many (named team-1, team-2, ...) or their "
            "names, e.g. [\"vision\", \"nlp\", \"speech\", \"platform\"]. A class with its own `tenants` keeps them. "
            "Each team gets one namespace and one queue holding its share of every class."
        ),
        json_schema_extra={"anyOf": [{"type": "integer", "minimum": 1, "maximum": MAX_TEAMS},
                                     {"type": "array", "items": {"type": "string", "pattern": TEAM_NAME},
                                      "minItems": 1, "maxItems": MAX_NAMED_TEAMS},
                                     {"type": "null"}]},
    )
    slo: Slo | None = Field(None, description="Unset: the profile's default SLO.")
    pool: Pool = Field(default_factory=Pool)
    constraints: Constraints = Field(default_factory=Constraints)
    limit: int = Field(5, ge=1, le=50, description="How many ranked stacks to return.")

    @field_validator("tenants", mode="before")
    @classmethod
    def _teams(cls, value):
        return None if value is None else check_teams(value)

    @model_validator(mode="after")
    def _share_teams(self) -> ComposeRequest:
        """Every class that names no teams of its own gets the request's."""
        shared = self.shared_tenants()
        if shared is not None and any("tenants" not in w.model_fields_set for w in self.workloads):
            self.workloads = [w if "tenants" in w.model_fields_set else w.model_copy(update={"tenants": tuple(shared)})
                              for w in self.workloads]
        return self

    def shared_tenants(self) -> list[str] | None:
        """The teams shared by every class, by name (a number n names them team-1..n); None: not given."""
        return None if self.tenants is None else team_names(self.tenants, "")


class SlotAssignment(_Model):
    slot: SlotName
    pool: str | None = Field(None, description="For per-pool slots (device_handoff, data_plane_unit): the pool.")
    project: ProjectRef | None = Field(None, description="None when an optional slot is left empty.")
    why: str
    contributes: list[str] = Field(default_factory=list, description="Capabilities this project adds to the stack.")


class PoolPlan(_Model):
    name: str
    isolation: list[Isolation] = Field(description="Isolation levels this pool accepts.")
    unit: ResourceUnit
    unit_isolation: str
    gpus: int
    data_plane: str | None = Field(description="Slug of the mechanism that creates the unit (None for whole GPUs).")
    device_handoff: str
    serves: str
    workload: str | None = Field(None, description="The workload class this pool serves (pools derived from classes).")
    unit_size: str = Field("", description="What one replica gets of the unit, e.g. 'MIG 3g.40gb' or '2 whole GPUs'.")


class CheckPoint(StrEnum):
    """The contract points a composed stack is checked at (the catalog's three plus quota and workload admission)."""

    ADVERTISE = "advertise"
    BIND = "bind"
    ALLOCATE = "allocate"
    QUOTA = "quota"
    WORKLOAD_ADMISSION = "workload_admission"


class ContractCheck(_Model):
    point: CheckPoint
    pool: str = Field(description="The pool checked; `all` for stack-wide checks (workload admission).")
    unit: ResourceUnit
    holds: bool
    by: list[str] = Field(description="Slugs of the projects that make the contract hold.")
    reason: str
    interface: list[str] = Field(default_factory=list, description="Resource names or fields the check is about, e.g. nvidia.com/mig-3g.40gb.")
    source: str = Field("", description="Where the interface fact comes from (fixtures/rules/interfaces.yaml).")


class SupportingComponent(_Model):
    """A project the stack needs because a member requires it (catalog `requires`), outside any slot."""

    project: ProjectRef
    required_by: str
    why: str


class ScoreItem(_Model):
    factor: str = Field(
        description=("unit_fit, native_handoff, default_scheduler, capability, missing_capability, component_cost, empty_slot, "
                     "elastic (who admits an elastic class partially; only for requests with one), gang_api (a scheduler that places "
                     "gangs through an API it serves, which needs a Kubernetes version and feature gate).")
    )
    points: float
    slot: SlotName | None = None
    project: str | None = None
    subject: str = Field("", description="The unit or capability scored.")
    reason: str


class Stack(_Model):
    rank: int
    score: float
    title: str = Field(description="Short name, e.g. 'MIG + Volcano + Kueue'.")
    slots: list[SlotAssignment]
    supporting: list[SupportingComponent] = Field(description="Projects required by slot members, outside any slot.")
    pools: list[PoolPlan]
    contracts: list[ContractCheck]
    score_breakdown: list[ScoreItem]
    capabilities: list[str] = Field(description="Capabilities the stack covers.")
    components: list[str] = Field(description="Distinct projects in the stack, supporting ones included.")
    why_rank: str
    plan: Plan | None = Field(None, description="The stack resolved for simulation and deployment (docs/plan.md).")
    plan_error: str | None = Field(None, description="Why no plan could be built (a project with no simulator model).")


class Rejection(_Model):
    project: str
    reason: str


class SlotFailure(_Model):
    """Why a slot could not be filled (or why no combination works)."""

    slot: SlotName | None
    contract_point: CheckPoint | None = Field(None, description="The contract point that cannot hold, when that is why.")
    pool: str | None = None
    reason: str
    rejected: list[Rejection] = Field(default_factory=list)


class WhyNot(_Model):
    """Why a catalog project is in none of the returned stacks."""

    project: str
    slot: SlotName | None = Field(None, description="The slot it was considered for (None: it fits no slot).")
    rule: str = Field(description="feasibility, contract, constraint, conflict, no_slot or ranked_lower.")
    reason: str


class ComposeResult(_Model):
    catalog_version: str
    profile: str
    workloads: list[WorkloadClass] = Field(default_factory=list, description="The workload classes composed for (a profile's preset when none were given).")
    slo: Slo
    pool: Pool
    constraints: Constraints
    feasible: bool
    stacks: list[Stack]
    failures: list[SlotFailure] = Field(default_factory=list, description="Empty when feasible.")
    notes: list[str] = Field(default_factory=list, description="Pool decisions and other remarks.")
    excluded: list[str] = Field(default_factory=list, description="Examples of combinations excluded (conflicts, contracts, requirements).")
    combinations_checked: int
    why_not: list[WhyNot] = Field(default_factory=list, description="For every catalog project in no returned stack: why not.")


# --- compatible -----------------------------------------------------------------------------------


class CompatibleProject(_Model):
    project: ProjectRef
    slot: SlotName
    reason: str


class CompatibleResult(_Model):
    """Body of GET /api/v1/stacks/compatible/?with=<slug>&profile=<profile>."""

    catalog_version: str
    with_project: ProjectRef
    profile: str
    slots_of_project: list[SlotName] = Field(description="Slots the project can fill.")
    stacks: list[Stack] = Field(description="Best stacks containing the project, for the profile's default SLO.")
    compatible: list[CompatibleProject] = Field(description="Projects that can sit in another slot of the same stack.")
    incompatible: list[Rejection] = Field(description="Projects excluded next to it (conflicts and the like).")
    failures: list[SlotFailure] = Field(default_factory=list)
