"""An import writes every file or none, also when the database fails in the middle of the writes
(validation errors are caught before any write and are tested in test_import_export.py)."""

import shutil

import pytest
import yaml
from django.db import DatabaseError

from placement.catalog.models import Project, ProjectFacet, ProjectLayer
from placement.catalog.services import catalog as catalog_services
from placement.review.models import Revision
from tests.conftest import CATALOG_DIR

pytestmark = pytest.mark.django_db


def _state():
    return (
        sorted(Project.objects.values_list("slug", "name", "version", "summary")),
        Revision.objects.count(),
        ProjectLayer.objects.count(),
        ProjectFacet.objects.count(),
    )


def test_a_database_failure_in_the_middle_of_an_import_leaves_the_catalog_unchanged(tmp_path, monkeypatch):
    directory = tmp_path / "catalog"
    shutil.copytree(CATALOG_DIR, directory)
    renamed = ("hami", "kueue", "volcano")  # written in this order (unchanged files are skipped)
    for slug in renamed:
        data = yaml.safe_load((directory / f"{slug}.yaml").read_text())
        data["name"] += " (renamed)"
        (directory / f"{slug}.yaml").write_text(yaml.safe_dump(data))
    before = _state()

    real_refresh = catalog_services.project_index_refresh
    calls = []

    def refresh_then_fail(project, doc, layers):
        calls.append(doc.slug)
        if len(calls) == len(renamed):  # the last write fails, after the others were written
            raise DatabaseError("could not extend file: No space left on device")
        real_refresh(project, doc, layers)

    monkeypatch.setattr(catalog_services, "project_index_refresh", refresh_then_fail)
    with pytest.raises(DatabaseError):
        catalog_services.catalog_import(directory)
    assert calls == list(renamed), "two renamed projects were written before the failure"
    assert _state() == before
    assert Project.objects.get(slug="kueue").name == "Kueue"
