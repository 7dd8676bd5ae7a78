"""Ported: the coscheduling plugin's PodGroupManager tests (kubernetes-sigs/scheduler-plugins
pkg/coscheduling/core/core_test.go) and the device plugin's time-slicing replica rules (NVIDIA/k8s-device-plugin
api/config/v1/replicas_test.go, TestUnmarshalReplicaResource).  Pods request GPUs where upstream requests CPU."""

import pytest

from scheduler_core import ScenarioError, parse_scenario, simulate
from scheduler_core.capacity import advertised_capacity

COSCHED = "scheduler-plugins pkg/coscheduling/core/core_test.go"
REPLICAS = "k8s-device-plugin api/config/v1/replicas_test.go TestUnmarshalReplicaResource"


def _gang_starts(nodes: list[int], running: list[tuple[int, int]], pods: int, per_pod: int, min_member: int) -> bool:
    """running: (node index, GPUs held) by unrelated pods; is the PodGroup placed at t=60?"""
    groups = [{"name": f"n{i}", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": g} for i, g in enumerate(nodes)]
    docs = [{"kind": "batch", "name": f"other-{k}", "gpus_per_worker": g, "node_group": f"n{i}", "duration": "10h"}
            for k, (i, g) in enumerate(running)]
    docs.append({"kind": "training", "name": "pg1", "workers": pods, "gpus_per_worker": per_pod,
                 "min_available": min_member, "duration": "1h", "arrival": {"at": 60}})
    r = simulate({"name": "cosched", "horizon": "2h", "pool": {"node_groups": groups},
                  "stack": {"control_plane": {"scheduler": "coscheduling"}}, "workloads": docs})
    return any(e.kind == "bind" and e.workload == "pg1" and e.t == 60 for e in r.events.entries)


# (upstream test / case, nodes, running (node, GPUs), pods, per-pod, minMember, schedulable)
COSCHED_CASES = [
    ("TestPreFilter / pod count more than minMember", [4, 4], [], 3, 1, 2, True),
    ("TestPreFilter / cluster's resource satisfies minResource", [4, 4], [], 3, 2, 3, True),
    ("TestPreFilter / cluster's resource cannot satisfy minResource", [4, 4], [], 5, 2, 5, False),
    ("TestCheckClusterResource / Cluster resource enough", [3, 3], [(0, 2)], 4, 1, 4, True),
    ("TestCheckClusterResource / Cluster resource not enough", [3, 3], [(0, 2), (1, 1)], 4, 1, 4, False),
]


@pytest.mark.parametrize("name,nodes,running,pods,per_pod,min_member,want", COSCHED_CASES,
                         ids=[c[0] for c in COSCHED_CASES])
def test_coscheduling_matches_upstream(name, nodes, running, pods, per_pod, min_member, want):
    assert _gang_starts(nodes, running, pods, per_pod, min_member) is want, f"{COSCHED} {name}"


def _time_slicing(**ts):
    return {"name": "ts", "horizon": "1h",
            "pool": {"node_groups": [{"name": "n", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 2}]},
            "stack": {"data_plane": {"mechanism": "time-slicing", "time_slicing": ts}},
            "workloads": [{"kind": "batch", "name": "j", "duration": "1m"}]}


@pytest.mark.parametrize("replicas", [-1, 0], ids=["replicas -1", "replicas 0"])
def test_time_slicing_replicas_below_one_are_refused(replicas):
    with pytest.raises(ScenarioError) as exc:
        parse_scenario(_time_slicing(replicas=replicas))
    assert any(path.endswith("time_slicing.replicas") for path, _ in exc.value.errors), REPLICAS


def test_time_slicing_two_replicas_advertise_two_per_gpu():
    cap = advertised_capacity(parse_scenario(_time_slicing(replicas=2)))
    assert cap["nvidia.com/gpu"] == 4, REPLICAS  # 2 GPUs x 2 replicas


def test_time_slicing_renamed_replicas_advertise_the_shared_name():
    cap = advertised_capacity(parse_scenario(_time_slicing(replicas=2, rename_by_default=True)))
    assert cap == {"nvidia.com/gpu.shared": 4}, REPLICAS
