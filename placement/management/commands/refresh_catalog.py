import os
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError

from placement.access.services import ARCHITECT
from placement.catalog.services.refresh import catalog_refresh
from placement.catalog.upstream import GitHubLandscapeClient, RecordedFetch, http_fetch

BOT = "catalog-refresh"


class Command(BaseCommand):
    help = (
        "Read every accepted entry's upstream state (latest release, licence, archived, CNCF status) and file each "
        "difference as a proposal in the review queue, with the source. GitHub REST API and the CNCF landscape by "
        "default (GITHUB_TOKEN raises the rate limit); --recorded DIR reads recorded responses instead (offline)."
    )

    def add_arguments(self, parser):
        parser.add_argument("slugs", nargs="*", help="only these entries (default: every accepted entry)")
        parser.add_argument("--recorded", type=Path, default=None, help="directory holding responses.json (URL -> body)")
        parser.add_argument("--as", dest="username", default=BOT,
                            help=f"the architect or reviewer who files the proposals (default: {BOT}, created as an architect)")

    def handle(self, *args, slugs, recorded, username, **options):
        user = self._user(username)
        try:
            fetch = RecordedFetch(recorded) if recorded else http_fetch(os.environ.get("GITHUB_TOKEN"))
        except (OSError, ValueError) as exc:
            raise CommandError(f"--recorded: cannot read {recorded}/responses.json: {exc}") from None
        report = catalog_refresh(GitHubLandscapeClient(fetch), user=user, slugs=slugs or None)
        for slug, changes in report.proposed.items():
            self.stdout.write(f"proposed {slug}: " + "; ".join(c.describe() for c in changes))
        for slug in report.already_proposed:
            self.stdout.write(f"already proposed {slug}")
        for slug, why in report.not_readable.items():
            self.stderr.write(f"skipped {slug}: {why}")
        self.stdout.write(f"{len(report.proposed)} proposal(s), {len(report.unchanged)} unchanged, "
                          f"{len(report.not_readable)} not readable")

    def _user(self, username: str):
        users = get_user_model()
        if username != BOT:
            try:
                return users.objects.get(username=username)
            except users.DoesNotExist:
                raise CommandError(f"--as: no user {username!r}") from None
        user, created = users.objects.get_or_create(username=BOT)
        if created:
            user.set_unusable_password()
            user.save()
        user.groups.add(Group.objects.get_or_create(name=ARCHITECT)[0])
        return user
