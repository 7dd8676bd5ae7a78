"""Compare, compose, compatible and misuse: results are the rules engine's models, bad input is a
400 with field errors, and they are reads (readers and read-only tokens may call them)."""

from __future__ import annotations

import time

import pytest

from placement.rules.models import ComparisonResult, CompatibleResult, ComposeResult, MisuseVerdict
from tests.api.conftest import assert_error_body, session_client, token_client

pytestmark = pytest.mark.django_db


def test_compare_returns_a_verdict_for_every_pair(api):
    response = api.post("/api/v1/compare/", {"slugs": ["hami", "volcano", "kueue"]}, format="json")
    assert response.status_code == 200, response.content
    result = ComparisonResult.model_validate(response.json())
    assert len(result.pairs) == 3
    hami_volcano = next(p for p in result.pairs if {p.a.slug, p.b.slug} == {"hami", "volcano"})
    assert hami_volcano.verdict.value == "cross_layer"


@pytest.mark.parametrize(
    "body, field",
    [
        ({"slugs": ["hami", "no-such-project"]}, "slugs"),
        ({"slugs": []}, "slugs"),
        ({"slugs": ["hami"]}, "slugs"),
        ({"slugs": ["hami", "hami"]}, "slugs"),
        ({"slugs": "hami,volcano"}, "slugs"),
        ({}, "slugs"),
        ({"slugs": ["hami", "volcano"], "extra": 1}, "extra"),
        (["hami", "volcano"], "non_field_errors"),
    ],
)
def test_compare_bad_input_is_a_400_with_field_errors(api, body, field):
    assert_error_body(api.post("/api/v1/compare/", body, format="json"), 400, field)


def test_compose_ranks_stacks_for_a_profile(api):
    response = api.post("/api/v1/stacks/compose/", {"profile": "training", "limit": 3}, format="json")
    assert response.status_code == 200, response.content
    result = ComposeResult.model_validate(response.json())
    assert result.feasible and 1 <= len(result.stacks) <= 3
    assert [s.rank for s in result.stacks] == sorted(s.rank for s in result.stacks)


@pytest.mark.parametrize(
    "body, field",
    [
        ({"profile": "knitting"}, "profile"),
        ({}, "profile"),
        ({"profile": "training", "limit": 0}, "limit"),
        ({"profile": "training", "limit": 10**40}, "limit"),
        ({"profile": "training", "pool": {"gpu_count": "many"}}, "pool.gpu_count"),
        ({"profile": "training", "constraints": {"require": ["no-such-project"]}}, "constraints.require"),
    ],
)
def test_compose_bad_input_is_a_400_with_field_errors(api, body, field):
    assert_error_body(api.post("/api/v1/stacks/compose/", body, format="json"), 400, field)


_LLM = {"name": "llm", "kind": "training", "replicas": 8, "gpus_per_replica": 8, "gpu_memory_gib": 70, "gang": True}


@pytest.mark.parametrize(
    "change, field",
    [
        ({"replicas": -2}, "workloads[0].replicas"),
        ({"gpus_per_replica": 0}, "workloads[0].gpus_per_replica"),
        ({"gpus_per_replica": 16}, "workloads[0].gpus_per_replica"),  # more than a node carries
        ({"gpus_per_replica": 1.5}, "workloads[0].gpus_per_replica"),
        ({"gpu_memory_gib": 500}, "workloads[0].gpu_memory_gib"),  # above any GPU model
        ({"kind": "knitting"}, "workloads[0].kind"),
    ],
)
def test_bad_workload_classes_are_a_400_naming_the_field(api, change, field):
    body = {"workloads": [{**_LLM, **change}], "pool": {"gpu_model": "H200", "gpu_count": 64}}
    assert_error_body(api.post("/api/v1/stacks/compose/", body, format="json"), 400, field)


def test_memory_above_the_pools_gpu_is_a_400_naming_the_field(api):
    body = {"workloads": [{**_LLM, "gpu_memory_gib": 70}], "pool": {"gpu_model": "A100-40GB", "gpu_count": 64}}
    errors = assert_error_body(api.post("/api/v1/stacks/compose/", body, format="json"), 400, "workloads[0].gpu_memory_gib")
    assert "A100-40GB" in " ".join(errors["errors"]["workloads[0].gpu_memory_gib"])


def test_compose_with_workload_classes_answers_why_not_for_every_project(api):
    body = {"workloads": [{**_LLM, "peer_to_peer": True}], "pool": {"gpu_model": "A100-80GB", "gpu_count": 64}}
    response = api.post("/api/v1/stacks/compose/", body, format="json")
    assert response.status_code == 200, response.content
    result = ComposeResult.model_validate(response.json())
    in_stacks = {slug for s in result.stacks for slug in s.components}
    why_not = {w.project: w for w in result.why_not}
    assert set(why_not) | in_stacks >= {"mig", "hami", "kueue", "volcano", "time-slicing"}
    assert "one MIG instance" in why_not["mig"].reason and why_not["mig"].rule == "feasibility"


def test_compatible_stacks_with_a_project(api):
    response = api.get("/api/v1/stacks/compatible/?with=hami&profile=training")
    assert response.status_code == 200, response.content
    result = CompatibleResult.model_validate(response.json())
    assert result.with_project.slug == "hami"


