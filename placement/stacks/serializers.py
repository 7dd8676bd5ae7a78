"""API bodies of saved stacks."""

from __future__ import annotations

from typing import Annotated

from django.urls import reverse
from pydantic import BaseModel, ConfigDict, Field, StringConstraints
from rest_framework import serializers

from placement.common.openapi import PydanticField
from placement.rules.models import ComposeRequest
from placement.rules.models import Stack as RankedStack
from placement.stacks.models import Stack


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




class SaveStackBody(BaseModel):
    """Body of POST /api/v1/stacks/: compose again and save the stack ranked `rank`."""

    model_config = ConfigDict(extra="forbid")

    request: ComposeRequest
    rank: int = Field(ge=1, le=50, description="Rank of the stack in the compose result (1 = best).")
    name: Annotated[str, StringConstraints(strip_whitespace=True, max_length=200)] = Field(
        "", description="Empty: '<title> for <profile>'."
    )


