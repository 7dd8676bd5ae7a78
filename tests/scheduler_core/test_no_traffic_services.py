"""A service the scenario sends no requests (an imported cluster snapshot carries no traffic) is not
reported as missing its SLO nor as 'unbounded (overloaded)': the run says it cannot judge latency."""

from scheduler_core import labels
from scheduler_core.api import simulate


def _scenario(rate: float) -> dict:
    return {
        "name": "silent-services", "horizon": "1h",
        "pool": {"node_groups": [{"name": "a100", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8}]},
        "stack": {"name": "whole", "data_plane": {"mechanism": "whole"}, "control_plane": {"scheduler": "kube-default"}},
        "tenants": [{"name": "product"}],
        "workloads": [
            {"kind": "inference", "name": f"svc-{i}", "tenant": "product", "replicas": 1, "gpus_per_replica": 1,
             "model_memory_gib": 16, "arrival_rate": rate, "service_time": {"mean": "50ms"}, "slo": {"p99": "1s"}}
            for i in range(2)
        ],
    }


def test_services_without_traffic_are_not_missing_their_slo():
    metrics = simulate(_scenario(0.0)).model_dump(mode="json")
    inference = metrics["inference"]
    assert inference["services_missing_slo"] == 0 and inference["services_without_traffic"] == 2
    assert all(s["no_traffic"] for s in inference["services"])
    shown = dict((label, value) for label, value, _bad in labels.headline(metrics))
    assert "Inference · services missing their SLO" not in shown
    assert shown["Inference · services without traffic (latency not judged)"] == "2 of 2"
    rows = {name: value for _label, value, name in labels.metric_rows(metrics)}
    assert rows["inference.p99_ms"] == labels.NO_TRAFFIC
    assert labels.UNBOUNDED not in " ".join(value for _l, value, _n in labels.metric_rows(metrics))


def test_services_with_traffic_are_still_judged():
    metrics = simulate(_scenario(5.0)).model_dump(mode="json")
    inference = metrics["inference"]
    assert inference["services_without_traffic"] == 0 and not any(s["no_traffic"] for s in inference["services"])
    assert inference["requests"] > 0
