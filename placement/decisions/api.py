"""Decision records, the radar and webhooks (placement.decisions.services.decisions / webhooks)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, generics, serializers, status
from rest_framework.response import Response

from placement.common.api import AtlasViewMixin, parse_body
from placement.decisions.document import DecisionDocument
from placement.decisions.models import DecisionRecord, Webhook, WebhookDelivery
from placement.decisions.selectors import decisions as selectors
from placement.decisions.services import decisions as services
from placement.decisions.services import webhooks as webhook_services
from placement.review.serializers import ReviewDecisionSerializer


class DecisionSerializer(serializers.ModelSerializer):
    options = serializers.PrimaryKeyRelatedField(many=True, read_only=True)
    evidence_runs = serializers.PrimaryKeyRelatedField(many=True, read_only=True)
    evidence_sweeps = serializers.PrimaryKeyRelatedField(many=True, read_only=True)
    author = serializers.StringRelatedField(allow_null=True)  # null once the account is deleted
    reviewer = serializers.StringRelatedField(allow_null=True)  # null until a reviewer decides
    stale = serializers.SerializerMethodField()

    class Meta:
        model = DecisionRecord
        fields = [
            "id", "title", "status", "context", "context_text", "options", "chosen", "evidence_runs",
            "evidence_sweeps", "consequences", "rings", "supersedes", "catalog_version", "reason",
            "author", "reviewer", "review_comment", "created_at", "decided_at", "stale",
        ]

    def get_stale(self, obj) -> list[dict]:
        """The catalog entries relied on that changed since the decision, with the field diff."""
        return [
            {
                "project": f.slug,
                "old_version": f.old_version,
                "new_version": f.new_version,
                "changes": [{"path": c.path, "kind": c.kind, "old": c.old, "new": c.new} for c in f.changes],
            }
            for f in selectors.decision_staleness(obj)
        ]


class RerunSerializer(serializers.Serializer):
    pairs = serializers.ListField(child=serializers.ListField(child=serializers.IntegerField()))


def _records():
    return DecisionRecord.objects.select_related("author", "reviewer").prefetch_related(
        "options", "evidence_runs", "evidence_sweeps"
    )


class DecisionList(AtlasViewMixin, generics.ListAPIView):
    """Decision records, newest first (`?status=accepted`). POST proposes one (architects, reviewers)."""

    serializer_class = DecisionSerializer
    filter_backends: list = []

    def get_queryset(self):
        qs = _records()
        status_filter = self.request.query_params.get("status", "")
        if status_filter:
            if status_filter not in {s for s, _ in DecisionRecord.STATUSES}:
                raise exceptions.ValidationError({"status": ["One of proposed, accepted, rejected, superseded."]})
            qs = qs.filter(status=status_filter)
        return qs

    @extend_schema(request=DecisionDocument, responses={201: DecisionSerializer})
    def post(self, request):
        doc = parse_body(DecisionDocument, request.data)
        record = services.decision_propose(doc, user=request.user)
        return Response(DecisionSerializer(_records().get(pk=record.pk)).data, status=status.HTTP_201_CREATED)


class DecisionDetail(AtlasViewMixin, generics.RetrieveAPIView):
    serializer_class = DecisionSerializer
    filter_backends: list = []

    def get_queryset(self):
        return _records()


class _Review(AtlasViewMixin, generics.GenericAPIView):
    serializer_class = ReviewDecisionSerializer
    filter_backends: list = []
    pagination_class = None

    def decide(self, record, comment):
        raise NotImplementedError

    def post(self, request, pk: int):
        record = get_object_or_404(DecisionRecord, pk=pk)
        body = ReviewDecisionSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        self.decide(record, body.validated_data["comment"])
        return Response(DecisionSerializer(_records().get(pk=pk)).data)


@extend_schema(request=ReviewDecisionSerializer, responses={200: DecisionSerializer},
               description="Accept a proposed record (reviewers; never one's own): its rings become the organisation's.")
class DecisionAccept(_Review):
    def decide(self, record, comment):
        services.decision_accept(record, user=self.request.user, comment=comment)


@extend_schema(request=ReviewDecisionSerializer, responses={200: DecisionSerializer},
               description="Reject a proposed record (reviewers; a comment is required).")
class DecisionReject(_Review):
    def decide(self, record, comment):
        services.decision_reject(record, user=self.request.user, comment=comment)


class DecisionRerun(AtlasViewMixin, generics.GenericAPIView):
    """Re-run the record's evidence with the current simulator; poll the new runs, then GET the record."""

    serializer_class = RerunSerializer
    filter_backends: list = []
    pagination_class = None

    @extend_schema(request=None, responses={202: OpenApiResponse(RerunSerializer, description="(original, re-run) run ids")})
    def post(self, request, pk: int):
        record = get_object_or_404(DecisionRecord, pk=pk)
        pairs = services.decision_rerun(record, user=request.user)
        return Response({"pairs": [list(p) for p in pairs]}, status=status.HTTP_202_ACCEPTED)


