"""Maps, layers, capabilities, the project list (the list page's filters), detail and placements."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from placement.catalog.filtersets import ProjectFilterSet
from placement.catalog.models import Project, ProjectLayer
from placement.catalog.schemas import ProjectDocument
from placement.catalog.selectors.catalog import project_document, project_list_queryset
from placement.review import services as review
from tests.api.conftest import assert_error_body, session_client

pytestmark = pytest.mark.django_db


def slugs(response) -> list[str]:
    assert response.status_code == 200, response.content[:500]
    return [row["slug"] for row in response.json()["results"]]


def test_maps_list_every_map_with_its_layers_in_order(api):
    body = api.get("/api/v1/maps/").json()
    maps = {m["slug"]: m for m in body["results"]}
    assert {"control-plane", "planes"} <= set(maps)
    assert [layer["code"] for layer in maps["control-plane"]["layers"]] == ["L0", "L1", "L2", "L3", "L4"]


def test_map_detail_has_layers_and_an_unknown_map_is_a_404_in_the_error_format(api):
    assert [l["code"] for l in api.get("/api/v1/maps/planes/").json()["layers"]] == ["data", "control", "platform"]
    assert_error_body(api.get("/api/v1/maps/no-such-map/"), 404, "detail")


def test_layers_filter_by_map(api):
    rows = api.get("/api/v1/layers/?map=planes").json()["results"]
    assert {r["map"] for r in rows} == {"planes"} and len(rows) == 3


def test_capabilities_name_their_owning_layer(api):
    rows = {c["slug"]: c for c in api.get("/api/v1/capabilities/?limit=200").json()["results"]}
    assert rows["gpu-sharing"]["owner_plane"] and rows["gpu-sharing"]["owner_layers"]
    assert api.get("/api/v1/capabilities/gpu-sharing/").json()["slug"] == "gpu-sharing"


def test_project_list_shows_only_accepted_projects(api, architect, new_project_data):
    review.project_create(ProjectDocument.model_validate(new_project_data), user=architect, reason="new")
    listed = slugs(api.get("/api/v1/projects/?limit=200"))
    assert "example-queue" not in listed
    assert sorted(listed) == sorted(Project.objects.filter(accepted=True).values_list("slug", flat=True))


@pytest.mark.parametrize(
    "query",
    [
        "plane=data",
        "plane=control",
        "layer=L2",
        "unit=mig_instance",
        "enforcement=scheduler",
        "capability=gpu-sharing",
        "kind=mechanism",
        "q=quota",
        "q=gang scheduling",
        "plane=data&unit=memory_compute_share",
    ],
)
def test_project_filters_are_the_list_pages_filters(api, query):
    from django.http import QueryDict

    expected = ProjectFilterSet(QueryDict(query), queryset=project_list_queryset()).qs
    got = slugs(api.get(f"/api/v1/projects/?{query}&limit=200"))
    assert got and sorted(got) == sorted(p.slug for p in expected)
    # the HTML list page agrees, too
    html = api.get(f"/projects/?{query}").content.decode()
    assert all(f"/projects/{slug}/" in html for slug in got)


def test_an_unknown_filter_value_is_a_400_naming_the_filter(api):
    assert_error_body(api.get("/api/v1/projects/?plane=nowhere"), 400, "plane")
    assert_error_body(api.get("/api/v1/projects/?capability=flying"), 400, "capability")


def test_projects_order_by_name_slug_or_updated_at(api):
    by_name = [r["name"] for r in api.get("/api/v1/projects/?limit=200").json()["results"]]
    assert by_name == sorted(by_name, key=str.lower) or by_name == sorted(by_name)
    by_slug_desc = slugs(api.get("/api/v1/projects/?ordering=-slug&limit=200"))
    assert by_slug_desc == sorted(by_slug_desc, reverse=True)
    Project.objects.filter(slug="hami").update(updated_at="2100-01-01T00:00:00Z")
    assert slugs(api.get("/api/v1/projects/?ordering=-updated_at"))[0] == "hami"


def test_search_matches_name_slug_and_summary(api):
    found = slugs(api.get("/api/v1/projects/?search=kueue"))
    assert "kueue" in found
    assert all("kueue" in f"{p.name} {p.slug} {p.summary}".lower() for p in Project.objects.filter(slug__in=found))
    assert slugs(api.get("/api/v1/projects/?search=no-such-word-anywhere")) == []


def test_limit_offset_pagination_is_capped(api):
    total = Project.objects.filter(accepted=True).count()
    first = api.get("/api/v1/projects/?limit=5").json()
    assert first["count"] == total and len(first["results"]) == 5 and "offset=5" in first["next"]
    second = api.get("/api/v1/projects/?limit=5&offset=5").json()
    assert not {r["slug"] for r in first["results"]} & {r["slug"] for r in second["results"]}
    assert len(api.get("/api/v1/projects/?limit=100000").json()["results"]) == min(total, 200)
    assert api.get(f"/api/v1/projects/?offset={10**30}").json()["results"] == []


def test_a_list_row_carries_its_placement_summary(api):
    row = next(r for r in api.get("/api/v1/projects/?limit=200").json()["results"] if r["slug"] == "kueue")
    placement = Project.objects.get(slug="kueue").placement
    assert row["plane"] == placement["maps"]["planes"]["primary"]
    assert row["layer"] == placement["maps"]["control-plane"]["primary"]
    assert row["capabilities"] == placement["capabilities"]
    assert {(l["map"], l["code"], l["role"]) for l in row["layers"]} == {
        (link.layer.map.slug, link.layer.code, link.role)
        for link in ProjectLayer.objects.filter(project__slug="kueue").select_related("layer__map")
    }
    assert row["url"] == "/api/v1/projects/kueue/"


def test_query_count_of_the_project_list_does_not_depend_on_the_page_size(api):
    counts = {}
    for limit in (1, 5, 50):
        with CaptureQueriesContext(connection) as ctx:
            response = api.get(f"/api/v1/projects/?limit={limit}")
        assert len(response.json()["results"]) == min(limit, Project.objects.filter(accepted=True).count())
        counts[limit] = len(ctx.captured_queries)
    assert counts[1] == counts[5] == counts[50], counts
    # catalog state (1), count, page, layer links
    assert counts[50] <= 5, counts
    with CaptureQueriesContext(connection) as ctx:
        api.get("/api/v1/projects/?limit=50")
    assert len(ctx.captured_queries) <= 2  # the same page again: only the version is read


def test_a_cached_page_follows_every_catalog_change(api, architect, reviewer, new_project_data):
    assert "example-queue" not in slugs(api.get("/api/v1/projects/?limit=200"))
    project = review.project_create(ProjectDocument.model_validate(new_project_data), user=architect, reason="new")
    review.revision_accept(project.revisions.get(), user=reviewer)  # a write that is not through the API
    assert "example-queue" in slugs(api.get("/api/v1/projects/?limit=200"))


def test_an_accept_through_the_api_shows_in_the_list_at_once(api, architect, reviewer, new_project_data):
    assert "example-queue" not in slugs(api.get("/api/v1/projects/?limit=200"))
    project = review.project_create(ProjectDocument.model_validate(new_project_data), user=architect, reason="new")
    revision_id = project.revisions.get().pk
    assert session_client(reviewer).post(f"/api/v1/revisions/{revision_id}/accept/", {}, format="json").status_code == 200
    assert "example-queue" in slugs(api.get("/api/v1/projects/?limit=200"))


def test_project_detail_is_the_whole_template(api):
    body = api.get("/api/v1/projects/kueue/").json()
    project = Project.objects.get(slug="kueue")
    document = project_document(project).model_dump(mode="json")
    assert {k: body[k] for k in document} == document
    assert body["version"] == project.version and body["accepted"] is True
    assert body["revisions_url"] == "/api/v1/projects/kueue/revisions/"
    assert_error_body(api.get("/api/v1/projects/no-such-project/"), 404)


def test_placements_list_one_row_per_project_and_layer(api):
    rows = api.get("/api/v1/placements/?project=hami&limit=200").json()["results"]
    assert rows and {r["project"] for r in rows} == {"hami"}
    primaries = [r for r in rows if r["role"] == "primary"]
    assert {r["map"] for r in primaries} == {m for m in Project.objects.get(slug="hami").placement["maps"]}
    planes = api.get("/api/v1/placements/?map=planes&layer=data&role=primary&limit=200").json()["results"]
    assert {r["project"] for r in planes} == set(slugs(api.get("/api/v1/projects/?plane=data&limit=200")))


def test_profiles_and_scenarios_name_what_compose_and_simulations_accept(api):
    profiles = {p["profile"] for p in api.get("/api/v1/profiles/").json()}
    assert "training" in profiles
    assert isinstance(api.get("/api/v1/scenarios/").json(), list)
