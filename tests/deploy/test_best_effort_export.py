"""A GPU-less pod (``gpus_per_worker: 0``, nothing else requested) is exported as Kubernetes' BestEffort pod:
no ``nvidia.com/gpu: 0`` limit (Volcano reads any stated request as not BestEffort and leaves the pod to
allocate, not backfill), while the same Job with GPUs keeps its limit."""

from __future__ import annotations

import copy

from placement.deploy import export_scenario
from scheduler_core.scenario import parse_scenario

SCENARIO = {
    "name": "best-effort-export", "horizon": "1h",
    "pool": {"node_groups": [{"name": "pool-a", "count": 1, "gpus_per_node": 8, "max_pods": 110}]},
    "stack": {"control_plane": {"scheduler": "volcano", "volcano": {"queues": [{"name": "team"}]}}},
    "tenants": [{"name": "team"}],
    "workloads": [
        {"kind": "batch", "name": "log-shipper", "tenant": "team", "gpus_per_worker": 0, "duration": "10m"},
    ],
}


def _containers(export, name: str) -> list[dict]:
    out = []
    for obj in export.objects():
        if obj.get("metadata", {}).get("name") != name:
            continue
        spec = obj["spec"]["template"]["spec"]
        out.extend(spec["containers"])
    return out


def test_a_gpu_less_pod_is_exported_without_a_gpu_limit():
    export = export_scenario(parse_scenario(SCENARIO))
    shipper = _containers(export, "log-shipper")
    assert shipper and all(c["resources"] == {} for c in shipper)
    with_gpus = copy.deepcopy(SCENARIO)
    with_gpus["workloads"][0]["gpus_per_worker"] = 2
    shipper = _containers(export_scenario(parse_scenario(with_gpus)), "log-shipper")
    assert shipper and all(c["resources"] == {"limits": {"nvidia.com/gpu": 2}} for c in shipper)
