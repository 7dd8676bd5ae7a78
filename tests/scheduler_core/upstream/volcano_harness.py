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


def run_queue_case(nodes: list[dict], queues: list[dict], running: list[dict], pending: list[dict],
                   actions=("enqueue", "allocate", "backfill"), plugins=("priority", "gang", "proportion"),
                   scheduler: str = "volcano", config: dict | None = None):
    """A case with several resources.  nodes: {name, gpus, cpu?, memory?, pods?} (each its own node group, so a
    job's ``on`` is upstream's nodeName or nodeSelector; ``pods``: the node's allocatable pods); jobs: {name,
    queue, pods=1, gpus=1 (0 and no cpu/memory: BestEffort), cpu=0, memory=0 (GiB), min=1, priority=0,
    on=None, preemptable=True}, running ones at t=0, pending at t=60;
    ``config``: more fields of the scheduler's section (KAI's ``preempt``, Volcano's ...).

    Returns the result, the nodes each job's pods were bound to at t=60 and the pods evicted per job."""
    groups = []
    for n in nodes:
        g = {"name": n["name"], "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": n["gpus"]}
        if n.get("cpu") is not None:
            g["cpu"] = n["cpu"]
        if n.get("memory") is not None:
            g["memory_gib"] = n["memory"]
        if n.get("pods") is not None:
            g["max_pods"] = n["pods"]
        groups.append(g)
    docs = []
    for at, items in ((0.0, running), (START, pending)):
        for j in items:
            doc = {"kind": "training", "name": j["name"], "tenant": j["queue"], "priority": j.get("priority", 0),
                   "duration": "10h", "arrival": {"at": at}, "preemptable": j.get("preemptable", True)}
            if "roles" in j:  # a Volcano Job with task roles: {name, replicas, min_available, gpus, on}
                doc["roles"] = [{"name": r["name"], "replicas": r["replicas"], "min_available": r.get("min_available"),
                                 "gpus_per_worker": r.get("gpus", 1), "node_group": r.get("on")} for r in j["roles"]]
                if j.get("min") is not None:
                    doc["min_available"] = j["min"]
                docs.append(doc)
                continue
            doc.update({"workers": j.get("pods", 1), "gpus_per_worker": j.get("gpus", 1), "min_available": j.get("min", 1)})
            if j.get("cpu"):
                doc["cpu"] = j["cpu"]
            if j.get("memory"):
                doc["host_memory_gib"] = j["memory"]
            if j.get("on"):
                doc["node_group"] = j["on"]
            docs.append(doc)
    section = {"queues": queues, "actions": list(actions), "plugins": list(plugins)} if scheduler == "volcano" \
        else {"queues": queues}
    section.update(config or {})
    stack = {"control_plane": {"scheduler": scheduler, scheduler: section}}
    r = simulate({"name": "queue-case", "horizon": "2h", "pool": {"node_groups": groups}, "stack": stack,
                  "tenants": [{"name": q["name"], "queue": q["name"]} for q in queues if q.get("leaf", True)],
                  "workloads": docs})
    bound: dict[str, list[str]] = {}
    evicted: dict[str, int] = {}
    pods = {j["name"]: j.get("pods", 1) for j in running}
    names = set(pods)
    for e in r.events.entries:
        if e.kind == "bind" and e.t == START:
            where = e.detail.split(": ", 1)[1].split(", ")  # "n1-0 x2" or "n1-0"
            for w in where:
                node, _, k = w.partition(" x")
                bound.setdefault(e.workload, []).extend([node.rsplit("-", 1)[0]] * int(k or 1))
        if e.kind == "preempt" and START <= e.t <= START + 1:
            # Volcano evicts pods (<job>-<index>), KAI whole jobs (all their pods)
            job = e.workload if e.workload in names else e.workload.rsplit("-", 1)[0]
            evicted[job] = evicted.get(job, 0) + (pods[job] if e.workload in names else 1)
    return r, bound, evicted
