"""The client's address as the deployment's trusted proxies report it (issue 37.3).

Behind the TLS proxy production requires, REMOTE_ADDR is the proxy's address for everybody, so a
lockout keyed on it locks every client out at once. With ATLAS_TRUSTED_PROXY_COUNT = N (the number
of proxies in front of the Atlas that append to X-Forwarded-For, or the header named by
ATLAS_FORWARDED_FOR_HEADER), the client is the N-th address from the right: each trusted proxy
appends the address it received the request from, so entries a client wrote itself (further left)
are never believed. N = 0 (default, no proxy) uses REMOTE_ADDR. django-axes (logins and API token
failures) calls this through AXES_CLIENT_IP_CALLABLE.
"""

from __future__ import annotations

import ipaddress

from django.conf import settings


def client_address(request) -> str | None:
    remote = request.META.get("REMOTE_ADDR")
    count = getattr(settings, "ATLAS_TRUSTED_PROXY_COUNT", 0)
    if count <= 0:
        return remote
    header = getattr(settings, "ATLAS_FORWARDED_FOR_HEADER", "HTTP_X_FORWARDED_FOR")
    hops = [part.strip() for part in request.META.get(header, "").split(",") if part.strip()]
    if len(hops) < count:
        return remote  # fewer hops than trusted proxies: the header is not the proxies' own
    candidate = hops[-count]
    try:
        return str(ipaddress.ip_address(candidate))
    except ValueError:
        return remote
