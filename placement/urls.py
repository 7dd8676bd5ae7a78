from django.urls import path

from placement.views import assets, catalog, review

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
    path("assets/<str:name>", assets.vendored_asset, name="vendored-asset"),
]