@pytest.mark.parametrize(
    "query, fields",
    [
        ("with=no-such-project&profile=training", ["with"]),
        ("with=hami&profile=knitting", ["profile"]),
        ("", ["with", "profile"]),
    ],
)
def test_compatible_bad_input_is_a_400_naming_the_query_parameter(api, query, fields):
    assert_error_body(api.get(f"/api/v1/stacks/compatible/?{query}"), 400, *fields)


def test_misuse_check_names_the_owning_layer(api):
    response = api.get("/api/v1/misuse/?project=kueue&capability=gpu-sharing")
    verdict = MisuseVerdict.model_validate(response.json())
    assert verdict.is_misuse and verdict.owner_layers
    assert_error_body(api.get("/api/v1/misuse/?project=nope&capability=flying"), 400, "project", "capability")


def test_readers_and_read_only_tokens_may_compare_and_compose(reader, architect):
    for client in (session_client(reader), token_client(reader), token_client(architect)):
        assert client.post("/api/v1/compare/", {"slugs": ["hami", "volcano"]}, format="json").status_code == 200
        assert client.post("/api/v1/stacks/compose/", {"profile": "training"}, format="json").status_code == 200
        assert client.get("/api/v1/stacks/compatible/?with=hami&profile=training").status_code == 200


def test_requiring_hami_under_volcano_is_a_422_naming_the_bind_contract(api):
    # HAMi's webhook rewrites schedulerName to hami-scheduler: two binders (domain-facts §3)
    body = {"profile": "mixed", "constraints": {"require": ["hami", "volcano"]}}
    errors = assert_error_body(api.post("/api/v1/stacks/compose/", body, format="json"), 422, "constraints.require")
    assert "bind" in errors["detail"]
    assert "schedulerName" in errors["errors"]["constraints.require"][0]


def test_the_volcano_vgpu_plugin_repairs_shared_gpus_under_volcano(api):
    body = {"profile": "mixed", "constraints": {"require": ["volcano"]}}
    response = api.post("/api/v1/stacks/compose/", body, format="json")
    assert response.status_code == 200, response.content
    result = ComposeResult.model_validate(response.json())
    shared = next(p for p in result.stacks[0].pools if p.name == "shared")
    assert shared.device_handoff == "volcano-vgpu-device-plugin"


def _shared_inference_classes(n):
    return [{"name": f"svc{i}", "kind": "online_inference", "replicas": 2, "gpus_per_replica": 0.5,
             "gpu_memory_gib": 10} for i in range(n)]


def test_eight_shared_gpu_classes_answer_with_stacks_and_a_budget_note_any_reader_can_send(reader):
    # issue 37: this 800-byte body ran past gunicorn's 30 s timeout; now the search budget bounds it
    body = {"workloads": _shared_inference_classes(8)}
    started = time.perf_counter()
    response = session_client(reader).post("/api/v1/stacks/compose/", body, format="json")
    elapsed = time.perf_counter() - started
    assert response.status_code == 200, response.content
    assert elapsed < 2.0, f"answered in {elapsed:.2f} s (target: under 2 s)"
    result = ComposeResult.model_validate(response.json())
    assert result.feasible and result.stacks
    assert any(note.startswith("Search budget") for note in result.notes)


def test_the_compose_budget_is_a_setting(api, settings):
    settings.ATLAS_COMPOSE_POOL_COMBINATIONS = 10
    settings.ATLAS_COMPOSE_COMBINATIONS = 200
    response = api.post("/api/v1/stacks/compose/", {"workloads": _shared_inference_classes(2)}, format="json")
    result = ComposeResult.model_validate(response.json())
    assert result.combinations_checked <= 200 and result.stacks
    assert [n for n in result.notes if n.startswith("Search budget")][0].count("budget of 10") == 1


INFEASIBLE_REQUIRES = [
    {"profile": "mixed", "constraints": {"require": ["hami", "volcano"]}},
    {"profile": "training", "constraints": {"require": ["volcano", "kai-scheduler"]}},
    {"profile": "training", "constraints": {"require": ["karpenter"]}},
    {"profile": "training", "constraints": {"require": ["jobset", "appwrapper"]}},
    {"profile": "online_inference", "constraints": {"require": ["runai", "hami"]}},
    {"profile": "training", "constraints": {"require": ["gpushare-scheduler-extender"]}},
]


@pytest.mark.parametrize("body", INFEASIBLE_REQUIRES, ids=lambda b: "+".join(b["constraints"]["require"]))
def test_every_infeasible_require_is_one_422_shape_with_one_error_per_broken_rule(api, body):
    # issue 32 item 5: some of these were 200 with feasible=false before; docs/api.md promises 422
    response = api.post("/api/v1/stacks/compose/", body, format="json")
    assert response.status_code == 422, response.content
    data = response.json()
    assert set(data) == {"detail", "errors"} and list(data["errors"]) == ["constraints.require"]
    errors = data["errors"]["constraints.require"]
    assert errors and all(isinstance(e, str) and e for e in errors)
    assert len(errors) == len(set(errors))


def test_two_required_schedulers_are_refused_naming_the_scheduler_name(api):
    body = {"profile": "training", "constraints": {"require": ["volcano", "kai-scheduler"]}}
    errors = assert_error_body(api.post("/api/v1/stacks/compose/", body, format="json"), 422, "constraints.require")
    assert any(e.startswith("bind: ") and "spec.schedulerName" in e for e in errors["errors"]["constraints.require"])
