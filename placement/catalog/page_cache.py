"""Pages and API reads drawn from the catalog: rendered once per catalog version, and answered with
a 304 when the browser already holds the current one.

`catalog_page` (page views) and `catalog_read` (API `get` methods) key everything on
`selectors.catalog_state.catalog_state()`, one query per request:

* **ETag and Last-Modified.** The ETag hashes the catalog state with what else the response
  depends on: the URL, the user, the CSRF cookie (so a login, which rotates it, never gets an
  older page's 304), the Accept header and htmx's request headers. A match answers 304 before the
  view runs.
* **Rendered once per version** (pages). The body is kept in the configured cache (Redis in real
  mode, local memory in the embedded default) under the catalog state, never with a timeout: a
  new version is a new key. What differs between users is not in the cached body: the page is
  rendered with placeholders for the CSRF token and the user name (the `donut` context processor)
  and they are filled in per request; signed-in and anonymous visitors have separate entries
  (their header differs). A request with a message to show is rendered afresh, uncached.
* **Compressed once per version.** Browsers ask for gzip, and compressing a 250 KB map page costs
  more CPU than serving it. The cached body is kept as deflate blocks, one per stretch between the
  per-request placeholders, each ending on a byte boundary (a full flush); a request's gzip body is
  those blocks with its own token and name deflated in between, the CRC and the length. The token
  is never compressed together with anything else on the page, so a BREACH-style guess at it by
  reflected input has nothing to measure.
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
import zlib
from collections import OrderedDict
from functools import wraps

from django.conf import settings
from django.contrib.messages import get_messages
from django.core.cache import cache
from django.http import HttpResponse
from django.middleware.csrf import get_token
from django.middleware.http import ConditionalGetMiddleware
from django.utils.cache import get_conditional_response, patch_cache_control, patch_vary_headers
from django.utils.html import escape
from django.utils.http import http_date

from placement.catalog.selectors.state import catalog_state, forget
from placement.common.csrf import page_token

CSRF_MARK = "atlasDonutCsrf0x7d41"
USER_MARK = "atlasDonutUser0x7d41"
_VARY_HEADERS = ("HTTP_ACCEPT", "HTTP_HX_REQUEST", "HTTP_HX_BOOSTED", "HTTP_HX_HISTORY_RESTORE_REQUEST", "HTTP_HX_TARGET")
_KEPT_HEADERS = ("Content-Type", "HX-Push-Url", "Content-Disposition")


def _digest(*parts) -> str:
    return hashlib.blake2b("\x1f".join(str(p) for p in parts).encode(), digest_size=16).hexdigest()


def _freshness() -> str:
    """What the stale marks depend on besides the catalog (entries whose facts are older than
    ATLAS_CATALOG_STALE_DAYS): a page rendered yesterday may mark an entry fresh that is stale today."""
    from datetime import date

    return f"{date.today().isoformat()}:{getattr(settings, 'ATLAS_CATALOG_STALE_DAYS', '')}"


def _django_request(request):
    return getattr(request, "_request", request)  # a DRF Request wraps Django's


def _csrf_secret(request) -> str:
    """The CSRF secret the response's tokens are masked from: the cookie's, or the one this
    response is about to set (so a first view and its repeat have the same ETag)."""
    return request.META.get("CSRF_COOKIE") or request.COOKIES.get("csrftoken", "")


def _etag(request, scope: str) -> str:
    user = getattr(request, "user", None)
    user_id = user.pk if user is not None and user.is_authenticated else 0
    django_request = _django_request(request)
    meta = django_request.META
    return '"%s"' % _digest(
        catalog_state(django_request).key,
        _freshness(),
        scope,
        django_request.get_full_path(),
        user_id,
        _csrf_secret(django_request),
        *(meta.get(h, "") for h in _VARY_HEADERS),
    )


def _not_modified(request, etag: str):
    state = catalog_state(_django_request(request))
    stamp = int(state.last_modified.timestamp()) if state.last_modified else None
    return get_conditional_response(_django_request(request), etag=etag, last_modified=stamp)


def _mark(response, etag: str, request) -> None:
    state = catalog_state(_django_request(request))
    if not response.has_header("ETag"):
        response["ETag"] = etag
    if state.last_modified and not response.has_header("Last-Modified"):
        response["Last-Modified"] = http_date(state.last_modified.timestamp())
    # Each user's copy is their own; the browser asks again each time and mostly gets a 304.
    patch_cache_control(response, private=True, no_cache=True)


class _DonutUser:
    """The user as a cached page's header sees it: signed in or not, name left as a placeholder."""

    def __init__(self, user):
        self.is_authenticated = bool(user.is_authenticated)
        self.is_anonymous = not self.is_authenticated
        self.username = USER_MARK if self.is_authenticated else ""

    def get_username(self) -> str:
        return self.username


