"""An elastic gang (minAvailable below its workers) that must share one node starts with its minimum only
where that minimum fits on one node, and its other pods (and replacements) join that node or wait: a required
topology binds the whole gang, not each placement on its own."""

from __future__ import annotations

from scheduler_core import simulate
from tests.scheduler_core.conftest import minimal, workload


def _run(min_available: int):
    # Two 4-GPU nodes, each half taken by a pinned 2-GPU job; the gang: 4 x 1 GPU, all on one node.
    pool = {"node_groups": [{"name": f"n{i}", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 4}
                            for i in range(2)]}
    hogs = [{"kind": "batch", "name": f"hog{i}", "gpus_per_worker": 2, "node_group": f"n{i}", "duration": "8h",
             "memory_gib": 10} for i in range(2)]
    gang = {"kind": "training", "name": "pg", "workers": 4, "gpus_per_worker": 1, "min_available": min_available,
            "memory_gib": 10, "topology": {"required": "node"}, "duration": "1h", "arrival": {"at": 60}}
    r = simulate(minimal(horizon="2h", pool=pool, workloads=[*hogs, gang],
                         stack={"control_plane": {"scheduler": "coscheduling"}}))
    return r, workload(r, "pg")


def test_the_pods_past_the_minimum_join_the_minimums_node_or_wait():
    # The minimum (2) binds on n0; the other two fit only on n1, outside the gang's one node, so they never
    # bind (not split over two nodes), and the training job, which needs all its workers, times out waiting.
    r, pg = _run(min_available=2)
    assert {e.detail for e in r.events.entries if e.workload == "pg" and e.kind == "bind"} == {"2 pod(s): n0-0 x2"}
    assert pg.start is None and pg.state == "failed"
    assert [e.detail for e in r.events.entries if e.workload == "pg" and e.kind == "fail"] == ["RendezvousTimeout"]


def test_a_minimum_that_fits_only_across_nodes_does_not_start():
    # Three pods fit in the pool (2 + 2 free GPUs) but on no single node.
    r, pg = _run(min_available=3)
    assert pg.start is None and not [e for e in r.events.entries if e.workload == "pg" and e.kind == "bind"]
