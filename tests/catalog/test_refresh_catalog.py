"""manage.py refresh_catalog: upstream differences become proposals in the review queue, with the
source; an unchanged entry files nothing; nothing is edited silently (issue 33)."""

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from placement.catalog.models import Project
from placement.review.models import Revision

RECORDED = Path(__file__).parent / "upstream_responses"
SLUGS = ["kueue", "volcano", "aibrix", "descheduler", "armada"]


def refresh(*slugs):
    out, err = StringIO(), StringIO()
    call_command("refresh_catalog", *slugs, "--recorded", str(RECORDED), stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def landscape_of(revision):
    return revision.document["placement"]["landscape"]


@pytest.mark.django_db
def test_each_kind_of_upstream_change_is_proposed_with_its_source_and_nothing_is_applied():
    before = {p.slug: (p.version, p.placement["landscape"]) for p in Project.objects.filter(slug__in=SLUGS)}
    out, _ = refresh(*SLUGS)
    proposals = {r.project.slug: r for r in Revision.objects.filter(project__slug__in=SLUGS, status=Revision.PROPOSED)}
    assert set(proposals) == {"volcano", "aibrix", "descheduler", "armada"}  # kueue is unchanged upstream
    assert landscape_of(proposals["volcano"])["latest_release"] == {"version": "v1.16.0", "date": "2026-11-12"}
    assert landscape_of(proposals["aibrix"])["license"] == "MIT"
    assert landscape_of(proposals["descheduler"])["archived"] is True
    assert landscape_of(proposals["armada"])["cncf_status"] == "incubating"
    read = proposals["volcano"].document["placement"]["sources"][-1]
    assert read["supports"] == ["landscape.latest_release"] and read["tag"] == "V"
    assert read["url"] == "https://github.com/volcano-sh/volcano" and "GitHub REST API" in read["title"]
    assert "latest_release: v1.15.1 (2026-07-30) -> v1.16.0 (2026-11-12)" in proposals["volcano"].reason
    assert landscape_of(proposals["volcano"])["as_of"] == read["checked"]  # as_of follows the new read
    assert proposals["aibrix"].author.username == "catalog-refresh"
    # nothing changed in the catalog itself until a reviewer accepts
    assert {p.slug: (p.version, p.placement["landscape"]) for p in Project.objects.filter(slug__in=SLUGS)} == before
    assert "proposed volcano" in out and "4 proposal(s), 1 unchanged" in out


@pytest.mark.django_db
def test_a_second_run_files_no_duplicate_and_an_unreadable_entry_is_named():
    refresh("volcano")
    out, err = refresh("volcano", "kai-scheduler")
    assert Revision.objects.filter(project__slug="volcano", status=Revision.PROPOSED).count() == 1
    assert "already proposed volcano" in out
    assert "skipped kai-scheduler: no recorded response for https://api.github.com/repos/kai-scheduler/KAI-Scheduler" in err