class RadarEntrySerializer(serializers.Serializer):
    label = serializers.CharField()
    quadrant = serializers.IntegerField()
    ring = serializers.IntegerField()
    moved = serializers.IntegerField()
    active = serializers.BooleanField()
    link = serializers.CharField()
    description = serializers.CharField()
    decision = serializers.CharField()


class RadarSerializer(serializers.Serializer):
    title = serializers.CharField()
    date = serializers.CharField()
    quadrants = serializers.ListField(child=serializers.DictField())
    rings = serializers.ListField(child=serializers.DictField())
    entries = RadarEntrySerializer(many=True)


class RadarView(AtlasViewMixin, generics.GenericAPIView):
    """The organisation's radar in Zalando tech-radar JSON (quadrant and ring are indexes)."""

    serializer_class = RadarSerializer
    filter_backends: list = []
    pagination_class = None

    def get(self, request):
        return Response(selectors.radar_export(request.build_absolute_uri("/").rstrip("/"), timezone.now()))


class WebhookSerializer(serializers.ModelSerializer):
    events = serializers.ListField(child=serializers.CharField(max_length=40), max_length=10)
    secret = serializers.CharField(write_only=True, required=False, allow_blank=True, max_length=128)

    class Meta:
        model = Webhook
        fields = ["id", "name", "url", "events", "secret", "active", "created_at"]
        read_only_fields = ["id", "active", "created_at"]


class DeliverySerializer(serializers.ModelSerializer):
    class Meta:
        model = WebhookDelivery
        fields = ["id", "event", "status", "attempts", "response_code", "last_error", "next_attempt_at", "created_at", "delivered_at"]


class _AdminOnly:
    def check_admin(self, request):
        if not request.user.is_superuser:
            raise exceptions.PermissionDenied("only admins manage webhooks")


class WebhookList(_AdminOnly, AtlasViewMixin, generics.ListAPIView):
    """Outgoing webhooks (admins). POST creates one; the secret signs each delivery
    (`X-Atlas-Signature-256: sha256=<HMAC-SHA256 of the body>`); leave it empty to get one generated."""

    serializer_class = WebhookSerializer
    filter_backends: list = []

    def get_queryset(self):
        self.check_admin(self.request)
        return Webhook.objects.all()

    @extend_schema(request=WebhookSerializer, responses={201: WebhookSerializer})
    def post(self, request):
        self.check_admin(request)
        body = WebhookSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        hook = webhook_services.webhook_create(user=request.user, **{k: body.validated_data.get(k, "") for k in ("name", "url", "events", "secret")})
        data = WebhookSerializer(hook).data
        data["secret"] = hook.secret  # shown once, on creation
        return Response(data, status=status.HTTP_201_CREATED)


class WebhookDeliveries(_AdminOnly, AtlasViewMixin, generics.ListAPIView):
    """The delivery log of one webhook, newest first (admins)."""

    serializer_class = DeliverySerializer
    filter_backends: list = []

    def get_queryset(self):
        self.check_admin(self.request)
        hook = get_object_or_404(Webhook, pk=self.kwargs["pk"])
        return hook.deliveries.all()
