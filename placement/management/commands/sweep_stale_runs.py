from django.core.management.base import BaseCommand

from placement.services.evidence import simulation_fail_stale


class Command(BaseCommand):
    help = "Requeue or fail simulation runs whose worker stopped reporting progress (run it from cron)."

    def handle(self, *args, **options):
        counts = simulation_fail_stale()
        self.stdout.write(f"requeued {counts['requeued']}, failed {counts['failed']}")
