"""Volcano and KAI queues count CPU and host memory beside GPUs: a job fits its queue only if it fits in
every resource it asks for, shares are divided per resource, and a pending job names the resource."""

from __future__ import annotations

from scheduler_core import simulate
from tests.scheduler_core.conftest import minimal, workload

GPU = "nvidia.com/gpu"
# One 8-GPU node with 64 cores and 512 GiB of host memory.
NODE = {"node_groups": [{"name": "n", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8, "cpu": 64,
                         "memory_gib": 512}]}


def job(name, gpus=1, tenant="a", at=0, cpu=0, memory=0, workers=1, priority=0, dur="8h"):
    doc = {"kind": "training", "name": name, "tenant": tenant, "workers": workers, "gpus_per_worker": gpus,
           "duration": dur, "priority": priority, "arrival": {"at": at}}
    if cpu:
        doc["cpu"] = cpu
    if memory:
        doc["host_memory_gib"] = memory
    return doc


def volcano(queues, actions=("enqueue", "allocate", "backfill"), plugins=("priority", "gang", "overcommit", "proportion")):
    return {"control_plane": {"scheduler": "volcano", "volcano": {
        "queues": queues, "actions": list(actions), "plugins": list(plugins)}}}


def kai(queues):
    return {"control_plane": {"scheduler": "kai", "kai": {"queues": queues}}}


def run(stack, docs, tenants=("a", "b"), pool=NODE):
    return simulate(minimal(pool=pool, stack=stack, workloads=docs,
                            tenants=[{"name": t, "queue": t} for t in tenants]))


# ------------------------------------------------------------------ Volcano
def test_volcano_queue_cpu_capability_holds_a_job_back_while_gpus_are_free():
    docs = [job("first", 2, cpu=24), job("second", 2, cpu=24, at=60)]
    r = run(volcano([{"name": "a", "capability": {GPU: 8, "cpu": 32}}, {"name": "b"}]), docs)
    assert workload(r, "first").start == 0 and workload(r, "second").start is None
    assert workload(r, "second").pending_reason.startswith(
        "queue resource quota insufficient: insufficient cpu; 1/1 tasks in gang unschedulable")


def test_volcano_names_every_resource_past_the_queue_capability():
    docs = [job("first", 2, cpu=24, memory=200), job("second", 2, cpu=24, memory=200, at=60)]
    r = run(volcano([{"name": "a", "capability": {GPU: 8, "cpu": 32, "memory": 256}}, {"name": "b"}]), docs)
    assert workload(r, "second").pending_reason.startswith(
        "queue resource quota insufficient: insufficient cpu, insufficient memory;")


def test_volcano_capability_in_gpus_alone_leaves_cpu_unbounded():
    docs = [job("first", 2, cpu=24), job("second", 2, cpu=24, at=60)]
    r = run(volcano([{"name": "a", "capability": 8}, {"name": "b"}]), docs)
    assert workload(r, "second").start == 60


def test_volcano_capacity_plugin_says_the_queue_reached_its_capability():
    # capacity plugin, no enqueue action: allocate holds the job back at the queue's realCapability (8 GPUs)
    # although the second node has 8 free, and says so as Volcano does for a queue that is not allocatable
    docs = [job("first", 6), job("second", 4, at=60)]
    r = run(volcano([{"name": "a", "capability": 8}, {"name": "b"}], actions=("allocate",),
                    plugins=("priority", "gang", "capacity")), docs, pool={"node_groups": [{**NODE["node_groups"][0], "count": 2}]})
    assert workload(r, "second").start is None
    assert workload(r, "second").pending_reason.endswith(
        "Pending: 1 Undetermined; queue a has reached its capability: "
        "insufficient nvidia.com/gpu (allocated 6 + 4 > realCapability 8)")


def test_volcano_deserved_is_divided_per_resource():
    # Two equal queues on 64 cores: b asks for 28, so a deserves the other 36; a's second 24-core job
    # would take it to 48 cores although a holds 1 of the 8 GPUs - the cpu share is what holds it back.
    docs = [job("a1", 1, cpu=24), job("b1", 1, tenant="b", cpu=24), job("b2", 1, tenant="b", cpu=4, at=30),
            job("a2", 1, cpu=24, at=60)]
    r = run(volcano([{"name": "a"}, {"name": "b"}], actions=("allocate", "backfill")), docs)
    assert workload(r, "a2").start is None
    assert workload(r, "a2").pending_reason.endswith(
        "queue a is overused: insufficient cpu (allocated 24 + 24 > deserved 36)")


def test_volcano_reclaims_for_the_cpu_a_queue_deserves():
    # a runs 40 of the 64 cores in two jobs; b deserves half the node and its 24-core job does not fit the
    # 24 cores left with the others: one of a's jobs goes.
    docs = [job("a1", 1, cpu=20), job("a2", 1, cpu=20), job("b1", 1, tenant="b", cpu=28, at=60)]
    # no gang: a's one-pod jobs at minAvailable would otherwise be protected
    stack = volcano([{"name": "a"}, {"name": "b"}], actions=("enqueue", "allocate", "reclaim"),
                    plugins=("priority", "overcommit", "proportion"))
    r = run(stack, docs)
    evicted = [e.workload for e in r.events.entries if e.kind == "preempt"]
    assert evicted == ["a2-0"]
    assert workload(r, "b1").start is not None


def test_volcano_overcommit_counts_cpu_against_the_cluster():
    # 64 cores x overcommit 1.2 = 76.8: a 40-core job cannot be enqueued beside a running 40-core one.
    docs = [job("a1", 1, cpu=40), job("b1", 1, tenant="b", cpu=40, at=60)]
    r = run(volcano([{"name": "a"}, {"name": "b"}], plugins=("gang", "overcommit")), docs)
    assert workload(r, "b1").pending_reason.startswith("resource in cluster is overused: overused cpu;")


