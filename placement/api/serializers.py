"""DRF serializers of the API: model rows out, small bodies in. Template-shaped bodies are pydantic
(`placement.api.bodies`, `placement.rules.models`); `PydanticField` embeds one in a serializer so
that the schema references the pydantic component."""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from placement.selectors.catalog import landscape_stale
from placement.models import Capability, Layer, Map, ProjectLayer, Revision, SimulationRun, Stack
from placement.rules.models import ComposeRequest
from placement.rules.models import Stack as RankedStack
from placement.schemas import ProjectDocument


class PydanticField(serializers.JSONField):
    """Read-only JSON whose schema is a pydantic model's (stored data is passed through as is)."""

    def __init__(self, model, **kwargs):
        self.pydantic_model = model
        kwargs.setdefault("read_only", True)
        super().__init__(**kwargs)


class PydanticFieldExtension(OpenApiSerializerFieldExtension):
    target_class = PydanticField
    match_subclasses = True

    def map_serializer_field(self, auto_schema, direction):
        return auto_schema.resolve_serializer(self.target.pydantic_model, direction).ref


# --- vocabulary -----------------------------------------------------------------------------------


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


@extend_schema_field(
    {"type": "string", "enum": [s for s, _ in Revision.STATUSES]}, component_name="RevisionStatus"
)
class RevisionStatusField(serializers.CharField):
    pass


@extend_schema_field(
    {"type": "string", "enum": [s for s, _ in SimulationRun.STATUSES]}, component_name="RunStatus"
)
class RunStatusField(serializers.CharField):
    pass


class RevisionSerializer(serializers.ModelSerializer):
    status = RevisionStatusField(read_only=True)
    project = serializers.CharField(source="project.slug", read_only=True)
    author = serializers.CharField(source="author.username", read_only=True, allow_null=True)
    reviewer = serializers.CharField(source="reviewer.username", read_only=True, allow_null=True)
    restored_from = serializers.IntegerField(source="restored_from_id", read_only=True, allow_null=True)
    url = serializers.SerializerMethodField()

    class Meta:
        model = Revision
        fields = [
            "id", "project", "status", "number", "base_version", "reason", "author", "reviewer",
            "review_comment", "restored_from", "created_at", "updated_at", "reviewed_at", "url",
        ]  # fmt: skip
        read_only_fields = fields

    def get_url(self, obj) -> str:
        return reverse("api-revision-detail", kwargs={"pk": obj.pk})


class ChangeSerializer(serializers.Serializer):
    path = serializers.CharField(help_text="Dotted path, e.g. placement.sources[1].url; `[]` marks an item of a list of values.")
    kind = serializers.ChoiceField(choices=["added", "removed", "changed"])
    old = serializers.JSONField(allow_null=True)
    new = serializers.JSONField(allow_null=True)


class RevisionDetailSerializer(RevisionSerializer):
    document = PydanticField(ProjectDocument, help_text="The whole proposed template.")
    diff = serializers.SerializerMethodField(help_text="Changes against the project's current accepted state.")

    class Meta(RevisionSerializer.Meta):
        fields = [*RevisionSerializer.Meta.fields, "document", "diff"]
        read_only_fields = fields

    @extend_schema_field(ChangeSerializer(many=True))
    def get_diff(self, obj):
        from placement.services.review import revision_diff

        return [
            {"path": c.path, "kind": c.kind, "old": c.old, "new": c.new} for c in revision_diff(obj)
        ]


class ReviewDecisionSerializer(serializers.Serializer):
    comment = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=4000,
        help_text="Required to reject: say why.",
    )  # fmt: skip


class RebaseSerializer(serializers.Serializer):
    resolutions = serializers.DictField(
        child=serializers.ChoiceField(choices=["accepted", "proposed"]),
        required=False, default=dict,
        help_text="For each field changed by both the accepted revision and the proposal (dotted path): keep 'accepted' or 'proposed'.",
    )  # fmt: skip


# --- stacks and evidence --------------------------------------------------------------------------


