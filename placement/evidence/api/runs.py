"""Saved stacks, simulation runs and a stack's evidence (placement.stacks.services.stacks / evidence)."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import filters, generics, status
from rest_framework.response import Response

from placement.common.api import AtlasViewMixin, parse_body
from placement.common.errors import ErrorSerializer
from placement.evidence.filtersets import SimulationRunFilterSet
from placement.evidence.models import SimulationRun
from placement.evidence.selectors.runs import stack_evidence
from placement.evidence.serializers import (
    SimulationQueuedSerializer,
    SimulationRunSerializer,
    SimulationStartSerializer,
)
from placement.evidence.services import runs as evidence_services
from placement.plans.models import Plan
from placement.stacks.models import Stack
from placement.stacks.serializers import SavedStackSerializer, SaveStackBody
from placement.stacks.services import stacks as rules_services
from placement.stacks.services.scenario import stack_plan


def _stacks():
    return Stack.objects.select_related("created_by")


def _runs():
    # The scenario and time series can be large; no endpoint here shows them.
    return SimulationRun.objects.defer("scenario", "timeseries")


class StackList(AtlasViewMixin, generics.ListAPIView):
    """Saved stacks, newest first. POST composes again and saves the stack ranked `rank`."""

    serializer_class = SavedStackSerializer
    filter_backends = [filters.SearchFilter, filters.OrderingFilter]
    search_fields = ["name", "profile"]
    ordering_fields = ["created_at", "name"]

    def get_queryset(self):
        return _stacks()

    @extend_schema(request=SaveStackBody, responses={201: SavedStackSerializer})
    def post(self, request):
        body = parse_body(SaveStackBody, request.data)
        try:
            stack = rules_services.stack_save(
                user=request.user, request_data=body.request, rank=body.rank, name=body.name
            )
        except DjangoValidationError as exc:
            if not hasattr(exc, "error_dict"):
                raise
            # compose errors name fields of the compose request, which is `request` in this body.
            raise DjangoValidationError(
                {(k if k in ("rank", "name", "__all__") else f"request.{k}"): v for k, v in exc.message_dict.items()}
            ) from None
        return Response(SavedStackSerializer(_stacks().get(pk=stack.pk)).data, status=status.HTTP_201_CREATED)


class StackDetail(AtlasViewMixin, generics.RetrieveAPIView):
    serializer_class = SavedStackSerializer
    filter_backends: list = []

    def get_queryset(self):
        return _stacks()


class StackEvidence(AtlasViewMixin, generics.GenericAPIView):
    """A stack's simulation runs, newest first (at most 100)."""

    serializer_class = SimulationRunSerializer
    filter_backends: list = []
    pagination_class = None

    @extend_schema(responses=SimulationRunSerializer(many=True))
    def get(self, request, pk: int):
        stack = get_object_or_404(Stack, pk=pk)
        evidence_services.simulation_fail_stale()
        return Response(SimulationRunSerializer(stack_evidence(stack), many=True).data)


SIMULATION_START = """Queue a simulation of a saved stack (or of the scenario alone) on a scenario.

Give `scenario_name` (a built-in scenario, GET /api/v1/scenarios/) or `scenario` (a document), and
optionally a `seed`. An invalid scenario is a 400 with field errors and nothing is queued.

**202** with the new run's `status_url` to poll. Submitting the same stack, scenario and seed again
returns the existing run instead of computing it twice: **200**, same body, `created: false` (a
failed run is retried by a new submission).

A run bigger than this installation's budget (GPUs, jobs, predicted memory) is a **400** naming the
limit; **429** when you already have `ATLAS_RUN_MAX_ACTIVE_PER_USER` runs queued or running;
**503** when the task queue is down (nothing is left queued)."""


