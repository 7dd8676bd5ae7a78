"""Schema and API fidelity (issue 37.7): a field that can be null is declared nullable, a boolean
is a JSON boolean (no "yes" or 1 coerced), and the radar JSON carries no HTML."""

from __future__ import annotations

import pytest

from placement.decisions.services import decisions as services
from tests.api.conftest import assert_error_body
from tests.decisions.conftest import proposal, stacks  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db


def test_a_proposed_decisions_null_reviewer_is_declared_nullable(api):
    schema = api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    record = schema["components"]["schemas"]["Decision"]["properties"]
    assert record["reviewer"].get("nullable") is True
    assert record["author"].get("nullable") is True


WORKLOAD = {"name": "train", "kind": "training", "replicas": 2, "gpus_per_replica": 4, "gpu_memory_gib": 40}


@pytest.mark.parametrize("value", ["yes", 1, "true", 0])
def test_a_wrong_typed_peer_to_peer_is_a_400_naming_it(api, value):
    body = {"workloads": [{**WORKLOAD, "peer_to_peer": value}], "pool": {"gpu_model": "A100-80GB", "gpu_count": 16}}
    body = assert_error_body(api.post("/api/v1/stacks/compose/", body, format="json"), 400, "workloads.0.peer_to_peer")
    assert "a JSON boolean" in " ".join(body["errors"]["workloads.0.peer_to_peer"])


def test_a_real_boolean_peer_to_peer_is_accepted(api):
    body = {"workloads": [{**WORKLOAD, "peer_to_peer": True}], "pool": {"gpu_model": "A100-80GB", "gpu_count": 16}}
    assert api.post("/api/v1/stacks/compose/", body, format="json").status_code == 200


def test_the_radar_json_carries_ring_reasons_as_text_without_html(client, stacks, architect, reviewer):
    from placement.decisions.document import DecisionDocument

    rings = [{"project": "kueue", "ring": "adopt", "reason": "<script>alert(1)</script>Quota per <b>team</b> &amp; cohort"}]
    record = services.decision_propose(DecisionDocument.model_validate(proposal(stacks, rings=rings)), user=architect)
    services.decision_accept(record, user=reviewer)
    for body in (client.get("/radar.json").json(), client.get("/api/v1/radar/").json()):
        (entry,) = [e for e in body["entries"] if e["label"] == "Kueue"]
        assert entry["description"] == "alert(1)Quota per team & cohort"
