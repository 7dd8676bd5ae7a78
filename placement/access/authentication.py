"""Token authentication whose failures are throttled by django-axes, like the login pages.

Every bad token from one client counts towards the same axes lockout (the username
`AXES_API_TOKEN_USERNAME` stands for "some API token"); past AXES_FAILURE_LIMIT failures that
client gets 429 in the API's JSON error body until the cool-off ends, even with a valid token,
so guessing keys costs a cool-off per few attempts. The client is its address as the trusted
proxies report it (placement.access.client_address), so behind the production proxy the guesser is
locked out, not every user.
"""

from __future__ import annotations

from axes.handlers.proxy import AxesProxyHandler
from django.conf import settings
from django.contrib.auth.signals import user_login_failed
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication, get_authorization_header

AXES_API_TOKEN_USERNAME = "(api token)"
CREDENTIALS = {"username": AXES_API_TOKEN_USERNAME}


class TooManyAuthenticationFailures(exceptions.Throttled):
    default_detail = "Too many failed authentication attempts from this address."


def _locked(django_request) -> bool:
    return settings.AXES_ENABLED and AxesProxyHandler.is_locked(django_request, CREDENTIALS)


def _cooloff_seconds() -> int | None:
    cooloff = getattr(settings, "AXES_COOLOFF_TIME", None)
    return int(cooloff.total_seconds()) if cooloff is not None and hasattr(cooloff, "total_seconds") else None


class ThrottledTokenAuthentication(TokenAuthentication):
    def authenticate(self, request):
        auth = get_authorization_header(request).split()
        if not auth or auth[0].lower() != self.keyword.lower().encode():
            return None  # not a token request: nothing to count
        django_request = request._request
        if _locked(django_request):
            raise TooManyAuthenticationFailures(wait=_cooloff_seconds())
        try:
            return super().authenticate(request)
        except exceptions.AuthenticationFailed:
            if settings.AXES_ENABLED:
                user_login_failed.send(sender=type(self), credentials=CREDENTIALS, request=django_request)
                # The API answers in its own error body (below), not with axes' lockout page.
                django_request.axes_locked_out = False
            raise
