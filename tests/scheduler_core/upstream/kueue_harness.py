"""Run a Kueue preemption case from kueue's own test tables on the simulator.

A case states ClusterQueues (``nominal``, ``borrowing_limit``, ``lending_limit``, cohort, preemption
policy), workloads already admitted (name, CQ, priority, request) and one incoming workload.  The
admitted ones arrive one second apart from t=0 (admitted in that order, so a later one is "newer"),
the incoming one at t=60; the case's outcome is the set of (victim, Kueue reason) preempted at t=60.
Upstream's requests are CPU; the algorithm does not depend on the resource, so they are stated as
``nvidia.com/gpu`` on a pool large enough that the scheduler never constrains them.
"""

from __future__ import annotations

from scheduler_core import simulate

POOL = {"node_groups": [{"name": "dgx", "count": 8, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8}]}
PREEMPT_AT = 60.0


def cq(name, nominal, cohort=None, borrowing_limit=None, lending_limit=None, within="Never", reclaim="Never",
       borrow="Never", threshold=None):
    quota = {"nominal": nominal}
    if borrowing_limit is not None:
        quota["borrowing_limit"] = borrowing_limit
    if lending_limit is not None:
        quota["lending_limit"] = lending_limit
    pre = {"within_cluster_queue": within, "reclaim_within_cohort": reclaim, "borrow_within_cohort": borrow}
    if threshold is not None:
        pre["borrow_within_cohort_max_priority_threshold"] = threshold
    out = {"name": name, "flavors": [{"name": "default", "quotas": {"nvidia.com/gpu": quota}}], "preemption": pre}
    if cohort:
        out["cohort"] = cohort
    return out


def cohort(name, parent=None, nominal=None, weight=None, borrowing_limit=None, lending_limit=None):
    """A Cohort object (hierarchical cohorts): its parent, own quota of the one flavor and weight."""
    out = {"name": name}
    if parent:
        out["parent_name"] = parent
    if nominal is not None:
        q = {"nominal": nominal}
        if borrowing_limit is not None:
            q["borrowing_limit"] = borrowing_limit
        if lending_limit is not None:
            q["lending_limit"] = lending_limit
        out["flavors"] = [{"name": "default", "quotas": {"nvidia.com/gpu": q}}]
    if weight is not None:
        out["fair_sharing_weight"] = weight
    return out


def run_case(cqs: list[dict], admitted: list[tuple[str, str, int, int]], incoming: tuple[str, int, int],
             incoming_created_early: float = 0.0, cohorts: list[dict] | None = None, messages: bool = False,
             pool: dict | None = None):
    """admitted: (name, cq, priority, gpus); incoming: (cq, priority, gpus).  Returns {(victim, reason)}
    (with ``messages``: {victim: eviction message})."""
    docs = []
    for i, (name, queue, prio, gpus) in enumerate(admitted):
        docs.append({"kind": "batch", "name": name, "tenant": queue, "priority": prio, "gpus_per_worker": gpus,
                     "duration": "10h", "arrival": {"at": float(i)}})
    queue, prio, gpus = incoming
    docs.append({"kind": "batch", "name": "in", "tenant": queue, "priority": prio, "gpus_per_worker": gpus,
                 "duration": "10h", "arrival": {"at": PREEMPT_AT}, "created_early": incoming_created_early})
    kueue = {"cluster_queues": cqs}
    if cohorts:
        kueue["cohorts"] = cohorts
    stack = {"control_plane": {"scheduler": "kube-default", "admission": "kueue", "kueue": kueue}}
    r = simulate({"name": "kueue-case", "horizon": "2h", "pool": pool or POOL, "stack": stack, "workloads": docs})
    admitted_at_start = {e.workload for e in r.events.entries if e.kind == "admit" and e.t < PREEMPT_AT}
    assert admitted_at_start == {a[0] for a in admitted}, "the case's admitted workloads must all be admitted"
    # Upstream's table is one preemption decision: the preemptions made for the incoming workload (a victim
    # requeued at once may preempt in turn in the same pass here).
    if messages:
        return {e.workload: e.detail for e in r.events.entries
                if e.kind == "preempt" and e.t == PREEMPT_AT and "(in)" in e.detail}
    return {(e.workload, e.detail.split(":", 1)[0].removeprefix("Kueue"))
            for e in r.events.entries if e.kind == "preempt" and e.t == PREEMPT_AT and "(in)" in e.detail}


BIG_POOL = {"node_groups": [{"name": "dgx", "count": 20, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8}]}


