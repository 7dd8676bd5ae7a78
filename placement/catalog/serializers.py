"""API bodies of the catalog: maps, layers, capabilities, profiles, scenarios, projects and placements."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from django.urls import reverse
from pydantic import ConfigDict, Field, StringConstraints
from rest_framework import serializers

from placement.catalog.models import Capability, Layer, Map, ProjectLayer
from placement.catalog.schemas import ProjectDocument
from placement.catalog.selectors.catalog import landscape_stale


class MapLayerSerializer(serializers.ModelSerializer):
    class Meta:
        model = Layer
        fields = ["code", "name", "description", "order"]


class MapSerializer(serializers.ModelSerializer):
    layers = MapLayerSerializer(many=True, read_only=True)
    url = serializers.SerializerMethodField()

    class Meta:
        model = Map
        fields = ["slug", "name", "description", "order", "layers", "url"]

    def get_url(self, obj) -> str:
        return reverse("api-map-detail", kwargs={"slug": obj.slug})


class LayerSerializer(serializers.ModelSerializer):
    map = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = Layer
        fields = ["map", "code", "name", "description", "order"]


class CapabilitySerializer(serializers.ModelSerializer):
    owner_layers = serializers.ListField(child=serializers.CharField(), read_only=True)

    class Meta:
        model = Capability
        fields = ["slug", "name", "owner_map", "owner_layers", "owner_plane", "description"]


class ProfileSerializer(serializers.Serializer):
    profile = serializers.CharField()
    name = serializers.CharField()
    description = serializers.CharField()
    default_slo = serializers.DictField(help_text="isolation, goal, multi_tenant")


class BuiltinScenarioSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="Pass as `scenario_name` to POST /api/v1/simulations/.")
    title = serializers.CharField()
    description = serializers.CharField()


# --- projects and placements ----------------------------------------------------------------------


class ProjectLayerLinkSerializer(serializers.Serializer):
    map = serializers.CharField()
    code = serializers.CharField()
    role = serializers.ChoiceField(choices=[ProjectLayer.PRIMARY, ProjectLayer.SECONDARY])


class ProjectListSerializer(serializers.Serializer):
    """A list row (schema only: rows are built by `project_row`, the list is the hottest endpoint)."""

    slug = serializers.SlugField()
    name = serializers.CharField()
    kind = serializers.CharField()
    summary = serializers.CharField()
    plane = serializers.CharField(help_text="Primary layer on the planes map: data, control or platform.")
    layer = serializers.CharField(help_text="Primary layer on the five-layer control-plane map (L0-L4).")
    layers = ProjectLayerLinkSerializer(many=True, help_text="Every placement on every map.")
    resource_units = serializers.ListField(child=serializers.CharField())
    enforcement_points = serializers.ListField(child=serializers.CharField())
    capabilities = serializers.ListField(child=serializers.CharField())
    landscape = serializers.JSONField(
        allow_null=True,
        help_text="License, repository, CNCF status, vendor, latest release, Kubernetes versions, archived, as_of, evidence.",
    )
    stale = serializers.BooleanField(help_text="Its facts are older than ATLAS_CATALOG_STALE_DAYS (landscape as_of).")
    updated_at = serializers.DateTimeField()
    url = serializers.CharField()



def project_row(row: dict, layers: list[dict]) -> dict:
    """A ProjectListSerializer row from `values()` and the project's layer links (map order)."""
    primary = {link["map"]: link["code"] for link in layers if link["role"] == ProjectLayer.PRIMARY}
    return {
        "slug": row["slug"],
        "name": row["name"],
        "kind": row["kind"],
        "summary": row["summary"],
        "plane": primary.get("planes", ""),
        "layer": primary.get("control-plane", ""),
        "layers": layers,
        "resource_units": row["resource_units"] or [],
        "enforcement_points": row["enforcement_points"] or [],
        "capabilities": row["capabilities"] or [],
        "landscape": row.get("landscape"),
        "stale": landscape_stale(row.get("landscape")),
        "updated_at": row["updated_at"].isoformat().replace("+00:00", "Z"),
        "url": f"/api/v1/projects/{row['slug']}/",
    }


class ProjectPlacementSerializer(serializers.ModelSerializer):
    project = serializers.CharField(source="project.slug")
    project_name = serializers.CharField(source="project.name")
    map = serializers.CharField(source="layer.map.slug")
    layer = serializers.CharField(source="layer.code")
    layer_name = serializers.CharField(source="layer.name")

    class Meta:
        model = ProjectLayer
        fields = ["project", "project_name", "map", "layer", "layer_name", "role"]


# --- revisions ------------------------------------------------------------------------------------




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


