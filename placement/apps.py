from django.apps import AppConfig


class PlacementConfig(AppConfig):
    name = "placement"
    verbose_name = "GPU Placement Atlas"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.backends.signals import connection_created

        from placement.catalog.selectors.state import install_write_watch

        # Writes to the tables the catalog state is drawn from move it for every process.
        connection_created.connect(install_write_watch, dispatch_uid="atlas-catalog-state-writes")
