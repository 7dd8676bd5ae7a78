"""Outgoing webhooks are signed, written with the change (outbox) and retried with backoff until
they are delivered or failed with the reason; the Atom feed lists decisions and catalog changes."""

from __future__ import annotations

import hashlib
import hmac
import json
import socket
import threading
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.utils import timezone

from placement.decisions.document import DecisionDocument
from placement.decisions.models import WebhookDelivery
from placement.decisions.services import decisions as services
from placement.decisions.services import webhooks
from tests.decisions.conftest import proposal

pytestmark = pytest.mark.django_db


class Receiver:
    """A real HTTP endpoint on localhost that records what it was sent."""

    def __init__(self, status: int = 204):
        received = self.received = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                received.append((dict(self.headers), body))
                self.send_response(status)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/nobody-listens"


@pytest.fixture(autouse=True)
def loopback_allowed(settings):
    """These receivers listen on 127.0.0.1, which only an operator's allow-list admits."""
    settings.ATLAS_WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]


@pytest.fixture
def admin(db):
    from tests.conftest import make_user

    return make_user("root", is_superuser=True, is_staff=True)


def _accept_a_record(stacks, architect, reviewer, capture):
    with capture(execute=True):
        record = services.decision_propose(DecisionDocument.model_validate(proposal(stacks)), user=architect)
        services.decision_accept(record, user=reviewer)
    return record


def test_accepted_decision_is_posted_signed_to_the_subscribed_webhook(stacks, architect, reviewer, admin,
                                                                     django_capture_on_commit_callbacks):
    receiver = Receiver()
    try:
        hook = webhooks.webhook_create(user=admin, name="board channel", url=receiver.url, events=["decision.accepted"])
        record = _accept_a_record(stacks, architect, reviewer, django_capture_on_commit_callbacks)
    finally:
        receiver.close()
    (headers, body), = receiver.received
    signed = f"{headers['X-Atlas-Timestamp']}.{headers['X-Atlas-Delivery']}.".encode() + body
    expected = "sha256=" + hmac.new(hook.secret.encode(), signed, hashlib.sha256).hexdigest()
    assert headers["X-Atlas-Signature-256"] == expected
    assert headers["X-Atlas-Event"] == "decision.accepted"
    payload = json.loads(body)
    assert payload["data"]["id"] == record.pk and payload["data"]["rings"][0]["project"] == "kueue"
    delivery = WebhookDelivery.objects.get()
    assert delivery.status == WebhookDelivery.DELIVERED and delivery.attempts == 1 and delivery.response_code == 204


def test_a_receiver_that_is_down_loses_nothing_retried_with_backoff_then_failed_with_the_reason(
    stacks, architect, reviewer, admin, settings, django_capture_on_commit_callbacks
):
    settings.ATLAS_WEBHOOK_MAX_ATTEMPTS = 3
    webhooks.webhook_create(user=admin, name="down", url=_closed_port_url(), events=["decision.accepted"])
    _accept_a_record(stacks, architect, reviewer, django_capture_on_commit_callbacks)
    delivery = WebhookDelivery.objects.get()
    # The first attempt ran on commit (eager Celery): refused, kept pending with a backoff.
    assert delivery.status == WebhookDelivery.PENDING and delivery.attempts == 1
    assert delivery.last_error == "connection refused"
    assert delivery.next_attempt_at > timezone.now() + timedelta(seconds=5)
    assert webhooks.webhook_redeliver_due() == 0, "not due before its backoff"
    later = timezone.now() + timedelta(hours=2)
    assert webhooks.webhook_deliver(delivery.pk, now=later)[0] == webhooks.RETRY
    assert webhooks.webhook_deliver(delivery.pk, now=later)[0] == WebhookDelivery.FAILED
    delivery.refresh_from_db()
    assert delivery.status == WebhookDelivery.FAILED and delivery.attempts == 3
    assert delivery.last_error.startswith("gave up after 3 attempts")


def test_a_receiver_answering_500_is_retried_and_the_code_is_logged(admin, settings):
    settings.ATLAS_WEBHOOK_MAX_ATTEMPTS = 2
    receiver = Receiver(status=500)
    try:
        webhooks.webhook_create(user=admin, name="flaky", url=receiver.url, events=["catalog.changed"])
        (pk,) = webhooks.event_publish("catalog.changed", {"project": "kueue"})
        assert webhooks.webhook_deliver(pk)[0] == webhooks.RETRY
        assert webhooks.webhook_deliver(pk)[0] == WebhookDelivery.FAILED
    finally:
        receiver.close()
    delivery = WebhookDelivery.objects.get(pk=pk)
    assert delivery.response_code == 500 and "HTTP 500" in delivery.last_error and len(receiver.received) == 2


def test_broker_down_leaves_the_delivery_pending_for_the_sweeper(admin, monkeypatch, django_capture_on_commit_callbacks):
    from placement.decisions import tasks

    def broker_down(*args, **kwargs):
        raise ConnectionRefusedError("broker not listening")

    monkeypatch.setattr(tasks.deliver_webhook, "apply_async", broker_down)
    webhooks.webhook_create(user=admin, name="h", url=_closed_port_url(), events=["catalog.changed"])
    with django_capture_on_commit_callbacks(execute=True):
        (pk,) = webhooks.event_publish("catalog.changed", {"project": "kueue"})
    delivery = WebhookDelivery.objects.get(pk=pk)
    assert delivery.status == WebhookDelivery.PENDING and delivery.attempts == 0
    monkeypatch.undo()
    assert webhooks.webhook_redeliver_due() == 1


def test_only_admins_create_webhooks_and_bad_fields_are_named(admin, reviewer):
    with pytest.raises(PermissionDenied):
        webhooks.webhook_create(user=reviewer, name="x", url="https://example.org/h", events=["decision.accepted"])
    with pytest.raises(ValidationError) as exc:
        webhooks.webhook_create(user=admin, name="", url="ftp://x", events=["everything"])
    assert {"name", "url", "events"} <= set(exc.value.message_dict)


def test_atom_feed_lists_accepted_decisions_and_catalog_changes(client, stacks, architect, reviewer,
                                                                django_capture_on_commit_callbacks):
    record = _accept_a_record(stacks, architect, reviewer, django_capture_on_commit_callbacks)
    response = client.get("/feed/atom/")
    assert response.status_code == 200 and response["Content-Type"].startswith("application/atom+xml")
    text = response.content.decode()
    assert f"ADR-{record.pk} Pool training runs whole GPUs + Kueue" in text
    assert "Catalog change: Kueue version" in text
