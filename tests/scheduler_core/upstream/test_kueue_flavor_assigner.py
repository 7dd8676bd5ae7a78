"""Kueue's flavor assignment over resource groups and with flavor fungibility, ported:
kubernetes-sigs/kueue v0.19.2 pkg/scheduler/flavorassigner/flavorassigner_test.go, TestAssignFlavors.

Upstream asserts the flavor each resource gets; here the incoming workload ``in`` arrives at t=60 after the
case's usage was admitted (one second apart from t=0), and the outcome is the flavor(s) named by its admit
event, or ``None`` when it stays pending, plus the workloads preempted for it.  The model's pods always ask
for GPUs, so upstream's single-resource cases state cpu as ``nvidia.com/gpu``; cases about cpu and memory
keep them (memory in GiB: upstream's Mi as GiB numbers), and where a case has no GPU resource a GPU-only
group with room to spare is added, which changes no flavor choice in the other groups.
"""

from __future__ import annotations

import pytest

from scheduler_core import simulate

SRC = "kueue v0.19.2 pkg/scheduler/flavorassigner/flavorassigner_test.go TestAssignFlavors"
POOL = {"node_groups": [{"name": "dgx", "count": 20, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8}]}
AT = 60.0
GPU = "nvidia.com/gpu"
SPARE_GPUS = {"name": "gpus", "quotas": {GPU: 1000}}  # a GPU-only resource group for cpu/memory cases


def run(cqs: list[dict], incoming: dict, before: list[tuple[str, str, dict]] = (), priority: int = 0):
    """before: (name, cq, per-pod requests) admitted at t=0, 1, ...; incoming: per-pod requests of ``in``
    (one pod) in the first CQ.  Returns (the flavors ``in`` was admitted on or None, {victims})."""
    docs = []
    for i, (name, queue, req) in enumerate(before):
        docs.append({"kind": "batch", "name": name, "tenant": queue, "priority": 0, "duration": "10h",
                     "arrival": {"at": float(i)}, **_req(req)})
    docs.append({"kind": "batch", "name": "in", "tenant": cqs[0]["name"], "priority": priority, "duration": "10h",
                 "arrival": {"at": AT}, **_req(incoming)})
    stack = {"control_plane": {"scheduler": "kube-default", "admission": "kueue",
                               "kueue": {"cluster_queues": cqs}}}
    r = simulate({"name": "flavor-assigner", "horizon": "2h", "pool": POOL, "stack": stack, "workloads": docs})
    early = {e.workload for e in r.events.entries if e.kind == "admit" and e.t < AT}
    assert early == {b[0] for b in before}, "the case's usage must all be admitted first"
    admitted = [e.detail for e in r.events.entries if e.kind == "admit" and e.workload == "in"]
    victims = {e.workload for e in r.events.entries if e.kind == "preempt" and "(in)" in e.detail}
    if not admitted:
        return None, victims
    named = admitted[0].split(", ", 1)[1]
    return named.removeprefix("flavors ").removeprefix("flavor ").split(" (")[0], victims


def _req(req: dict) -> dict:
    return {"gpus_per_worker": int(req.get(GPU, 1)), "cpu": req.get("cpu", 0.0),
            "host_memory_gib": req.get("memory", 0.0)}


def _cq(name, flavors, cohort=None, fungibility=None, **preemption):
    out = {"name": name, "flavors": [{"name": f, "quotas": q} for f, q in flavors], "preemption": preemption}
    if cohort:
        out["cohort"] = cohort
    if fungibility:
        out["flavor_fungibility"] = fungibility
    return out


def test_multiple_resource_groups_fits():
    # Groups {one: cpu 2, two: cpu 4} and {b_one: memory 1Gi, b_two: memory 5Gi}; cpu 3 -> two, memory -> b_one.
    cq = _cq("cq", [("one", {"cpu": 2}), ("two", {"cpu": 4}), ("b_one", {"memory": 1024}),
                    ("b_two", {"memory": 5120}), ("gpus", {GPU: 1000})])
    assert run([cq], {"cpu": 3, "memory": 10}) == ("two, b_one, gpus", set()), f"{SRC} / multiple resource groups, fits"


