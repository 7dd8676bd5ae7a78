"""Requests that arrive while a service has no running replica are unserved and count against its SLO.

Whether the service is Pending behind other work, held back by Kueue, or waiting for a replica
recreated after its node failed, every request of that time is a violation, not a served request.
"""

from scheduler_core import simulate
from tests.scheduler_core.conftest import minimal, service

RATE = 10.0  # requests per second


def _service(**over):
    doc = {"kind": "inference", "name": "svc", "tenant": "b", "replicas": 1, "model_memory_gib": 10,
           "compute_fraction": 0.3, "arrival_rate": RATE, "service_time": {"mean": "20ms", "cv": 0.5},
           "slo": {"p99": "200ms"}}
    doc.update(over)
    return doc


def _one_gpu_pool():
    return {"node_groups": [{"name": "g", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 1}]}


def _blocker(duration="2h"):
    # Arrives first and holds the only GPU for `duration`.
    return {"kind": "batch", "name": "blocker", "tenant": "a", "duration": duration, "memory_gib": 30}


def test_requests_while_a_service_is_pending_are_unserved_and_miss_the_slo():
    doc = minimal(horizon="4h", pool=_one_gpu_pool(),
                  tenants=[{"name": "a"}, {"name": "b"}],
                  workloads=[_blocker("2h"), _service(start="1m")])
    s = service(simulate(doc), "svc")
    pending_seconds = 2 * 3600 - 60
    assert abs(s.unserved_requests - RATE * pending_seconds) / (RATE * pending_seconds) < 0.01
    assert s.slo_violation_fraction > 0.45
    assert not s.slo_met and s.p99_ms is None


def test_requests_while_kueue_holds_a_service_back_are_unserved():
    kueue = {"cluster_queues": [{"name": "shared", "flavors": [{"name": "a100", "quotas": {"nvidia.com/gpu": 1}}]}]}
    doc = minimal(horizon="4h",
                  pool={"node_groups": [{"name": "g", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 2}]},
                  stack={"name": "kueue", "control_plane": {"scheduler": "kube-default", "admission": "kueue",
                                                            "kueue": kueue}},
                  tenants=[{"name": "a", "queue": "shared"}, {"name": "b", "queue": "shared"}],
                  workloads=[_blocker("2h"), _service(start="1m")])
    r = simulate(doc)
    s = service(r, "svc")
    held = 2 * 3600 - 60
    # The second GPU is free the whole time: only the quota keeps the service out.
    assert abs(s.unserved_requests - RATE * held) / (RATE * held) < 0.01
    assert not s.slo_met and s.p99_ms is None


def test_requests_while_a_replica_is_recreated_after_node_failure_are_unserved():
    doc = minimal(horizon="4h", pool=_one_gpu_pool(), tenants=[{"name": "b"}],
                  workloads=[_service(start=0)],
                  events=[{"at": "1h", "kind": "node_failure", "node": "g-0", "duration": "30m"}])
    s = service(simulate(doc), "svc")
    down = 1800
    assert abs(s.unserved_requests - RATE * down) / (RATE * down) < 0.01
    assert not s.slo_met


def test_a_lost_replica_leaves_the_survivor_carrying_the_whole_load():
    # Two replicas on two one-GPU nodes; one node fails for 30 min and its replica cannot be
    # recreated anywhere.  The survivor serves every request at twice the load (rho 0.8), so the
    # tail grows - the accounting must not spread that half hour over two replicas.
    pool = {"node_groups": [{"name": "g", "count": 2, "gpu": "A100-SXM4-80GB", "gpus_per_node": 1}]}
    svc = _service(start=0, replicas=2, arrival_rate=80.0, service_time={"mean": "10ms", "cv": 0.5},
                   slo={"p99": "60ms"})
    calm = service(simulate(minimal(horizon="2h", pool=pool, tenants=[{"name": "b"}], workloads=[svc])), "svc")
    failed = service(simulate(minimal(
        horizon="2h", pool=pool, tenants=[{"name": "b"}], workloads=[svc],
        events=[{"at": "1h", "kind": "node_failure", "node": "g-1", "duration": "30m"}])), "svc")
    assert failed.unserved_requests == 0
    assert failed.slo_violation_fraction > 2 * calm.slo_violation_fraction
