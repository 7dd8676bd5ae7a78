"""The menu's Projects link opens /projects/ with no query string: every project, not an empty state,
on a desktop and on a phone."""

import pytest
from playwright.sync_api import expect

from placement.catalog.models import Project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1440, 375])
def test_the_menus_projects_link_lists_every_project(page, width):
    page.set_viewport_size({"width": width, "height": 900})
    page.goto("/")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Projects", exact=True).click()
    page.wait_for_url("**/projects/")
    accepted = Project.objects.filter(accepted=True).count()
    assert accepted > 10
    expect(page.locator('#project-table a[href^="/projects/"]')).to_have_count(accepted)
    expect(page.get_by_text("No project matches")).to_have_count(0)
