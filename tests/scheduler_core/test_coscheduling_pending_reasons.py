"""Why a coscheduling PodGroup still waits, in the plugin's words (scheduler-plugins pkg/coscheduling):
the pod's FitError then "PodGroup X gets rejected due to Pod X-k is unschedulable even after PostFilter",
where X-k is the first pod that no longer fits once its siblings took their places; during
``podGroupBackoffSeconds`` after a rejection the group is not tried and says so."""

from __future__ import annotations

from scheduler_core import simulate
from tests.scheduler_core.conftest import workload

TAIL = "PodGroup pg gets rejected due to Pod {pod} is unschedulable even after PostFilter"


def pending_reason(others: list[tuple[int, int]], pods: int, per_pod: int, backoff: float = 0.0) -> str:
    """Two 4-GPU nodes; ``others``: (node index, GPUs) held by unrelated 10-hour jobs; the PodGroup ``pg``
    (``pods`` x ``per_pod`` GPUs, minMember = all) arrives at t=60; the reason at the 2-hour horizon."""
    groups = [{"name": f"n{i}", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 4} for i in range(2)]
    docs = [{"kind": "batch", "name": f"other-{k}", "gpus_per_worker": g, "node_group": f"n{i}", "duration": "10h"}
            for k, (i, g) in enumerate(others)]
    docs.append({"kind": "training", "name": "pg", "workers": pods, "gpus_per_worker": per_pod,
                 "min_available": pods, "duration": "1h", "arrival": {"at": 60}})
    r = simulate({"name": "cosched", "horizon": "2h", "pool": {"node_groups": groups},
                  "stack": {"control_plane": {"scheduler": "coscheduling",
                                              "coscheduling": {"pod_group_backoff": backoff}}},
                  "workloads": docs})
    return workload(r, "pg").pending_reason


def test_a_group_whose_first_pod_fits_names_the_second_pod_that_finds_no_room():
    # n1 is free for one 4-GPU pod; its sibling pg-1 then fits nowhere.
    assert pending_reason([(0, 4)], pods=2, per_pod=4) == (
        "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. " + TAIL.format(pod="pg-1"))


def test_a_single_pod_group_that_fits_nowhere_gets_the_fit_error_and_the_rejection():
    assert pending_reason([(0, 4), (1, 4)], pods=1, per_pod=4) == (
        "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. " + TAIL.format(pod="pg-0"))


def test_a_rejected_group_in_its_backoff_says_until_when():
    # Rejected at t=60 and again at 3660 (1 h backoff): at the horizon (7200) it waits until 7260.
    assert pending_reason([(0, 4)], pods=2, per_pod=4, backoff=3600) == (
        "PodGroup pg failed recently: in backoff until t=7260s")


def test_a_group_none_of_whose_pods_fits_reports_the_fit_error_even_in_backoff():
    assert pending_reason([(0, 4), (1, 4)], pods=2, per_pod=4, backoff=3600) == (
        "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. " + TAIL.format(pod="pg-0"))


def test_without_a_backoff_a_group_is_never_said_to_be_in_backoff_even_in_its_first_second():
    docs = [{"kind": "batch", "name": "other", "gpus_per_worker": 2, "duration": "10h"},
            {"kind": "training", "name": "pg", "workers": 2, "gpus_per_worker": 2, "min_available": 2,
             "duration": "1h", "arrival": {"at": 0.0}}]
    r = simulate({"name": "cosched", "horizon": "0.5s",
                  "pool": {"node_groups": [{"name": "n0", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 4}]},
                  "stack": {"control_plane": {"scheduler": "coscheduling"}}, "workloads": docs})
    assert workload(r, "pg").pending_reason == (
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. " + TAIL.format(pod="pg-1"))


def _start_after_room_frees_at_600(backoff: float) -> float:
    """One 4-GPU node held by a 10-minute job; PodGroup pg (2 x 2 GPUs) is rejected at t=60."""
    docs = [{"kind": "batch", "name": "hog", "gpus_per_worker": 4, "duration": "10m"},
            {"kind": "training", "name": "pg", "workers": 2, "gpus_per_worker": 2, "min_available": 2,
             "duration": "1h", "arrival": {"at": 60}}]
    r = simulate({"name": "cosched", "horizon": "3h",
                  "pool": {"node_groups": [{"name": "n0", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 4}]},
                  "stack": {"control_plane": {"scheduler": "coscheduling",
                                              "coscheduling": {"pod_group_backoff": backoff}}},
                  "workloads": docs})
    return workload(r, "pg").start


def test_a_group_in_backoff_is_not_scheduled_when_room_frees_before_the_backoff_ends():
    # podGroupBackoffSeconds: PreFilter denies a PodGroup that failed until its backoff is over, even
    # though the node freed at t=600; without a backoff the group binds as soon as the room is there.
    assert _start_after_room_frees_at_600(0) == 600
    assert _start_after_room_frees_at_600(3600) == 3660
