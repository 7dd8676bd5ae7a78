"""lint_catalog: whole-catalog contradictions the per-file schema cannot see, as `file: field: reason`."""

import datetime as dt
import shutil
from io import StringIO

import pytest
import yaml
from django.core.management import CommandError, call_command

from placement.catalog.lint import lint_catalog_dir
from placement.catalog.models import Project
from tests.conftest import CATALOG_DIR


def copy_catalog(tmp_path):
    target = tmp_path / "catalog"
    shutil.copytree(CATALOG_DIR, target)
    return target


def edit(directory, slug, change):
    path = directory / f"{slug}.yaml"
    data = yaml.safe_load(path.read_text())
    change(data["placement"])
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def findings(directory, **options):
    return [str(e) for e in lint_catalog_dir(directory, **options)]


def test_the_shipped_catalog_is_clean_by_the_command_ci_runs():
    out = StringIO()
    call_command("lint_catalog", str(CATALOG_DIR), stdout=out, stderr=StringIO())
    assert "catalog is clean" in out.getvalue()


def test_a_capability_claimed_while_a_non_promise_rules_it_out(tmp_path):
    directory = copy_catalog(tmp_path)
    edit(directory, "volcano", lambda p: p["capabilities"].append("backfill"))  # the issue-12 defect
    assert findings(directory) == [
        "volcano.yaml: placement.capabilities: 'backfill' is claimed while the non-promises rule it out (denied_capabilities)"
    ]


def test_a_capability_claimed_and_recorded_as_a_misuse(tmp_path):
    directory = copy_catalog(tmp_path)
    edit(directory, "kueue", lambda p: p["capabilities"].append("raise-per-gpu-utilisation"))
    assert any(f.startswith("kueue.yaml: placement.misuses[0].capability: 'raise-per-gpu-utilisation' is recorded as a misuse")
               for f in findings(directory))


def test_a_one_sided_conflict_and_a_required_conflicting_project(tmp_path):
    directory = copy_catalog(tmp_path)
    edit(directory, "cuda-mps", lambda p: p.update(conflicts_with=[]))
    edit(directory, "kueue", lambda p: p["dependencies"]["requires"].append("time-slicing"))
    edit(directory, "time-slicing", lambda p: p["conflicts_with"].append("kueue"))
    found = findings(directory)
    assert "time-slicing.yaml: placement.conflicts_with[0]: conflict with 'cuda-mps' is not symmetric: cuda-mps.yaml does not list 'time-slicing'" in found
    assert "kueue.yaml: placement.dependencies.requires[0]: requires 'time-slicing', which declares a conflict with 'kueue'" in found


def test_a_unit_advertised_that_nobody_allocates(tmp_path):
    directory = copy_catalog(tmp_path)
    # node-level facts are never handed to a container, so no project allocates the `node` unit
    edit(directory, "gpu-feature-discovery", lambda p: p["contract_points"].append(
        {"point": "advertise", "units": ["node"], "how": "Advertises its labels as if they were a resource."}))
    found = findings(directory)
    assert any(f.startswith("gpu-feature-discovery.yaml: placement.contract_points[")
               and f.endswith("advertises 'node' but no catalog project allocates it") for f in found), found


def test_a_source_without_grade_or_citing_a_file_beside_the_project(tmp_path):
    directory = copy_catalog(tmp_path)
    edit(directory, "kueue", lambda p: p["sources"].append({"title": "Old habit", "section": "seeds/000_d0b0a9783c658148.txt"}))
    found = findings(directory)
    n = "placement.sources["
    assert any(f.startswith("kueue.yaml: " + n) and f.endswith("].tag: source has no evidence grade (V, V-code, D, S, U)") for f in found)
    assert any(f.endswith("cites a file beside the project; cite the chapter or note by title and section") for f in found)


def test_an_entry_past_its_as_of_limit_and_one_without_metadata(tmp_path):
    directory = copy_catalog(tmp_path)
    edit(directory, "kueue", lambda p: p.pop("landscape"))
    found = findings(directory, today=dt.date(2027, 9, 1))
    assert "kueue.yaml: placement.landscape: no landscape metadata (license, repository, CNCF status, ...)" in found
    assert "volcano.yaml: placement.landscape.as_of: checked 2026-08-20, 377 days ago; re-check entries within 365 days" in found


