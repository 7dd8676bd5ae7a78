"""Shared fixtures. The real catalog is imported once per test database; transactional tests
(worker, browser) run last and re-import it when a flush has emptied the tables."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml

# Django is imported inside the fixtures, so the pure packages' tests (tests/rules,
# tests/scheduler_core) also run alone with `-p no:django`.
CATALOG_DIR = Path(__file__).resolve().parent.parent / "fixtures" / "catalog"


def load_catalog() -> None:
    from django.core.management import call_command

    from placement.catalog.services.catalog import catalog_import

    call_command("seed_roles")
    catalog_import(CATALOG_DIR)


@pytest.fixture(scope="session", autouse=True)
def uncollected_static_files():
    """Pages under test link static files by their plain names: the manifest storage needs
    `collectstatic` first, which tests/browser/test_static_and_embedded.py runs against a real server."""
    from django.test.utils import override_settings

    storages = {
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    with override_settings(STORAGES=storages):
        yield


@pytest.fixture(scope="session", autouse=True)
def eager_celery():
    """Pages' and services' tests run tasks in-process; the worker tests (tests/evidence/conftest.py)
    switch to a real broker and worker, the embedded-mode browser test runs `serve_embedded`."""
    from config.celery import app

    app.conf.update(task_always_eager=True, broker_url="memory://", broker_transport_options={})
    yield


@pytest.fixture(autouse=True)
def empty_page_cache():
    """Each test starts with no cached page or API payload (placement.catalog.page_cache): the keys hold
    the catalog state, but a rolled-back test can leave the same state with other rows."""
    from django.apps import apps

    if apps.ready:  # the pure packages' tests (-p no:django) have no Django to clear
        from placement.catalog import page_cache

        page_cache.clear()
    yield


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        load_catalog()


@pytest.fixture
def ensure_catalog(transactional_db):
    from placement.catalog.models import Project

    if not Project.objects.filter(accepted=True).exists():
        load_catalog()


def make_user(username: str, role: str | None = None, **extra):
    from django.contrib.auth.models import Group, User

    user = User.objects.create_user(username=username, password="pw-" + username, **extra)
    if role:
        group, _ = Group.objects.get_or_create(name=role)
        user.groups.add(group)
    return user


@pytest.fixture
def reader(db):
    return make_user("rita", "reader")


@pytest.fixture
def architect(db):
    return make_user("arch", "architect")


@pytest.fixture
def other_architect(db):
    return make_user("arch2", "architect")


@pytest.fixture
def reviewer(db):
    return make_user("rev", "reviewer")


@pytest.fixture
def kueue_data() -> dict:
    """Kueue's catalog entry as a client would send it: JSON types (YAML's dates become strings)."""
    return json.loads(json.dumps(yaml.safe_load((CATALOG_DIR / "kueue.yaml").read_text()), default=str))


@pytest.fixture
def new_project_data(kueue_data) -> dict:
    """A valid document for a project that is not in the catalog."""
    data = copy.deepcopy(kueue_data)
    data["slug"] = "example-queue"
    data["name"] = "Example Queue"
    data["placement"]["dependencies"]["requires"] = []
    data["placement"]["bundles"] = []
    data["placement"]["conflicts_with"] = []
    return data


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    """The whole-plane tests (marked `controlplane`, no database) run last: the session's control plane
    (tests/localplane/conftest.py) then starts after everything else and its idle controllers do not share
    the CPU with the rest of the suite. After pytest-django's own ordering (trylast); the order is stable."""
    def plane_only(item) -> bool:
        return item.get_closest_marker("controlplane") is not None and item.get_closest_marker("django_db") is None \
            and "transactional_db" not in getattr(item, "fixturenames", ())

    items.sort(key=plane_only)
