"""API fixtures: clients authenticated by session or by token, with or without a write grant."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from placement.access.models import ApiAccess


def token_client(user, *, can_write: bool = False) -> APIClient:
    token, _ = Token.objects.get_or_create(user=user)
    if can_write:
        ApiAccess.objects.update_or_create(user=user, defaults={"token_can_write": True})
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def session_client(user, *, csrf: bool = False) -> APIClient:
    client = APIClient(enforce_csrf_checks=csrf)
    client.force_login(user)
    return client


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Users are made per test; PBKDF2 at full strength would spend most of the suite hashing."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def api(db) -> APIClient:
    return APIClient()


def assert_error_body(response, status: int, *fields: str) -> dict:
    """Every 4xx has the one shape {"detail": str, "errors": {field: [str]}}."""
    assert response.status_code == status, (response.status_code, response.content[:500])
    body = response.json()
    assert set(body) == {"detail", "errors"}, body
    assert isinstance(body["detail"], str) and body["detail"]
    assert body["errors"] and all(
        isinstance(k, str) and isinstance(v, list) and v and all(isinstance(m, str) for m in v)
        for k, v in body["errors"].items()
    ), body
    for field in fields:
        assert field in body["errors"], (field, body)
    return body
