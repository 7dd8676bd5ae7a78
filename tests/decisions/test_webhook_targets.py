"""Webhooks that cannot be turned inward (issue 37.4) and deliveries that cannot be replayed
(37.5): every inner address class is refused when the hook is saved and again at connection time
(DNS rebinding), redirects are not followed, errors name no inner address, and the documented
receiver refuses a replay and a delivery outside its window."""

from __future__ import annotations

import importlib.util
import socket
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError

from placement.decisions.models import WebhookDelivery
from placement.decisions.services import webhooks
from tests.decisions.test_webhooks_and_feed import Receiver

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]

INNER = [
    ("http://127.0.0.1:6379/", "loopback"),
    ("http://localhost/hook", "loopback"),
    ("http://[::1]/hook", "loopback"),
    ("http://[::ffff:127.0.0.1]/hook", "loopback"),           # IPv4-mapped IPv6
    ("http://[::ffff:a9fe:a9fe]/latest/meta-data", "link-local"),  # mapped 169.254.169.254
    ("http://169.254.169.254/latest/meta-data", "link-local"),
    ("http://[fe80::1]/hook", "link-local"),
    ("http://10.0.0.5/hook", "private"),
    ("http://172.16.0.1/hook", "private"),
    ("http://192.168.1.1/hook", "private"),
    ("http://[fd00::1]/hook", "private"),
    ("http://224.0.0.1/hook", "multicast"),
    ("http://[ff02::1]/hook", "multicast"),
    ("http://240.0.0.1/hook", "reserved"),
    ("http://0.0.0.0/hook", "unspecified"),
    ("http://100.64.0.1/hook", "not a public address"),     # carrier-grade NAT
    ("http://[2002:7f00:1::]/hook", "loopback"),             # 6to4 around 127.0.0.1
    ("http://[64:ff9b::a9fe:a9fe]/hook", "link-local"),      # NAT64 around 169.254.169.254
]


@pytest.fixture
def admin(db):
    from tests.conftest import make_user

    return make_user("root", is_superuser=True, is_staff=True)


@pytest.mark.parametrize(("url", "kind"), INNER, ids=[u for u, _ in INNER])
def test_an_inner_webhook_target_is_refused_naming_the_address_class(admin, url, kind):
    with pytest.raises(ValidationError) as caught:
        webhooks.webhook_create(user=admin, name="inward", url=url, events=["catalog.changed"])
    message = " ".join(caught.value.message_dict["url"])
    assert "Not a webhook target" in message and kind in message


def test_an_operator_allow_list_admits_a_private_network(admin, settings):
    settings.ATLAS_WEBHOOK_ALLOWED_NETWORKS = ["10.20.0.0/16"]
    assert webhooks.webhook_create(user=admin, name="ok", url="http://10.20.3.4/hook", events=["catalog.changed"]).pk
    with pytest.raises(ValidationError):
        webhooks.webhook_create(user=admin, name="no", url="http://10.21.3.4/hook", events=["catalog.changed"])


def _resolving(monkeypatch, name: str, address: str):
    real = socket.getaddrinfo

    def fake(host, port, *args, **kwargs):
        if host == name:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake)


def test_a_name_that_rebinds_to_loopback_is_refused_at_connection_time(admin, monkeypatch):
    receiver = Receiver()
    try:
        port = receiver.server.server_port
        hook = webhooks.webhook_create(user=admin, name="rebind", url=f"http://rebind.example:{port}/hook",
                                       events=["catalog.changed"])  # does not resolve yet: saved
        _resolving(monkeypatch, "rebind.example", "127.0.0.1")
        (pk,) = webhooks.event_publish("catalog.changed", {"project": "kueue"})
        webhooks.webhook_deliver(pk)
    finally:
        receiver.close()
    delivery = WebhookDelivery.objects.get(pk=pk)
    assert hook.pk and receiver.received == []
    assert delivery.last_error == "the host resolves to a loopback address"
    assert "127.0.0.1" not in delivery.last_error and str(port) not in delivery.last_error


def test_a_redirect_is_not_followed(admin, settings):
    settings.ATLAS_WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    target = Receiver()

    class Redirect(BaseHTTPRequestHandler):
        def do_POST(self):
            self.send_response(302)
            self.send_header("Location", target.url)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Redirect)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        webhooks.webhook_create(user=admin, name="r", url=f"http://127.0.0.1:{server.server_port}/h", events=["catalog.changed"])
        (pk,) = webhooks.event_publish("catalog.changed", {"project": "kueue"})
        webhooks.webhook_deliver(pk)
    finally:
        server.shutdown()
        server.server_close()
        target.close()
    delivery = WebhookDelivery.objects.get(pk=pk)
    assert target.received == [] and delivery.response_code == 302
    assert delivery.last_error == "HTTP 302 (redirects are not followed)"


def _documented_receiver():
    spec = importlib.util.spec_from_file_location("webhook_receiver", ROOT / "examples" / "webhook_receiver.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_documented_receiver_accepts_a_delivery_once_and_refuses_replays(admin, settings):
    settings.ATLAS_WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    receiver = Receiver()
    try:
        hook = webhooks.webhook_create(user=admin, name="signed", url=receiver.url, events=["catalog.changed"])
        (pk,) = webhooks.event_publish("catalog.changed", {"project": "kueue"})
        webhooks.webhook_deliver(pk)
    finally:
        receiver.close()
    (headers, body), = receiver.received
    example = _documented_receiver()
    assert example.TOLERANCE_SECONDS == webhooks.WEBHOOK_TOLERANCE_SECONDS
    sent_at = int(headers["X-Atlas-Timestamp"])

    fresh = example.Receiver(hook.secret)
    fresh.verify(headers, body, now=sent_at + 1)
    with pytest.raises(example.Refused, match="already received"):
        fresh.verify(headers, body, now=sent_at + 2)  # the same delivery again, inside the window
    with pytest.raises(example.Refused, match="outside the 300 s window"):
        example.Receiver(hook.secret).verify(headers, body, now=sent_at + 301)  # replayed later
    tampered = {**headers, "X-Atlas-Timestamp": str(sent_at + 600)}
    with pytest.raises(example.Refused, match="bad signature"):
        example.Receiver(hook.secret).verify(tampered, body, now=sent_at + 600)  # a fresh-looking replay
