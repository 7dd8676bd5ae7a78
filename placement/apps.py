from django.apps import AppConfig


class PlacementConfig(AppConfig):
    name = "placement"
    verbose_name = "GPU Placement Atlas"
    default_auto_field = "django.db.models.BigAutoField"