def donut(request) -> dict:
    """Context processor (last in the list): while a page is rendered for the cache, the per-request
    values are placeholders that `catalog_page` fills in for each visitor."""
    if getattr(request, "_atlas_donut", False):
        return {"csrf_token": CSRF_MARK, "user": _DonutUser(request.user), "perms": {}, "messages": ()}
    return {}


_CSRF, _USER = CSRF_MARK.encode(), USER_MARK.encode()
_MARKS = re.compile(re.escape(_CSRF) + b"|" + re.escape(_USER))
_ACCEPTS_GZIP = re.compile(r"\bgzip\b")
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03"  # deflate, no name, no mtime, Unix
_LAST_BLOCK = zlib.compressobj(6, zlib.DEFLATED, -15).flush(zlib.Z_FINISH)  # an empty final block
_MIN_GZIP = 200  # as GZipMiddleware: shorter bodies travel as they are


def _deflate_block(data: bytes) -> bytes:
    """`data` as raw deflate blocks that end on a byte boundary, so blocks made apart can be joined."""
    packer = zlib.compressobj(6, zlib.DEFLATED, -15)
    return packer.compress(data) + packer.flush(zlib.Z_FULL_FLUSH)


def _packed(body: bytes) -> tuple[list[bytes], list[bytes] | None, list[bytes]]:
    """The cached body as (stretches, their deflate blocks or None for a body too short to
    compress, the placeholders between the stretches)."""
    stretches = _MARKS.split(body)
    blocks = [_deflate_block(s) for s in stretches] if len(body) >= _MIN_GZIP else None
    return stretches, blocks, _MARKS.findall(body)


def _values(request, marks: list[bytes]) -> dict[bytes, bytes]:
    """What each placeholder stands for in this request."""
    values = {}
    if _CSRF in marks:
        values[_CSRF] = page_token(request).encode()
    if _USER in marks:
        values[_USER] = escape(request.user.get_username()).encode()
    return values


def _filled(request, packed) -> bytes:
    """The page for this request: the stored stretches with its own values in between."""
    stretches, _, marks = packed
    if not marks:
        return stretches[0]
    values = _values(request, marks)
    out = [stretches[0]]
    for mark, stretch in zip(marks, stretches[1:]):
        out += [values[mark], stretch]
    return b"".join(out)


def _gzip_filled(request, packed) -> bytes:
    """One gzip member: the stored blocks with this request's values deflated in between."""
    stretches, blocks, marks = packed
    values = _values(request, marks)
    out, crc, size = [_GZIP_HEADER, blocks[0]], zlib.crc32(stretches[0]), len(stretches[0])
    for mark, stretch, block in zip(marks, stretches[1:], blocks[1:]):
        value = values[mark]
        out += [_deflate_block(value), block]
        crc, size = zlib.crc32(stretch, zlib.crc32(value, crc)), size + len(value) + len(stretch)
    out += [_LAST_BLOCK, crc.to_bytes(4, "little"), (size & 0xFFFFFFFF).to_bytes(4, "little")]
    return b"".join(out)


class _LocalFront:
    """A few of the latest entries kept in this process in front of the shared cache: a key names
    one catalog state, so a local copy is never stale, and a hit skips Redis' round trip and the
    unpickling. Least recently used out (ATLAS_PAGE_CACHE_LOCAL_ENTRIES, 0 = off)."""

    def __init__(self):
        self.entries: OrderedDict = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key):
        with self.lock:
            value = self.entries.get(key)
            if value is not None:
                self.entries.move_to_end(key)
                return value
        value = cache.get(key)
        if value is not None:
            self._keep(key, value)
        return value

    def set(self, key, value) -> None:
        cache.set(key, value, None)  # invalidated by the catalog state in the key, never by time
        self._keep(key, value)

    def _keep(self, key, value) -> None:
        size = int(getattr(settings, "ATLAS_PAGE_CACHE_LOCAL_ENTRIES", 64))
        with self.lock:
            self.entries[key] = value
            while len(self.entries) > size:
                self.entries.popitem(last=False)

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()


_front = _LocalFront()


def clear() -> None:
    """Empty the shared cache and this process' copies (tests)."""
    cache.clear()
    _front.clear()
    forget()
    with _SERVED_LOCK:
        _SERVED.clear()


def _page_key(request, scope: str) -> str:
    meta = request.META
    return "atlas:page:2:" + _digest(  # 2: the entry's layout (headers, packed body)
        catalog_state(request).key,
        _freshness(),
        scope,
        request.get_full_path(),
        request.user.is_authenticated,
        *(meta.get(h, "") for h in _VARY_HEADERS[1:]),
    )


def catalog_page(view):
    """Decorate a page view drawn from the catalog (under its access decorator): 304 on a matching
    ETag, the rendered page from the cache, or the view rendered once for this catalog state."""

    scope = f"{view.__module__}.{view.__name__}"

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if request.method not in ("GET", "HEAD"):
            return view(request, *args, **kwargs)
        if not request.META.get("CSRF_COOKIE"):
            get_token(request)  # every page carries a token (base.html): its secret is in the ETag
        etag = _etag(request, scope)
        response = _not_modified(request, etag)
        if response is None:
            response = _cached_render(request, scope, view, args, kwargs)
        _mark(response, etag, request)
        return response

    return wrapper