# ------------------------------------------------------------------ KAI
def test_kai_cpu_limit_holds_the_queue_with_kais_words():
    docs = [job("first", 1, cpu=8, workers=1), job("second", 1, cpu=8, at=60)]
    r = run(kai([{"name": "a", "quota": 4, "cpu": {"limit": 12}}, {"name": "b", "quota": 4}]), docs)
    assert workload(r, "second").start is None
    assert workload(r, "second").pending_reason == (
        "a quota has reached the allowable limit of CPU cores. Limit is 12 cores, currently 8 cores allocated "
        "and workload requested 8 cores")


def test_kai_memory_limit_is_reported_in_gigabytes_as_kai_prints_it():
    docs = [job("first", 1, memory=64), job("second", 1, memory=64, at=60)]
    r = run(kai([{"name": "a", "quota": 4, "memory": {"limit": 100}}, {"name": "b", "quota": 4}]), docs)
    assert workload(r, "second").pending_reason == (
        "a quota has reached the allowable limit of memory. Limit is 107.374 GB, currently 68.719 GB allocated "
        "and workload requested 68.719 GB")


def test_kai_gpu_limit_message_and_the_parent_queue_limit():
    docs = [job("first", 2), job("second", 2, at=60)]
    queues = [{"name": "org", "quota": 8, "limit": 3}, {"name": "a", "parent": "org", "quota": 4},
              {"name": "b", "quota": 4}]
    r = simulate(minimal(pool=NODE, stack=kai(queues), workloads=docs,
                         tenants=[{"name": "a", "queue": "a"}, {"name": "b", "queue": "b"}]))
    assert workload(r, "second").pending_reason == (
        "org quota has reached the allowable limit of GPUs. Limit is 3 GPUs, currently 2 GPUs allocated and "
        "workload requested 2 GPUs")


def test_kai_non_preemptible_job_must_fit_the_queue_quota_while_a_preemptible_one_goes_over():
    docs = [job("train", 3, priority=100), job("inter", 2, priority=100, at=60), job("batch", 2, at=60)]
    r = run(kai([{"name": "a", "quota": 4}, {"name": "b", "quota": 4}]), docs)
    assert workload(r, "batch").start == 60 and workload(r, "inter").start is None
    assert workload(r, "inter").pending_reason == (
        "Non-preemptible workload is over quota. Workload requested 2 GPUs, but a quota is 4 GPUs, while 3 GPUs "
        "are already allocated for non-preemptible pods. Use a preemptible workload to go over quota.")


def test_kai_non_preemptible_cpu_quota_message():
    docs = [job("train", 1, cpu=10, priority=100), job("inter", 1, cpu=10, priority=100, at=60)]
    r = run(kai([{"name": "a", "quota": 4, "cpu": {"quota": 16}}, {"name": "b", "quota": 4}]), docs)
    assert workload(r, "inter").pending_reason == (
        "Non-preemptible workload is over quota. Workload requested 10 CPU cores, but a quota is 16 cores, while "
        "10 cores are already allocated for non-preemptible pods. Use a preemptible workload to go over quota.")


def test_kai_reclaims_from_a_queue_over_its_fair_share_in_memory_only():
    # Restates KAI reclaim_test.go "DRF - reclaim from queue that has one resource over fair share" with a
    # GPU per pod: a holds 384 of the 512 GiB (fair share 256), b's job needs 128 GiB.
    docs = [job("a0", 1, memory=256), job("a1", 1, memory=128), job("b0", 1, tenant="b", memory=128),
            job("b1", 1, tenant="b", memory=128, at=60)]
    queues = [{"name": "a", "quota": 4, "memory": {"quota": 256}}, {"name": "b", "quota": 4, "memory": {"quota": 256}}]
    r = run(kai(queues), docs)
    assert [e.workload for e in r.events.entries if e.kind == "preempt"] == ["a1"]
    assert workload(r, "b1").start is not None


def test_kai_does_not_reclaim_for_a_queue_that_would_pass_its_fair_share_in_one_resource():
    # Restates "DRF - queue cannot reclaim if adding job will cause queue to be over fair share": b's job
    # stays within its GPU share but takes its cpu past the fair share, so nothing is reclaimed.
    docs = [job("a0", 1, cpu=40), job("b0", 1, tenant="b", cpu=20), job("b1", 1, tenant="b", cpu=20, at=60)]
    queues = [{"name": "a", "quota": 4, "cpu": {"quota": 32}}, {"name": "b", "quota": 4, "cpu": {"quota": 32}}]
    r = run(kai(queues), docs)
    assert [e for e in r.events.entries if e.kind == "preempt"] == []
    assert workload(r, "b1").start is None


def test_kai_cpu_fair_share_follows_the_over_quota_weight():
    # No cpu quota: the 64 cores are divided by over-quota weight.  At 3:1 a's fair share covers its
    # 34-core job and b's (30 cores) lets one of b's two 30-core jobs go; at 1:3 a deserves only 16.
    docs = [job("b0", 1, tenant="b", cpu=30), job("b1", 1, tenant="b", cpu=30), job("a0", 1, cpu=34, at=60)]

    def evicted(weight_a, weight_b):
        queues = [{"name": "a", "quota": 4, "cpu": {"quota": 0, "over_quota_weight": weight_a}},
                  {"name": "b", "quota": 4, "cpu": {"quota": 0, "over_quota_weight": weight_b}}]
        return [e.workload for e in run(kai(queues), docs).events.entries if e.kind == "preempt"]

    assert evicted(3, 1) == ["b1"]
    assert evicted(1, 3) == []
