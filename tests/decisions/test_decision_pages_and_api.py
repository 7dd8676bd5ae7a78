"""Decision records as users meet them: the pages (list, form, detail, radar, map filter, project
ring) and the API (propose, review, errors naming the field, the radar export)."""

from __future__ import annotations

import pytest

from placement.decisions.document import DecisionDocument
from placement.decisions.models import DecisionRecord
from placement.decisions.services import decisions as services
from tests.api.conftest import assert_error_body, session_client, token_client
from tests.decisions.conftest import proposal

pytestmark = pytest.mark.django_db


@pytest.fixture
def accepted(stacks, architect, reviewer):
    record = services.decision_propose(DecisionDocument.model_validate(proposal(stacks)), user=architect)
    return services.decision_accept(record, user=reviewer)


def test_empty_decision_list_and_radar_explain_how_to_start(client, architect):
    assert "No decision recorded yet" in client.get("/decisions/").content.decode()
    client.force_login(architect)
    assert "No saved stack yet" in client.get("/decisions/new/").content.decode()
    assert "No ring set yet" in client.get("/radar/").content.decode()


def test_proposing_through_the_form_keeps_what_was_typed_on_an_error(client, architect, stacks):
    client.force_login(architect)
    whole, hami = stacks
    response = client.get(f"/decisions/new/?options={whole.pk}&options={hami.pk}")
    assert response.status_code == 200 and "Whole GPUs + Kueue" in response.content.decode()
    form = {"title": "Pool training", "options": [whole.pk, hami.pk], "chosen": hami.pk, "reason": "",
            "ring_project_0": "hami", "ring_0": ""}
    response = client.post("/decisions/new/", form)
    text = response.content.decode()
    assert response.status_code == 400 and "Give both the project and its ring" in text and 'value="Pool training"' in text
    form.update(reason="board 2026-12-01", ring_0="trial", ring_reason_0="pilot on one pool")
    response = client.post("/decisions/new/", form)
    record = DecisionRecord.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/decisions/{record.pk}/"
    assert record.rings == [{"project": "hami", "ring": "trial", "reason": "pilot on one pool"}]
    assert record.context == {"profile": "training"}, "the options' compose request is kept as the context"


def test_accepted_ring_shows_on_radar_project_page_and_filters_the_map(client, accepted):
    radar = client.get("/radar/").content.decode()
    assert "Kueue" in radar and f"ADR-{accepted.pk}" in radar and "<svg" in radar
    project = client.get("/projects/hami/").content.decode()
    assert "ring-hold" in project and "memory cap not proven on our runtime" in project
    home = client.get("/?ring=hold").content.decode()
    assert ">HAMi" in home and ">Kueue<" not in home and ">Volcano<" not in home
    assert ">Volcano<" in client.get("/").content.decode() or "Volcano" in client.get("/").content.decode()


def test_reviewer_accepts_on_the_detail_page(client, stacks, architect, reviewer):
    record = services.decision_propose(DecisionDocument.model_validate(proposal(stacks)), user=architect)
    client.force_login(reviewer)
    page = client.get(f"/decisions/{record.pk}/").content.decode()
    assert "Accept" in page and "Why reject (required)" in page
    client.post(f"/decisions/{record.pk}/accept/", {"comment": "ok"})
    record.refresh_from_db()
    assert record.status == DecisionRecord.ACCEPTED


def test_api_propose_accept_and_read_back_with_staleness(stacks, architect, reviewer):
    response = token_client(architect, can_write=True).post("/api/v1/decisions/", proposal(stacks), format="json")
    assert response.status_code == 201, response.content
    pk = response.json()["id"]
    assert token_client(architect, can_write=True).post(f"/api/v1/decisions/{pk}/accept/", {}, format="json").status_code == 403
    response = token_client(reviewer, can_write=True).post(f"/api/v1/decisions/{pk}/accept/", {"comment": "ok"}, format="json")
    assert response.status_code == 200 and response.json()["status"] == "accepted" and response.json()["stale"] == []
    listed = token_client(reviewer).get("/api/v1/decisions/?status=accepted").json()
    assert [r["id"] for r in listed["results"]] == [pk]


def test_api_bad_decision_input_names_the_field(stacks, architect):
    client = token_client(architect, can_write=True)
    assert_error_body(client.post("/api/v1/decisions/", proposal(stacks, options=[]), format="json"), 400, "options")
    assert_error_body(client.post("/api/v1/decisions/", proposal(stacks, rings=[{"project": "kueue", "ring": "love"}]), format="json"), 400)
    assert_error_body(client.post("/api/v1/decisions/", proposal(stacks, chosen=999), format="json"), 400, "chosen")
    assert_error_body(client.get("/api/v1/decisions/?status=maybe"), 400, "status")
    assert not DecisionRecord.objects.exists()


