"""Catalog pages: the layer map, filtered lists (full page and htmx fragment), detail pages, forms."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils.html import escape

from placement.catalog.models import Project

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def test_home_shows_every_accepted_project_on_the_layer_map(client):
    response = client.get("/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "<title>Layer map" in html
    for project in Project.objects.filter(accepted=True):
        assert reverse("project-detail", args=[project.slug]) in html, project.slug


def test_layer_map_serves_htmx_locally_never_from_a_cdn(client):
    html = client.get("/").content.decode()
    assert "/static/django_htmx/htmx-2.min.js" in html
    assert "unpkg" not in html and "cdn" not in html.lower()
    assert client.get("/static/django_htmx/htmx-2.min.js").status_code == 200


def test_plane_filter_lists_only_data_plane_projects(client):
    html = client.get("/projects/?plane=data").content.decode()
    assert "<html" in html
    assert 'href="/projects/mig/"' in html
    assert 'href="/projects/kueue/"' not in html
    assert 'href="/projects/volcano/"' not in html


def test_plane_filter_as_htmx_fragment_returns_only_the_table(client):
    response = client.get("/projects/?plane=data", **HTMX)
    html = response.content.decode()
    assert "<html" not in html
    assert html.strip().startswith('<div id="project-table">')
    assert 'href="/projects/mig/"' in html
    assert 'href="/projects/kueue/"' not in html


@pytest.mark.parametrize(
    "query, present, absent",
    [
        ("layer=L1", "kueue", "mig"),
        ("unit=mig_instance", "mig", "time-slicing"),
        ("enforcement=admission", "kueue", "mig"),
        ("capability=gang-scheduling", "volcano", "mig"),
        ("q=queueing+controller", "kueue", "mig"),
    ],
)
def test_each_filter_narrows_the_list(client, query, present, absent):
    assert Project.objects.filter(slug=absent, accepted=True).exists(), "the absent project must exist to prove anything"
    html = client.get(f"/projects/?{query}").content.decode()
    assert f'href="/projects/{present}/"' in html
    assert f'href="/projects/{absent}/"' not in html


def test_list_without_a_query_string_shows_every_accepted_project(client):
    # The menu links to /projects/ with no query string: an unfiltered list, not an empty state.
    html = client.get("/projects/").content.decode()
    accepted = list(Project.objects.filter(accepted=True).values_list("slug", flat=True))
    assert len(accepted) > 10
    for slug in accepted:
        assert f'href="/projects/{slug}/"' in html, slug
    assert "No project matches" not in html


def test_bad_filter_value_is_reported_not_a_500(client):
    response = client.get("/projects/?unit=quantum")
    assert response.status_code == 200
    assert "Select a valid choice" in response.content.decode()


def test_every_catalog_project_has_a_detail_page_with_its_sources(client):
    for project in Project.objects.filter(accepted=True):
        response = client.get(f"/projects/{project.slug}/")
        assert response.status_code == 200, project.slug
        html = response.content.decode()
        for source in project.placement["sources"]:
            cited = source.get("url") or escape(source["section"])
            assert cited in html, (project.slug, cited)
        assert escape(project.placement["promise"][:40]) in html


def test_unknown_project_is_a_404(client):
    assert client.get("/projects/no-such-thing/").status_code == 404


def _count_queries(client, url):
    from placement.catalog import page_cache

    page_cache.clear()  # the page drawn afresh (a cached page costs one query: tests/test_page_cache.py)
    with CaptureQueriesContext(connection) as ctx:
        assert client.get(url).status_code == 200
    return len(ctx.captured_queries)


def test_list_page_query_count_does_not_grow_with_projects(client, new_project_data):
    from placement.catalog.schemas import ProjectDocument
    from placement.catalog.services.catalog import project_apply

    assert 'href="/projects/kueue/"' in client.get("/projects/").content.decode()  # the list is not empty
    before = _count_queries(client, "/projects/")
    home_before = _count_queries(client, "/")
    for i in range(5):
        data = dict(new_project_data, slug=f"example-{i}", name=f"Example {i}")
        project_apply(Project(), ProjectDocument.model_validate(data))
    assert _count_queries(client, "/projects/") == before
    assert _count_queries(client, "/") == home_before
