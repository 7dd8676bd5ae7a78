"""The server half of the layer map, without a browser: the selector's data, figure and contract
edges, the filters, the htmx fragment and its pushed URL, and the embeds' framing headers.
(Not marked `browser`: these run with the fast tests too.)"""

from __future__ import annotations

import copy

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from placement.catalog.map_figure import layer_map_figure
from placement.catalog.models import Project
from placement.catalog.schemas import ProjectDocument, units_served
from placement.catalog.selectors.layer_map import (
    MapFilters,
    contract_edges,
    layer_map_data,
    layer_map_groups,
    placements,
)
from placement.review import services as review_services
from placement.stacks.services import stacks as rules_services

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
INFERENCE = {
    "profile": "online_inference",
    "pool": {"gpu_model": "A100-80GB", "gpu_count": 32},
    "constraints": {},
    "slo": {"isolation": "hard", "goal": "latency_sensitive", "multi_tenant": True},
}


@pytest.fixture
def stack(architect):
    return rules_services.stack_save(user=architect, request_data=INFERENCE, rank=1, name="Inference")


def trace(figure: dict, name: str) -> dict:
    return next(t for t in figure["data"] if t["name"] == name)


# --- placement on the three views -------------------------------------------------------------------


@pytest.mark.parametrize("view, rows, columns", [
    ("control-plane", ["L0", "L1", "L2", "L3", "L4"], ["data", "control", "platform"]),
    ("planes", ["L0", "L1", "L2", "L3", "L4"], ["data", "control", "platform"]),
    ("architecture", ["device-discovery", "scheduling-decision", "node-execution", "cluster-governance"], ["data", "control", "platform"]),
])
def test_each_view_places_every_accepted_project_once_as_primary_plus_its_secondaries(view, rows, columns):
    data = layer_map_data(MapFilters(view=view, archived=True))  # archived projects shown too
    assert [b.code for b in data.rows] == rows and [b.code for b in data.columns] == columns
    accepted = list(Project.objects.filter(accepted=True))
    placed = placements(data)
    primary = [p.project.slug for p in placed if p.role == "primary"]
    assert sorted(primary) == sorted(p.slug for p in accepted)
    secondary_expected = sum(len(p.placement["maps"][view]["secondary"]) for p in accepted)
    assert sum(1 for p in placed if p.role == "secondary") == secondary_expected
    figure = layer_map_figure(data)
    assert len(trace(figure, "Primary placement")["x"]) == len(accepted)
    assert len(trace(figure, "Secondary placement")["x"]) == secondary_expected
    assert trace(figure, "Secondary placement")["marker"]["symbol"] == "circle-open"  # visibly different


def test_a_project_sits_on_its_primary_layer_and_plane_in_the_control_plane_view():
    data = layer_map_data(MapFilters(view="control-plane"))
    kueue = [(p.row, p.column, p.role) for p in placements(data) if p.project.slug == "kueue"]
    doc = Project.objects.get(slug="kueue").placement["maps"]
    assert (doc["control-plane"]["primary"], doc["planes"]["primary"], "primary") in kueue
    for code in doc["control-plane"]["secondary"]:
        assert (code, doc["planes"]["primary"], "secondary") in kueue


def test_points_carry_the_project_url_and_a_hover_with_promise_and_non_promise():
    figure = layer_map_figure(layer_map_data(MapFilters()))
    primary = trace(figure, "Primary placement")
    i = [c[1] for c in primary["customdata"]].index("kueue")
    assert primary["customdata"][i][0] == "/projects/kueue/"
    hover = primary["hovertext"][i]
    assert "Promise:" in hover and "Does not promise:" in hover
    assert Project.objects.get(slug="kueue").placement["promise"][:30] in hover.replace("<br>", " ")


