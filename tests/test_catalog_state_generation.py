"""Issue 38: with a cache every process shares (Redis), a page drawn from the catalog reads the
catalog state from the database once per write, not once per request; any write to the tables
the state is drawn from - through a service, `update()`, a raw statement or another process -
still moves every page at once."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client

from placement.catalog.models import CatalogVersion, Project
from placement.catalog.selectors import state

ROOT = Path(__file__).resolve().parents[1]
REDIS = os.environ.get("ATLAS_TEST_BROKER_URL", "redis://127.0.0.1:6379/15").rsplit("/", 1)[0] + "/13"


def _redis_answers() -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(REDIS, socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(not _redis_answers(), reason=f"no Redis at {REDIS} (make test starts one)"),
]


@pytest.fixture(autouse=True)
def shared_cache(settings):
    settings.ATLAS_CACHE_URL = REDIS
    state._redis().delete(state.GENERATION_KEY)
    state.forget()
    yield
    state.forget()


def _queries(client, url: str, **headers) -> tuple[int, object]:
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as seen:
        response = client.get(url, **headers)
    return len(seen.captured_queries), response


@pytest.mark.parametrize("url", ["/map/", "/projects/", "/api/v1/projects/kueue/"])
def test_repeat_views_without_a_write_read_no_database_at_all(client, url):
    client.get(url)
    queries, response = _queries(client, url)
    assert response.status_code == 200 and queries == 0
    queries, response = _queries(client, url, HTTP_IF_NONE_MATCH=response["ETag"])
    assert response.status_code == 304 and queries == 0


def test_a_queryset_update_around_the_services_moves_every_page(client):
    etag = client.get("/map/")["ETag"]
    Project.objects.filter(slug="kueue").update(summary="Changed around the services")
    queries, response = _queries(client, "/map/", HTTP_IF_NONE_MATCH=etag)
    assert response.status_code == 200 and queries >= 1  # the state read afresh, the page drawn anew
    assert response["ETag"] != etag


def test_a_raw_statement_through_django_moves_the_pages(client):
    etag = client.get("/projects/")["ETag"]
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {CatalogVersion._meta.db_table} SET value = value + 1 WHERE id = 1")
    assert client.get("/projects/", HTTP_IF_NONE_MATCH=etag).status_code == 200


def test_reads_and_writes_of_other_tables_leave_the_generation(client):
    client.get("/map/")
    before = state._redis().get(state.GENERATION_KEY)
    from placement.catalog.models import ProjectFacet

    facet = ProjectFacet.objects.filter(project__slug="kueue").first()
    ProjectFacet.objects.filter(pk=facet.pk).update(facet=facet.facet)
    list(Project.objects.all()[:3])
    assert state._redis().get(state.GENERATION_KEY) == before


def test_without_redis_the_state_is_read_from_the_database(client, settings):
    client.get("/map/")
    settings.ATLAS_CACHE_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    fresh = state.read_catalog_state()
    assert state.current_state() == fresh


@pytest.mark.django_db(transaction=True)
def test_a_write_committed_by_another_process_moves_this_process_pages(client, ensure_catalog):
    first = client.get("/projects/")
    assert _queries(client, "/projects/", HTTP_IF_NONE_MATCH=first["ETag"])[0] == 0
    db = connection.settings_dict
    env = {**os.environ, "ATLAS_CACHE_URL": REDIS, "DJANGO_SETTINGS_MODULE": "config.settings",
           "DATABASE_URL": f"postgresql://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"}  # fmt: skip
    if connection.vendor != "postgresql":
        pytest.skip("another process shares the test database only on PostgreSQL")
    code = "from placement.catalog.services.catalog import catalog_changed; catalog_changed()"
    subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=env, check=True, timeout=120)
    queries, response = _queries(client, "/projects/", HTTP_IF_NONE_MATCH=first["ETag"])
    assert response.status_code == 200 and queries >= 1  # the state read afresh, the page drawn anew


def test_a_cached_page_masks_its_token_afresh_and_django_accepts_it(reader):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(reader)
    browser.get("/projects/")
    tokens = [re.search(r'name="csrfmiddlewaretoken" value="([A-Za-z0-9]{64})"', browser.get("/projects/").content.decode())
              for _ in range(2)]  # fmt: skip
    assert all(tokens) and tokens[0].group(1) != tokens[1].group(1)
    for token in tokens:
        assert browser.post("/logout/", {"csrfmiddlewaretoken": token.group(1)}).status_code == 302
        browser.force_login(reader)