def test_read_only_token_cannot_propose(stacks, architect):
    response = token_client(architect).post("/api/v1/decisions/", proposal(stacks), format="json")
    assert_error_body(response, 403)


def test_session_writes_need_csrf(stacks, architect):
    response = session_client(architect, csrf=True).post("/api/v1/decisions/", proposal(stacks), format="json")
    assert response.status_code == 403 and not DecisionRecord.objects.exists()


def test_radar_export_is_zalando_tech_radar_json(client, accepted):
    for body in (client.get("/radar.json").json(), client.get("/api/v1/radar/").json()):
        assert [q["name"] for q in body["quadrants"]] and len(body["quadrants"]) == 4
        assert [r["name"] for r in body["rings"]] == ["ADOPT", "TRIAL", "ASSESS", "HOLD"]
        by_label = {e["label"]: e for e in body["entries"]}
        assert by_label["Kueue"]["ring"] == 0 and by_label["HAMi"]["ring"] == 3
        assert all(0 <= e["quadrant"] <= 3 and e["link"].endswith("/") for e in body["entries"])


def test_webhooks_api_is_for_admins_only(reviewer):
    assert_error_body(token_client(reviewer, can_write=True).get("/api/v1/webhooks/"), 403)


def test_radar_blips_are_numbered_apart_and_listed_by_quadrant_with_legends(client, accepted):
    import itertools
    import math

    from placement.decisions.selectors import decisions as radar

    html = client.get("/radar/").content.decode()
    entries = radar.radar_entries()
    assert entries and all(e.number for e in entries)
    for e in entries:  # the number on the blip, and the same number in its quadrant's list
        assert f'class="blip-number">{e.number}</text>' in html
        assert f'<li value="{e.number}"><a href="/projects/{e.slug}/">{e.name}</a>' in html
    for a, b in itertools.combinations(entries, 2):
        assert math.dist((a.x, a.y), (b.x, b.y)) >= 18, (a.name, b.name)
    for ring in ("Adopt", "Trial", "Assess", "Hold"):
        assert f"<strong>{ring}</strong>:" in html
    for quadrant in radar.QUADRANTS:
        assert f": {quadrant}</h2>" in html


def test_many_blips_in_one_ring_of_one_quadrant_do_not_overlap():
    import itertools
    import math

    from placement.decisions.selectors import decisions as radar

    entries = [radar.RadarEntry(slug=f"p{i}", name=f"P{i}", ring="trial", quadrant=1, reason="", decision_id=1, decision_title="t") for i in range(9)]
    radar._place(entries)
    for a, b in itertools.combinations(entries, 2):
        assert math.dist((a.x, a.y), (b.x, b.y)) >= 2 * 9, (a.name, b.name)
    assert all(x < 250 and y < 250 for x, y in ((e.x, e.y) for e in entries)), "quadrant 1 is the top-left one"


def test_a_ring_changed_by_a_later_decision_is_marked_moved_on_the_radar_and_in_the_export(client, stacks, architect, reviewer, accepted):
    from placement.decisions.selectors import decisions as radar

    assert all(e.moved == 2 for e in radar.radar_entries()), "the first decision's rings are all new"
    later = services.decision_propose(
        DecisionDocument.model_validate(
            proposal(stacks, title="Kueue back to trial", rings=[{"project": "kueue", "ring": "trial", "reason": "quota model changed"}])
        ),
        user=architect,
    )
    services.decision_accept(later, user=reviewer)
    html = client.get("/radar/").content.decode()
    assert "moved out from Adopt" in html
    exported = {e["label"]: e for e in client.get("/radar.json").json()["entries"]}
    assert exported["Kueue"]["moved"] == -1 and exported["HAMi"]["moved"] == 2


def test_a_record_shows_the_compose_request_behind_its_options_and_a_readable_catalog_date(client, stacks, architect):
    whole, _hami = stacks
    whole.request = {"workloads": [{"name": "chat", "kind": "online_inference", "replicas": 4, "gpus_per_replica": 0.5,
                                    "gpu_memory_gib": 20, "tenants": 3, "p99_ms": 200}],
                     "pool": {"gpu_model": "H100-80GB", "gpu_count": 16}}
    whole.save(update_fields=["request"])
    api = token_client(architect, can_write=True)
    body = proposal(stacks)
    response = api.post("/api/v1/decisions/", body, format="json")  # no context given: the options' request is it
    assert response.status_code == 201, response.content
    record = DecisionRecord.objects.get(pk=response.json()["id"])
    assert record.context == whole.request
    html = client.get(f"/decisions/{record.pk}/").content.decode()
    assert "<td>chat</td><td>online inference</td><td>4</td>" in html and "Pool: 16 × H100-80GB" in html
    assert "the catalog of " in html and " entries as of " in html
    assert f"<code>{record.catalog_version}</code>" not in html, "no raw version stamp"
