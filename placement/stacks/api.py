"""Rules endpoints: compare, compose, compatible stacks and misuse checks (placement.stacks.services.stacks).

All four are reads: readers and read-only tokens may call them, POSTs included (`read_only_post`).
"""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, generics
from rest_framework.response import Response

from placement.common.api import AtlasViewMixin, parse_body
from placement.common.errors import ErrorSerializer
from placement.rules.models import (
    CompareRequest,
    ComparisonResult,
    CompatibleResult,
    ComposeRequest,
    ComposeResult,
    MisuseVerdict,
)
from placement.stacks.services import stacks as rules_services


class _RulesView(AtlasViewMixin, generics.GenericAPIView):
    filter_backends: list = []
    pagination_class = None
    read_only_post = True


@extend_schema(
    request=CompareRequest,
    responses={200: ComparisonResult},
    description=(
        "A verdict for every pair of two or more projects: comparable, unit_mismatch, cross_layer, "
        "platform_vs_mechanism or overlapping, with the valid comparison axes and, for cross-layer pairs, "
        "the contract that joins them. Writes nothing."
    ),
)
class CompareView(_RulesView):
    def post(self, request):
        result = rules_services.compare_projects(parse_body(CompareRequest, request.data))
        return Response(result.model_dump(mode="json"))


@extend_schema(
    request=ComposeRequest,
    responses={200: ComposeResult, 422: ErrorSerializer},
    description=(
        "Ranked end-to-end stacks for a workload profile, SLO, pool and constraints, with contract checks "
        "and score breakdown. A request without `constraints.require` that no stack satisfies is a 200 with "
        "feasible=false and `failures` naming the slot that cannot be filled. Every request with "
        "`constraints.require` that no stack satisfies is a 422 with one error per broken rule under "
        "`errors['constraints.require']`, each led by the contract point it breaks when one does (advertise, "
        "bind, allocate, quota, workload_admission); unknown profiles or projects and bad workload classes are "
        "400. Writes nothing."
    ),
)
class ComposeView(_RulesView):
    def post(self, request):
        body = parse_body(ComposeRequest, request.data)
        result = rules_services.compose_stacks(body)
        refusal = rules_services.compose_refusal(body, result)
        if refusal is not None:  # the required projects cannot work together: unprocessable, not an empty answer
            return Response(refusal, status=422)
        return Response(result.model_dump(mode="json"))

    @extend_schema(
        request=None,
        responses={405: OpenApiResponse(ErrorSerializer, description="Compose takes a body: POST it.")},
        description="Not allowed: compose needs a request body, so it is POST only (405, the JSON error body).",
    )
    def get(self, request):
        raise exceptions.MethodNotAllowed("GET", detail="Compose takes a ComposeRequest body: use POST.")


@extend_schema(
    parameters=[
        OpenApiParameter("with", OpenApiTypes.STR, required=True, description="Catalog project slug."),
        OpenApiParameter(
            "profile", OpenApiTypes.STR, required=True, description="Workload profile (GET /api/v1/profiles/)."
        ),
    ],
    responses={200: CompatibleResult},
    description="Stacks containing a project and the projects that fit next to it, for a profile's default SLO.",
)
class CompatibleView(_RulesView):
    def get(self, request):
        result = rules_services.compatible_stacks(
            request.query_params.get("with", "").strip(), request.query_params.get("profile", "").strip()
        )
        return Response(result.model_dump(mode="json"))


@extend_schema(
    parameters=[
        OpenApiParameter("project", OpenApiTypes.STR, required=True, description="Catalog project slug."),
        OpenApiParameter(
            "capability", OpenApiTypes.STR, required=True, description="Capability slug (GET /api/v1/capabilities/)."
        ),
    ],
    responses={200: MisuseVerdict},
    description="Whether asking a project for a capability asks the layer that owns it; if not, who to ask.",
)
class MisuseView(_RulesView):
    def get(self, request):
        project = request.query_params.get("project", "").strip()
        capability = request.query_params.get("capability", "").strip()
        errors = {}
        if not project:
            errors["project"] = ["Name a catalog project slug."]
        if not capability:
            errors["capability"] = ["Name a capability slug."]
        if errors:
            raise DjangoValidationError(errors)
        try:
            verdict = rules_services.misuse_check(project, capability)
        except DjangoValidationError as exc:
            # The engine names the project `slug`; the query parameter is `project`.
            raise DjangoValidationError(
                {("project" if k == "slug" else k): v for k, v in exc.message_dict.items()}
            ) from None
        return Response(verdict.model_dump(mode="json"))