def _cached_render(request, scope, view, args, kwargs):
    if len(get_messages(request)):
        return view(request, *args, **kwargs)  # a message is shown once: not a page to keep
    key = _page_key(request, scope)
    entry = _front.get(key)
    if entry is None:
        request._atlas_donut = True
        try:
            response = view(request, *args, **kwargs)
        finally:
            request._atlas_donut = False
        if response.streaming or not isinstance(response, HttpResponse):
            return response
        packed = _packed(response.content)
        if response.status_code == 200 and not response.cookies:
            headers = {h: response[h] for h in _KEPT_HEADERS if response.has_header(h)}
            _front.set(key, (headers, packed))
        response.content = _filled(request, packed)
        return response
    headers, packed = entry
    if packed[1] is not None and _ACCEPTS_GZIP.search(request.META.get("HTTP_ACCEPT_ENCODING", "")):
        response = HttpResponse(_gzip_filled(request, packed))
        response["Content-Encoding"] = "gzip"  # GZipMiddleware leaves an encoded response alone
        patch_vary_headers(response, ("Accept-Encoding",))
    else:
        response = HttpResponse(_filled(request, packed))
    for name, value in headers.items():
        response[name] = value
    return response


def catalog_read(method):
    """Decorate an API view's `get`: ETag and Last-Modified on the catalog state, 304 on a match."""

    @wraps(method)
    def wrapper(self, request, *args, **kwargs):
        etag = _etag(request, f"{type(self).__module__}.{type(self).__name__}")
        response = _not_modified(request, etag)
        if response is None:
            response = method(self, request, *args, **kwargs)
        if response.status_code in (200, 304):
            _mark(response, etag, request)
        return response

    return wrapper


def cached_payload(request, scope: str, build) -> bytes | None:
    """An API payload (rendered JSON bytes) kept per catalog state and URL; `build` returns the
    bytes, or None for an answer not to keep (a 404)."""
    django_request = _django_request(request)
    key = "atlas:api:" + _digest(catalog_state(django_request).key, _freshness(), scope, django_request.get_host(), django_request.get_full_path())
    body = _front.get(key)
    if body is None:
        body = build()
        if body is not None:
            _front.set(key, body)
    return body


# --- every other read: an ETag from the content --------------------------------------------------

_TOKENS = re.compile(rb'(X-CSRFToken": "|name="csrfmiddlewaretoken" value=")[A-Za-z0-9]{64}')


class ContentETagMiddleware(ConditionalGetMiddleware):
    """Django's ConditionalGetMiddleware for the reads not drawn from the catalog alone (stacks,
    runs, decisions, the review queue, the API's other reads): the ETag hashes the content, so it
    moves with the object's own state, and a repeat view of an unchanged page answers 304.

    Django's own ETag would never match on a page: each render masks the CSRF token afresh. Here
    the tokens are left out of the hash and the CSRF cookie and the user are put in instead (the
    older token in the browser's copy stays valid for as long as that cookie does)."""

    def process_response(self, request, response):
        if (
            request.method in ("GET", "HEAD")
            and response.status_code == 200
            and not response.streaming
            and not response.has_header("ETag")
        ):
            user = getattr(request, "user", None)
            etag = '"%s"' % _digest(
                hashlib.blake2b(_TOKENS.sub(rb"\1", response.content), digest_size=16).hexdigest(),
                user.pk if user is not None and user.is_authenticated else 0,
                _csrf_secret(request),
            )
            response["ETag"] = etag
            if not response.has_header("Last-Modified"):
                response["Last-Modified"] = http_date(_first_served(etag))
        return super().process_response(request, response)


_SERVED: OrderedDict = OrderedDict()  # ETag -> first served, this process' latest few in front of the cache
_SERVED_LOCK = threading.Lock()
_SERVED_KEEP = 4096


def _first_served(etag: str) -> float:
    """When this content was first served (kept in the cache under its ETag): the latest moment it
    can have changed, so it is the Last-Modified of a page drawn from a stack, run or decision,
    whose state has no single timestamp (a run's progress, a stack's runs and name). A content's
    first moment never changes, so each process keeps the ones it has seen and asks the shared cache
    only for a new ETag (every request of a repeat view would otherwise pay a Redis round trip)."""
    with _SERVED_LOCK:
        seen = _SERVED.get(etag)
        if seen is not None:
            _SERVED.move_to_end(etag)
            return seen
    seen = cache.get_or_set("atlas:served:" + etag.strip('"'), time.time(), None)
    with _SERVED_LOCK:
        _SERVED[etag] = seen
        while len(_SERVED) > _SERVED_KEEP:
            _SERVED.popitem(last=False)
    return seen
