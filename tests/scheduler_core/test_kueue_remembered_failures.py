"""Kueue's remembered failures (scheduler_core/policies/kueue_failures.py) change how much the admission
pass searches, never what it decides: every run is the same, byte for byte, with them and without."""

import pytest

from scheduler_core import simulate, synthetic_scenario
from scheduler_core.policies.kueue import KueueAdmission
from tests.scheduler_core.conftest import minimal

POOL = {"node_groups": [{"name": "dgx", "count": 4, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8, "cpu": 64,
                         "memory_gib": 512}]}


def _cq(name, cohort, gpus, strategy="BestEffortFIFO", **quota):
    return {"name": name, "cohort": cohort, "queueing_strategy": strategy,
            "flavors": [{"name": "a100", "quotas": {"nvidia.com/gpu": {"nominal": gpus, **quota},
                                                    "cpu": 64, "memory": 512}}],
            "preemption": {"reclaim_within_cohort": "Any", "within_cluster_queue": "LowerPriority"}}


def _backlog(tenant, priority, per_hour, gpus):
    return {"kind": "batch", "name": f"{tenant}-p{priority}", "tenant": tenant, "count": 60, "priority": priority,
            "arrival": {"poisson_per_hour": per_hour}, "workers": {"dist": "choice", "values": [1, 2]},
            "gpus_per_worker": {"dist": "choice", "values": gpus}, "cpu": 4, "host_memory_gib": 32,
            "duration": {"dist": "lognormal", "mean": 1800, "cv": 1.0}, "memory_gib": 20}


def _limits_scenario():
    """Three ClusterQueues in one cohort (a borrowing limit, a lending limit, no limit; one StrictFIFO) and two
    priorities, loaded past the pool so that heads fail, preempt and reclaim."""
    cqs = [_cq("a", "org", 10, borrowing_limit=4), _cq("b", "org", 12, lending_limit=6),
           _cq("c", "org", 10, strategy="StrictFIFO")]
    workloads = [_backlog(t, p, 20, [1, 2, 4]) for t in "abc" for p in (0, 50)]
    return minimal(name="remembered-failures", horizon="8h", seed=5, pool=POOL, workloads=workloads,
                   tenants=[{"name": t} for t in "abc"],
                   stack={"control_plane": {"scheduler": "kube-default", "admission": "kueue", "kueue": {
                       "cluster_queues": cqs, "local_queues": {t: t for t in "abc"}}}})


CASES = {
    "synthetic week, CPU and memory in the quotas": lambda: synthetic_scenario(
        nodes=16, jobs=1500, services=10, days=1, seed=3, stack="kueue", load=1.3),
    "synthetic week, GPUs only": lambda: synthetic_scenario(
        nodes=16, jobs=1500, services=10, days=1, seed=4, stack="kueue", load=1.3, host_resources=False),
    "borrowing and lending limits, StrictFIFO, two priorities": _limits_scenario,
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_remembered_failures_leave_every_admission_as_it_was(case, monkeypatch):
    remembered = simulate(CASES[case]()).to_json()
    monkeypatch.setattr(KueueAdmission, "remember_failures", False)
    searched = simulate(CASES[case]()).to_json()
    assert remembered == searched
