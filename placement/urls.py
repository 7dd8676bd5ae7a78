from django.urls import path

from placement.views import assets, catalog, evidence, review, stacks

urlpatterns = [
    path("", catalog.home, name="home"),
    path("projects/", catalog.project_list, name="project-list"),
    path("projects/new/", catalog.project_create, name="project-create"),
    path("projects/<slug:slug>/", catalog.project_detail, name="project-detail"),
    path("projects/<slug:slug>/edit/", catalog.project_edit, name="project-edit"),
    path("projects/<slug:slug>/history/", review.project_history, name="project-history"),
    path("review/", review.review_queue, name="review-queue"),
    path("revisions/<int:pk>/", review.revision_detail, name="revision-detail"),
    path("revisions/<int:pk>/edit/", review.revision_edit, name="revision-edit"),
    path("revisions/<int:pk>/accept/", review.revision_accept, name="revision-accept"),
    path("revisions/<int:pk>/reject/", review.revision_reject, name="revision-reject"),
    path("revisions/<int:pk>/rebase/", review.revision_rebase, name="revision-rebase"),
    path("revisions/<int:pk>/restore/", review.revision_restore, name="revision-restore"),
    path("compare/", stacks.compare, name="compare"),
    path("compose/", stacks.compose, name="compose"),
    path("stacks/", stacks.stack_list, name="stack-list"),
    path("stacks/save/", stacks.stack_save, name="stack-save"),
    path("stacks/compare/", evidence.stack_compare, name="stack-compare"),
    path("stacks/compare/run/", evidence.stack_compare_run, name="stack-compare-run"),
    path("stacks/<int:pk>/", stacks.stack_detail, name="stack-detail"),
    path("stacks/<int:pk>/simulate/", evidence.simulation_start, name="stack-simulate"),
    path("sweeps/", evidence.sweep_start, name="sweep-start"),
    path("sweeps/<int:pk>/", evidence.sweep_detail, name="sweep-detail"),
    path("runs/<int:pk>/", evidence.run_detail, name="run-detail"),
    path("runs/<int:pk>/progress/", evidence.run_progress, name="run-progress"),
    path("runs/<int:pk>/scenario.json", evidence.run_scenario_download, name="run-scenario"),
    path("assets/<str:name>", assets.vendored_asset, name="vendored-asset"),
]
