"""Answers that follow from the catalog facts issue 33 corrected: Kubernetes 1.37 gang scheduling in
kube-scheduler, and Grove's and Dynamo's scheduler backends being options, not dependencies."""

from __future__ import annotations

from placement.rules import ComposeRequest, MisuseStatus, check_misuse, compose
from placement.rules.compare import compare_pair


def test_kube_scheduler_asked_for_gang_scheduling_is_no_misuse_from_1_37(graph):
    # Kubernetes 1.37 took the Workload and PodGroup APIs to beta: kube-scheduler places a PodGroup
    # all-or-nothing through the API it serves, so asking it for gangs is no longer a misuse.
    verdict = check_misuse(graph, "kube-scheduler", "gang-scheduling")
    assert not verdict.is_misuse
    assert verdict.status == MisuseStatus.PROVIDED
    assert "Kubernetes Workload API" in verdict.reason


def test_a_scheduler_that_serves_no_gang_api_is_still_asked_the_wrong_thing(graph):
    # the API route is kube-scheduler's own: a component that merely requires it gains nothing
    verdict = check_misuse(graph, "trimaran", "gang-scheduling")
    assert verdict.is_misuse


def test_grove_runs_without_kai_on_another_gang_scheduler(graph):
    result = compose(graph, ComposeRequest(profile="training", constraints={"require": ["grove"], "exclude": ["kai-scheduler"]}))
    assert result.feasible, result.failures
    schedulers = {a.project.slug for s in result.stacks for a in s.slots if a.slot.value == "scheduling_policy"}
    assert schedulers and "kai-scheduler" not in schedulers


def test_grove_and_kai_are_not_built_on_each_other(graph):
    verdict = compare_pair(graph, "grove", "kai-scheduler")
    assert "depends_on" not in {step.relation for step in verdict.path}
    assert "requires" not in verdict.explanation


def test_dynamo_without_grove_is_a_stack(graph):
    result = compose(graph, ComposeRequest(profile="training", constraints={"require": ["nvidia-dynamo"], "exclude": ["grove"]}))
    assert result.feasible, result.failures


def test_comparing_kube_scheduler_with_volcano_credits_its_gang_through_the_workload_api(graph):
    # compare agrees with compose and misuse: from 1.37 kube-scheduler gangs through the API it serves.

    pair = compare_pair(graph, "kube-scheduler", "volcano")
    gang = next(a for a in pair.axes if a.axis == "gang")
    kube = next(v.value for v in gang.values if v.slug == "kube-scheduler")
    assert kube.startswith("Provides Gang scheduling through the Kubernetes Workload API")
    assert "1.37" in kube and "Does not provide" not in kube
