import datetime as dt
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from placement.catalog.lint import DEFAULT_MAX_AGE_DAYS, lint_catalog_dir


class Command(BaseCommand):
    help = (
        "Check the catalog as a whole: capabilities claimed and ruled out, one-sided or unresolved conflicts and "
        "requires, advertised units nobody allocates, ungraded sources, entries past their as-of age."
    )

    def add_arguments(self, parser):
        parser.add_argument("directory", nargs="?", default=str(settings.ATLAS_CATALOG_DIR))
        parser.add_argument("--today", type=dt.date.fromisoformat, default=None, help="date to judge ages against (YYYY-MM-DD)")
        parser.add_argument("--max-age-days", type=int, default=DEFAULT_MAX_AGE_DAYS)

    def handle(self, *args, directory, today, max_age_days, **options):
        errors = lint_catalog_dir(Path(directory), today=today, max_age_days=max_age_days)
        for error in errors:
            self.stderr.write(f"error: {error}")
        if errors:
            raise CommandError(f"{len(errors)} finding(s) in {directory}")
        self.stdout.write(f"{directory}: catalog is clean")
