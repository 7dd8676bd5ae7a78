"""Outbound HTTP that stays outbound (issue 37.4): webhook URLs are resolved and refused when any
address is loopback, link-local, private, multicast, reserved, unspecified or otherwise not
global (IPv4 and IPv6, IPv4-mapped/compatible, 6to4 and NAT64 forms judged by the IPv4 inside);
the connection is made to an address checked at connection time (a name that re-resolves to an
inner address, DNS rebinding, is refused then); redirects are never followed (http.client does not
follow them). An operator who needs a private target lists its network in
ATLAS_WEBHOOK_ALLOWED_NETWORKS. Errors are short categories, never the inner address or port.

No Django here: callers pass the allow-list.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
from urllib.parse import urlsplit

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
NAT64 = ipaddress.ip_network("64:ff9b::/96")


class OutboundRefused(ValueError):
    """A URL or address the Atlas will not send to; the message is safe to show."""


def _embedded_ipv4(address: Address) -> ipaddress.IPv4Address | None:
    if address.version != 6:
        return None
    if address.ipv4_mapped:
        return address.ipv4_mapped
    if address.sixtofour:
        return address.sixtofour
    if address in NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if int(address) >> 32 == 0 and int(address) > 1:  # deprecated IPv4-compatible ::a.b.c.d
        return ipaddress.IPv4Address(int(address))
    return None


def address_problem(address: Address, allowed: list) -> str | None:
    """Why `address` may not be a webhook target, or None."""
    if any(address in network for network in allowed if network.version == address.version):
        return None
    inner = _embedded_ipv4(address)
    if inner is not None:
        return address_problem(inner, allowed)
    for test, what in (("is_loopback", "loopback"), ("is_link_local", "link-local"), ("is_multicast", "multicast"),
                       ("is_unspecified", "unspecified"), ("is_reserved", "reserved"), ("is_private", "private")):
        if getattr(address, test):
            return f"a {what} address"
    if not address.is_global:
        return "not a public address"
    return None


def allowed_networks(values) -> list:
    return [ipaddress.ip_network(v, strict=False) for v in values or ()]


def _resolve(host: str, port: int) -> list[Address]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise OutboundRefused("the host name does not resolve") from None
    return list(dict.fromkeys(ipaddress.ip_address(info[4][0].split("%")[0]) for info in infos))


def vetted_addresses(host: str, port: int, allowed: list) -> list[Address]:
    """Every address `host` resolves to, or OutboundRefused if any of them is not allowed."""
    addresses = _resolve(host, port)
    if not addresses:
        raise OutboundRefused("the host name does not resolve")
    for address in addresses:
        if problem := address_problem(address, allowed):
            raise OutboundRefused(f"the host resolves to {problem}")
    return addresses


def check_url(url: str, allowed: list) -> None:
    """Refuse a URL that is not http(s) or whose host resolves to an inner address."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise OutboundRefused("an http(s) URL with a host")
    if parts.username or parts.password:
        raise OutboundRefused("a URL without credentials in it")
    vetted_addresses(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80), allowed)


class _Vetted:
    """Connect to an address vetted now, at connection time, not when the URL was saved."""

    allowed: list = []

    def connect(self):
        addresses = vetted_addresses(self.host, self.port, self.allowed)
        last = None
        for address in addresses:
            try:
                self.sock = socket.create_connection((str(address), self.port), self.timeout)
                break
            except OSError as exc:
                last = exc
        else:
            raise last or OSError("no address")
        if isinstance(self, http.client.HTTPSConnection):
            self.sock = self._context.wrap_socket(self.sock, server_hostname=self.host)


class _HTTP(_Vetted, http.client.HTTPConnection):
    pass


class _HTTPS(_Vetted, http.client.HTTPSConnection):
    pass


def post(url: str, body: bytes, headers: dict[str, str], *, timeout: float, allowed: list) -> int:
    """POST once; the status code (a 3xx is returned as is, never followed). Raises
    OutboundRefused with a short reason that names no inner address."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise OutboundRefused("an http(s) URL with a host")
    cls = _HTTPS if parts.scheme == "https" else _HTTP
    kwargs = {"context": ssl.create_default_context()} if parts.scheme == "https" else {}
    connection = cls(parts.hostname, parts.port, timeout=timeout, **kwargs)
    connection.allowed = allowed
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        connection.request("POST", path, body=body, headers=headers)
        return connection.getresponse().status
    except OutboundRefused:
        raise
    except (TimeoutError, socket.timeout):
        raise OutboundRefused("timed out") from None
    except ConnectionRefusedError:
        raise OutboundRefused("connection refused") from None
    except ssl.SSLError:
        raise OutboundRefused("TLS handshake failed") from None
    except (OSError, http.client.HTTPException):
        raise OutboundRefused("could not connect") from None
    finally:
        connection.close()
