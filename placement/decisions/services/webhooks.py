"""Outgoing webhooks: an outbox row per (event, webhook) written in the same transaction as the
change, a signed POST per attempt, exponential backoff, then failed with the reason.

Signature (replay-proof, as Stripe's): `X-Atlas-Signature-256: sha256=<hex HMAC-SHA256 with the
webhook's secret of "<X-Atlas-Timestamp>.<X-Atlas-Delivery>.<body>">`; the timestamp is the
attempt's Unix time, so a receiver refuses a delivery older than its tolerance window
(WEBHOOK_TOLERANCE_SECONDS, documented in docs/production.md) and one whose delivery id it has
already seen (examples/webhook_receiver.py enforces both). Targets are checked by
placement.decisions.outbound (no inner addresses, checked again at connection time, no redirects).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.validators import URLValidator
from django.db import transaction
from django.utils import timezone

from placement.common.queue import QueueUnavailable, publish, task
from placement.decisions import outbound
from placement.decisions.models import Webhook, WebhookDelivery

RETRY = "retry"
# How old a delivery a receiver should accept (seconds); the documented window (Stripe's default).
WEBHOOK_TOLERANCE_SECONDS = 300


def _max_attempts() -> int:
    return int(getattr(settings, "ATLAS_WEBHOOK_MAX_ATTEMPTS", 6))


def _timeout() -> float:
    return float(getattr(settings, "ATLAS_WEBHOOK_TIMEOUT_SECONDS", 5))


def backoff_seconds(attempts: int) -> int:
    """10 s, 30 s, 90 s, ... after the first, second, third failed attempt (capped at one hour)."""
    return min(3600, 10 * 3 ** max(0, attempts - 1))


def sign(secret: str, timestamp: int, delivery_id: str, body: bytes) -> str:
    """The signature of one attempt: the timestamp and the delivery id are signed with the body."""
    message = f"{timestamp}.{delivery_id}.".encode() + body
    return "sha256=" + hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def _allowed() -> list:
    return outbound.allowed_networks(getattr(settings, "ATLAS_WEBHOOK_ALLOWED_NETWORKS", ()))


def _require_admin(user) -> None:
    if not (user and user.is_authenticated and user.is_superuser):
        raise PermissionDenied("only admins manage webhooks")


@transaction.atomic
def webhook_create(*, user, name: str, url: str, events: list[str], secret: str = "") -> Webhook:
    _require_admin(user)
    errors: dict[str, list[str]] = {}
    name = (name or "").strip()
    if not name or len(name) > 200:
        errors["name"] = ["A name of 1 to 200 characters."]
    try:
        URLValidator(schemes=["http", "https"])(url or "")
        if len(url) > 500:
            raise ValidationError("too long")
        outbound.check_url(url, _allowed())
    except ValidationError:
        errors["url"] = ["An http(s) URL of at most 500 characters."]
    except outbound.OutboundRefused as exc:
        if str(exc) != "the host name does not resolve":  # checked again at every delivery
            errors["url"] = [f"Not a webhook target: {exc} (ATLAS_WEBHOOK_ALLOWED_NETWORKS lists allowed private networks)."]
    unknown = [e for e in events or [] if e not in Webhook.EVENTS]
    if not events or unknown:
        errors["events"] = [f"Pick from {', '.join(Webhook.EVENTS)}" + (f"; unknown: {', '.join(map(str, unknown))}" if unknown else ".")]
    if secret and not 16 <= len(secret) <= 128:
        errors["secret"] = ["A secret of 16 to 128 characters, or leave it empty to get one."]
    if errors:
        raise ValidationError(errors)
    return Webhook.objects.create(
        name=name, url=url, events=list(dict.fromkeys(events)), secret=secret or secrets.token_hex(24), created_by=user
    )


def event_publish(event: str, payload: dict) -> list[int]:
    """Queue `event` for every active webhook that subscribed. Call inside the writing transaction:
    the outbox rows commit with the change, and the sends start only after the commit."""
    body = {"event": event, "sent_at": timezone.now().isoformat(), "data": payload}
    ids = [
        WebhookDelivery.objects.create(webhook=hook, event=event, payload=body, next_attempt_at=timezone.now()).pk
        for hook in Webhook.objects.filter(active=True)
        if event in hook.events
    ]
    if ids:
        transaction.on_commit(lambda: _enqueue(ids))
    return ids


def _enqueue(ids: list[int], countdown: int | None = None) -> None:
    deliver_webhook = task("placement.deliver_webhook")
    try:
        publish(lambda producer: [deliver_webhook.apply_async(args=[pk], countdown=countdown, producer=producer, retry=False)
                                   for pk in ids])
    except QueueUnavailable:  # broker down or hung: the outbox rows stay pending; the sweeper sends them later
        pass


def webhook_deliver(delivery_id: int, *, now=None) -> tuple[str, int]:
    """One attempt. Returns (status, seconds until the next attempt): delivered, failed, or retry."""
    now = now or timezone.now()
    with transaction.atomic():
        delivery = WebhookDelivery.objects.select_for_update().select_related("webhook").filter(pk=delivery_id).first()
        if delivery is None or delivery.status != WebhookDelivery.PENDING:
            return ("skipped", 0)
        delivery.attempts += 1
        # A lease: the sweeper leaves it alone while this attempt runs, and retries it if we die.
        delivery.next_attempt_at = now + timedelta(seconds=4 * _timeout())
        delivery.save(update_fields=["attempts", "next_attempt_at"])
        hook = delivery.webhook
        body = json.dumps(delivery.payload, sort_keys=True, separators=(",", ":")).encode()
        attempts = delivery.attempts
    timestamp = int(time.time())
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "gpu-placement-atlas-webhook",
        "X-Atlas-Event": delivery.event,
        "X-Atlas-Delivery": str(delivery.pk),
        "X-Atlas-Timestamp": str(timestamp),
        "X-Atlas-Signature-256": sign(hook.secret, timestamp, str(delivery.pk), body),
    }
    code, error = None, ""
    try:
        code = outbound.post(hook.url, body, headers, timeout=_timeout(), allowed=_allowed())
    except outbound.OutboundRefused as exc:
        error = str(exc)
    if code is not None and not 200 <= code < 300:
        error = f"HTTP {code}" + (" (redirects are not followed)" if 300 <= code < 400 else "")
    with transaction.atomic():
        delivery = WebhookDelivery.objects.select_for_update().get(pk=delivery_id)
        delivery.response_code = code
        if code is not None and 200 <= code < 300:
            delivery.status, delivery.delivered_at, delivery.last_error = WebhookDelivery.DELIVERED, timezone.now(), ""
            delivery.save()
            return (WebhookDelivery.DELIVERED, 0)
        delivery.last_error = error or f"HTTP {code}"
        if attempts >= _max_attempts():
            delivery.status = WebhookDelivery.FAILED
            delivery.last_error = f"gave up after {attempts} attempts: {delivery.last_error}"
            delivery.save()
            return (WebhookDelivery.FAILED, 0)
        delay = backoff_seconds(attempts)
        delivery.next_attempt_at = now + timedelta(seconds=delay)
        delivery.save()
        return (RETRY, delay)


def webhook_redeliver_due(*, now=None) -> int:
    """Send again what is pending and due (a retry whose message was lost, a broker that was down).
    Called by the `sweep_stale_runs` command."""
    now = now or timezone.now()
    ids = list(
        WebhookDelivery.objects.filter(status=WebhookDelivery.PENDING, next_attempt_at__lte=now).values_list("pk", flat=True)[:500]
    )
    _enqueue(ids)
    return len(ids)
