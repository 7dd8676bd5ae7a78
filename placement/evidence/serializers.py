"""API bodies of simulation runs and evidence rankings."""

from __future__ import annotations

from typing import Annotated

from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from pydantic import BaseModel, ConfigDict, Field, StringConstraints
from rest_framework import serializers

from placement.evidence.models import SimulationRun
from placement.rules.models import ComposeRequest
from placement.stacks.models import Stack


@extend_schema_field(
    {"type": "string", "enum": [s for s, _ in SimulationRun.STATUSES]}, component_name="RunStatus"
)
class RunStatusField(serializers.CharField):
    pass


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




class EvaluateRequest(BaseModel):
    """Body of POST /api/v1/stacks/evaluate/: rank the top stacks of a compose request by evidence."""

    model_config = ConfigDict(extra="forbid")

    request: ComposeRequest = Field(description="The compose request whose ranked stacks are simulated.")
    top: int = Field(5, ge=1, le=8, description="How many of the top stacks to simulate.")
    scenario_name: Annotated[str, StringConstraints(strip_whitespace=True, max_length=200)] | None = Field(
        None, description="A built-in scenario; unset: one generated from the request's workload classes (one day)."
    )
