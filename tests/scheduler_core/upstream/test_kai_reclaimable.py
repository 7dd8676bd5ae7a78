"""KAI's Reclaimable check of a reclaim scenario, ported: NVIDIA/KAI-Scheduler
pkg/scheduler/plugins/proportion/reclaimable/reclaimable_test.go (read at 72de64f), the contexts "Reclaimable -
Single department", "Reclaimable - Multiple departments" and "Reclaimable - Multiple hierarchy levels".

Queues are stated as upstream's QueueAttributes in GPUs (parent, deserved, fair share, allocated, allocated
non-preemptible; maxAllowed unlimited); CPU and memory are upstream's empty ResourceShare (all 0) unless a
case sets them.  The reclaimer asks for 1 GPU; each reclaimee is a job in a queue with the GPUs it frees.
``scheduler_core.policies.kai.reclaimable`` composes the pieces the KAI policy's reclaim uses: the strategies
at the leveled queues and reclaimingQueuesRemainWithinBoundaries (saturationMultiplier 1)."""

import pytest

from scheduler_core.cluster import GPU
from scheduler_core.policies.kai import allocatable_share, reclaimable
from scheduler_core.policies.kai_reclaimable import QueueShares
from scheduler_core.resources import CPU, MEMORY

SRC = "KAI-Scheduler pkg/scheduler/plugins/proportion/reclaimable/reclaimable_test.go"


def _queues(table, cpu=None):
    """table: name -> (parent, deserved, fair share, allocated[, allocated non-preemptible]) in GPUs;
    cpu: name -> (fair share, allocated) in millicores."""
    out = {}
    for name, row in table.items():
        parent, deserved, fair, alloc, non_preemptible = (*row, 0)[:5]
        c_fair, c_alloc = (cpu or {}).get(name, (0, 0))
        out[name] = QueueShares(
            parent, {GPU: deserved, CPU: 0.0, MEMORY: 0.0}, {GPU: fair, CPU: c_fair, MEMORY: 0.0},
            {GPU: alloc, CPU: c_alloc, MEMORY: 0.0}, {GPU: non_preemptible},
            {GPU: allocatable_share(deserved, fair, -1), CPU: allocatable_share(0, c_fair, 0),
             MEMORY: allocatable_share(0, 0, 0)})
    return out


def _with(base, **changes):
    """base with some queues' columns replaced: name=dict(column=value)."""
    cols = ("parent", "deserved", "fair", "alloc", "non_preemptible")
    out = {}
    for name, row in base.items():
        row = dict(zip(cols, (*row, 0)[:5]))
        row.update(changes.get(name, {}))
        out[name] = tuple(row[c] for c in cols)
    return out


SINGLE = {"p1": ("default", 3, 3, 2), "p2": ("default", 2, 2, 3), "default": (None, 5, 5, 5)}
SINGLE_CASES = [
    # (upstream case, queues, reclaimer preemptible, expected)
    ("Reclaimer is below fair share, reclaimee above fair share", SINGLE, True, True),
    ("Reclaimer is below fair share, reclaimer exactly at fair share",
     _with(SINGLE, p2={"alloc": 2}, default={"alloc": 4}), True, False),
    ("Reclaimer and reclaimee are below fair share", _with(SINGLE, p2={"alloc": 1}, default={"alloc": 3}), True, False),
    ("Reclaimer below deserved and reclaimee above deserved (within fair share)", _with(SINGLE, p2={"fair": 3}), True,
     True),
    ("Reclaimer at fair share, reclaimee above fair share, department below fair share",
     _with(SINGLE, p1={"alloc": 3}, default={"alloc": 6, "deserved": 7, "fair": 10}), True, False),
    ("Reclaimer at fair share, reclaimee above fair share, department above fair share",
     _with(SINGLE, p1={"alloc": 3}, default={"alloc": 6}), True, False),
    ("Reclaimer above deserved, attempting to reclaim for non preemptible job", _with(SINGLE, p1={"deserved": 2}),
     False, True),
    ("Reclaimer department only preemptible above deserved, attempting to reclaim for non preemptible job",
     _with(SINGLE, p1={"deserved": 2}, default={"deserved": 3}), False, True),
    ("Reclaimer department nonpreemtible equal to deserved, attempting to reclaim for non preemptible job",
     _with(SINGLE, p1={"deserved": 2}, default={"deserved": 3, "non_preemptible": 3}), False, False),
    ("Reclaimer department allocated above fair share, attempting to reclaim for job",
     _with(SINGLE, p1={"deserved": 2}, default={"deserved": 1, "fair": 1, "alloc": 3}), True, True),
]


