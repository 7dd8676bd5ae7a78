"""Request and response bodies of the API that are pydantic models.

The template is `placement.schemas.ProjectDocument` and the rules bodies are
`placement.rules.models`; this module only adds what the API wraps around them (a proposal's
reason, a project's version) so that the OpenAPI schema is the pydantic JSON schema itself.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from placement.rules.models import ComposeRequest
from placement.schemas import ProjectDocument

# Project.homepage is a URLField(max_length=500); the template's pattern has no length limit, so a
# longer URL would fail in the database rather than in validation.
Homepage = Annotated[str, StringConstraints(pattern=r"^https?://\S+$", max_length=500)]


class ProjectProposal(ProjectDocument):
    """Body of POST /api/v1/projects/ and POST /api/v1/projects/{slug}/revisions/: the whole
    template (as GET /api/v1/projects/{slug}/ returns it, without its read-only fields) and why."""

    homepage: Homepage
    reason: Annotated[str, StringConstraints(strip_whitespace=True, max_length=4000)] = Field(
        "", description="Why the change is right; required when proposing a change to an existing project."
    )
    submit: bool = Field(True, description="False keeps it as a draft that reviewers do not see in the queue yet.")

    def document(self) -> ProjectDocument:
        """The template alone (already validated: no second vocabulary pass)."""
        return ProjectDocument.model_construct(**{name: getattr(self, name) for name in ProjectDocument.model_fields})


class ProjectDetail(ProjectDocument):
    """Body of GET /api/v1/projects/{slug}/: the whole one-page template and its state."""

    model_config = ConfigDict(extra="forbid")

    version: int = Field(description="Number of accepted revisions; 0 for a proposed project not accepted yet.")
    accepted: bool = Field(description="False while a new project awaits review (it is not on the map yet).")
    updated_at: datetime
    stale: bool = Field(description="Its facts (landscape as_of) are older than ATLAS_CATALOG_STALE_DAYS: re-read them.")
    url: str
    revisions_url: str


class SaveStackBody(BaseModel):
    """Body of POST /api/v1/stacks/: compose again and save the stack ranked `rank`."""

    model_config = ConfigDict(extra="forbid")

    request: ComposeRequest
    rank: int = Field(ge=1, le=50, description="Rank of the stack in the compose result (1 = best).")
    name: Annotated[str, StringConstraints(strip_whitespace=True, max_length=200)] = Field(
        "", description="Empty: '<title> for <profile>'."
    )


class EvaluateRequest(BaseModel):
    """Body of POST /api/v1/stacks/evaluate/: rank the top stacks of a compose request by evidence."""

    model_config = ConfigDict(extra="forbid")

    request: ComposeRequest = Field(description="The compose request whose ranked stacks are simulated.")
    top: int = Field(5, ge=1, le=8, description="How many of the top stacks to simulate.")
    scenario_name: Annotated[str, StringConstraints(strip_whitespace=True, max_length=200)] | None = Field(
        None, description="A built-in scenario; unset: one generated from the request's workload classes (one day)."
    )
