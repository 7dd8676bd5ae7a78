"""Issue 32, Build 6: elastic jobs (min/max replicas) are expressible, and a stack whose admission
layer or scheduler starts one with fewer than all its replicas is credited for it, with the field
that does it and its source. A request without an elastic class answers exactly as before.

Every case failed on main (no `min_replicas` field: the request was refused), except the guards
marked as such.
"""

from __future__ import annotations

import pytest

from placement.rules import ComposeRequest, RulesInputError, compose

KUEUE_PARTIAL = "https://kueue.sigs.k8s.io/docs/tasks/run/jobs/#partial-admission"
VOLCANO_ELASTIC = "https://github.com/volcano-sh/volcano/blob/master/docs/design/elastic-scheduler.md"
KAI_ELASTIC = "https://github.com/kai-scheduler/KAI-Scheduler/blob/main/docs/elastic/README.md"
COSCHED_MIN = "https://github.com/kubernetes-sigs/scheduler-plugins/blob/master/pkg/coscheduling/README.md"

GANG = {"name": "train", "kind": "training", "replicas": 8, "min_replicas": 2, "gpus_per_replica": 8,
        "gpu_memory_gib": 60, "gang": True, "tenants": 3}
LOOSE = {"name": "sweep", "kind": "training", "replicas": 8, "min_replicas": 2, "gpus_per_replica": 1,
         "gpu_memory_gib": 30, "tenants": 2}


def _compose(graph, body):
    return compose(graph, ComposeRequest.model_validate(body))


def _elastic(stack):
    return [i for i in stack.score_breakdown if i.factor == "elastic"]


def test_an_elastic_class_is_expressible_and_echoed(graph):
    result = _compose(graph, {"workloads": [GANG]})
    assert result.feasible
    (w,) = result.workloads
    assert (w.min_replicas, w.replicas, w.elastic) == (2, 8, True)
    assert "elastic from 2 replicas" in result.stacks[0].pools[0].serves


def test_a_class_without_min_replicas_dumps_as_before(graph):
    # guard: the optional field is left out of answers that do not use it (identical JSON)
    body = {"workloads": [{k: v for k, v in GANG.items() if k != "min_replicas"}]}
    dumped = _compose(graph, body).model_dump(mode="json")
    assert "min_replicas" not in dumped["workloads"][0]
    assert not any(i["factor"] == "elastic" for s in dumped["stacks"] for i in s["score_breakdown"])


@pytest.mark.parametrize("change, message", [
    ({"min_replicas": 9}, "above replicas 8"),
    ({"kind": "online_inference", "gang": False}, "autoscaling"),
])
def test_a_minimum_an_elastic_job_cannot_have_is_a_field_error(graph, change, message):
    with pytest.raises(RulesInputError) as caught:
        _compose(graph, {"workloads": [{**GANG, **change}]})
    assert message in " ".join(caught.value.errors["workloads[0].min_replicas"])


@pytest.mark.parametrize("require, project, field, source", [
    (["kueue"], "kueue", "kueue.x-k8s.io/job-min-parallelism", KUEUE_PARTIAL),
    # under ResourceQuota (no job minimum) the scheduler is the one that starts the job partially
    (["volcano", "resource-quota"], "volcano", "spec.minAvailable", VOLCANO_ELASTIC),
    (["kai-scheduler", "resource-quota"], "kai-scheduler", "kai.scheduler/batch-min-member", KAI_ELASTIC),
    (["coscheduling", "resource-quota"], "coscheduling", "minMember", COSCHED_MIN),
])
def test_a_stack_that_admits_an_elastic_gang_partially_is_credited_with_the_field_and_source(graph, require, project,
                                                                                              field, source):
    result = _compose(graph, {"workloads": [GANG], "constraints": {"require": require}})
    assert result.feasible, [f.reason for f in result.failures]
    (item,) = _elastic(result.stacks[0])
    assert item.points == 2.0 and item.project == project
    assert field in item.reason and source in item.reason and "train (2 to 8 replicas)" in item.reason


def test_partial_admission_earns_the_points_that_rank_kueue_above_plain_quota(graph):
    # source: KUEUE_PARTIAL (a Job admitted with less parallelism, down to the minimum); ResourceQuota
    # counts pods as they are created and has no job minimum to admit against
    elastic = _compose(graph, {"workloads": [LOOSE], "limit": 10})
    fixed = _compose(graph, {"workloads": [{k: v for k, v in LOOSE.items() if k != "min_replicas"}], "limit": 10})
    scores = {s.title: s.score for s in fixed.stacks}
    kueue = next(s for s in elastic.stacks if s.slots[1].project and s.slots[1].project.slug == "kueue")
    (item,) = _elastic(kueue)
    assert item.project == "kueue" and kueue.score == scores[kueue.title] + item.points


def test_a_stack_where_nothing_admits_partially_says_the_job_waits_for_every_replica(graph):
    # ResourceQuota counts pods as they are created and kube-scheduler binds pod by pod: neither holds a
    # job minimum (https://kubernetes.io/docs/concepts/policy/resource-quotas/)
    body = {"workloads": [LOOSE], "constraints": {"require": ["resource-quota", "kube-scheduler"]}}
    top = _compose(graph, body).stacks[0]
    assert [a.project.slug for a in top.slots[1:3]] == ["resource-quota", "kube-scheduler"]
    (item,) = _elastic(top)
    assert item.points == 0 and "waits until every replica fits" in item.reason


def test_every_project_said_to_admit_elastic_jobs_is_in_the_catalog_and_cites_upstream(graph):
    admits = graph.rules.elastic.admits
    assert {a.project for a in admits} == {"kueue", "volcano", "kai-scheduler", "coscheduling"}
    assert all(a.project in graph.projects and a.source.startswith("https://") for a in admits)