def _check_storable(document: dict) -> None:
    """The run row keeps the scenario's name (200 characters) and seed (64-bit); the scenario model
    bounds neither, so a longer name or a bigger seed would fail in the database, not in validation."""
    errors = {}
    name = document.get("name")
    if isinstance(name, str) and len(name) > 200:
        errors["scenario.name"] = ["At most 200 characters."]
    seed = document.get("seed")
    if isinstance(seed, int) and not isinstance(seed, bool) and not -(2**63) <= seed < 2**63:
        errors["scenario.seed"] = ["A seed is a 64-bit whole number."]
    if errors:
        raise DjangoValidationError(errors)


@extend_schema_view(get=extend_schema(parameters=[OpenApiParameter(
    "stack", {"type": "integer", "minimum": 1, "maximum": 2**63 - 1}, description="Saved stack id.")]))
class SimulationList(AtlasViewMixin, generics.ListAPIView):
    serializer_class = SimulationRunSerializer
    extra_error_codes = (429, 503)
    filter_backends = [DjangoFilterBackend]
    filterset_class = SimulationRunFilterSet

    def get_queryset(self):
        return _runs()

    def list(self, request, *args, **kwargs):
        evidence_services.simulation_fail_stale()
        return super().list(request, *args, **kwargs)

    @extend_schema(
        request=SimulationStartSerializer,
        responses={
            202: OpenApiResponse(SimulationQueuedSerializer, description="Queued."),
            200: OpenApiResponse(SimulationQueuedSerializer, description="Already submitted: the existing run."),
        },
        description=SIMULATION_START,
    )
    def post(self, request):
        body = SimulationStartSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        if data["scenario"] is not None:
            _check_storable(data["scenario"])
        run, created = evidence_services.simulation_start(
            user=request.user,
            stack=data["stack"],
            scenario_name=data["scenario_name"] or None,
            scenario_document=data["scenario"],
            seed=data["seed"],
        )
        payload = {
            "id": run.pk,
            "status": run.status,
            "status_url": reverse("api-simulation-detail", kwargs={"pk": run.pk}),
            "created": created,
        }
        return Response(
            SimulationQueuedSerializer(payload).data, status=status.HTTP_202_ACCEPTED if created else status.HTTP_200_OK
        )


class SimulationDetail(AtlasViewMixin, generics.RetrieveAPIView):
    """A run's status, progress, metrics, error and timings. A run whose worker died is never
    reported as running forever: stale runs are requeued or failed before answering."""

    serializer_class = SimulationRunSerializer
    filter_backends: list = []

    def get_queryset(self):
        return _runs()

    def retrieve(self, request, *args, **kwargs):
        evidence_services.simulation_fail_stale()
        return super().retrieve(request, *args, **kwargs)


class PlanResponse(Plan):
    """The stack's plan with its digest (the id its runs' scenarios and exports name)."""

    digest_hex: str = ""


@extend_schema(
    responses={200: PlanResponse, 404: ErrorSerializer},
    description=(
        "The stack's plan (docs/plan.md): node groups of whole nodes with their data planes, each workload "
        "class's object kind, scheduler, queue and per-pod requests, the queues' quotas, components, assumptions "
        "and shortfalls, plus `digest_hex`, the id runs (`scenario_name: plan-<digest>`) and exports name. "
        "A stack saved before plans, or whose stack has a project with no simulator model, is a 404 saying why."
    ),
)
class StackPlan(AtlasViewMixin, generics.GenericAPIView):
    filter_backends: list = []
    pagination_class = None

    def get(self, request, pk: int):
        stack = get_object_or_404(Stack, pk=pk)
        plan = stack_plan(stack)
        if plan is None:
            reason = (stack.composition or {}).get("plan_error") or (
                "this stack was saved before plans existed; compose and save it again to get one")
            return Response({"detail": f"Stack {stack.pk} has no plan: {reason}"}, status=status.HTTP_404_NOT_FOUND)
        return Response({**plan.model_dump(mode="json"), "digest_hex": plan.digest})
