"""Review endpoints: revisions, their diff, accept, reject and rebase (placement.review.services)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, filters, generics, status
from rest_framework.response import Response

from placement.common.api import AtlasViewMixin
from placement.review import services as review_services
from placement.review.filtersets import RevisionFilterSet
from placement.review.models import Revision
from placement.review.selectors import revisions_visible_to
from placement.review.serializers import (
    RebaseSerializer,
    ReviewDecisionSerializer,
    RevisionDetailSerializer,
    RevisionSerializer,
)


def _revisions(user):
    return revisions_visible_to(user, Revision.objects.select_related("project", "author", "reviewer"))


class Conflict(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The project changed since this proposal was made; rebase it."
    default_code = "conflict"


class RevisionList(AtlasViewMixin, generics.ListAPIView):
    """Revisions of every project; `?status=proposed` is the review queue."""

    serializer_class = RevisionSerializer
    filter_backends = [DjangoFilterBackend, filters.OrderingFilter]
    filterset_class = RevisionFilterSet
    ordering_fields = ["created_at", "updated_at"]

    def get_queryset(self):
        return _revisions(self.request.user)


class RevisionDetail(AtlasViewMixin, generics.RetrieveAPIView):
    """A revision with the whole proposed template and its field-by-field diff."""

    serializer_class = RevisionDetailSerializer
    filter_backends: list = []

    def get_queryset(self):
        return _revisions(self.request.user)


class _Decision(AtlasViewMixin, generics.GenericAPIView):
    serializer_class = ReviewDecisionSerializer
    filter_backends: list = []
    pagination_class = None

    def decide(self, revision: Revision, comment: str) -> Revision:
        raise NotImplementedError

    def post(self, request, pk: int):
        revision = get_object_or_404(_revisions(request.user), pk=pk)
        body = ReviewDecisionSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            revision = self.decide(revision, body.validated_data["comment"])
        except review_services.ProposalConflict as exc:
            raise Conflict({"status": [str(exc)]}) from None
        return Response(RevisionSerializer(_revisions(request.user).get(pk=revision.pk)).data)


@extend_schema(
    request=ReviewDecisionSerializer,
    responses={200: RevisionSerializer},
    description="Accept a proposal (reviewers; never one's own). 409 if the project moved since it was made: rebase first.",
)
class RevisionAccept(_Decision):
    extra_error_codes = (409,)

    def decide(self, revision, comment):
        return review_services.revision_accept(revision, user=self.request.user, comment=comment)


@extend_schema(
    request=ReviewDecisionSerializer,
    responses={200: RevisionSerializer},
    description="Reject a proposal with a comment saying why (reviewers; never one's own). 409 if it is conflicting.",
)
class RevisionReject(_Decision):
    extra_error_codes = (409,)

    def decide(self, revision, comment):
        return review_services.revision_reject(revision, user=self.request.user, comment=comment)


@extend_schema(
    request=RebaseSerializer,
    responses={200: RevisionSerializer},
    description=(
        "Take one's own conflicting proposal onto the current version by a three-way merge: fields only the "
        "accepted revision changed are kept; a field changed by both needs `resolutions: {path: accepted|proposed}` "
        "(400 names each such field with both values). It is reviewed again."
    ),
)
class RevisionRebase(AtlasViewMixin, generics.GenericAPIView):
    serializer_class = RevisionSerializer
    filter_backends: list = []
    pagination_class = None

    def post(self, request, pk: int):
        revision = get_object_or_404(_revisions(request.user), pk=pk)
        body = RebaseSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        revision = review_services.revision_rebase(
            revision, user=request.user, resolutions=body.validated_data["resolutions"]
        )
        return Response(RevisionSerializer(_revisions(request.user).get(pk=revision.pk)).data)
