from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("login/", auth_views.LoginView.as_view(template_name="registration/login.html"), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/", include("placement.api.urls")),
    path("", include("placement.urls")),
]

# Under /api/ these answer with the API's one JSON error body (placement.common.errors).
handler400 = "placement.common.errors.bad_request"
handler500 = "placement.common.errors.server_error"
