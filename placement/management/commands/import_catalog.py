from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from placement.catalog.lint import lint_catalog_dir
from placement.catalog.services.catalog import CatalogInvalid, catalog_import


class Command(BaseCommand):
    help = "Validate every catalog YAML file in DIR, then import them all in one transaction (or nothing)."

    def add_arguments(self, parser):
        parser.add_argument("directory", nargs="?", default=str(settings.ATLAS_CATALOG_DIR))

    def handle(self, *args, directory, **options):
        try:
            # The whole-catalog checks (lint_catalog) run before anything is written, like the schema.
            errors = lint_catalog_dir(Path(directory))
            if errors:
                raise CatalogInvalid(errors)
            projects = catalog_import(Path(directory))
        except CatalogInvalid as exc:
            for error in exc.errors:
                self.stderr.write(f"error: {error}")
            raise CommandError(f"{len(exc.errors)} error(s); nothing was imported") from None
        self.stdout.write(f"imported {len(projects)} projects from {directory}")
