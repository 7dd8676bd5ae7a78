"""The project page shows, per field, the source and the day it was read; entries whose facts are
older than ATLAS_CATALOG_STALE_DAYS are marked stale on the page and in the API (issue 33)."""

import pytest

pytestmark = pytest.mark.django_db


def test_the_page_names_per_field_the_source_and_the_day_it_was_read(client):
    html = client.get("/projects/grove/").content.decode()
    assert "Where each fact comes from" in html
    section = html[html.index('id="provenance"'):]
    # the release and the licence come from the recorded git snapshot, read on its date
    assert "landscape.latest_release" in section and "ai-dynamo/grove release tags and licence" in section
    assert "2026-08-19" in section
    assert "Grove has shipped only pre-releases" in section  # the entry's note
    assert 'id="stale-badge"' not in html


def test_an_entry_past_the_review_age_is_marked_stale_on_its_page_and_in_the_api(client, settings):
    assert client.get("/api/v1/projects/grove/").json()["stale"] is False
    settings.ATLAS_CATALOG_STALE_DAYS = 30
    assert 'id="stale-badge"' in client.get("/projects/grove/").content.decode()
    assert client.get("/api/v1/projects/grove/").json()["stale"] is True
    rows = {r["slug"]: r for r in client.get("/api/v1/projects/?limit=200").json()["results"]}
    assert rows["grove"]["stale"] is True
    assert rows["nos"]["stale"] is False  # archived: its facts no longer change