class SavedStackSerializer(serializers.ModelSerializer):
    request = PydanticField(ComposeRequest, help_text="The compose request the stack came from.")
    composition = PydanticField(RankedStack, help_text="The ranked stack as the rules engine returned it.")
    created_by = serializers.CharField(source="created_by.username", read_only=True, allow_null=True)
    url = serializers.SerializerMethodField()
    evidence_url = serializers.SerializerMethodField()

    class Meta:
        model = Stack
        fields = ["id", "name", "profile", "notes", "request", "composition", "created_by", "created_at", "url", "evidence_url"]
        read_only_fields = fields

    def get_url(self, obj) -> str:
        return reverse("api-stack-detail", kwargs={"pk": obj.pk})

    def get_evidence_url(self, obj) -> str:
        return reverse("api-stack-evidence", kwargs={"pk": obj.pk})


class SimulationStartSerializer(serializers.Serializer):
    stack = serializers.PrimaryKeyRelatedField(
        queryset=Stack.objects.all(), allow_null=True, required=False, default=None,
        help_text="Saved stack whose mechanisms run; null runs the scenario's own stack section.",
    )  # fmt: skip
    scenario_name = serializers.CharField(
        allow_null=True, allow_blank=True, required=False, default=None, max_length=200,
        help_text="A built-in scenario (GET /api/v1/scenarios/); give this or `scenario`, not both.",
    )  # fmt: skip
    scenario = serializers.JSONField(
        allow_null=True, required=False, default=None,
        help_text="A scheduler_core scenario document (the YAML as JSON); give this or `scenario_name`.",
    )  # fmt: skip
    seed = serializers.IntegerField(
        allow_null=True, required=False, default=None, min_value=0, max_value=2**31 - 1,
        help_text="Null: the scenario's seed.",
    )  # fmt: skip

    def validate_scenario(self, value):
        if value is not None and not isinstance(value, dict):
            raise serializers.ValidationError("A scenario document is a JSON object.")
        return value


class SimulationQueuedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = RunStatusField()
    status_url = serializers.CharField()
    created = serializers.BooleanField(help_text="False: the same stack, scenario and seed already had a run; this is it.")


class TimingsSerializer(serializers.Serializer):
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    heartbeat_at = serializers.DateTimeField(allow_null=True)
    wall_seconds = serializers.FloatField(allow_null=True)


class SimulationRunSerializer(serializers.ModelSerializer):
    status = RunStatusField(read_only=True)
    stack = serializers.IntegerField(source="stack_id", allow_null=True, read_only=True)
    sweep = serializers.IntegerField(source="sweep_id", allow_null=True, read_only=True)
    metrics = serializers.JSONField(
        read_only=True, allow_null=True, help_text="The simulator's result (without the time series); null until it succeeds."
    )
    timings = serializers.SerializerMethodField()
    status_url = serializers.SerializerMethodField()

    class Meta:
        model = SimulationRun
        fields = [
            "id", "stack", "sweep", "scenario_name", "seed", "status", "progress", "metrics", "error",
            "attempts", "timings", "status_url",
        ]  # fmt: skip
        read_only_fields = fields

    @extend_schema_field(TimingsSerializer)
    def get_timings(self, obj):
        return TimingsSerializer(
            {
                "created_at": obj.created_at,
                "started_at": obj.started_at,
                "finished_at": obj.finished_at,
                "heartbeat_at": obj.heartbeat_at,
                "wall_seconds": obj.wall_seconds,
            }
        ).data

    def get_status_url(self, obj) -> str:
        return reverse("api-simulation-detail", kwargs={"pk": obj.pk})


# --- tokens ---------------------------------------------------------------------------------------


class TokenSerializer(serializers.Serializer):
    username = serializers.CharField()
    token = serializers.CharField(help_text="Send as `Authorization: Token <token>`. Shown once; POST again to rotate.")
    created = serializers.DateTimeField()
    can_write = serializers.BooleanField(help_text="False: the token may only read (GET, compare, compose).")


class TokenStatusSerializer(serializers.Serializer):
    username = serializers.CharField()
    has_token = serializers.BooleanField()
    created = serializers.DateTimeField(allow_null=True)
    can_write = serializers.BooleanField()


class TokenGrantSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    can_write = serializers.BooleanField()


class TokenGrantResultSerializer(serializers.Serializer):
    username = serializers.CharField()
    can_write = serializers.BooleanField()
    granted_by = serializers.CharField(allow_null=True)
    granted_at = serializers.DateTimeField(allow_null=True)