def test_multiple_resource_groups_one_could_fit_with_preemption_other_does_not_fit():
    # {one: cpu 3, 1 used} and {b_one: memory 1Mi}; cpu 3 + memory 10Mi: the memory group has no flavor.
    cq = _cq("cq", [("one", {"cpu": 3}), ("b_one", {"memory": 1}), ("gpus", {GPU: 1000})])
    assert run([cq], {"cpu": 3, "memory": 10}, before=[("used", "cq", {"cpu": 1})]) == (None, set()), (
        f"{SRC} / multiple resource groups, one could fit with preemption, other doesn't fit")


def test_multiple_resource_groups_with_multiple_resources_fits():
    # {one: cpu 2 memory 1Gi, two: cpu 4 memory 15Mi} and {b_one: gpu 4, b_two: gpu 2}; cpu 3, memory 10Mi, gpu 3.
    cq = _cq("cq", [("one", {"cpu": 2, "memory": 1024}), ("two", {"cpu": 4, "memory": 15}),
                    ("b_one", {GPU: 4}), ("b_two", {GPU: 2})])
    assert run([cq], {"cpu": 3, "memory": 10, GPU: 3}) == ("two, b_one", set()), (
        f"{SRC} / multiple resource groups with multiple resources, fits")


def test_multiple_resources_in_a_group_does_not_fit():
    # One group {one: cpu 2 memory 1Gi, two: cpu 4 memory 5Mi}; cpu 3 + memory 10Mi fits neither flavor.
    cq = _cq("cq", [("one", {"cpu": 2, "memory": 1024}), ("two", {"cpu": 4, "memory": 5}), ("gpus", {GPU: 1000})])
    assert run([cq], {"cpu": 3, "memory": 10}) == (None, set()), f"{SRC} / multiple resources in a group, doesn't fit"


# Preemption cases: flavors one and two with 10 each, 2 used on one (a lower-priority workload the CQ may
# preempt, upstream's oracle answering Preempt); the incoming asks 9.
PREEMPT_FLAVORS = [("one", {GPU: 10}), ("two", {GPU: 10})]


@pytest.mark.parametrize("case,fungibility,want", [
    ("preempt before try next flavor", {"when_can_borrow": "MayStopSearch", "when_can_preempt": "MayStopSearch"},
     ("one", {"used"})),
    ("preempt before try next flavor; using WhenCanBorrow=MayStopSearch,WhenCanPreempt=MayStopSearch",
     {"when_can_borrow": "Borrow", "when_can_preempt": "Preempt"}, ("one", {"used"})),
    ("preempt try next flavor", None, ("two", set())),
])
def test_when_can_preempt(case, fungibility, want):
    cq = _cq("cq", PREEMPT_FLAVORS, fungibility=fungibility, within_cluster_queue="LowerPriority")
    got = run([cq], {GPU: 9}, before=[("used", "cq", {GPU: 2})], priority=10)
    assert got == want, f"{SRC} / {case}"


# Borrowing cases: flavor one 10 (borrowing limit 1, 2 used), a cohort CQ lending 1 on one; the incoming asks 9.
@pytest.mark.parametrize("case,two,fungibility,want", [
    ("borrow try next flavor, found the first flavor", 1, "TryNextFlavor", "one"),
    ("borrow try next flavor, found the second flavor", 10, "TryNextFlavor", "two"),
    ("borrow before try next flavor", 10, None, "one"),
])
def test_when_can_borrow(case, two, fungibility, want):
    fung = {"when_can_borrow": fungibility, "when_can_preempt": "TryNextFlavor"} if fungibility else None
    cq = _cq("cq", [("one", {GPU: {"nominal": 10, "borrowing_limit": 1}}), ("two", {GPU: two})], "cohort", fung)
    lender = _cq("lender", [("one", {GPU: 1})], "cohort")
    got = run([cq, lender], {GPU: 9}, before=[("used", "cq", {GPU: 2})])
    assert got == (want, set()), f"{SRC} / {case}"


def test_preemption_counts_the_quota_already_free():
    # One flavor of 10 with 2 held by a lower-priority workload: 9 fit once those 2 are freed (the preemption
    # pre-check used to ask the victims alone to hold all 9, so the workload waited for ever).
    cq = _cq("cq", [("one", {GPU: 10})], within_cluster_queue="LowerPriority")
    assert run([cq], {GPU: 9}, before=[("used", "cq", {GPU: 2})], priority=10) == ("one", {"used"})
