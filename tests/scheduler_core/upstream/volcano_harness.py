"""Run a Volcano action case from volcano's own test tables on the simulator.

A case states nodes (GPUs each: upstream's CPU), queues (weight, capability, reclaimable), running
workloads (bound first, at t=0) and pending ones (arriving at t=60), and the actions/plugins of the
session; the outcome is the pods bound per workload right after t=60 and the pods evicted.
"""

from __future__ import annotations

from scheduler_core import simulate

START = 60.0


def run_volcano(nodes: list[int], queues: list[dict], running: list[tuple], pending: list[tuple],
                actions=("enqueue", "allocate", "backfill"), plugins=("priority", "gang", "proportion"),
                preemptable: dict[str, bool] | None = None):
    """running/pending: (name, queue, pods, per-pod GPUs, min_available, priority)."""
    groups = [{"name": f"n{i + 1}", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": g}
              for i, g in enumerate(nodes)]
    docs = []
    for at, items in ((0.0, running), (START, pending)):
        for name, queue, pods, per_pod, min_av, prio in items:
            docs.append({"kind": "training", "name": name, "tenant": queue, "workers": pods,
                         "gpus_per_worker": per_pod, "min_available": min_av, "priority": prio,
                         "duration": "10h", "arrival": {"at": at},
                         "preemptable": (preemptable or {}).get(name, True)})
    stack = {"control_plane": {"scheduler": "volcano", "volcano": {
        "queues": queues, "actions": list(actions), "plugins": list(plugins)}}}
    r = simulate({"name": "volcano-case", "horizon": "2h", "pool": {"node_groups": groups}, "stack": stack,
                  "tenants": [{"name": q["name"], "queue": q["name"]} for q in queues], "workloads": docs})
    bound: dict[str, int] = {}
    evicted: dict[str, int] = {}
    for e in r.events.entries:
        if e.kind == "bind" and e.t == START:
            bound[e.workload] = bound.get(e.workload, 0) + int(e.detail.split(" ", 1)[0])
        if e.kind == "preempt" and START <= e.t <= START + 1:
            wl = e.workload.rsplit("-", 1)[0]
            evicted[wl] = evicted.get(wl, 0) + 1
    return bound, evicted
