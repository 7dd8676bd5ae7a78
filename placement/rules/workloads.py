"""Workload classes: the shape of the work a compose request asks a stack to run.

A class says how many replicas, how many GPUs (or what share of one) and how much GPU memory each
replica needs, whether the replicas form a gang and talk peer-to-peer, and its latency target.
Feasibility rules (fixtures/rules/feasibility.yaml) decide from this shape which units can serve it.
"""

from __future__ import annotations

import math
from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

__all__ = ["WorkloadClass", "WorkloadKind"]


class WorkloadKind(StrEnum):
    TRAINING = "training"
    ONLINE_INFERENCE = "online_inference"
    BATCH_INFERENCE = "batch_inference"
    INTERACTIVE = "interactive"


class WorkloadClass(BaseModel):
    """One class of workload the pool must run: its shape decides which units and schedulers can serve it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=40, pattern=r"^[a-z0-9][a-z0-9-]*$")] = Field(
        description="Short name, lowercase letters, digits and dashes; also the name of the pool derived from it."
    )
    kind: WorkloadKind = Field(description="training, online_inference, batch_inference or interactive.")
    replicas: int = Field(ge=1, le=100000, description="Workers (training) or model-server replicas (inference).")
    # No sharing mechanism splits a GPU finer than 1% (HAMi's gpucores and KAI's fractions are
    # percentages); no replica runs in less than 64 MiB of GPU memory.
    gpus_per_replica: float = Field(
        ge=0.01, le=64, allow_inf_nan=False,
        description="GPUs one replica (one pod) uses; below 1 means a share of one GPU (0.25 = a quarter), at least 0.01.",
    )
    gpu_memory_gib: float = Field(
        ge=0.0625, le=1024, allow_inf_nan=False, description="GPU memory one replica needs on each of its GPUs, in GiB."
    )
    gang: bool = Field(False, description="All replicas start together or none does (all-or-nothing).")
    peer_to_peer: bool = Field(False, description="The replica's GPUs talk peer-to-peer (NVLink/P2P all-reduce).")
    p99_ms: float | None = Field(None, gt=0, le=600000, description="Inference latency target at P99, in ms (optional).")
    tenants: int = Field(1, ge=1, le=1000, description="Teams that submit this class of work.")
    # Optional and left out of dumps when unset, so a request without it reads and answers as before.
    min_replicas: int | None = Field(
        None, ge=1, le=100000, exclude_if=lambda v: v is None,
        description=(
            "Elastic job (training or batch_inference): the fewest replicas it may start and keep running with; "
            "`replicas` is then the most it grows to. Unset: every replica is needed (not elastic)."
        ),
    )

    @field_validator("gpus_per_replica")
    @classmethod
    def _share_or_whole(cls, value: float) -> float:
        if value > 1 and value != int(value):
            raise ValueError("above 1 GPU a replica uses whole GPUs: give a whole number, or a share below 1")
        return value

    @property
    def elastic(self) -> bool:
        """The job may start, and run, with fewer replicas than it asks for (min_replicas below replicas)."""
        return self.min_replicas is not None and self.min_replicas < self.replicas

    @property
    def shares_a_gpu(self) -> bool:
        return self.gpus_per_replica < 1

    @property
    def whole_gpus(self) -> int:
        """GPUs one replica occupies when it gets whole GPUs."""
        return max(1, math.ceil(self.gpus_per_replica))

    @property
    def gpu_demand(self) -> float:
        return self.replicas * self.gpus_per_replica
