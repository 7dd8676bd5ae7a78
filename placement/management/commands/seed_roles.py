from django.conf import settings
from django.contrib.auth.models import Group, User
from django.core.management.base import BaseCommand, CommandError

from placement.access.services import ARCHITECT, READER, REVIEWER, ROLES

DEMO_PASSWORD = "atlas-demo-password"


class Command(BaseCommand):
    help = "Create the reader, architect and reviewer groups; with --demo-users, one user per role (DEBUG only)."

    def add_arguments(self, parser):
        parser.add_argument("--demo-users", action="store_true")

    def handle(self, *args, demo_users=False, **options):
        for role in ROLES:
            Group.objects.get_or_create(name=role)
        if not demo_users:
            return
        if not settings.DEBUG:
            raise CommandError("demo users are only for the embedded development setup (DJANGO_DEBUG=1)")
        for username, role in (("reader", READER), ("architect", ARCHITECT), ("reviewer", REVIEWER)):
            user, created = User.objects.get_or_create(username=username)
            if created:
                user.set_password(DEMO_PASSWORD)
                user.save()
            user.groups.add(Group.objects.get(name=role))
        if not User.objects.filter(username="admin").exists():
            User.objects.create_superuser("admin", "admin@example.invalid", DEMO_PASSWORD)
        self.stdout.write(f"demo users reader, architect, reviewer, admin; password {DEMO_PASSWORD!r}")