def test_the_command_exits_non_zero_and_prints_every_finding(tmp_path):
    directory = copy_catalog(tmp_path)
    edit(directory, "volcano", lambda p: p["capabilities"].append("backfill"))
    err = StringIO()
    with pytest.raises(CommandError, match="1 finding"):
        call_command("lint_catalog", str(directory), stderr=err)
    assert "error: volcano.yaml: placement.capabilities: 'backfill' is claimed" in err.getvalue()


@pytest.mark.django_db
def test_import_refuses_a_catalog_that_fails_lint_and_writes_nothing(tmp_path):
    directory = copy_catalog(tmp_path)
    edit(directory, "volcano", lambda p: p["capabilities"].append("backfill"))
    before = sorted(Project.objects.values_list("slug", "version"))
    err = StringIO()
    with pytest.raises(CommandError, match="nothing was imported"):
        call_command("import_catalog", str(directory), stderr=err)
    assert "volcano.yaml: placement.capabilities" in err.getvalue()
    assert sorted(Project.objects.values_list("slug", "version")) == before


# --- issue 33: a date cannot stand in for reading ---------------------------------------------------


def test_an_as_of_newer_than_the_newest_source_read_is_refused(tmp_path):
    directory = copy_catalog(tmp_path)
    edit(directory, "kueue", lambda p: p["landscape"].update(as_of="2026-12-01"))  # the bump that silenced the check
    found = findings(directory, today=dt.date(2026, 12, 3))
    assert any(f.startswith("kueue.yaml: placement.landscape.as_of: 2026-12-01 is newer than the newest source read (")
               and f.endswith("as_of comes from the sources, not from a typed date") for f in found), found


def test_recalled_facts_with_a_recent_date_are_refused(tmp_path):
    directory = copy_catalog(tmp_path)
    edit(directory, "kueue", lambda p: p["landscape"].update(evidence="U"))
    found = findings(directory)
    assert any(f.startswith("kueue.yaml: placement.landscape.evidence: recalled facts (U) carry a recent as_of") for f in found), found


def test_evidence_v_needs_a_read_upstream_source_for_a_landscape_fact(tmp_path):
    directory = copy_catalog(tmp_path)

    def unread(p):
        for source in p["sources"]:
            source.pop("checked", None)
        p["sources"].append({"title": "Read once", "url": "https://example.org/", "tag": "S", "checked": "2026-08-01"})
        p["landscape"].update(evidence="V", as_of="2026-08-01")
    edit(directory, "kueue", unread)
    found = findings(directory)
    assert "kueue.yaml: placement.landscape.evidence: 'V' but no source read upstream (V or V-code, checked) supports a landscape fact" in found
    assert "kueue.yaml: placement.landscape.latest_release: no source read on a known day supports it (supports + checked)" in found


def test_a_release_a_year_older_than_as_of_needs_a_note(tmp_path):
    directory = copy_catalog(tmp_path)
    edit(directory, "gpushare-scheduler-extender", lambda p: p["landscape"].pop("note"))
    found = findings(directory)
    assert any(f.startswith("gpushare-scheduler-extender.yaml: placement.landscape.latest_release: v0.2.0 of 2022-11-25 "
                            "is more than 365 days older than as_of") for f in found), found


def test_a_requires_that_the_entry_calls_an_option_is_refused(tmp_path):
    directory = copy_catalog(tmp_path)
    # the audit's defects: Grove "requires" KAI, Dynamo "requires" Grove, each text naming the alternatives
    edit(directory, "grove", lambda p: p["dependencies"]["requires"].append("kai-scheduler"))
    edit(directory, "nvidia-dynamo", lambda p: p["dependencies"]["requires"].append("grove"))
    found = findings(directory)
    assert any(f.startswith("grove.yaml: placement.dependencies.requires[0]: requires 'kai-scheduler', but the entry's own "
                            "text makes it an option:") for f in found), found
    assert any(f.startswith("nvidia-dynamo.yaml: placement.dependencies.requires[0]: requires 'grove'") for f in found), found


def test_a_release_the_recorded_upstream_tags_do_not_list_is_refused(tmp_path):
    directory = copy_catalog(tmp_path)
    edit(directory, "grove", lambda p: p["landscape"].update(latest_release={"version": "v0.1.0", "date": "2025-11-01"}))
    found = findings(directory)
    assert any(f.startswith("grove.yaml: placement.landscape.latest_release.version: 'v0.1.0' is not a release tag of "
                            "https://github.com/ai-dynamo/grove") for f in found), found
