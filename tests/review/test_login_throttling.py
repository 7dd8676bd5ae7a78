"""Login throttling (django-axes): /login/, /admin/login/ and API token failures lock the
username + address pair after AXES_FAILURE_LIMIT failures, even for the right password."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.api.conftest import assert_error_body
from tests.conftest import make_user

pytestmark = pytest.mark.django_db

LIMIT = 5


@pytest.fixture(autouse=True)
def throttling(settings):
    settings.AXES_ENABLED = True
    settings.AXES_FAILURE_LIMIT = LIMIT


def _login(path: str, username: str, password: str, address: str = "10.0.0.1"):
    client = Client(REMOTE_ADDR=address)
    client.get(path)  # the CSRF cookie, as a browser would have it
    return client, client.post(path, {"username": username, "password": password, "next": "/"})


@pytest.mark.parametrize("path", ["/login/", "/admin/login/"])
def test_the_right_password_is_refused_after_too_many_wrong_ones(path):
    make_user("alice", "architect", is_staff=True)
    for _ in range(LIMIT - 1):
        _, response = _login(path, "alice", "wrong")
        assert response.status_code == 200  # the form again, with its error
    _, response = _login(path, "alice", "wrong")
    assert response.status_code == 429
    client, response = _login(path, "alice", "pw-alice")
    assert response.status_code == 429 and "Too many failed logins" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_a_lockout_holds_for_that_address_only_and_a_success_before_it_resets_the_count():
    make_user("bob", "architect")
    for _ in range(LIMIT - 1):
        _login("/login/", "bob", "wrong")
    _, response = _login("/login/", "bob", "pw-bob")
    assert response.status_code == 302
    for _ in range(LIMIT):
        _login("/login/", "bob", "wrong")
    assert _login("/login/", "bob", "pw-bob")[1].status_code == 429
    client, response = _login("/login/", "bob", "pw-bob", address="10.0.0.2")
    assert response.status_code == 302 and client.session["_auth_user_id"]


def test_bad_api_tokens_are_throttled_per_address_with_the_json_error_body():
    user = make_user("carol", "architect")
    good = Token.objects.create(user=user).key
    guesser = APIClient(REMOTE_ADDR="10.0.0.3")
    for i in range(LIMIT):
        guesser.credentials(HTTP_AUTHORIZATION=f"Token {'0' * 39}{i}")
        assert_error_body(guesser.get("/api/v1/projects/"), 401)
    guesser.credentials(HTTP_AUTHORIZATION=f"Token {good}")
    body = assert_error_body(guesser.get("/api/v1/projects/"), 429)
    assert "Too many failed authentication attempts" in body["detail"]
    elsewhere = APIClient(REMOTE_ADDR="10.0.0.4")
    elsewhere.credentials(HTTP_AUTHORIZATION=f"Token {good}")
    assert elsewhere.get("/api/v1/projects/").status_code == 200


PROXY = "10.9.9.9"  # the TLS proxy production requires: every request arrives from it


def _through_proxy(client_address: str, token: str, spoofed: str = "") -> APIClient:
    forwarded = f"{spoofed}, {client_address}" if spoofed else client_address
    client = APIClient(REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR=forwarded)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


def test_behind_the_trusted_proxy_bad_tokens_lock_out_the_guesser_not_another_users_valid_token(settings):
    settings.ATLAS_TRUSTED_PROXY_COUNT = 1
    good = Token.objects.create(user=make_user("dave", "architect")).key
    for i in range(LIMIT):
        # A guesser that also forges X-Forwarded-For: the proxy appends the real address.
        guess = _through_proxy("203.0.113.5", f"{'0' * 39}{i}", spoofed=f"198.51.100.{i}")
        assert_error_body(guess.get("/api/v1/projects/"), 401)
    assert_error_body(_through_proxy("203.0.113.5", good).get("/api/v1/projects/"), 429)
    assert _through_proxy("198.51.100.7", good).get("/api/v1/projects/").status_code == 200
