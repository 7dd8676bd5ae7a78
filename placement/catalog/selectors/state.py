"""The catalog version as the pages see it: at most one query per request, whatever the page,
and none while nothing it is drawn from has been written.

`CatalogVersion.value` is the catalog version proper: it moves when a proposal is accepted or a
catalog imported (`placement.catalog.services.catalog.catalog_changed`). The pages drawn from the catalog
also show what is waiting for review (the map's pending marks, a new project's page), the
organisation's radar rings and the saved stacks one can lay over the map; those change without a
catalog change, so the state a cached page is keyed on adds a fingerprint (count and latest
write) of each, read in the same query. A write made around the services (a fixture, the admin
shell) still moves the projects' fingerprint, so no page outlives the rows it was drawn from.

**Read once per write, not once per request.** With a cache shared by every process (Redis, real
mode), a generation token in the cache moves whenever a statement writes one of the tables above
through Django's connection (any ORM call, `update()`, `bulk_create`, raw SQL through Django: an
execute wrapper sees each statement), once when the statement runs and again when its transaction
commits. Each process keeps the state it last read with the token it read first; a request whose
token matches skips the query (one cache read instead of a database round trip). The token is
read before the database, so a state read while a write was committing is kept under the old
token, which the commit then moves. Without a shared cache (the embedded default: local memory,
one per process) every request reads the database, as before: a Celery worker's write could not
reach a web process' memory.
"""

from __future__ import annotations

import hashlib
import logging
import re
import secrets
import threading
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime, timezone

from django.conf import settings
from django.db import connection, transaction
from django.utils.dateparse import parse_datetime
from redis.exceptions import RedisError

from placement.catalog.models import CatalogVersion, Project
from placement.decisions.models import ProjectRing
from placement.review.models import Revision
from placement.stacks.models import Stack


logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CatalogState:
    version: int  # CatalogVersion.value: accepted proposals and imports
    key: str  # the version and the fingerprints, hashed: cache keys and ETags
    last_modified: datetime | None  # the latest of the writes above (Last-Modified)


def _sql() -> str:
    cv, project = CatalogVersion._meta.db_table, Project._meta.db_table
    revision, ring, stack = Revision._meta.db_table, ProjectRing._meta.db_table, Stack._meta.db_table
    return (
        f"SELECT (SELECT value FROM {cv} WHERE id = 1), (SELECT changed_at FROM {cv} WHERE id = 1), "
        f"(SELECT COUNT(*) FROM {project}), (SELECT MAX(updated_at) FROM {project}), "
        f"(SELECT COUNT(*) FROM {revision} WHERE status = %s), (SELECT MAX(updated_at) FROM {revision} WHERE status = %s), "
        f"(SELECT COUNT(*) FROM {ring}), (SELECT MAX(set_at) FROM {ring}), "
        f"(SELECT COUNT(*) FROM {stack}), (SELECT MAX(created_at) FROM {stack})"
    )


def _aware(value) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, str):  # SQLite returns text
        value = parse_datetime(value)
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def read_catalog_state(generation: bytes | None = None) -> CatalogState:
    with connection.cursor() as cursor:
        cursor.execute(_sql(), [Revision.PROPOSED, Revision.PROPOSED])
        row = cursor.fetchone()
    stamps = [_aware(v) for v in row[1::2]]
    key = hashlib.blake2b("|".join(str(v) for v in (*row, generation)).encode(), digest_size=12).hexdigest()
    latest = max((s for s in stamps if s is not None), default=None)
    return CatalogState(version=row[0] or 0, key=key, last_modified=latest)


# --- read once per write ------------------------------------------------------------------------

GENERATION_KEY = "atlas:catalog-state-generation"
_kept: tuple[bytes | None, CatalogState | None] = (None, None)  # (generation, state) this process read last
_kept_lock = threading.Lock()
_client = None  # (URL, redis-py client) on the cache's Redis, made on first use


def _shared_cache() -> bool:
    """True when the cache is one for every process (Redis): only then can a write be seen by all."""
    return bool(getattr(settings, "ATLAS_CACHE_URL", ""))


def _redis():
    """The generation lives in the cache's Redis, read with redis-py itself: a plain GET is a quarter
    of the CPU of Django's cache API (a client per call, pickling) and this runs on every request."""
    global _client
    url = settings.ATLAS_CACHE_URL
    if _client is None or _client[0] != url:
        import redis

        _client = (url, redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2))
    return _client[1]


def _generation() -> bytes:
    client = _redis()
    generation = client.get(GENERATION_KEY)
    if generation is None:  # first read, or the cache was emptied: start a new generation
        client.set(GENERATION_KEY, secrets.token_hex(8), nx=True)
        generation = client.get(GENERATION_KEY)
    return generation


def current_state() -> CatalogState:
    """The state: from this process' copy while the generation has not moved, else read afresh.
    With a shared cache the key also holds the generation, so a write that moves no fingerprint
    (an `update()` that leaves `updated_at`) still gives every page a new key."""
    global _kept
    if not _shared_cache():
        return read_catalog_state()
    try:
        generation = _generation()  # before the database: see the module's docstring
    except RedisError:
        return read_catalog_state()  # no shared cache just now: the database alone, as without one
    kept_generation, kept_state = _kept
    if generation is not None and generation == kept_generation and kept_state is not None:
        return kept_state
    state = read_catalog_state(generation)
    with _kept_lock:
        _kept = (generation, state)
    return state


def forget() -> None:
    """Drop this process' copy (tests, after emptying the cache)."""
    global _kept
    with _kept_lock:
        _kept = (None, None)


def state_written() -> None:
    """A table the state is drawn from was written: every process reads the state afresh."""
    try:
        _redis().set(GENERATION_KEY, secrets.token_hex(8))
    except RedisError:
        # The write stands; processes reading while Redis is away read the database (above). A
        # Redis that comes back with the old generation would hide this write: drop it instead.
        logger.warning("catalog state: could not move the generation in Redis", exc_info=True)
        with suppress(RedisError):
            _redis().delete(GENERATION_KEY)


def _state_tables() -> re.Pattern:
    tables = [m._meta.db_table for m in (CatalogVersion, Project, Revision, ProjectRing, Stack)]
    return re.compile(r"^\s*(?:INSERT|UPDATE|DELETE|REPLACE|TRUNCATE)\b[^;]*?\b(?:%s)\b" % "|".join(map(re.escape, tables)),
                      re.IGNORECASE | re.DOTALL)  # fmt: skip


_WRITES: re.Pattern | None = None


def watch_writes(execute, sql, params, many, context):
    """Execute wrapper (installed on every database connection): a statement that writes a state
    table moves the generation now (readers inside this transaction) and at commit (everyone)."""
    global _WRITES
    result = execute(sql, params, many, context)
    if _WRITES is None:
        _WRITES = _state_tables()
    if _shared_cache() and isinstance(sql, str) and _WRITES.match(sql):
        state_written()
        transaction.on_commit(state_written, using=context["connection"].alias)
    return result


def install_write_watch(sender=None, connection=None, **kwargs) -> None:
    """`connection_created` receiver: put the write watch on the connection (once)."""
    if connection is not None and watch_writes not in connection.execute_wrappers:
        connection.execute_wrappers.append(watch_writes)


def catalog_state(request=None) -> CatalogState:
    """The state, read once per request (kept on the request)."""
    if request is None:
        return current_state()
    state = getattr(request, "_atlas_catalog_state", None)
    if state is None:
        state = request._atlas_catalog_state = current_state()
    return state