def test_the_list_groups_the_same_placement_by_layer():
    data = layer_map_data(MapFilters(view="architecture", unit="mig_instance"))
    groups = layer_map_groups(data)
    assert [g.band.code for g in groups] == ["device-discovery", "scheduling-decision", "node-execution", "cluster-governance"]
    listed = sorted((e.project.slug, e.role, g.band.code) for g in groups for e in g.entries)
    assert listed == sorted((p.project.slug, p.role, p.band) for p in placements(data))


# --- filters ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("field, value, facet", [
    ("unit", "mig_instance", "resource_units"),
    ("enforcement", "admission", "enforcement_points"),
    ("capability", "gang-scheduling", "capabilities"),
])
def test_facet_filters_keep_only_matching_projects(field, value, facet):
    data = layer_map_data(MapFilters(**{field: value}))
    slugs = {p.slug for p in data.projects}
    # archived projects (landscape metadata) stay off the map unless asked for
    # the unit filter finds where a unit lives (placement.catalog.schemas.units_served), not every unit listed
    listed = (lambda placement: units_served(placement)) if facet == "resource_units" else (lambda placement: placement[facet])
    expected = {p.slug for p in Project.objects.filter(accepted=True)
                if value in listed(p.placement) and not p.placement["landscape"]["archived"]}
    assert slugs == expected and 0 < len(slugs) < Project.objects.filter(accepted=True).count()


def test_pending_review_shows_changed_projects_and_new_ones_placed_as_proposed(architect, new_project_data):
    doc = ProjectDocument.model_validate(new_project_data)
    review_services.project_create(doc, user=architect, reason="new queue")
    kueue = Project.objects.get(slug="kueue")
    changed = copy.deepcopy(new_project_data)
    changed.update(slug="kueue", name=kueue.name, summary=f"{kueue.summary} Sharper promise for the pending-review test.")
    review_services.revision_propose(kueue, ProjectDocument.model_validate(changed), user=architect, reason="sharper promise")

    everything = {p.slug for p in layer_map_data(MapFilters()).projects}
    assert "example-queue" not in everything and "kueue" in everything  # not accepted: not on the map
    pending = {p.slug: p for p in layer_map_data(MapFilters(pending=True)).projects}
    assert set(pending) == {"example-queue", "kueue"}
    assert not pending["example-queue"].accepted and pending["kueue"].accepted
    assert pending["example-queue"].maps["control-plane"][0] == new_project_data["placement"]["maps"]["control-plane"]["primary"]


def test_a_draft_is_not_pending_review(architect, new_project_data):
    review_services.project_create(ProjectDocument.model_validate(new_project_data), user=architect, reason="wip", submit=False)
    assert "example-queue" not in {p.slug for p in layer_map_data(MapFilters(pending=True)).projects}


# --- stack overlay ---------------------------------------------------------------------------------


def test_contract_edges_of_a_composed_stack_join_handoff_scheduler_and_unit(stack):
    edges = {(e.source, e.target, e.point) for e in contract_edges(stack.composition)}
    assert edges == {
        ("nvidia-device-plugin", "mig", "advertise"),
        ("nvidia-device-plugin", "kube-scheduler", "bind"),
        ("nvidia-device-plugin", "kueue", "bind"),
        ("nvidia-device-plugin", "mig", "allocate"),
    }
    assert all(e.holds for e in contract_edges(stack.composition))


