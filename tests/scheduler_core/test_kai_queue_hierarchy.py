"""KAI queues form a tree: a parent queue's quota and limit bind the jobs of all its children."""

from __future__ import annotations

from scheduler_core import simulate
from tests.scheduler_core.conftest import minimal
from tests.scheduler_core.test_queue_resources import NODE, job, kai

TENANTS = [{"name": "a", "queue": "a"}, {"name": "b", "queue": "b"}]


def run(queues, docs):
    r = simulate(minimal(pool=NODE, stack=kai(queues), workloads=docs, tenants=TENANTS))
    return {w.name: (w.start, w.pending_reason) for w in r.workloads}


def test_non_preemptible_pods_of_a_sibling_count_against_the_parent_quota():
    # a and b each have quota 4 under org (quota 4): a's non-preemptible 3 GPUs leave org room for 1, so b's
    # non-preemptible 2-GPU job waits with KAI's words about org; b's preemptible job goes over quota.
    queues = [{"name": "org", "quota": 4}, {"name": "a", "parent": "org", "quota": 4},
              {"name": "b", "parent": "org", "quota": 4}]
    out = run(queues, [job("train", 3, priority=100), job("serve", 2, tenant="b", priority=100, at=60),
                       job("batch", 2, tenant="b", at=60)])
    assert out["train"][0] == 0 and out["batch"][0] == 60
    assert out["serve"] == (None, "Non-preemptible workload is over quota. Workload requested 2 GPUs, but org quota "
                                  "is 4 GPUs, while 3 GPUs are already allocated for non-preemptible pods. Use a "
                                  "preemptible workload to go over quota.")
