"""Landscape metadata reaches the list, the map, the API and the landscape export (issue 12)."""

import csv
import io

import pytest

from placement.models import Project

pytestmark = pytest.mark.django_db


def test_every_entry_carries_landscape_metadata():
    for project in Project.objects.filter(accepted=True):
        meta = project.placement.get("landscape")
        assert meta and meta["license"] and meta["repository"] and meta["cncf_status"] and meta["as_of"], project.slug


def test_list_filters_by_cncf_status_and_upstream_status(client):
    html = client.get("/projects/?cncf=sandbox").content.decode()
    assert "KAI Scheduler" in html and "llm-d" in html and "Kueue" not in html
    # HAMi moved from Sandbox to Incubating in July 2026 (cncf/landscape PR 4896)
    assert "HAMi" in client.get("/projects/?cncf=incubating").content.decode()
    archived = client.get("/projects/?status=archived").content.decode()
    assert "nos" in archived and "Volcano" not in archived


def test_the_map_hides_archived_projects_unless_asked_and_shows_cncf_status(client):
    hidden = client.get("/map/list/").content.decode()
    shown = client.get("/map/list/?archived=1").content.decode()
    assert "/projects/nos/" not in hidden and "/projects/nos/" in shown
    figure = client.get("/map/?cncf=incubating").content.decode()
    assert "CNCF: incubating" in figure


def test_api_rows_expose_landscape_and_filter_by_it(client):
    body = client.get("/api/v1/projects/?cncf=incubating").json()
    slugs = {row["slug"] for row in body["results"]}
    assert "volcano" in slugs and "kueue" not in slugs
    volcano = next(row for row in body["results"] if row["slug"] == "volcano")
    assert volcano["landscape"]["license"] == "Apache-2.0" and volcano["landscape"]["cncf_status"] == "incubating"


def test_landscape_page_and_csv_export(client):
    page = client.get("/landscape/").content.decode()
    assert "L1 Admission and quota" in page and "CNCF graduated" in page and "/projects/nos/" not in page
    response = client.get("/landscape.csv")
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert len(rows) == Project.objects.filter(accepted=True).count()
    kueue = next(r for r in rows if r["slug"] == "kueue")
    assert kueue["license"] == "Apache-2.0" and kueue["layer"] == "L1" and kueue["as_of"]
