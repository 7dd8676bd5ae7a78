"""The request and result models are the REST API's bodies: they serialise, round-trip and describe themselves."""

from __future__ import annotations

import json

from placement.rules import (
    CompareRequest,
    ComparisonResult,
    CompatibleResult,
    ComposeRequest,
    ComposeResult,
    MisuseVerdict,
    check_misuse,
    compare,
    compatible,
    compose,
)


def _round_trips(model_cls, value):
    text = value.model_dump_json()
    assert model_cls.model_validate_json(text) == value
    return json.loads(text)


def test_results_round_trip_through_json(graph):
    body = _round_trips(ComparisonResult, compare(graph, CompareRequest(slugs=["hami", "volcano", "mig"])))
    assert body["pairs"][0]["verdict"] in {"comparable", "unit_mismatch", "cross_layer", "platform_vs_mechanism", "overlapping"}
    body = _round_trips(ComposeResult, compose(graph, ComposeRequest(profile="mixed")))
    assert body["stacks"][0]["contracts"][0]["point"] in {"advertise", "bind", "allocate"}
    _round_trips(ComposeResult, compose(graph, ComposeRequest.model_validate(
        {"profile": "training", "pool": {"gpu_model": "L40S"}, "constraints": {"require": ["mig"]}})))
    _round_trips(MisuseVerdict, check_misuse(graph, "kueue", "raise-per-gpu-utilisation"))
    _round_trips(CompatibleResult, compatible(graph, "kueue", "online_inference"))


def test_request_models_publish_a_described_json_schema():
    schema = ComposeRequest.model_json_schema()
    assert set(schema["properties"]) == {"profile", "workloads", "tenants", "slo", "pool", "constraints", "limit"}
    assert "required" not in schema  # a profile, workload classes, or both
    for name in ("Slo", "Pool", "Constraints", "WorkloadClass"):
        props = schema["$defs"][name]["properties"]
        assert all(p.get("description") for p in props.values()), name
    assert CompareRequest.model_json_schema()["properties"]["slugs"]["minItems"] == 2


def test_every_result_carries_the_catalog_version(graph):
    assert compare(graph, ["kueue", "volcano"]).catalog_version == graph.version
    assert compose(graph, ComposeRequest(profile="training")).catalog_version == graph.version
