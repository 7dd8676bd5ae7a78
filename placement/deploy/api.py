"""A saved stack's manifests (placement.deploy.services.bundles)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers
from rest_framework.response import Response

from placement.common.api import AtlasViewMixin
from placement.deploy.services.bundles import stack_export
from placement.stacks.models import Stack


class ManifestFileSerializer(serializers.Serializer):
    path = serializers.CharField()
    kind = serializers.ChoiceField(choices=["manifests", "helm-values", "text"])
    chart = serializers.CharField(allow_null=True, help_text="Helm chart (project) for helm-values files")
    note = serializers.CharField()
    content = serializers.CharField(help_text="The file as YAML (multi-document for manifests) or text")
    objects = serializers.ListField(child=serializers.DictField(), help_text="Kubernetes objects of a manifests file")
    values = serializers.DictField(allow_null=True, help_text="Helm values of a helm-values file")


class ManifestsSerializer(serializers.Serializer):
    stack = serializers.IntegerField()
    name = serializers.CharField()
    source = serializers.CharField(help_text="Which run or scenario the numbers come from")
    scenario = serializers.CharField()
    run = serializers.IntegerField(allow_null=True)
    targets = serializers.DictField(child=serializers.CharField(), help_text="upstream project -> version the objects target")
    files = ManifestFileSerializer(many=True)


MANIFESTS = """The Kubernetes objects and Helm values that make a saved stack real, per pool and per chosen
project, with the quotas, MIG layouts and policies the simulator ran.

Numbers come from `run` (a run of this stack), else `scenario_name` (a built-in scenario with the
stack laid onto it), else the stack's latest succeeded run, else a default scenario for its pools."""


class StackManifests(AtlasViewMixin, generics.GenericAPIView):
    serializer_class = ManifestsSerializer
    filter_backends: list = []
    pagination_class = None

    @extend_schema(
        description=MANIFESTS,
        parameters=[OpenApiParameter("run", int, required=False), OpenApiParameter("scenario_name", str, required=False)],
        responses=ManifestsSerializer,
    )
    def get(self, request, pk: int):
        stack = get_object_or_404(Stack, pk=pk)
        result = stack_export(stack, run_id=request.query_params.get("run"), scenario_name=request.query_params.get("scenario_name"))
        export = result.export
        return Response({
            "stack": stack.pk, "name": export.name, "source": result.source, "scenario": result.scenario_name,
            "run": result.run.pk if result.run else None, "targets": export.targets,
            "files": [{"path": f.path, "kind": f.kind, "chart": f.chart, "note": f.note, "content": f.render(),
                       "objects": f.objects, "values": f.values} for f in export.files],
        })
