"""Landscape metadata reaches the list, the map, the API and the landscape export (issue 12)."""

import csv
import io
import re

import pytest

from placement.catalog.models import Project

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


def test_landscape_is_a_grid_by_layer_and_category_with_a_permalink_per_card(client):
    page = client.get("/landscape/").content.decode()
    assert 'class="landscape-grid"' in page
    l4 = page[page.index('id="layer-L4"'):]
    l4 = l4[: l4.index("</section>")]
    assert "<h3>Device discovery</h3>" in l4 and "<h3>Node execution</h3>" in l4
    assert l4.index("<h3>Device discovery</h3>") < l4.index('id="p-nvidia-device-plugin"') < l4.index("<h3>Node execution</h3>")
    assert 'href="?#p-kueue"' in page and 'id="p-kueue"' in page


def test_landscape_filters_live_in_the_url_and_combine(client):
    page = client.get("/landscape/", {"kind": "mechanism", "plane": "data"}).content.decode()
    shown = set(re.findall(r'id="p-([a-z0-9-]+)"', page))
    assert shown and {"mig", "time-slicing"} <= shown and "kueue" not in shown
    assert '<option value="mechanism" selected>' in page
    assert 'href="?kind=mechanism&amp;plane=data#p-mig"' in page, "a card's permalink keeps the filters"
    by_name = set(re.findall(r'id="p-([a-z0-9-]+)"', client.get("/landscape/", {"q": "volcano"}).content.decode()))
    assert by_name == {"volcano", "volcano-vgpu-device-plugin"}
    nothing = client.get("/landscape/", {"q": "no such project"}).content.decode()
    assert "0 projects shown." in nothing and "No project matches these filters." in nothing


def test_unknown_filter_values_are_ignored_not_errors(client):
    response = client.get("/landscape/", {"kind": "<script>", "plane": "moon", "cncf": "x"})
    assert response.status_code == 200
    assert f"{Project.objects.filter(accepted=True).exclude(slug='nos').count()} projects shown." in response.content.decode()
