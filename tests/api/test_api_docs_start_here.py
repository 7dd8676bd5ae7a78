"""/api/docs/ starts where an API consumer starts: the Atlas's header and a way back, how to get a
token (linked), a worked example per main endpoint, and the compose page's labels beside the API's
field names, taken from the form itself."""

import pytest

pytestmark = pytest.mark.django_db


def test_api_docs_start_with_the_header_the_token_and_examples(client):
    html = client.get("/api/docs/").content.decode()
    assert '<a class="brand" href="/">GPU Placement Atlas</a>' in html and "Back to the Atlas" in html
    assert html.index("The Atlas API: start here") < html.index('id="swagger-ui"')
    assert 'href="/account/token/"' in html and "Authorization: Token" in html
    for endpoint in ("/api/v1/projects/", "/api/v1/compare/", "/api/v1/stacks/compose/", "/api/v1/simulations/", "/manifests/"):
        assert f"{endpoint}" in html, endpoint
    assert html.count("curl -s") >= 5 and html.count("api.") >= 5  # curl and Python each


def test_api_docs_list_the_compose_labels_beside_the_field_names(client):
    html = client.get("/api/docs/").content.decode()
    assert "<code>slo.goal</code></td><td>Goal</td><td>latency_sensitive = latency-sensitive, throughput_first = throughput-first" in html
    assert "<code>workloads[].gpus_per_replica</code></td><td>Workload classes: GPUs per replica (&lt;1 = share; blank: from memory)" in html
    assert "<code>workloads[].replicas</code></td><td>Workload classes: Replicas</td>" in html
    assert "<code>pool.mig_capable</code></td><td>MIG capable</td><td>true = yes, false = no" in html


def test_the_worked_examples_match_what_the_api_answers(client, architect):
    """The keys the Python examples read are the keys the endpoints return."""
    from rest_framework.test import APIClient

    api = APIClient()
    api.force_authenticate(architect)
    compare = api.post("/api/v1/compare/", {"slugs": ["hami", "volcano"]}, format="json").json()
    assert {"summary", "pairs"} <= set(compare) and {"a", "b", "verdict_name", "explanation"} <= set(compare["pairs"][0])
    composed = api.post(
        "/api/v1/stacks/compose/",
        {"workloads": [{"name": "llm", "kind": "training", "replicas": 4, "gpus_per_replica": 8, "gpu_memory_gib": 70,
                        "gang": True, "peer_to_peer": True, "tenants": 2}], "pool": {"gpu_model": "A100-80GB", "gpu_count": 32}},
        format="json",
    ).json()
    assert {"rank", "title", "score"} <= set(composed["stacks"][0])
    assert "results" in api.get("/api/v1/projects/", {"layer": "L1", "limit": 20}).json()
