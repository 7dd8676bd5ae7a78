"""A project written to the catalog is found at once by the list's filters and text search (the index rows
and search text are rebuilt from its document), in any letter case."""

from __future__ import annotations

import pytest

from placement.catalog.models import Project
from placement.catalog.schemas import ProjectDocument
from placement.catalog.services.catalog import project_apply

pytestmark = pytest.mark.django_db


def _slugs(client, query: str) -> set[str]:
    body = client.get(f"/api/v1/projects/?{query}&limit=200").json()
    return {p["slug"] for p in body["results"]}


def test_a_new_project_is_found_by_its_capability_unit_and_words(client, new_project_data):
    data = dict(new_project_data, summary="Admits zephyrine batch workloads by team quota.")
    project_apply(Project(), ProjectDocument.model_validate(data))
    capability = data["placement"]["capabilities"][0]
    assert "example-queue" in _slugs(client, f"capability={capability}")
    assert "example-queue" in _slugs(client, "unit=whole_gpu")
    assert _slugs(client, "q=Zephyrine") == {"example-queue"}
    assert _slugs(client, "q=ZEPHYRINE+batch") == {"example-queue"}