@pytest.mark.parametrize("name,table,preemptible,expected", SINGLE_CASES, ids=[c[0] for c in SINGLE_CASES])
def test_reclaimable_single_department(name, table, preemptible, expected):
    got = reclaimable(_queues(table), "p1", {GPU: 1.0}, preemptible, {"p2": [{GPU: 1.0}]})
    assert got is expected, f"{SRC} Reclaimable - Single department: {name}"


MULTI = {"p1": ("d1", 3, 3, 2), "p2": ("d2", 2, 2, 3), "d1": (None, 3, 3, 2), "d2": (None, 2, 2, 3)}
MULTI_CASES = [
    ("Reclaimer is below fair share, reclaimee above fair share - sanity", MULTI, True),
    ("Reclaimee department goes below fair share", _with(MULTI, p2={"alloc": 2}, d2={"alloc": 2}), False),
    ("Reclaimer department is below deserved and reclaimee department is above deserved but within fair share",
     _with(MULTI, p1={"alloc": 1}, d1={"alloc": 1}, p2={"fair": 4}, d2={"fair": 4}), True),
]


@pytest.mark.parametrize("name,table,expected", MULTI_CASES, ids=[c[0] for c in MULTI_CASES])
def test_reclaimable_multiple_departments(name, table, expected):
    got = reclaimable(_queues(table), "p1", {GPU: 1.0}, True, {"p2": [{GPU: 1.0}]})
    assert got is expected, f"{SRC} Reclaimable - Multiple departments: {name}"


LEVELS = {"left-top": (None, 1, 1, 0), "left-mid": ("left-top", 1, 1, 0), "left-leaf": ("left-mid", 1, 1, 0),
          "right-top": (None, 1, 1, 2), "right-mid": ("right-top", 1, 1, 2), "right-leaf": ("right-mid", 1, 1, 2)}
BRANCH = {"top": (None, 2, 2, 2), "mid1": ("top", 1, 1, 0.5), "mid2": ("top", 1, 1, 1.5),
          "left-leaf1": ("mid1", 1, 1, 0), "left-leaf2": ("mid1", 0, 0, 0.5), "right-leaf": ("mid2", 1, 1, 1.5)}
DEPARTMENTS = {"d1": (None, 4, 4, 4), "d1-project-1": ("d1", 3, 1, 0), "d1-project-2": ("d1", 1, 3, 4),
               "d2": (None, 3, 3, 7), "d2-project-1": ("d2", 3, 3, 7)}
UNINVOLVED = {"d1": (None, 4, 4, 4), "d1-project-1": ("d1", 1, 1, 1), "d2": (None, 3, 3, 7),
              "d2-project-1": ("d2", 3, 3, 7)}
LEVEL_CASES = [
    # (upstream case, queues, CPU (fair share, allocated), reclaimer queue, reclaimees, expected)
    ("Reclaimer is below fair share, reclaimee above fair share - sanity", LEVELS, None, "left-leaf",
     {"right-leaf": [2]}, True),
    ("Reclaimer top queue will go over quota - don't reclaim",
     {**_with(LEVELS, **{"left-top": {"alloc": 1}}), "left-top-oq-leaf": ("left-top", 0, 0, 1)}, None, "left-leaf",
     {"right-leaf": [2]}, False),
    ("Reclaimer in the same tree branch and will go over fair share - don't reclaim", BRANCH, None, "left-leaf1",
     {"right-leaf": [1.5]}, False),
    ("Reclaimer in the same tree branch - reclaim", BRANCH, None, "left-leaf1",
     {"right-leaf": [1.5], "left-leaf2": [0.5]}, True),
    ("Reclaimer has lower utilization ratio than reclaimee but over 1", DEPARTMENTS, None, "d1-project-1",
     {"d2-project-1": [1]}, True),
    ("Reclamation with uninvolved resources", UNINVOLVED, {"d1": (1000, 3000), "d2": (1000, 1000)}, "d1-project-1",
     {"d2-project-1": [1]}, True),
]


