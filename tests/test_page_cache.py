"""Every page at the speed of its data (issue 38): the catalog version, conditional GETs, pages and
API payloads rendered once per version, fixed query counts and compressed responses."""

from __future__ import annotations

import gzip
import re
import shutil

import pytest
from django.test import Client

from placement.catalog.models import CatalogVersion, Project
from placement.catalog.schemas import ProjectDocument
from placement.catalog.services.catalog import catalog_import
from placement.review import services as review
from tests.conftest import CATALOG_DIR

pytestmark = pytest.mark.django_db

CATALOG_PAGES = ["/", "/map/", "/map/list/", "/projects/", "/projects/kueue/", "/landscape/", "/landscape.csv", "/embed/map/"]
CATALOG_READS = ["/api/v1/projects/", "/api/v1/projects/kueue/", "/api/v1/maps/", "/api/v1/layers/", "/api/v1/capabilities/", "/api/v1/placements/"]


def version() -> int:
    row = CatalogVersion.objects.filter(pk=1).first()
    return row.value if row else 0


def accept_new_project(architect, reviewer, data) -> Project:
    project = review.project_create(ProjectDocument.model_validate(data), user=architect, reason="new")
    review.revision_accept(project.revisions.get(), user=reviewer)
    return project


# --- the catalog version -------------------------------------------------------------------------


def test_accepting_a_proposal_moves_the_catalog_version(architect, reviewer, new_project_data):
    before = version()
    accept_new_project(architect, reviewer, new_project_data)
    assert version() == before + 1


def test_importing_a_catalog_moves_the_catalog_version_even_when_no_project_changed():
    before = version()
    catalog_import(CATALOG_DIR)
    assert version() == before + 1


def test_a_rejected_or_merely_proposed_change_leaves_the_catalog_version(architect, reviewer, new_project_data):
    before = version()
    project = review.project_create(ProjectDocument.model_validate(new_project_data), user=architect, reason="new")
    review.revision_reject(project.revisions.get(), user=reviewer, comment="not now")
    assert version() == before


# --- conditional GETs ----------------------------------------------------------------------------


