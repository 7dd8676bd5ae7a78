from pathlib import Path

from django.core.management.base import BaseCommand

from placement.catalog.services.catalog import catalog_export


class Command(BaseCommand):
    help = "Write every project as one YAML file per project into DIR (the import format)."

    def add_arguments(self, parser):
        parser.add_argument("directory")

    def handle(self, *args, directory, **options):
        written = catalog_export(Path(directory))
        self.stdout.write(f"exported {len(written)} projects to {directory}")
