"""Pods without a GPU (``gpus_per_worker: 0``) and a node's pod count (``max_pods``), as any scheduler
sees them: a GPU-less job runs, a full node keeps pods off in kube-scheduler's words, bad input names its field."""

from __future__ import annotations

import pytest

from scheduler_core import simulate
from scheduler_core.scenario import ScenarioError, parse_scenario
from tests.scheduler_core.conftest import minimal, workload


def _one_node(max_pods: int, workloads: list[dict], **over) -> dict:
    return minimal(pool={"node_groups": [{"name": "a", "count": 1, "gpus_per_node": 8, "max_pods": max_pods}]},
                   workloads=workloads, **over)


def test_a_gpu_less_batch_job_runs_to_completion_at_ideal_speed():
    r = simulate(_one_node(4, [{"kind": "batch", "name": "shipper", "gpus_per_worker": 0, "duration": "1h"}]))
    w = workload(r, "shipper")
    assert (w.state, w.start, w.end, w.request) == ("done", 0.0, 3600.0, "no GPU")


def test_kube_scheduler_keeps_a_gpu_pod_off_a_node_whose_pods_are_all_taken():
    r = simulate(_one_node(1, [
        {"kind": "batch", "name": "shipper", "gpus_per_worker": 0, "duration": "2h"},
        {"kind": "batch", "name": "trainer", "gpus_per_worker": 1, "duration": "1h", "arrival": {"at": 60}},
    ], horizon="90m"))
    assert workload(r, "trainer").pending_reason == "0/1 nodes are available: 1 Too many pods."


@pytest.mark.parametrize("over,field", [
    ({"workloads": [{"kind": "batch", "name": "j", "duration": "1h", "gpus_per_worker": 0,
                     "unit": {"gpu_fraction": 0.5}}]}, "workloads.0.unit"),
    ({"workloads": [{"kind": "batch", "name": "j", "duration": "1h", "gpus_per_worker": -1}]},
     "workloads.0.gpus_per_worker"),
    ({"pool": {"node_groups": [{"name": "a", "max_pods": 0}]}}, "pool.node_groups.0.max_pods"),
])
def test_bad_gpu_less_or_pod_count_input_names_the_field(over, field):
    with pytest.raises(ScenarioError) as exc:
        parse_scenario(minimal(**over))
    assert field in str(exc.value)
