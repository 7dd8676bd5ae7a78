"""Optional slots (workload unit, platform lifecycle, observability) take a project that acts there
only through a secondary layer only when its primary role is already in the stack (Volcano's Job API
comes with Volcano the scheduler, never beside KAI)."""

from __future__ import annotations

from placement.catalog.schemas import ResourceUnit
from placement.rules import ComposeRequest, SlotName, build_graph, clear_graph_cache, compose
from placement.rules.context import Candidate, PoolOption, resolve
from placement.rules.scoring import evaluate, peripheral_gain
from placement.rules.synthetic import make_document


def _core(graph, scheduler):
    """A checked core stack: the scheduler, Kueue and the device plugin on whole GPUs (training)."""
    ctx = resolve(graph, ComposeRequest(profile="training"))
    option = PoolOption(pool=ctx.pools[0], unit=ResourceUnit.WHOLE_GPU, data_plane=None,
                        handoff="nvidia-device-plugin", local=0.0)
    cand = Candidate(cluster={SlotName.SCHEDULING_POLICY: scheduler, SlotName.ADMISSION_QUOTA: "kueue"}, pools=(option,))
    assert evaluate(ctx, cand, contracts=False) is None
    assert scheduler in cand.members
    return ctx, cand


def test_volcanos_job_api_cannot_fill_the_workload_slot_of_a_stack_without_volcano(graph):
    assert "volcano" in graph.slot_candidates[SlotName.WORKLOAD_UNIT]
    assert "volcano" not in graph.slot_primary[SlotName.WORKLOAD_UNIT]
    ctx, cand = _core(graph, "kai-scheduler")
    assert peripheral_gain(ctx, cand, SlotName.WORKLOAD_UNIT, "volcano") is None


def test_volcanos_job_api_can_fill_the_workload_slot_beside_volcano_the_scheduler(graph):
    ctx, cand = _core(graph, "volcano")
    assert peripheral_gain(ctx, cand, SlotName.WORKLOAD_UNIT, "volcano") is not None


def _stack(result, title):
    return next(s for s in result.stacks if s.title == title)


def _slot(stack, slot):
    return next(a for a in stack.slots if a.slot == slot)


def test_an_optional_slot_stays_empty_when_its_best_project_adds_nothing_and_would_be_one_more(graph):
    # Plain Kubernetes Jobs earn no point for online inference; they are neither in the stack nor shipped
    # by a member, so the workload slot stays empty rather than list them. (The profile's serving class has a
    # P99 target, so request routers would earn points: they are excluded here.)
    routers = sorted(s for s, f in graph.projects.items() if "request-routing" in f.capabilities)
    result = compose(graph, ComposeRequest(profile="online_inference", pool={"gpu_model": "A100-80GB"},
                                           constraints={"exclude": routers},
                                           slo={"isolation": "hard", "goal": "throughput_first", "multi_tenant": False}))
    stack = result.stacks[0]
    assert stack.title == "NVIDIA Multi-Instance GPU (MIG) + kube-scheduler + Kubernetes ResourceQuota with NVIDIA Kubernetes device plugin"
    assert _slot(stack, SlotName.WORKLOAD_UNIT).project is None
    assert stack.components == ["resource-quota", "kube-scheduler", "nvidia-device-plugin", "mig", "gpu-operator",
                                "dcgm-exporter", "nvidia-container-toolkit"]


def test_of_two_equally_good_workload_units_the_stack_takes_the_first_ranked(graph):
    # JobSet and the Kubeflow Training Operator add the same points to a training stack; the one ranked
    # first for the slot (local score, then name) is placed, so the answer does not depend on a sort's whim.
    result = compose(graph, ComposeRequest(profile="training", limit=20, constraints={"exclude": ["appwrapper"]},
                                           slo={"isolation": "hard", "goal": "latency_sensitive", "multi_tenant": True}))
    stack = _stack(result, "Whole GPU (NVIDIA Kubernetes device plugin) + Apache YuniKorn + Kueue")
    assert _slot(stack, SlotName.WORKLOAD_UNIT).project.slug == "jobset"
    assert "kubeflow-training-operator" not in stack.components


