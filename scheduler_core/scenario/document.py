"""The scenario document itself: :class:`Scenario` (name, seed, horizon and its sections), with the
``events`` (faults, plugin restarts, MIG reconfigurations) and ``sampling`` sections."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from scheduler_core.scenario.parameters import ModelParameters
from scheduler_core.scenario.pool import Pool
from scheduler_core.scenario.stack import Stack
from scheduler_core.scenario.workloads import Tenant, Workload
from scheduler_core.units import DocumentModel, Duration


class ScenarioEvent(DocumentModel):
    at: Duration
    kind: Literal["device_plugin_restart", "node_failure", "gpu_fault", "mig_reconfigure"]
    node: str
    duration: Duration = Field(0.0, description="plugin restart / node outage length")
    gpu: int | None = Field(None, ge=0)
    gpus: Literal["all"] | list[int] = "all"
    layout: str | list[str] | None = None
    scope: Literal["gpu", "instance"] = Field("gpu", description="gpu_fault on a MIG GPU: whole GPU or one instance")
    instance: int | None = Field(None, ge=0, description="start slot of the faulty instance (scope instance)")


class Sampling(DocumentModel):
    max_points: int = Field(240, ge=2, le=5000, description="time-series length bound")
    record_workloads: int = Field(500, ge=0, description="per-workload records are kept up to this many workloads")


class Scenario(DocumentModel):
    name: str
    description: str = ""
    seed: int = 0
    horizon: Duration
    pool: Pool
    stack: Stack = Field(default_factory=Stack)
    tenants: list[Tenant] = Field(default_factory=list)
    workloads: list[Workload] = Field(default_factory=list)
    events: list[ScenarioEvent] = Field(default_factory=list)
    parameters: ModelParameters = Field(default_factory=ModelParameters)
    sampling: Sampling = Field(default_factory=Sampling)

    @field_validator("horizon")
    @classmethod
    def _positive(cls, v: float) -> float:
        if v <= 0:
            raise ValueError("horizon must be > 0")
        return v

    def tenant_list(self) -> list[Tenant]:
        """Declared tenants plus any only named by workloads (weight 1)."""
        out = list(self.tenants)
        known = {t.name for t in out}
        for w in self.workloads:
            if w.tenant not in known:
                known.add(w.tenant)
                out.append(Tenant(name=w.tenant))
        return out
