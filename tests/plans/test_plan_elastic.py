"""Issue 32, Build 6: the plan carries an elastic class's min/max replicas, and the scenario renderer
hands the minimum to scheduler_core where its workload model has one: a training workload's
`min_available` (gang minMember, placed elastically by the volcano/kai/coscheduling models) and
`min_count` (Kueue partial admission) in scheduler_core/scenario/workloads.py. Where the model has
none (batch_inference runs as single-pod jobs), the plan's assumptions say so. Failed on main: the
request's `min_replicas` was refused.

Sources: https://kueue.sigs.k8s.io/docs/tasks/run/jobs/#partial-admission;
https://github.com/volcano-sh/volcano/blob/master/docs/design/elastic-scheduler.md.
"""

from __future__ import annotations

from placement.plans.scenario import scenario_document
from placement.rules import ComposeRequest, compose
from scheduler_core.scenario import parse_scenario

TRAIN = {"name": "train", "kind": "training", "replicas": 8, "min_replicas": 2, "gpus_per_replica": 8,
         "gpu_memory_gib": 60, "gang": True, "tenants": 3}


def _plan(graph, body):
    stack = compose(graph, ComposeRequest.model_validate(body)).stacks[0]
    assert stack.plan is not None, stack.plan_error
    return stack.plan


def test_the_plan_carries_min_and_max_and_the_scenario_gives_them_to_the_simulator(graph):
    plan = _plan(graph, {"workloads": [TRAIN], "constraints": {"require": ["kueue", "volcano"]}})
    (w,) = plan.workloads
    assert (w.min_replicas, w.replicas) == (2, 8)
    assert w.replicas_per_tenant == {"train-team-1": 3, "train-team-2": 3, "train-team-3": 2}
    # each tenant's job gets its share of the minimum, rounded up
    assert {t: w.min_for(t) for t in w.replicas_per_tenant} == {"train-team-1": 1, "train-team-2": 1, "train-team-3": 1}
    assert any("Class train is elastic (2 to 8 replicas)" in a and "Kueue admits it partially" in a
               and "volcano binds the minimum all-or-nothing" in a for a in plan.assumptions), plan.assumptions
    document = scenario_document(plan)
    jobs = {j["name"]: j for j in document["workloads"]}
    assert {n: (j["workers"], j["min_available"], j["min_count"]) for n, j in jobs.items()} == {
        "train-team-1": (3, 1, 1), "train-team-2": (3, 1, 1), "train-team-3": (2, 1, 1)}
    scenario = parse_scenario(document)
    assert [(x.min_available, x.min_count) for x in scenario.workloads] == [(1, 1)] * 3


def test_without_kueue_the_gang_minimum_alone_reaches_the_simulator(graph):
    plan = _plan(graph, {"workloads": [TRAIN], "constraints": {"require": ["kai-scheduler", "resource-quota"]}})
    jobs = scenario_document(plan)["workloads"]
    assert plan.admission == "none" and all(j["min_available"] == 1 and "min_count" not in j for j in jobs)


def test_an_elastic_batch_class_is_said_not_to_be_simulated_with_its_minimum(graph):
    body = {"workloads": [{"name": "batch", "kind": "batch_inference", "replicas": 8, "min_replicas": 4,
                           "gpus_per_replica": 1, "gpu_memory_gib": 30}]}
    plan = _plan(graph, body)
    assert plan.workloads[0].min_replicas == 4
    assert any("Class batch is elastic (4 to 8 replicas), but the simulator runs batch_inference classes as "
               "independent single-pod jobs" in a for a in plan.assumptions), plan.assumptions
    assert all("min_count" not in j for j in scenario_document(plan)["workloads"])


def test_a_plan_without_an_elastic_class_dumps_as_before(graph):
    # guard: the optional field stays out of the dump, so the plan's digest is what it was
    plan = _plan(graph, {"workloads": [{k: v for k, v in TRAIN.items() if k != "min_replicas"}]})
    assert "min_replicas" not in plan.model_dump(mode="json")["workloads"][0]
    assert not any("elastic" in a for a in plan.assumptions)
