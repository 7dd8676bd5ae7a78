"""import_catalog is all-or-nothing and names file, field and reason; export round-trips exactly."""

import shutil
from io import StringIO

import pytest
import yaml
from django.core.management import CommandError, call_command

from placement.catalog.models import Project
from placement.review.models import Revision
from tests.conftest import CATALOG_DIR


def copy_catalog(tmp_path):
    target = tmp_path / "catalog"
    shutil.copytree(CATALOG_DIR, target)
    return target


def snapshot():
    return sorted(Project.objects.values_list("slug", "version", "updated_at"))


@pytest.mark.django_db
def test_malformed_file_names_file_field_and_reason_and_changes_nothing(tmp_path):
    directory = copy_catalog(tmp_path)
    broken = yaml.safe_load((directory / "volcano.yaml").read_text())
    broken["placement"]["resource_units"] = "whole_gpu"
    (directory / "volcano.yaml").write_text(yaml.safe_dump(broken))
    # A valid change elsewhere in the same import must not be written either.
    kueue = yaml.safe_load((directory / "kueue.yaml").read_text())
    kueue["name"] = "Kueue (renamed)"
    (directory / "kueue.yaml").write_text(yaml.safe_dump(kueue))
    before = snapshot()
    revisions_before = Revision.objects.count()
    err = StringIO()
    with pytest.raises(CommandError, match="nothing was imported"):
        call_command("import_catalog", str(directory), stderr=err)
    assert "volcano.yaml: placement.resource_units: Input should be a valid list" in err.getvalue()
    assert snapshot() == before
    assert Revision.objects.count() == revisions_before
    assert Project.objects.get(slug="kueue").name == "Kueue"


@pytest.mark.django_db
def test_yaml_syntax_error_names_the_line(tmp_path):
    directory = copy_catalog(tmp_path)
    (directory / "zz-broken.yaml").write_text("slug: broken\nname: [unclosed\n")
    err = StringIO()
    with pytest.raises(CommandError):
        call_command("import_catalog", str(directory), stderr=err)
    assert "zz-broken.yaml: line" in err.getvalue()


@pytest.mark.django_db
def test_reference_to_unknown_project_is_refused(tmp_path):
    directory = copy_catalog(tmp_path)
    data = yaml.safe_load((directory / "kueue.yaml").read_text())
    data["placement"]["dependencies"]["requires"] = ["no-such-project"]
    (directory / "kueue.yaml").write_text(yaml.safe_dump(data))
    err = StringIO()
    with pytest.raises(CommandError):
        call_command("import_catalog", str(directory), stderr=err)
    assert "kueue.yaml: placement.dependencies.requires: unknown project 'no-such-project'" in err.getvalue()


@pytest.mark.django_db
def test_export_import_export_is_byte_identical(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    call_command("export_catalog", str(first), stdout=StringIO())
    Project.objects.all().delete()
    assert Project.objects.count() == 0
    call_command("import_catalog", str(first), stdout=StringIO())
    call_command("export_catalog", str(second), stdout=StringIO())
    names = sorted(p.name for p in first.iterdir())
    assert names == sorted(p.name for p in second.iterdir())
    assert len(names) >= 30
    for name in names:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


@pytest.mark.django_db
def test_import_records_an_accepted_revision_per_project():
    project = Project.objects.get(slug="kueue")
    accepted = project.revisions.filter(status=Revision.ACCEPTED)
    assert accepted.count() == project.version
    assert accepted.first().reason.startswith("Imported from catalog/kueue.yaml")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"slug: kueue\nname: Caf\xe9\n", "zz-latin1.yaml: (document): not UTF-8 text: byte 0xe9 at offset 21"),
        (("slug: deep\nplacement: " + "[" * 100_000 + "]" * 100_000 + "\n").encode(), "zz-deep.yaml: (document): nested too deeply"),
    ],
    ids=["non-utf-8", "nested-100000-deep"],
)
def test_an_unreadable_file_is_named_with_the_reason_not_a_traceback(tmp_path, content, reason):
    directory = copy_catalog(tmp_path)
    name = reason.split(":")[0]
    (directory / name).write_bytes(content)
    before = snapshot()
    err = StringIO()
    with pytest.raises(CommandError, match="nothing was imported"):
        call_command("import_catalog", str(directory), stderr=err)
    assert reason in err.getvalue()
    assert "Traceback" not in err.getvalue()
    assert snapshot() == before


@pytest.mark.django_db
def test_reimporting_unchanged_files_keeps_versions_and_adds_no_revisions(tmp_path):
    directory = copy_catalog(tmp_path)
    before = snapshot()
    revisions_before = Revision.objects.count()
    call_command("import_catalog", str(directory), stdout=StringIO())
    assert snapshot() == before
    assert Revision.objects.count() == revisions_before
    kueue = yaml.safe_load((directory / "kueue.yaml").read_text())
    kueue["name"] = "Kueue (renamed)"
    (directory / "kueue.yaml").write_text(yaml.safe_dump(kueue))
    version = Project.objects.get(slug="kueue").version
    call_command("import_catalog", str(directory), stdout=StringIO())
    assert Project.objects.get(slug="kueue").version == version + 1
    assert Revision.objects.count() == revisions_before + 1
