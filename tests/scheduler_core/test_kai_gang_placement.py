"""Where KAI binds a gang's pods: topology-aware placement keeps a communication-sensitive gang's minimum
on as few nodes as hold it (KAI packs such gangs, pkg/scheduler topology-aware scheduling)."""

from __future__ import annotations

from scheduler_core import simulate
from tests.scheduler_core.conftest import minimal

TENANTS = [{"name": "a", "queue": "a"}, {"name": "b", "queue": "b"}]


def test_an_elastic_communication_sensitive_gang_binds_its_minimum_on_one_node():
    # KAI's topology-aware placement: 6 x 1-GPU pods (minMember 2) do not all fit (n0 has 1 GPU free, n1 4),
    # so KAI allocates the gang minimum first - both pods on n1, the one node that holds them together,
    # not split over n0's last GPU and n1 as bin-packing pod by pod would do.
    pool = {"node_groups": [{"name": f"n{i}", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 4}
                            for i in range(2)]}
    docs = [{"kind": "training", "name": "hold", "tenant": "b", "workers": 1, "gpus_per_worker": 3,
             "node_group": "n0", "duration": "8h"},
            {"kind": "training", "name": "elastic", "tenant": "a", "workers": 6, "gpus_per_worker": 1,
             "min_available": 2, "topology_sensitivity": 0.5, "duration": "8h", "arrival": {"at": 60}}]
    r = simulate(minimal(horizon="2m", pool=pool, stack={"control_plane": {"scheduler": "kai", "kai": {
        "queues": [{"name": "a"}, {"name": "b"}]}}}, workloads=docs, tenants=TENANTS))
    binds = [e.detail for e in r.events.entries if e.kind == "bind" and e.workload == "elastic"]
    assert binds[0] == "2 pod(s): n1-0 x2"