def test_a_workload_unit_that_brings_a_required_capability_is_placed_whatever_its_points(graph):
    # Armada counts no per-team quota and conflicts with every gang scheduler that does (KAI, Volcano,
    # YuniKorn); with Koordinator and nos excluded, only AppWrapper's required Kueue brings the quota a
    # multi-tenant pool requires. The required capability ranks it first: without it, no stack holds.
    # Since Kubernetes 1.37 kube-scheduler gangs through the Workload API too (no extra component, so first).
    result = compose(graph, ComposeRequest(profile="training", limit=10,
                                           constraints={"require": ["armada"], "exclude": ["koordinator", "nos"]}))
    assert [s.title for s in result.stacks][:2] == [
        "Whole GPU (NVIDIA Kubernetes device plugin) + kube-scheduler + Armada",
        "Whole GPU (NVIDIA Kubernetes device plugin) + Coscheduling plugin (scheduler-plugins) + Armada"]
    for stack in result.stacks:
        assert _slot(stack, SlotName.WORKLOAD_UNIT).project.slug == "appwrapper"
        assert [(s.project.slug, s.required_by) for s in stack.supporting if s.project.slug == "kueue"] == [("kueue", "appwrapper")]
        assert "per-team-quota" in stack.capabilities


def test_a_workload_unit_with_a_required_capability_beats_one_with_more_preferred_points():
    # The admission project counts no per-team quota; of two workload APIs the one with more preferred
    # capabilities (jobs-rich) would win on points, but only jobs-quota brings the quota a multi-tenant
    # pool requires: it must take the slot, or no stack holds.
    documents = [
        make_document("queue-g", layer="L1", roles={"bind": ["whole_gpu"]}, capabilities=["admission-control", "job-queueing"]),
        make_document("sched-g", layer="L2", roles={"bind": ["whole_gpu"]}, capabilities=["pod-binding", "gang-scheduling"]),
        make_document("plugin-g", layer="L4", roles={"advertise": ["whole_gpu"], "allocate": ["whole_gpu"]},
                      capabilities=["device-discovery", "device-allocation"]),
        make_document("jobs-quota", layer="L0", capabilities=["workload-definition", "per-team-quota"]),
        make_document("jobs-rich", layer="L0", capabilities=["workload-definition", "topology-aware-placement", "fair-sharing",
                                                             "job-queueing", "preemption"]),
    ]
    clear_graph_cache()
    graph = build_graph(documents)
    request = ComposeRequest(profile="batch_inference", slo={"isolation": "soft", "multi_tenant": True})
    ctx = resolve(graph, request)
    core = Candidate(cluster={SlotName.SCHEDULING_POLICY: "sched-g", SlotName.ADMISSION_QUOTA: "queue-g"}, pools=(
        PoolOption(pool=ctx.pools[0], unit=ResourceUnit.WHOLE_GPU, data_plane=None, handoff="plugin-g", local=0.0),))
    assert evaluate(ctx, core, contracts=False) is None
    assert peripheral_gain(ctx, core, SlotName.WORKLOAD_UNIT, "jobs-quota") > peripheral_gain(
        ctx, core, SlotName.WORKLOAD_UNIT, "jobs-rich") > 0

    result = compose(graph, request)
    assert result.feasible, result.failures
    assert [_slot(s, SlotName.WORKLOAD_UNIT).project.slug for s in result.stacks] == ["jobs-quota"]


def test_a_stack_short_of_a_required_capability_names_what_requires_it():
    # the only quota-bringing workload API conflicts with the only scheduler: every stack lacks the quota a
    # multi-tenant pool requires, and the reason says that it is the tenancy's requirement
    documents = [
        make_document("queue-g", layer="L1", roles={"bind": ["whole_gpu"]}, capabilities=["admission-control"]),
        make_document("sched-g", layer="L2", roles={"bind": ["whole_gpu"]}, capabilities=["pod-binding"]),
        make_document("plugin-g", layer="L4", roles={"advertise": ["whole_gpu"], "allocate": ["whole_gpu"]},
                      capabilities=["device-discovery", "device-allocation"]),
        make_document("jobs-quota", layer="L0", capabilities=["workload-definition", "per-team-quota"], conflicts=["sched-g"]),
    ]
    clear_graph_cache()
    result = compose(build_graph(documents), ComposeRequest(profile="batch_inference", slo={"isolation": "soft", "multi_tenant": True}))
    assert not result.feasible
    assert [f.reason for f in result.failures] == [
        "Every combination of the remaining candidates fails: no project provides per-team-quota, which this request "
        "requires (Several teams share the pool; each needs a quota promise) (1x)."]
