"""Pages speak to readers: no page of the main menu cites the team's internal notes (seeds/,
reference/ files, "§" section marks) and the radar is one click away from every page."""

import re

import pytest

INTERNAL = re.compile(r"seeds/\d|reference/|domain-facts|§")


@pytest.mark.django_db
def test_no_menu_page_cites_internal_notes(client):
    home = client.get("/")
    assert home.status_code == 200
    nav = home.content.decode().split('<nav aria-label="Main">', 1)[1].split("</nav>", 1)[0]
    links = re.findall(r'href="([^"]+)"', nav)
    assert "/radar/" in links
    for url in links:
        body = client.get(url).content.decode()
        found = INTERNAL.findall(body)
        assert not found, f"{url} shows internal references {sorted(set(found))}"
