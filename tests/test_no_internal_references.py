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


JOURNEYS = [
    "/compose/?profile=&gpu_model=A100-80GB&gpu_count=32&w1-name=chat&w1-kind=online_inference&w1-replicas=8"
    "&w1-gpus_per_replica=0.25&w1-gpu_memory_gib=12&w1-p99_ms=150&w1-tenants=2&w2-name=train&w2-kind=training"
    "&w2-replicas=2&w2-gpus_per_replica=8&w2-gpu_memory_gib=70&w2-gang=on&w2-peer_to_peer=on&w2-tenants=2",
    "/compose/?profile=online_inference&gpu_model=H100-80GB&gpu_count=16",
    "/compose/?profile=training",
    "/compare/?slugs=hami&slugs=volcano",
    "/projects/hami/",
]


@pytest.mark.django_db
@pytest.mark.parametrize("url", JOURNEYS)
def test_answers_on_the_journeys_cite_upstream_not_internal_notes(client, url):
    body = client.get(url).content.decode()
    found = INTERNAL.findall(body)
    assert not found, f"{url} shows internal references {sorted(set(found))}"
