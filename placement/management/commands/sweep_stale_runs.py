from django.core.management.base import BaseCommand

from placement.evidence.services.runs import simulation_fail_stale, simulation_recover_queued


class Command(BaseCommand):
    help = ("Requeue or fail simulation runs whose worker stopped reporting progress, re-send or fail runs "
            "queued but never picked up (run it from cron).")

    def handle(self, *args, **options):
        counts = simulation_fail_stale()
        queued = simulation_recover_queued()
        self.stdout.write(
            f"requeued {counts['requeued']}, failed {counts['failed']}; "
            f"queued runs re-sent {queued['resent']}, failed {queued['failed']}")
