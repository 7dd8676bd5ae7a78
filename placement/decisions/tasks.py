"""Celery task of the decisions: one webhook delivery attempt (placement.decisions.services.webhooks)."""

from celery import shared_task

from placement.decisions.services import webhooks


@shared_task(name="placement.deliver_webhook", bind=True, acks_late=True)
def deliver_webhook(self, delivery_id: int) -> str:
    status, delay = webhooks.webhook_deliver(delivery_id)
    if status == webhooks.RETRY and not self.request.is_eager:
        # Eager mode (tests, no broker) leaves the retry to the sweeper instead of recursing now.
        self.apply_async(args=[delivery_id], countdown=delay)
    return status
