"""The catalog version as the pages see it: one query per request, whatever the page.

`CatalogVersion.value` is the catalog version proper: it moves when a proposal is accepted or a
catalog imported (`placement.catalog.services.catalog.catalog_changed`). The pages drawn from the catalog
also show what is waiting for review (the map's pending marks, a new project's page), the
organisation's radar rings and the saved stacks one can lay over the map; those change without a
catalog change, so the state a cached page is keyed on adds a fingerprint (count and latest
write) of each, read in the same query. A write made around the services (a fixture, the admin
shell) still moves the projects' fingerprint, so no page outlives the rows it was drawn from.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timezone

from django.db import connection
from django.utils.dateparse import parse_datetime

from placement.catalog.models import CatalogVersion, Project
from placement.decisions.models import ProjectRing
from placement.review.models import Revision
from placement.stacks.models import Stack


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


def read_catalog_state() -> CatalogState:
    with connection.cursor() as cursor:
        cursor.execute(_sql(), [Revision.PROPOSED, Revision.PROPOSED])
        row = cursor.fetchone()
    stamps = [_aware(v) for v in row[1::2]]
    key = hashlib.blake2b("|".join(str(v) for v in row).encode(), digest_size=12).hexdigest()
    latest = max((s for s in stamps if s is not None), default=None)
    return CatalogState(version=row[0] or 0, key=key, last_modified=latest)


def catalog_state(request=None) -> CatalogState:
    """The state, read once per request (kept on the request)."""
    if request is None:
        return read_catalog_state()
    state = getattr(request, "_atlas_catalog_state", None)
    if state is None:
        state = request._atlas_catalog_state = read_catalog_state()
    return state
