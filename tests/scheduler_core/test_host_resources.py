"""CPU and host memory count on nodes, in requests and in Kueue quotas; GPU-only scenarios are unchanged."""

from scheduler_core import simulate
from tests.scheduler_core.conftest import minimal, workload
from tests.scheduler_core.test_policies import cq, kueue


def _pool(**host):
    return {"node_groups": [{"name": "dgx", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8, **host}]}


def _jobs(n, **req):
    return [{"kind": "batch", "name": f"j{i}", "tenant": "a", "gpus_per_worker": 1, "duration": "8h",
             "arrival": {"at": i}, **req} for i in range(n)]


def test_cpu_on_the_node_limits_pods_before_gpus_do():
    r = simulate(minimal(pool=_pool(cpu=16), workloads=_jobs(3, cpu=8)))
    assert [workload(r, f"j{i}").start for i in range(3)] == [0.0, 1.0, None]
    assert workload(r, "j2").pending_reason == "0/1 nodes are available: 1 Insufficient cpu."


def test_host_memory_and_gpus_short_together_are_both_named():
    r = simulate(minimal(pool=_pool(memory_gib=64), workloads=_jobs(1, host_memory_gib=48)
                         + [{"kind": "batch", "name": "big", "gpus_per_worker": 8, "host_memory_gib": 32,
                             "duration": "1h", "arrival": {"at": 5}}]))
    assert workload(r, "big").pending_reason == (
        "0/1 nodes are available: 1 Insufficient memory, 1 Insufficient nvidia.com/gpu.")


def test_requests_without_node_capacity_are_not_limited():
    r = simulate(minimal(pool=_pool(), workloads=_jobs(3, cpu=8)))
    assert all(workload(r, f"j{i}").start is not None for i in range(3))


def test_kueue_quota_with_cpu_holds_back_what_exceeds_it():
    q = cq("a", 8)
    q["flavors"][0]["quotas"]["cpu"] = {"nominal": 16}
    r = simulate(minimal(pool=_pool(), workloads=_jobs(3, cpu=8), stack=kueue([q])))
    assert workload(r, "j2").start is None
    assert workload(r, "j2").pending_reason == (
        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor a100, 8 more needed")


def test_kueue_refuses_a_resource_its_cluster_queue_does_not_cover():
    r = simulate(minimal(pool=_pool(), workloads=_jobs(1, cpu=2), stack=kueue([cq("a", 8)])))
    assert workload(r, "j0").pending_reason == (
        "couldn't assign flavors to pod set main: resource cpu unavailable in ClusterQueue")
