"""Workload classes: the shape of the work a compose request asks a stack to run.

A class says how many replicas, how many GPUs (or what share of one) and how much GPU memory each
replica needs, whether the replicas form a gang and talk peer-to-peer, and its latency target.
Feasibility rules (fixtures/rules/feasibility.yaml) decide from this shape which units can serve it.
"""

from __future__ import annotations

import math
import re
from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

__all__ = ["TEAM_NAME", "Teams", "WorkloadClass", "WorkloadKind", "check_teams", "several_teams", "team_names"]

# A team becomes a namespace, a LocalQueue and a queue in the bundle: a DNS label, kept short.
TEAM_NAME = r"^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$"
MAX_TEAMS = 1000
MAX_NAMED_TEAMS = 100
Teams = int | tuple[str, ...]  # a tuple: a class is frozen and hashed
_TEAM = re.compile(TEAM_NAME)


def check_teams(value: Any) -> Any:
    """How many teams (a whole number) or their names (a list): one clear error for anything else."""
    if isinstance(value, bool):
        raise ValueError("give how many teams (a whole number) or their names (a list)")
    if isinstance(value, str) and value.strip().isdigit():  # as pydantic reads a number in a string
        value = int(value.strip())
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int):
        if not 1 <= value <= MAX_TEAMS:
            raise ValueError(f"between 1 and {MAX_TEAMS} teams")
        return value
    if isinstance(value, (list, tuple)):
        names = [n.strip() if isinstance(n, str) else n for n in value]
        bad = [repr(n) for n in names if not isinstance(n, str) or not _TEAM.match(n)]
        if bad:
            raise ValueError(f"a team name is 1 to 40 lowercase letters, digits and dashes, starting and ending with "
                             f"a letter or digit (it becomes a namespace): {', '.join(bad[:5])}")
        if not 1 <= len(names) <= MAX_NAMED_TEAMS:
            raise ValueError(f"name between 1 and {MAX_NAMED_TEAMS} teams")
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"team names repeat: {', '.join(repeated)}")
        return tuple(names)
    raise ValueError("give how many teams (a whole number) or their names (a list)")


def team_names(teams: Teams, prefix: str) -> list[str]:
    """The teams' names: as given, or `<prefix>team-1..n` for a number."""
    return list(teams) if isinstance(teams, tuple) else [f"{prefix}team-{t + 1}" for t in range(teams)]


def several_teams(classes) -> bool:
    """Several teams share the pool: a class has more than one, or the classes name different teams."""
    named = {n for w in classes if isinstance(w.tenants, tuple) for n in w.tenants}
    return any(w.tenant_count > 1 for w in classes) or len(named) > 1


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
    tenants: Teams = Field(
        1, description=(
            "Teams that submit this class of work: how many (named <class>-team-1, -2, ...) or their names, "
            "e.g. [\"vision\", \"nlp\"]; each team gets a namespace and a queue. Unset: the request's `tenants`, else 1."),
        json_schema_extra={"anyOf": [{"type": "integer", "minimum": 1, "maximum": MAX_TEAMS},
                                     {"type": "array", "items": {"type": "string", "pattern": TEAM_NAME},
                                      "minItems": 1, "maxItems": MAX_NAMED_TEAMS}]},
    )

    # Optional and left out of dumps when unset, so a request without it reads and answers as before.
    min_replicas: int | None = Field(
        None, ge=1, le=100000, exclude_if=lambda v: v is None,
        description=(
            "Elastic job (training or batch_inference): the fewest replicas it may start and keep running with; "
            "`replicas` is then the most it grows to. Unset: every replica is needed (not elastic)."
        ),
    )

    @field_validator("tenants", mode="before")
    @classmethod
    def _teams(cls, value: Any) -> Any:
        return check_teams(value)

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
    def tenant_count(self) -> int:
        return len(self.tenants) if isinstance(self.tenants, tuple) else self.tenants

    def tenant_names(self) -> list[str]:
        """Each team's name: as given, or `<class>-team-1..n` for a number of teams."""
        return team_names(self.tenants, f"{self.name}-")

    @property
    def whole_gpus(self) -> int:
        """GPUs one replica occupies when it gets whole GPUs."""
        return max(1, math.ceil(self.gpus_per_replica))

    @property
    def gpu_demand(self) -> float:
        return self.replicas * self.gpus_per_replica
