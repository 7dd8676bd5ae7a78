"""The body of a decision record as the form, the API and the service all take it (pydantic)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Ring = Literal["adopt", "trial", "assess", "hold"]
RING_ORDER: tuple[str, ...] = ("adopt", "trial", "assess", "hold")


class RingAssignment(BaseModel):
    model_config = ConfigDict(extra="forbid")

    project: str = Field(min_length=1, max_length=80, description="Catalog slug of the project.")
    ring: Ring
    reason: str = Field(default="", max_length=2000, description="Why this ring (shown on the project page).")


class DecisionDocument(BaseModel):
    """A proposed decision: what was decided between which saved stacks, on what evidence."""

    model_config = ConfigDict(extra="forbid")

    title: str = Field(min_length=3, max_length=200)
    context: dict = Field(
        default_factory=dict,
        description="The workload classes, SLO and pool the decision is about (a compose request).",
    )
    context_text: str = Field(default="", max_length=5000, description="The context in words.")
    options: list[int] = Field(min_length=1, max_length=10, description="Saved stack ids that were considered.")
    chosen: int | None = Field(default=None, description="The saved stack chosen; one of `options`.")
    evidence_runs: list[int] = Field(default_factory=list, max_length=50, description="Simulation run ids.")
    evidence_sweeps: list[int] = Field(default_factory=list, max_length=20, description="Sweep ids.")
    consequences: str = Field(default="", max_length=5000)
    rings: list[RingAssignment] = Field(default_factory=list, max_length=100)
    supersedes: int | None = Field(default=None, description="The accepted record this one replaces.")
    reason: str = Field(min_length=1, max_length=2000, description="Why the record is proposed (as for catalog revisions).")

    @field_validator("title", "reason")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value.strip()

    @field_validator("options", "evidence_runs", "evidence_sweeps")
    @classmethod
    def _ids(cls, value: list[int]) -> list[int]:
        if any(v < 1 or v >= 2**31 for v in value):
            raise ValueError("ids are whole numbers from 1")
        return list(dict.fromkeys(value))