def test_whole_gpu_pools_join_scheduler_to_handoff_for_allocate_and_broken_contracts_show():
    composition = {
        "slots": [
            {"slot": "scheduling_policy", "pool": None, "project": {"slug": "volcano"}},
            {"slot": "device_handoff", "pool": "train", "project": {"slug": "nvidia-device-plugin"}},
            {"slot": "data_plane_unit", "pool": "train", "project": None},
            {"slot": "device_handoff", "pool": "infer", "project": {"slug": "nvidia-device-plugin"}},
            {"slot": "data_plane_unit", "pool": "infer", "project": None},
        ],
        "contracts": [
            {"point": "advertise", "pool": "train", "unit": "whole_gpu", "holds": True, "by": ["nvidia-device-plugin"], "reason": "a"},
            {"point": "bind", "pool": "train", "unit": "whole_gpu", "holds": True, "by": ["volcano"], "reason": "b"},
            {"point": "allocate", "pool": "train", "unit": "whole_gpu", "holds": True, "by": ["nvidia-device-plugin"], "reason": "c"},
            {"point": "bind", "pool": "infer", "unit": "whole_gpu", "holds": False, "by": ["volcano"], "reason": "d"},
        ],
        "components": ["volcano", "nvidia-device-plugin"],
    }
    edges = {(e.source, e.target, e.point): e for e in contract_edges(composition)}
    assert set(edges) == {
        ("nvidia-device-plugin", "volcano", "advertise"),  # no unit project: the scheduler reads what is advertised
        ("nvidia-device-plugin", "volcano", "bind"),
        ("volcano", "nvidia-device-plugin", "allocate"),
    }
    bind = edges[("nvidia-device-plugin", "volcano", "bind")]
    assert bind.pools == ("train", "infer") and not bind.holds  # one edge per pair, broken if any pool's check fails


def test_overlay_rings_members_draws_one_arrow_per_edge_and_fades_the_rest(stack):
    data = layer_map_data(MapFilters(stack=stack.pk))
    figure = layer_map_figure(data)
    ring = trace(figure, "Stack: Inference")
    assert {c[1] for c in ring["customdata"]} == set(stack.composition["components"])
    arrows = [a for a in figure["layout"]["annotations"] if a.get("showarrow")]
    labels = [a["text"] for a in figure["layout"]["annotations"] if a.get("hovertext")]
    assert len(arrows) == len(contract_edges(stack.composition)) == 4
    assert sorted(labels) == ["Advertise", "Allocate", "Bind", "Bind"]
    assert {"Advertise contract", "Bind contract", "Allocate contract"} <= {t["name"] for t in figure["data"]}
    primary = trace(figure, "Primary placement")
    faded = {c[1] for c, o in zip(primary["customdata"], primary["marker"]["opacity"]) if o < 1}
    assert "kueue" not in faded and "volcano" in faded


def test_a_stack_whose_handoff_is_also_its_unit_draws_all_three_contract_edges(architect):
    """HAMi is both the device handoff and the data-plane unit of the default inference stack: its
    Advertise and Allocate edges must not vanish as self-edges."""
    request = {"profile": "online_inference", "pool": {"gpu_model": "A100-80GB", "gpu_count": 32}, "constraints": {}}
    stack = rules_services.stack_save(user=architect, request_data=request, rank=1, name="Default inference")
    slots = {(s["slot"], s.get("pool")): (s.get("project") or {}).get("slug") for s in stack.composition["slots"]}
    assert slots[("device_handoff", "serving")] == slots[("data_plane_unit", "serving")] == "hami"
    figure = layer_map_figure(layer_map_data(MapFilters(stack=stack.pk)))
    labels = {a["text"] for a in figure["layout"]["annotations"] if a.get("hovertext")}
    assert labels == {"Advertise", "Bind", "Allocate"}
    assert len([a for a in figure["layout"]["annotations"] if a.get("showarrow")]) == 3


def test_stack_members_stay_on_a_filtered_map_so_its_edges_still_join(stack):
    data = layer_map_data(MapFilters(unit="vgpu", stack=stack.pk))
    slugs = {p.slug: p for p in data.projects}
    assert {"kueue", "mig", "nvidia-device-plugin"} <= set(slugs)
    assert not slugs["mig"].matches  # shown for the overlay, not because it offers vGPU


# --- pages -----------------------------------------------------------------------------------------


def test_map_page_renders_the_figure_and_the_filters(client):
    response = client.get("/map/?view=planes&unit=mig_instance")
    html = response.content.decode()
    assert response.status_code == 200 and "<title>Interactive layer map" in html
    assert 'id="layer-map-data"' in html and "/static/vendor/plotly/plotly-basic.min.js" in html
    assert '<option value="mig_instance" selected>' in html
    assert 'href="/map/list/?view=planes&amp;unit=mig_instance"' in html


