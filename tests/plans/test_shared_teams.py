"""Teams declared once for every workload class (issue 36, Build item 1): "4 teams share everything"
is one field of the request; the named teams reach the plan, the scenario and the bundle's Kueue
queues; a class with teams of its own keeps them; requests that name teams per class compose exactly
as before."""

from __future__ import annotations

import pytest

from placement.deploy.export import export_scenario
from placement.plans.scenario import scenario_document
from placement.rules.compose import compose
from placement.rules.errors import RulesInputError
from scheduler_core.scenario import parse_scenario

TEAMS = ["vision", "nlp", "speech", "platform"]
TRAIN = {"name": "train", "kind": "training", "replicas": 4, "gpus_per_replica": 2, "gpu_memory_gib": 60, "gang": True}
CHAT = {"name": "chat", "kind": "online_inference", "replicas": 8, "gpus_per_replica": 0.25, "gpu_memory_gib": 18,
        "p99_ms": 200}
NOTEBOOKS = {"name": "notebooks", "kind": "interactive", "replicas": 8, "gpus_per_replica": 0.25, "gpu_memory_gib": 10}


def _request(**extra):
    return {"workloads": [TRAIN, CHAT, NOTEBOOKS], "pool": {"gpu_model": "A100-80GB", "gpu_count": 32},
            "constraints": {"require": ["kueue"]}, **extra}


def _objects(export, path):
    return [o for f in export.files if f.path == path for o in f.objects or []]


def test_teams_declared_once_reach_the_plan_the_scenario_and_the_kueue_queues(graph):
    result = compose(graph, _request(tenants=TEAMS))
    assert result.feasible and result.slo.multi_tenant
    assert [list(w.tenants) for w in result.workloads] == [TEAMS] * 3, "every class is submitted by the four teams"
    plan = result.stacks[0].plan
    assert plan is not None and plan.admission == "kueue"
    # one queue per team, not one per (team, class); every class's share in it
    assert [q.name for q in plan.queues] == TEAMS
    for w in plan.workloads:
        assert list(w.queues) == TEAMS and sum(w.replicas_per_tenant.values()) == w.replicas
    for q in plan.queues:
        assert q.workload == "train, chat, notebooks"
        asked = {r for w in plan.workloads for r in w.pod.resources}
        assert asked <= set(q.quota), (asked, q.quota)
    assert not any("-team-" in q.name for q in plan.queues), "no invented team names"

    scenario = parse_scenario(scenario_document(plan))
    assert [t.name for t in scenario.tenants] == TEAMS
    assert {w.tenant for w in scenario.workloads} == set(TEAMS)
    assert [q.name for q in scenario.stack.control_plane.kueue.cluster_queues] == TEAMS

    export = export_scenario(scenario, plan=plan)
    assert [o["metadata"]["name"] for o in _objects(export, "kueue/clusterqueues.yaml")] == TEAMS
    local = [(o["metadata"]["namespace"], o["metadata"]["name"], o["spec"]["clusterQueue"])
             for o in _objects(export, "kueue/localqueues.yaml")]
    assert local == [(t, t, t) for t in TEAMS], "one LocalQueue per team, in the team's namespace"
    assert set(TEAMS) <= {o["metadata"]["name"] for o in _objects(export, "namespaces.yaml")}


def test_a_number_of_shared_teams_names_them_once_for_every_class(graph):
    result = compose(graph, _request(tenants=4))
    names = ["team-1", "team-2", "team-3", "team-4"]
    assert [list(w.tenants) for w in result.workloads] == [names] * 3
    assert [q.name for q in result.stacks[0].plan.queues] == names


def test_a_class_with_teams_of_its_own_keeps_them(graph):
    result = compose(graph, _request(tenants=TEAMS, workloads=[TRAIN, {**CHAT, "tenants": ["web"]}, NOTEBOOKS]))
    by_class = {w.name: w.tenants for w in result.workloads}
    assert list(by_class["chat"]) == ["web"] and list(by_class["train"]) == TEAMS == list(by_class["notebooks"])
    plan = result.stacks[0].plan
    assert [q.name for q in plan.queues] == [*TEAMS, "web"]
    assert next(w for w in plan.workloads if w.name == "chat").queues == {"web": "web"}
    assert next(q for q in plan.queues if q.name == "vision").workload == "train, notebooks"
    parse_scenario(scenario_document(plan))  # a valid scenario: workload names stay unique


def test_per_class_teams_compose_exactly_as_without_the_shared_field(graph):
    """Backwards compatible: a request whose every class names its teams gives the same stacks, plans
    and scenarios whether or not it also declares shared teams."""
    classes = [{**TRAIN, "tenants": 2}, {**CHAT, "tenants": 3}, {**NOTEBOOKS, "tenants": 1}]
    before = compose(graph, _request(workloads=classes))
    after = compose(graph, _request(workloads=classes, tenants=TEAMS))
    assert after.model_dump(mode="json") == before.model_dump(mode="json")
    plan = before.stacks[0].plan
    assert [q.name for q in plan.queues] == ["train-team-1", "train-team-2", "chat-team-1", "chat-team-2", "chat-team-3",
                                             "notebooks-team-1"]
    assert [w.name for w in parse_scenario(scenario_document(plan)).workloads][:2] == ["train-team-1", "train-team-2"]


@pytest.mark.parametrize("tenants, message", [
    (["Vision"], "lowercase"), (["a", "a"], "repeat"), (0, "between 1"), ([], "between 1"), ("four", "how many"),
    (True, "how many"),
])
def test_bad_shared_teams_are_one_readable_error_on_the_field(graph, tenants, message):
    with pytest.raises(RulesInputError) as raised:
        compose(graph, _request(tenants=tenants))
    assert list(raised.value.errors) == ["tenants"] and message in " ".join(raised.value.errors["tenants"])
