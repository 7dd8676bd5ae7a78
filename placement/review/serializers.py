"""API bodies of the review workflow: revisions, their changes, decisions and rebases."""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from placement.catalog.schemas import ProjectDocument
from placement.common.openapi import PydanticField
from placement.review.models import Revision


@extend_schema_field(
    {"type": "string", "enum": [s for s, _ in Revision.STATUSES]}, component_name="RevisionStatus"
)
class RevisionStatusField(serializers.CharField):
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
        from placement.review.services import revision_diff

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