def test_htmx_filter_request_gets_the_fragment_and_pushes_the_clean_url(client, stack):
    response = client.get(f"/map/?view=architecture&unit=mig_instance&enforcement=&capability=&stack={stack.pk}", **HTMX)
    html = response.content.decode()
    assert "<html" not in html and html.strip().startswith('<section id="map-fragment"')
    assert response["HX-Push-Url"] == f"/map/?view=architecture&unit=mig_instance&stack={stack.pk}"
    listed = client.get("/map/list/?view=planes&pending=on", **HTMX)
    assert listed.content.decode().strip().startswith('<section id="map-list"')
    assert listed["HX-Push-Url"] == "/map/list/?view=planes&pending=1"


def test_htmx_history_restore_gets_the_whole_page(client):
    response = client.get("/map/?view=planes", HTTP_HX_REQUEST="true", HTTP_HX_HISTORY_RESTORE_REQUEST="true")
    assert "<html" in response.content.decode()


def test_an_unknown_filter_value_is_reported_and_ignored(client):
    response = client.get("/map/?view=nowhere&unit=bogus")
    html = response.content.decode()
    assert response.status_code == 200
    assert "Select a valid choice" in html
    assert "Five-layer control-plane map: " in html  # fell back to the default view, unfiltered


def test_map_list_links_every_listed_project(client):
    html = client.get("/map/list/?view=control-plane&unit=mig_instance").content.decode()
    for p in layer_map_data(MapFilters(unit="mig_instance")).projects:
        assert f'href="/projects/{p.slug}/"' in html


def test_map_reads_a_fixed_number_of_queries_whatever_the_catalog_size(client, stack):
    with CaptureQueriesContext(connection) as queries:
        client.get(f"/map/?stack={stack.pk}")
    assert len(queries) <= 12, [q["sql"][:120] for q in queries]


def test_embeds_may_be_framed_and_have_no_navigation_or_forms(client, stack):
    assert client.get("/map/")["X-Frame-Options"] == "DENY"
    for url in ("/embed/map/?view=planes&unit=mig_instance", f"/embed/stacks/{stack.pk}/"):
        response = client.get(url)
        html = response.content.decode()
        assert response.status_code == 200 and "X-Frame-Options" not in response
        assert "<nav" not in html and "<form" not in html and 'class="top"' not in html
        assert '<base target="_blank">' in html  # links leave the frame
    assert client.get("/embed/stacks/999999/").status_code == 404


def test_embeds_follow_the_read_policy_unless_public_embeds_are_on(client, settings, stack):
    settings.ATLAS_ANONYMOUS_READ = False
    settings.ATLAS_PUBLIC_EMBEDS = False
    assert client.get("/embed/map/").status_code == 302
    assert client.get("/map/").status_code == 302
    settings.ATLAS_PUBLIC_EMBEDS = True  # a portal frames the embeds for visitors without a login
    assert client.get("/embed/map/").status_code == 200
    assert client.get(f"/embed/stacks/{stack.pk}/").status_code == 200
    assert client.get("/map/").status_code == 302 and client.get(f"/stacks/{stack.pk}/").status_code == 302


def test_production_settings_state_the_public_embed_choice_explicitly():
    import importlib
    import os
    from unittest import mock

    env = {"DJANGO_SECRET_KEY": "x" * 60, "DJANGO_ALLOWED_HOSTS": "atlas.example"}
    with mock.patch.dict(os.environ, env):
        production = importlib.reload(importlib.import_module("config.settings_production"))
        assert production.ATLAS_PUBLIC_EMBEDS is False
    with mock.patch.dict(os.environ, {**env, "ATLAS_PUBLIC_EMBEDS": "1"}):
        assert importlib.reload(production).ATLAS_PUBLIC_EMBEDS is True