@pytest.mark.parametrize("url", CATALOG_PAGES + CATALOG_READS)
def test_a_repeat_view_with_its_etag_answers_304_without_a_body(client, url):
    first = client.get(url)
    assert first.status_code == 200
    assert first.has_header("ETag") and first.has_header("Last-Modified")
    again = client.get(url, HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 304 and again.content == b""


@pytest.mark.parametrize("url", ["/projects/", "/api/v1/projects/kueue/"])
def test_if_modified_since_the_last_catalog_change_answers_304(client, url):
    first = client.get(url)
    assert client.get(url, HTTP_IF_MODIFIED_SINCE=first["Last-Modified"]).status_code == 304


def test_an_accepted_change_turns_the_old_etag_into_the_new_page(client, architect, reviewer, new_project_data):
    first = client.get("/projects/")
    assert "Example Queue" not in first.content.decode()
    accept_new_project(architect, reviewer, new_project_data)
    again = client.get("/projects/", HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 200 and "Example Queue" in again.content.decode()
    assert again["ETag"] != first["ETag"]


def test_signing_in_never_gets_the_anonymous_page_as_a_304(client, reader):
    first = client.get("/projects/")
    client.force_login(reader)
    again = client.get("/projects/", HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 200 and "rita" in again.content.decode()


def test_the_html_and_json_of_one_url_have_different_etags(client):
    assert client.get("/api/v1/projects/", HTTP_ACCEPT="text/html")["ETag"] != client.get("/api/v1/projects/")["ETag"]


def test_a_run_page_answers_304_until_the_run_moves(client, reader):
    """Pages not drawn from the catalog alone get an ETag from their content (their object's own
    state), the CSRF token that every render masks afresh left out."""
    from placement.evidence.models import SimulationRun
    from placement.stacks.models import Stack

    stack = Stack.objects.create(name="s", profile="training", composition={"components": ["kueue"]})
    run = SimulationRun.objects.create(stack=stack, scenario_name="x", scenario={}, seed=1, fingerprint="f")
    client.force_login(reader)
    first = client.get(f"/runs/{run.pk}/")
    assert first.status_code == 200
    assert client.get(f"/runs/{run.pk}/", HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    SimulationRun.objects.filter(pk=run.pk).update(status=SimulationRun.FAILED, error="the worker was lost")
    assert client.get(f"/runs/{run.pk}/", HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 200


@pytest.mark.parametrize("kind", ["page", "api"])
def test_stack_run_and_decision_reads_carry_last_modified_and_honour_if_modified_since(client, reader, kind):
    """Reads not drawn from the catalog alone have no single timestamp: their Last-Modified is when
    their content was first served, and a browser sending only If-Modified-Since gets a 304 until it moves."""
    from placement.evidence.models import SimulationRun
    from placement.stacks.models import Stack

    stack = Stack.objects.create(name="s", profile="training", composition={"components": ["kueue"]})
    run = SimulationRun.objects.create(stack=stack, scenario_name="x", scenario={}, seed=1, fingerprint="f")
    client.force_login(reader)
    urls = [f"/stacks/{stack.pk}/", f"/runs/{run.pk}/"] if kind == "page" else [f"/api/v1/stacks/{stack.pk}/", f"/api/v1/simulations/{run.pk}/"]
    for url in urls:
        first = client.get(url)
        assert first.status_code == 200 and first.has_header("Last-Modified"), url
        assert client.get(url)["Last-Modified"] == first["Last-Modified"]  # the same content: the same moment
        assert client.get(url, HTTP_IF_MODIFIED_SINCE=first["Last-Modified"]).status_code == 304
    SimulationRun.objects.filter(pk=run.pk).update(status=SimulationRun.FAILED, error="the worker was lost")
    moved = client.get(urls[1], HTTP_IF_NONE_MATCH=client.get(urls[0])["ETag"])
    assert moved.status_code == 200


# --- rendered once per version, each visitor's own header ---------------------------------------


def _token(body: str) -> str:
    return re.search(r'"X-CSRFToken": "([A-Za-z0-9]+)"', body).group(1)


def test_a_cached_page_shows_each_visitor_their_own_name_and_a_token_that_works(reader, architect):
    Client().get("/projects/")  # cached by an anonymous visitor
    for user in (reader, architect, reader):
        browser = Client(enforce_csrf_checks=True)
        browser.force_login(user)
        body = browser.get("/projects/").content.decode()
        assert f"{user.username} ·" in body
        others = {"rita", "arch"} - {user.username}
        assert not any(f"{name} ·" in body for name in others)
        assert "atlasDonut" not in body
        # The page's token is this browser's: logging out with it passes the CSRF check.
        assert browser.post("/logout/", HTTP_X_CSRFTOKEN=_token(body)).status_code == 302


def test_an_anonymous_visitor_after_a_signed_in_one_gets_the_log_in_link(reader):
    signed_in = Client()
    signed_in.force_login(reader)
    signed_in.get("/map/")
    body = Client().get("/map/").content.decode()
    assert "Log in" in body and "rita" not in body


def test_a_message_is_shown_on_a_cached_page_and_then_gone(client, reader):
    from django.contrib.messages import constants
    from django.contrib.messages.storage.base import Message
    from django.contrib.messages.storage.cookie import CookieStorage
    from django.test import RequestFactory

    client.force_login(reader)
    client.get("/projects/")  # cached
    storage = CookieStorage(RequestFactory().get("/"))
    client.cookies["messages"] = storage._encode([Message(constants.SUCCESS, "Your change was proposed for review.")])
    assert "Your change was proposed for review." in client.get("/projects/").content.decode()
    assert "Your change was proposed for review." not in client.get("/projects/").content.decode()


def test_a_proposal_shows_as_pending_on_the_cached_map(client, architect, new_project_data):
    url = "/map/?pending=1"
    assert "Example Queue" not in client.get(url).content.decode()
    review.project_create(ProjectDocument.model_validate(new_project_data), user=architect, reason="new")
    assert "Example Queue" in client.get(url).content.decode()


def test_a_stack_saved_since_the_map_was_cached_is_offered_on_it(client):
    from placement.stacks.models import Stack

    client.get("/map/")
    Stack.objects.create(name="Freshly saved stack", profile="training", composition={"components": ["kueue"]})
    assert "Freshly saved stack" in client.get("/map/").content.decode()


def test_an_import_shows_on_the_cached_pages(client, tmp_path):
    shutil.copytree(CATALOG_DIR, tmp_path / "catalog")
    kueue = tmp_path / "catalog" / "kueue.yaml"
    kueue.write_text(kueue.read_text().replace("name: Kueue", "name: Kueue Renamed", 1))
    assert "Kueue Renamed" not in client.get("/projects/").content.decode()
    catalog_import(tmp_path / "catalog")
    assert "Kueue Renamed" in client.get("/projects/").content.decode()
    assert "Kueue Renamed" in client.get("/api/v1/projects/kueue/").content.decode()


# --- query counts --------------------------------------------------------------------------------

# Drawn afresh: the catalog state (1) and what the view reads. Cached: the catalog state only.
COLD_QUERIES = {
    "/": 6,
    "/map/": 10,
    "/projects/": 4,
    "/projects/kueue/": 6,
    "/landscape/": 5,
    "/api/v1/projects/": 4,
    "/api/v1/projects/kueue/": 2,
}


@pytest.mark.parametrize("url", COLD_QUERIES)
def test_each_catalog_view_runs_a_fixed_number_of_queries(client, url, django_assert_num_queries):
    with django_assert_num_queries(COLD_QUERIES[url]):
        assert client.get(url).status_code == 200
    with django_assert_num_queries(1):
        etag = client.get(url)["ETag"]
    with django_assert_num_queries(1):
        assert client.get(url, HTTP_IF_NONE_MATCH=etag).status_code == 304


@pytest.mark.parametrize("url", ["/projects/", "/api/v1/projects/kueue/"])
def test_a_signed_in_reader_adds_only_the_session_and_user(client, reader, url, django_assert_num_queries):
    client.force_login(reader)
    client.get(url)
    with django_assert_num_queries(3):  # session, user, catalog state
        assert client.get(url).status_code == 200


def test_the_project_detail_api_reads_the_project_in_one_query_whatever_its_size(client, django_assert_num_queries):
    for slug in Project.objects.filter(accepted=True).values_list("slug", flat=True)[:5]:
        with django_assert_num_queries(2):  # catalog state, the project
            assert client.get(f"/api/v1/projects/{slug}/").status_code == 200


# --- compression ---------------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["/map/", "/api/v1/projects/"])
def test_the_map_html_and_the_api_json_travel_compressed(client, url):
    plain = client.get(url)
    packed = client.get(url, HTTP_ACCEPT_ENCODING="gzip")
    assert packed["Content-Encoding"] == "gzip"
    assert len(packed.content) * 3 < len(plain.content)
    if url == "/map/":  # the two renders carry different CSRF tokens; the rest is the same page
        assert _TOKENLESS(gzip.decompress(packed.content)) == _TOKENLESS(plain.content)
    else:
        assert gzip.decompress(packed.content) == plain.content


def _TOKENLESS(body: bytes) -> bytes:
    """The page without its CSRF tokens (masked afresh for every response)."""
    return re.sub(rb'("X-CSRFToken": "|name="csrfmiddlewaretoken" value=")[A-Za-z0-9]+', rb"\1", body)


# --- no per-row query in serializers -------------------------------------------------------------


def _add_rows(n: int, architect) -> None:
    from placement.decisions.models import DecisionRecord
    from placement.evidence.models import SimulationRun
    from placement.stacks.models import Stack

    for i in range(n):
        stack = Stack.objects.create(name=f"s{i}", profile="training", composition={"components": ["kueue"]}, created_by=architect)
        SimulationRun.objects.create(stack=stack, scenario_name="x", scenario={}, seed=i, fingerprint=f"f{i}", created_by=architect)
        DecisionRecord.objects.create(title=f"d{i}", reason="r", author=architect)
        review.revision_propose(
            Project.objects.get(slug="kueue"),
            ProjectDocument.model_validate({**_kueue(), "summary": f"change {i}"}),
            user=architect, reason=f"change {i}",
        )  # fmt: skip


def _kueue() -> dict:
    from placement.catalog.selectors.catalog import project_document

    return project_document(Project.objects.get(slug="kueue")).model_dump(mode="json")


@pytest.mark.parametrize(
    "url", ["/api/v1/stacks/", "/api/v1/simulations/", "/api/v1/decisions/", "/api/v1/revisions/", "/api/v1/projects/kueue/revisions/"]
)
def test_a_list_endpoint_runs_as_many_queries_for_many_rows_as_for_one(url, architect):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client = Client()
    client.force_login(architect)

    def count() -> int:
        client.get(url)  # the session, the rules graph: warmed once
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(url).status_code == 200
        return len(ctx.captured_queries)

    _add_rows(1, architect)
    one = count()
    _add_rows(6, architect)
    assert count() == one


def test_a_cached_page_travels_gzipped_with_each_visitors_own_token_and_name(reader, architect):
    """The compressed copy kept per catalog version decodes to the page each visitor would get
    uncompressed: their own name, and a CSRF token of theirs that works."""
    Client().get("/map/")  # rendered and kept by an anonymous visitor
    for user in (reader, architect):
        browser = Client(enforce_csrf_checks=True)
        browser.force_login(user)
        plain = browser.get("/map/").content
        packed = browser.get("/map/", HTTP_ACCEPT_ENCODING="gzip, deflate, br")
        assert packed["Content-Encoding"] == "gzip" and "Accept-Encoding" in packed["Vary"]
        page = gzip.decompress(packed.content)
        assert _TOKENLESS(page) == _TOKENLESS(plain)
        assert len(packed.content) * 3 < len(page)
        assert f"{user.username} ·".encode() in page and b"atlasDonut" not in page
        assert browser.post("/logout/", HTTP_X_CSRFTOKEN=_token(page.decode())).status_code == 302


def test_a_cached_page_is_compressed_once_per_version_not_per_request(client, monkeypatch):
    client.get("/map/", HTTP_ACCEPT_ENCODING="gzip")  # rendered, kept and compressed once

    def compress_again(*args, **kwargs):
        raise AssertionError("the cached page was compressed again for this request")

    monkeypatch.setattr("django.middleware.gzip.compress_string", compress_again)
    packed = client.get("/map/", HTTP_ACCEPT_ENCODING="gzip")
    assert packed["Content-Encoding"] == "gzip"
    assert b"layer-map-figure" in gzip.decompress(packed.content)