def cq_flavors(name, flavors, cohort=None, strategy="BestEffortFIFO", **pre):
    """flavors: [(flavor, nominal, borrowing_limit or None, lending_limit or None)]."""
    fl = []
    for f, nominal, borrow, lend in flavors:
        q = {"nominal": nominal}
        if borrow is not None:
            q["borrowing_limit"] = borrow
        if lend is not None:
            q["lending_limit"] = lend
        fl.append({"name": f, "quotas": {"nvidia.com/gpu": q}})
    out = {"name": name, "flavors": fl, "queueing_strategy": strategy, "preemption": pre}
    if cohort:
        out["cohort"] = cohort
    return out


def admit_cycle(cqs: list[dict], workloads: list[tuple], details: bool = False) -> dict[str, str]:
    """workloads: (name, cq, pods[, per-pod request, minCount]), submitted in order at t=0.  Returns {name:
    flavor} admitted at t=0 (one admission pass over everything that arrived at once, like one Kueue scheduling
    cycle), or the admit events' details."""
    docs = []
    for n, q, pods, *rest in workloads:
        per_pod = rest[0] if rest else 1
        doc = {"kind": "training", "name": n, "tenant": q, "workers": pods, "gpus_per_worker": per_pod,
               "duration": "10h", "arrival": {"at": 0.0}}
        if len(rest) > 1:
            doc["min_count"] = rest[1]
        docs.append(doc)
    stack = {"control_plane": {"scheduler": "kube-default", "admission": "kueue", "kueue": {"cluster_queues": cqs}}}
    r = simulate({"name": "kueue-cycle", "horizon": "1h", "pool": BIG_POOL, "stack": stack, "workloads": docs})
    out = {}
    for e in r.events.entries:
        if e.kind == "admit" and e.t == 0.0:
            out[e.workload] = e.detail if details else e.detail.split("flavor ", 1)[1].split(" ", 1)[0]
    return out


def run_fair_case(cqs: list[dict], admitted: list[tuple[str, str, int, float]], incoming: tuple[str, int, float],
                  weights: dict[str, float] | None = None, strategies: list[str] | None = None, scale: int = 2,
                  cohorts: list[dict] | None = None):
    """A fair-sharing preemption case (kueue pkg/scheduler/preemption/preemption_fair_test.go): fairSharing on,
    every admitted workload reserved at t=0 (upstream reserves them all at ``now`` and sets each UID to its
    name, so ties go by name: they are submitted in name order), the incoming one at t=60.  Requests and
    quotas are multiplied by ``scale`` so that upstream's half CPUs are whole GPUs (shares are ratios, so
    unchanged).  Returns {(victim, reason)} preempted at t=60."""
    cqs = [dict(c) for c in cqs]
    for c in cqs:
        c["flavors"] = [{"name": f["name"], "quotas": {r: {k: v * scale for k, v in q.items()}
                                                        for r, q in f["quotas"].items()}} for f in c["flavors"]]
        if weights and c["name"] in weights:
            c["fair_sharing_weight"] = weights[c["name"]]
    docs = []
    for name, queue, prio, req in sorted(admitted):
        docs.append({"kind": "batch", "name": name, "tenant": queue, "priority": prio,
                     "gpus_per_worker": int(req * scale), "duration": "10h", "arrival": {"at": 0.0}})
    queue, prio, req = incoming
    docs.append({"kind": "batch", "name": "in", "tenant": queue, "priority": prio,
                 "gpus_per_worker": int(req * scale), "duration": "10h", "arrival": {"at": PREEMPT_AT}})
    kueue = {"cluster_queues": cqs, "fair_sharing": True}
    if cohorts:
        kueue["cohorts"] = [dict(c, flavors=[{"name": f["name"], "quotas": {
            r: {k: v * scale for k, v in q.items()} for r, q in f["quotas"].items()}} for f in c.get("flavors", [])])
            for c in cohorts]
    if strategies:
        kueue["fair_sharing_preemption_strategies"] = strategies
    stack = {"control_plane": {"scheduler": "kube-default", "admission": "kueue", "kueue": kueue}}
    r = simulate({"name": "kueue-fair-case", "horizon": "2h", "pool": BIG_POOL, "stack": stack, "workloads": docs})
    admitted_at_start = {e.workload for e in r.events.entries if e.kind == "admit" and e.t == 0.0}
    assert admitted_at_start == {a[0] for a in admitted}, "the case's admitted workloads must all be admitted"
    # Upstream's table is one preemption decision: the preemptions made for the incoming workload (a victim
    # requeued at once may preempt in turn in the same pass here).
    return {(e.workload, e.detail.split(":", 1)[0].removeprefix("Kueue"))
            for e in r.events.entries if e.kind == "preempt" and e.t == PREEMPT_AT and "(in)" in e.detail}