@pytest.mark.parametrize("name,table,cpu,queue,reclaimees,expected", LEVEL_CASES, ids=[c[0] for c in LEVEL_CASES])
def test_reclaimable_multiple_hierarchy_levels(name, table, cpu, queue, reclaimees, expected):
    jobs = {q: [{GPU: float(g)} for g in gpus] for q, gpus in reclaimees.items()}
    got = reclaimable(_queues(table, cpu), queue, {GPU: 1.0}, True, jobs)
    assert got is expected, f"{SRC} Reclaimable - Multiple hierarchy levels: {name}"
    if len(jobs) > 1:  # upstream walks a Go map: the verdict may not depend on the order of the reclaimees
        assert reclaimable(_queues(table, cpu), queue, {GPU: 1.0}, True, dict(reversed(jobs.items()))) is expected


def test_a_higher_saturation_multiplier_refuses_a_reclaim_the_default_allows():
    """relcaimerSaturationMultiplier: "Reclaimer has lower utilization ratio than reclaimee but over 1" with the
    reclaimer's department at 5/4 and the reclaimee's at 6/3 passes at 1 and fails at 2 (2.5 >= 2)."""
    jobs = {"d2-project-1": [{GPU: 1.0}]}
    assert reclaimable(_queues(DEPARTMENTS), "d1-project-1", {GPU: 1.0}, True, jobs, multiplier=1.0)
    assert not reclaimable(_queues(DEPARTMENTS), "d1-project-1", {GPU: 1.0}, True, jobs, multiplier=2.0)


def _tree_run(multiplier):
    """left-top (quota 1) holds left-mid/left-leaf (quota 1) and left-oq (quota 0); right-top (quota 1) holds
    right-leaf.  3 GPUs: right-leaf runs 2 from t=0, left-oq 1 from t=50; left-leaf asks 1 at t=60 (fair shares
    1.5 / 1.5 at the top, left-oq 0.5).  Jobs younger than 30 s are spared."""
    from scheduler_core import simulate

    queues = [{"name": "left-top", "quota": 1}, {"name": "left-mid", "parent": "left-top", "quota": 1},
              {"name": "left-leaf", "parent": "left-mid", "quota": 1}, {"name": "left-oq", "parent": "left-top"},
              {"name": "right-top", "quota": 1}, {"name": "right-leaf", "parent": "right-top", "quota": 1}]
    kai = {"queues": queues, "min_guaranteed_runtime": "30s"}
    if multiplier is not None:
        kai["reclaimer_saturation_multiplier"] = multiplier
    jobs = [("right", "right-leaf", 2, 0), ("oq", "left-oq", 1, 50), ("leaf", "left-leaf", 1, 60)]
    return simulate({
        "name": "kai-boundaries", "horizon": "1h",
        "pool": {"node_groups": [{"name": "n", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 3}]},
        "stack": {"control_plane": {"scheduler": "kai", "kai": kai}},
        "tenants": [{"name": q, "queue": q} for q in ("left-leaf", "left-oq", "right-leaf")],
        "workloads": [{"kind": "training", "name": n, "tenant": q, "workers": 1, "gpus_per_worker": g,
                       "duration": "10h", "arrival": {"at": t}} for n, q, g, t in jobs]})


def test_kai_reclaim_keeps_the_reclaiming_department_less_saturated_than_its_victim():
    """With relcaimerSaturationMultiplier the reclaim at t=60 would take right-top (2 of its fair 1.5) while
    left-top ends at 2 of 1.5 against right-top's 0: refused ("Reclaimer top queue will go over quota"); once
    left-oq's job is 30 s old it is the victim instead.  Without the field the model reclaims from right-top."""
    def victims(r):
        return [(e.t, e.workload) for e in r.events.entries if e.kind == "preempt"]

    assert victims(_tree_run(None)) == [(60.0, "right")]
    [(t, name)] = victims(_tree_run(1.0))
    assert name == "oq" and t == pytest.approx(80.0, abs=1e-3)
