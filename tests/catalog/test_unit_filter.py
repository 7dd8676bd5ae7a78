"""The resource-unit filter finds the projects where a unit lives: data-plane projects by every unit
they hand out, others by their primary unit and the units of their contract points, not every
project a pod requesting the unit passes through (issue 13: the MIG filter showed 20 of 36)."""

import pytest

pytestmark = pytest.mark.django_db



def test_mig_filter_shows_where_mig_lives_not_every_project_that_passes_it_through(client):
    from placement.catalog.models import Project
    from placement.catalog.schemas import units_served

    page = client.get("/projects/?unit=mig_instance").content.decode()
    for slug in ("mig", "mig-manager", "nvidia-device-plugin", "hami", "volcano", "kueue"):
        assert f'href="/projects/{slug}/"' in page, slug
    for slug in ("jobset", "lws", "kuberay", "resource-quota"):
        assert f'href="/projects/{slug}/"' not in page, slug
    served = [p.slug for p in Project.objects.filter(accepted=True) if "mig_instance" in units_served(p.placement)]
    listing_mig = [p.slug for p in Project.objects.filter(accepted=True) if "mig_instance" in p.placement["resource_units"]]
    assert len(served) < len(listing_mig) / 2, (len(served), len(listing_mig))


def test_the_map_uses_the_same_rule_as_the_list(client):
    html = client.get("/map/list/?view=control-plane&unit=mig_instance").content.decode()
    assert "/projects/mig/" in html and "/projects/jobset/" not in html
