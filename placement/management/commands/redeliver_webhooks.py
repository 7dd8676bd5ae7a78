from django.core.management.base import BaseCommand

from placement.decisions.services.webhooks import webhook_redeliver_due


class Command(BaseCommand):
    help = "Send again webhook deliveries that are pending and due (lost retry, broker was down); run it from cron."

    def handle(self, *args, **options):
        self.stdout.write(f"re-sent {webhook_redeliver_due()} deliveries")
