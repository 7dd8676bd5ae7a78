"""What the compose search returns when every combination fails, and what a feasible result carries
(placement/rules/compose.py): the failure that leads with the contract a reader must change, the
counted exclusions, the limit and order of stacks, and the request echoed back."""

from __future__ import annotations

from placement.rules import ComposeRequest, SlotName, build_graph, clear_graph_cache, compose
from placement.rules.models import CheckPoint
from placement.rules.synthetic import make_document


def _compose(graph, **request):
    return compose(graph, ComposeRequest(**request))


def test_no_stack_leads_with_the_broken_contract_that_names_a_required_project(graph):
    # runai counts whole GPUs and fractions only; HAMi hands out memory caps and MPS shares
    result = _compose(graph, profile="online_inference", constraints={"require": ["runai", "hami"]})
    assert not result.feasible and result.stacks == []
    (failure,) = result.failures
    assert (failure.slot, failure.contract_point, failure.rejected) == (None, CheckPoint.QUOTA, [])
    assert failure.reason == (
        "Quota fails: runai cannot count Memory quota + compute share in quota. Every combination of the remaining "
        "candidates fails: Quota fails: runai cannot count Memory quota + compute share in quota (10x); Quota fails: "
        "runai cannot count MPS share in quota (7x); runai requires the scheduler kai-scheduler, but this stack's "
        "scheduler is kube-scheduler (2x); Bind fails: kube-scheduler cannot bind Memory quota + compute share (1x); "
        "Bind fails: coscheduling cannot bind Memory quota + compute share (1x).")
    assert result.excluded[:2] == ["Quota fails: runai cannot count Memory quota + compute share in quota (10 combinations)",
                                   "Quota fails: runai cannot count MPS share in quota (7 combinations)"]
    assert result.combinations_checked == 336  # Armada, a batch system, is no candidate for serving


def test_the_lead_contract_is_the_one_naming_a_required_project_even_if_rarer(graph):
    # the required default scheduler cannot bind HAMi-core's caps (1 combination); the other failures
    # are more frequent but name no required project and are no contract
    result = _compose(graph, profile="online_inference",
                      constraints={"require": ["kueue", "aibrix", "kube-scheduler"], "exclude": ["hami"]})
    (failure,) = result.failures
    assert failure.contract_point == CheckPoint.BIND
    assert failure.reason == (
        "Bind fails: kube-scheduler cannot bind Memory quota + compute share. Every combination of the remaining "
        "candidates fails: a required project does not fit next to the rest (3x); Bind fails: kube-scheduler "
        "cannot bind Memory quota + compute share (1x).")
    assert "Bind fails: kube-scheduler cannot bind Memory quota + compute share (1 combination)" in result.excluded


def test_no_stack_without_a_broken_contract_names_only_the_exclusions(graph):
    # (the Workload API excluded: kube-scheduler, which gangs through it since Kubernetes 1.37, stays out of the
    # search, so the counted combinations are those of the gang schedulers alone)
    result = _compose(graph, profile="training", constraints={"require": ["jobset", "appwrapper"],
                                                              "exclude": ["kubernetes-workload-api"]})
    (failure,) = result.failures
    assert (failure.slot, failure.contract_point) == (None, None)
    assert failure.reason == (
        "Every combination of the remaining candidates fails: lacks required jobset (12x); lacks required appwrapper (11x); "
        "Bind fails: koordinator cannot bind DRA device (6x); Bind fails: yunikorn cannot bind DRA device (5x); Quota "
        "fails: runai cannot count DRA device in quota (3x).")
    assert result.excluded[:2] == ["lacks required jobset (12 combinations)", "lacks required appwrapper (11 combinations)"]
    assert result.combinations_checked == 90  # exclusive DRA claims are a training pool option too


