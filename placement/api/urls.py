from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView

from placement.access import api as tokens
from placement.api.docs import AtlasSwaggerView, OfflineRedocView
from placement.api.root import ApiRoot
from placement.catalog import api as catalog
from placement.common.errors import api_not_found
from placement.decisions import api as decisions
from placement.deploy import api as deploy
from placement.evidence.api import evaluation
from placement.evidence.api import runs as evidence
from placement.review import api as review
from placement.stacks import api as rules

v1 = [
    path("", ApiRoot.as_view(), name="api-root"),
    # catalog
    path("maps/", catalog.MapList.as_view(), name="api-map-list"),
    path("maps/<slug:slug>/", catalog.MapDetail.as_view(), name="api-map-detail"),
    path("layers/", catalog.LayerList.as_view(), name="api-layer-list"),
    path("capabilities/", catalog.CapabilityList.as_view(), name="api-capability-list"),
    path("capabilities/<slug:slug>/", catalog.CapabilityDetail.as_view(), name="api-capability-detail"),
    path("profiles/", catalog.ProfileList.as_view(), name="api-profile-list"),
    path("scenarios/", catalog.ScenarioList.as_view(), name="api-scenario-list"),
    path("projects/", catalog.ProjectList.as_view(), name="api-project-list"),
    path("projects/<slug:slug>/", catalog.ProjectDetailView.as_view(), name="api-project-detail"),
    path("projects/<slug:slug>/revisions/", catalog.ProjectRevisionList.as_view(), name="api-project-revisions"),
    path("placements/", catalog.PlacementList.as_view(), name="api-placement-list"),
    # review
    path("revisions/", review.RevisionList.as_view(), name="api-revision-list"),
    path("revisions/<int:pk>/", review.RevisionDetail.as_view(), name="api-revision-detail"),
    path("revisions/<int:pk>/accept/", review.RevisionAccept.as_view(), name="api-revision-accept"),
    path("revisions/<int:pk>/reject/", review.RevisionReject.as_view(), name="api-revision-reject"),
    path("revisions/<int:pk>/rebase/", review.RevisionRebase.as_view(), name="api-revision-rebase"),
    # rules
    path("compare/", rules.CompareView.as_view(), name="api-compare"),
    path("misuse/", rules.MisuseView.as_view(), name="api-misuse"),
    path("stacks/compose/", rules.ComposeView.as_view(), name="api-compose"),
    path("stacks/evaluate/", evaluation.EvaluateView.as_view(), name="api-evaluate"),
    path("stacks/evaluate/<int:pk>/", evaluation.EvaluationDetail.as_view(), name="api-evaluation-detail"),
    path("stacks/compatible/", rules.CompatibleView.as_view(), name="api-compatible"),
    # stacks and evidence
    path("stacks/", evidence.StackList.as_view(), name="api-stack-list"),
    path("stacks/<int:pk>/", evidence.StackDetail.as_view(), name="api-stack-detail"),
    path("stacks/<int:pk>/evidence/", evidence.StackEvidence.as_view(), name="api-stack-evidence"),
    path("stacks/<int:pk>/plan/", evidence.StackPlan.as_view(), name="api-stack-plan"),
    path("stacks/<int:pk>/manifests/", deploy.StackManifests.as_view(), name="api-stack-manifests"),
    path("simulations/", evidence.SimulationList.as_view(), name="api-simulation-list"),
    path("simulations/<int:pk>/", evidence.SimulationDetail.as_view(), name="api-simulation-detail"),
    # decision records, radar, webhooks
    path("decisions/", decisions.DecisionList.as_view(), name="api-decision-list"),
    path("decisions/<int:pk>/", decisions.DecisionDetail.as_view(), name="api-decision-detail"),
    path("decisions/<int:pk>/accept/", decisions.DecisionAccept.as_view(), name="api-decision-accept"),
    path("decisions/<int:pk>/reject/", decisions.DecisionReject.as_view(), name="api-decision-reject"),
    path("decisions/<int:pk>/rerun/", decisions.DecisionRerun.as_view(), name="api-decision-rerun"),
    path("radar/", decisions.RadarView.as_view(), name="api-radar"),
    path("webhooks/", decisions.WebhookList.as_view(), name="api-webhook-list"),
    path("webhooks/<int:pk>/deliveries/", decisions.WebhookDeliveries.as_view(), name="api-webhook-deliveries"),
    # tokens
    path("tokens/", tokens.TokenView.as_view(), name="api-token"),
    path("tokens/grants/", tokens.TokenGrantView.as_view(), name="api-token-grant"),
]

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", AtlasSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("redoc/", OfflineRedocView.as_view(url_name="api-schema"), name="api-redoc"),
    path("v1/", include(v1)),
    # Anything else under /api/ is a 404 in the API's error format (see api_not_found).
    re_path(r"^[\s\S]*$", api_not_found),
]
