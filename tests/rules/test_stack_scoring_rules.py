"""How a composed stack is scored, on hand-built projects (the conftest's small catalog plus one or
two projects per test), so each number below is one rule of scoring.py: what a member requires runs
once beside it, a requirement on another scheduler rules a stack out, keeping the default scheduler
earns the profile's points, a capability counts once and for the slot that owns it."""

from __future__ import annotations

from placement.rules import ComposeRequest, Pool, SlotName, build_graph, clear_graph_cache, compose
from placement.rules.synthetic import make_document

A100 = Pool(gpu_model="A100-80GB", gpu_count=8)
COMPONENT = "One more component to install, upgrade and debug."


def _compose(documents, profile, **kwargs):
    clear_graph_cache()
    return compose(build_graph(documents), ComposeRequest(profile=profile, pool=A100, **kwargs))


def _items(stack):
    return {(i.factor, i.subject): (i.points, i.slot, i.project, i.reason) for i in stack.score_breakdown}


def _without(documents, *slugs):
    return [d for d in documents if d.slug not in slugs]


def test_a_handoff_that_requires_another_scheduler_only_runs_under_that_scheduler(small_catalog):
    plugin_s = make_document("plugin-s", layer="L4", units=["whole_gpu"], roles={"advertise": ["whole_gpu"], "allocate": ["whole_gpu"]},
                             capabilities=["device-discovery", "device-allocation"], requires=["sched-b"])
    result = _compose([*small_catalog, plugin_s], "batch_inference", limit=5, constraints={"exclude": ["plugin-a"]})
    assert [(s.title, s.score) for s in result.stacks] == [("Whole GPU (Plugin S) + Sched B + Queue A", 2)]
    # sched-b is the stack's scheduler, not a supporting component beside it
    assert result.stacks[0].supporting == []
    assert "plugin-s requires the scheduler sched-b, but this stack's scheduler is sched-a (1 combination)" in result.excluded


def test_a_component_two_members_require_runs_once_and_is_credited_to_the_first(small_catalog):
    queue_r = make_document("queue-r", layer="L1", units=["whole_gpu"], roles={"bind": ["whole_gpu"]},
                            capabilities=["per-team-quota", "admission-control"], requires=["runtime-hook"])
    stack = _compose([*_without(small_catalog, "queue-a"), queue_r], "training", limit=5).stacks[0]
    assert stack.title == "Whole GPU (Plugin A) + Sched A + Queue R"
    assert stack.score == 6  # as with queue-a, which needs nothing: runtime-hook is charged once
    assert [(s.project.slug, s.required_by) for s in stack.supporting] == [("runtime-hook", "plugin-a")]
    assert stack.components.count("runtime-hook") == 1
    assert _items(stack)[("component_cost", "runtime-hook")] == (
        -1.5, None, "runtime-hook", f"Runtime Hook (required by Plugin A): {COMPONENT}")


def test_a_scheduler_that_keeps_the_default_one_earns_the_profiles_points(small_catalog):
    sched_k = make_document("sched-k", layer="L2", units=["whole_gpu"], roles={"bind": ["whole_gpu"]},
                            capabilities=["pod-binding"], requires=["kube-scheduler"])
    result = _compose([*small_catalog, sched_k], "interactive", limit=5)
    assert [(s.title, s.score) for s in result.stacks] == [
        ("Whole GPU (Plugin A) + Sched K + Queue A", 3),
        ("Whole GPU (Plugin A) + Sched A + Queue A", 1),
        ("Whole GPU (Plugin A) + Sched B + Queue A", 1),
    ]
    first = result.stacks[0]
    assert _items(first)[("default_scheduler", "kube-scheduler")] == (
        2, SlotName.SCHEDULING_POLICY, "sched-k",
        "Sched K keeps the default scheduler: Notebooks are single pods; the default scheduler places them and a batch "
        "scheduler adds nothing.")
    # the default scheduler is part of the cluster baseline, not a component to run beside sched-k
    assert [s.project.slug for s in first.supporting] == ["runtime-hook"]
    assert result.stacks[1].why_rank.startswith("2 points below #1 (1 vs 3): keeping the default scheduler -2, ")


def test_the_default_scheduler_earns_nothing_where_the_profile_gives_it_no_points(small_catalog):
    sched_k = make_document("sched-k", layer="L2", units=["whole_gpu"], roles={"bind": ["whole_gpu"]},
                            capabilities=["pod-binding", "gang-scheduling"], requires=["kube-scheduler"])
    result = _compose([*_without(small_catalog, "sched-a"), sched_k], "training", limit=5)
    first = result.stacks[0]
    assert (first.title, first.score) == ("Whole GPU (Plugin A) + Sched K + Queue A", 6)
    assert ("default_scheduler", "kube-scheduler") not in _items(first)


def test_a_capability_two_members_provide_counts_once_for_the_slot_that_owns_it(small_catalog):
    # a workload API that also claims gang scheduling: the points go to the scheduler, whose layer owns it
    api = make_document("wl-api", kind="api", layer="L0", units=["whole_gpu"],
                        capabilities=["workload-definition", "gang-scheduling"])
    stack = _compose([*small_catalog, api], "training", limit=3).stacks[0]
    assert stack.score == 8  # the training stack's 6, plus workload-definition 2; gang scheduling is not counted twice
    items = _items(stack)
    assert items[("capability", "gang-scheduling")][:3] == (4, SlotName.SCHEDULING_POLICY, "sched-a")
    assert items[("capability", "workload-definition")][:3] == (2, SlotName.WORKLOAD_UNIT, "wl-api")
    contributes = {a.slot: a.contributes for a in stack.slots}
    assert contributes[SlotName.WORKLOAD_UNIT] == ["workload-definition"]
    assert contributes[SlotName.SCHEDULING_POLICY] == ["gang-scheduling", "pod-binding"]
    assert [c for c in stack.components if c == "wl-api"] == ["wl-api"]
    assert ("component_cost", "wl-api") not in items  # an API is no component to run


def test_a_supporting_components_capabilities_count_for_the_stack(small_catalog):
    hook = make_document("runtime-hook", layer="L4", units=["whole_gpu"],
                         capabilities=["container-runtime-injection", "topology-aware-placement"])
    stack = _compose([*_without(small_catalog, "runtime-hook"), hook], "training", limit=3).stacks[0]
    assert stack.score == 8  # 6 + topology-aware placement 2
    assert _items(stack)[("capability", "topology-aware-placement")] == (
        2, None, "runtime-hook",
        "Topology-aware placement from Runtime Hook: NCCL all-reduce collapses when workers land across slow links "
        "(the topology cliff failure story).")
    assert "topology-aware-placement" in stack.capabilities


def test_a_requirement_the_cluster_already_has_does_not_hide_the_next_one(small_catalog):
    # the device plugin framework is part of every cluster (composition.yaml cluster_baseline); the hook is not
    plugin = make_document("plugin-a", layer="L4", units=["whole_gpu", "mig_instance"],
                           roles={"advertise": ["whole_gpu", "mig_instance"], "allocate": ["whole_gpu", "mig_instance"]},
                           capabilities=["device-discovery", "device-allocation"],
                           requires=["device-plugin-framework", "runtime-hook"])
    stack = _compose([*_without(small_catalog, "plugin-a"), plugin], "training", limit=3).stacks[0]
    assert [(s.project.slug, s.required_by) for s in stack.supporting] == [("runtime-hook", "plugin-a")]
    assert "device-plugin-framework" not in stack.components
    assert stack.score == 6
