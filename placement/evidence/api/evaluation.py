"""Rank by evidence: POST /api/v1/stacks/evaluate/ (202, then poll GET .../evaluate/{id}/).

Thin: placement.evidence.services.evaluation queues, placement.evidence.selectors.evaluation reads back."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.response import Response

from placement.common.api import AtlasViewMixin, parse_body
from placement.evidence.models import Sweep
from placement.evidence.selectors.evaluation import EVALUATION_PREFIX, evaluation_summary
from placement.evidence.serializers import EvaluateRequest
from placement.evidence.services import evaluation as evaluation_services
from placement.evidence.services import runs as evidence_services


class EvaluateView(AtlasViewMixin, generics.GenericAPIView):
    filter_backends: list = []
    pagination_class = None
    extra_error_codes = (429, 503)

    @extend_schema(
        request=EvaluateRequest,
        responses={202: OpenApiResponse(OpenApiTypes.OBJECT, description="Queued: {id, status_url}.")},
        description=(
            "Compose the request, simulate its top N stacks (default 5) on one scenario generated from the "
            "same workload classes (or a built-in one) as one Celery group, and poll `status_url` for the "
            "rules score next to SLO attainment, P99, OOM kills, utilisation, queue wait and starved tenants, "
            "the evidence order and every disagreement with the metric that decided."
        ),
    )
    def post(self, request):
        body = parse_body(EvaluateRequest, request.data)
        sweep = evaluation_services.evaluation_start(
            user=request.user, request_data=body.request, top=body.top, scenario_name=body.scenario_name
        )
        url = reverse("api-evaluation-detail", kwargs={"pk": sweep.pk})
        return Response({"id": sweep.pk, "status_url": url}, status=status.HTTP_202_ACCEPTED)


class EvaluationDetail(AtlasViewMixin, generics.GenericAPIView):
    filter_backends: list = []
    pagination_class = None

    @extend_schema(responses={200: OpenApiTypes.OBJECT}, description="Progress, then the evidence ranking.")
    def get(self, request, pk: int):
        evidence_services.simulation_fail_stale()
        sweep = get_object_or_404(Sweep, pk=pk, name__startswith=EVALUATION_PREFIX)
        return Response(evaluation_summary(sweep))