def test_a_feasible_result_keeps_at_most_ten_counted_exclusions(graph):
    result = _compose(graph, profile="online_inference")
    assert result.feasible and result.failures == []
    assert len(result.excluded) == 10
    # one reason for six schedulers is said once, naming them (issue 32: it was repeated six times)
    assert result.excluded[0].startswith("Bind fails on the serving pool: two binders - hami's mutating webhook rewrites "
                                         "spec.schedulerName of GPU pods to hami-scheduler, so volcano, ")
    assert "'s policy never sees them" in result.excluded[0]
    assert sum("two binders - hami's" in e for e in result.excluded) == 1
    assert "Quota fails: runai cannot count Memory quota + compute share in quota (10 combinations)" in result.excluded


def test_the_limit_caps_the_stacks_ranked_best_first(graph):
    result = _compose(graph, profile="online_inference", limit=2)
    assert [(s.rank, s.title, s.score) for s in result.stacks] == [
        (1, "HAMi + kube-scheduler + Kueue", 21.5), (2, "Volcano vGPU device plugin + Volcano + Kubernetes ResourceQuota", 21.0)]
    full = _compose(graph, profile="online_inference")
    assert len(full.stacks) == 5
    assert [s.title for s in full.stacks[:2]] == [s.title for s in result.stacks]
    scores = [s.score for s in full.stacks]
    assert scores == sorted(scores, reverse=True)
    assert [s.rank for s in full.stacks] == [1, 2, 3, 4, 5]


def test_the_result_echoes_the_resolved_request(graph):
    result = _compose(graph, profile="online_inference", limit=1)
    assert result.catalog_version == graph.version
    assert result.profile == "online_inference"
    assert (result.slo.isolation.value, result.slo.goal, result.slo.multi_tenant) == ("soft", "latency_sensitive", True)
    assert (result.pool.gpu_model, result.pool.gpu_count, result.pool.mig_capable) == ("A100-80GB", 8, True)
    assert result.constraints.require == [] and result.constraints.keep_default_scheduler is False
    assert [w.name for w in result.workloads] == ["serving"]
    # every returned stack says why it ranks where it does, and every project left out why not
    assert result.stacks[0].contracts and all(c.holds for c in result.stacks[0].contracts)
    assert any(w.rule == "ranked_lower" for w in result.why_not)


def test_only_a_gang_class_is_named_when_the_scheduling_slot_is_empty(graph):
    # no gang: the empty scheduling slot is only the constraints' doing
    inside = ["kube-scheduler", "coscheduling", "node-resource-topology"]
    result = _compose(graph, profile="online_inference", constraints={"keep_default_scheduler": True, "exclude": inside})
    failure = result.failures[0]
    assert failure.slot == SlotName.SCHEDULING_POLICY
    assert failure.reason == "No catalog project can fill scheduling policy under these constraints."
    assert {r.project for r in failure.rejected} >= {"volcano", "kube-scheduler"}



def test_when_every_combination_fails_only_for_unreported_reasons_those_reasons_are_given():
    # The only admission project is a scheduler that queues (L1 as a secondary layer), and another scheduler
    # is required: one combination lacks the required scheduler, the other uses dual-a's queue without its
    # scheduler. Neither reason is listed beside a stack, but with no stack they are the answer.
    documents = [
        make_document("dual-a", layer="L2", secondary=["L1"], roles={"bind": ["whole_gpu"]},
                      capabilities=["pod-binding", "per-team-quota", "admission-control"]),
        make_document("sched-b", layer="L2", roles={"bind": ["whole_gpu"]}, capabilities=["pod-binding"]),
        make_document("plugin-g", layer="L4", roles={"advertise": ["whole_gpu"], "allocate": ["whole_gpu"]},
                      capabilities=["device-discovery", "device-allocation"]),
    ]
    clear_graph_cache()
    result = compose(build_graph(documents), {"profile": "batch_inference", "slo": {"isolation": "soft"},
                                              "constraints": {"require": ["sched-b"]}})
    assert not result.feasible and result.excluded == []
    assert [f.reason for f in result.failures] == [
        "Every combination of the remaining candidates fails: lacks required sched-b (1x); "
        "dual-a can fill admission_quota only alongside its primary role (1x)."]
