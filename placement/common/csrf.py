"""The CSRF token a page carries, masked afresh for each response as Django masks it, at a fraction
of the cost.

Django's `get_token` draws its 32-character mask one character at a time from the system's random
source (32 system calls and a few hundred Python calls): about a fifth of the CPU of serving a
cached page. `page_token` draws the mask from one `secrets.token_bytes` call (rejection sampling,
so each of the 62 characters is equally likely) and otherwise does what `get_token` does: the
token is mask + (secret shifted by the mask), which Django's `CsrfViewMiddleware` unmasks, and the
cookie is flagged for renewal. A request without a CSRF cookie yet goes through Django's own
`get_token`, which makes the secret.
"""

from __future__ import annotations

import secrets

from django.middleware.csrf import CSRF_ALLOWED_CHARS, CSRF_SECRET_LENGTH, get_token

_CHARS = CSRF_ALLOWED_CHARS
_N = len(_CHARS)
_INDEX = {c: i for i, c in enumerate(_CHARS)}
_UNBIASED = 256 - 256 % _N  # bytes at or above this are dropped: every character equally likely


def _mask() -> list[int]:
    picks: list[int] = []
    while len(picks) < CSRF_SECRET_LENGTH:
        picks += [b % _N for b in secrets.token_bytes(CSRF_SECRET_LENGTH + 8) if b < _UNBIASED]
    return picks[:CSRF_SECRET_LENGTH]


def page_token(request) -> str:
    """A freshly masked token for this response (what `{% csrf_token %}` would write)."""
    secret = request.META.get("CSRF_COOKIE")
    if not secret or len(secret) != CSRF_SECRET_LENGTH or any(c not in _INDEX for c in secret):
        return get_token(request)
    request.META["CSRF_COOKIE_NEEDS_UPDATE"] = True  # as get_token: the cookie's expiry is renewed
    mask = _mask()
    cipher = "".join(_CHARS[(_INDEX[c] + m) % _N] for c, m in zip(secret, mask))
    return "".join(_CHARS[m] for m in mask) + cipher
