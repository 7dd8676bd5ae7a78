"""What the search's pruning keeps on catalogs larger than its breadth (placement/rules/feasibility.py):
the best candidates by local score, and beside them every candidate a stack may need (the best few per
pool unit and per required capability, the default scheduler, required projects). The limits
(context.py: TOP_CLUSTER, TOP_PER_UNIT, TOP_POOL_OPTIONS) never bind on the shipped catalog, so these
tests build small catalogs with more candidates per slot than the limits."""

from __future__ import annotations

import pytest

from placement.catalog.schemas import ResourceUnit
from placement.rules import ComposeRequest, SlotName, build_graph, clear_graph_cache, compose
from placement.rules.context import TOP_CLUSTER, TOP_PER_UNIT, TOP_POOL_OPTIONS, resolve, validated
from placement.rules.feasibility import best_few, placeable, pool_options, top_cluster
from placement.rules.synthetic import make_document

# batch_inference's positive preferences (profiles.yaml) plus throughput_first's (composition.yaml);
# with one component cost (-1.5) a project's local score is len(caps) - 1.5
PREFERRED = ["job-queueing", "raise-per-gpu-utilisation", "gpu-telemetry", "driver-lifecycle", "backfill", "bin-packing"]
SINGLE_TEAM = {"isolation": "soft", "goal": "throughput_first", "multi_tenant": False}
TEAMS = {**SINGLE_TEAM, "multi_tenant": True}  # requires per-team-quota (composition.yaml tenancy)
WHOLE, MIG = ResourceUnit.WHOLE_GPU, ResourceUnit.MIG_INSTANCE


def test_the_limits_these_tests_are_built_around():
    assert (TOP_CLUSTER, TOP_PER_UNIT, TOP_POOL_OPTIONS) == (6, 3, 6)


def _graph(documents):
    clear_graph_cache()
    return build_graph(documents)


def _ctx(graph, **request):
    request.setdefault("profile", "batch_inference")
    request.setdefault("slo", SINGLE_TEAM)
    return resolve(graph, validated(ComposeRequest(**request)))


def _scheduler(slug, caps=0, units=("whole_gpu",), extra=(), **kw):
    return make_document(slug, layer="L2", units=list(units), roles={"bind": list(units)},
                         capabilities=["pod-binding", *PREFERRED[:caps], *extra], **kw)


def _queue(slug, caps=0, units=("whole_gpu",), **kw):
    return make_document(slug, layer="L1", units=list(units), roles={"bind": list(units)},
                         capabilities=["per-team-quota", *PREFERRED[:caps]], **kw)


def _handoff(slug, caps=0, units=("whole_gpu",), extra=(), **kw):
    return make_document(slug, layer="L4", units=list(units), roles={"advertise": list(units), "allocate": list(units)},
                         capabilities=["device-discovery", "device-allocation", *PREFERRED[:caps], *extra], **kw)


def _slicer(slug, caps=0):
    return make_document(slug, kind="mechanism", layer="L4", units=["mig_instance"],
                         capabilities=["hardware-partitioning", *PREFERRED[:caps]])


# --- placeable ------------------------------------------------------------------------------------


def test_a_slot_keeps_its_primary_candidates_and_companions_of_their_primary_role_only():
    graph = _graph([
        _queue("queue-a"), _queue("queue-b"),
        _scheduler("dual-a", secondary=["L1"]), _scheduler("dual-b", secondary=["L1"]),
    ])
    ctx = _ctx(graph)
    slugs = ["dual-b", "queue-b", "dual-a", "queue-a"]
    assert placeable(ctx, SlotName.ADMISSION_QUOTA, slugs, set()) == ["queue-b", "queue-a"]
    assert placeable(ctx, SlotName.ADMISSION_QUOTA, slugs, {"dual-a"}) == ["queue-b", "dual-a", "queue-a"]
    # a companion that is no candidate of the slot is not added
    assert placeable(ctx, SlotName.ADMISSION_QUOTA, ["queue-a"], {"dual-a"}) == ["queue-a"]
    assert placeable(ctx, SlotName.SCHEDULING_POLICY, slugs, set()) == ["dual-b", "dual-a"]


# --- best_few -------------------------------------------------------------------------------------


def test_best_few_keeps_the_head_then_only_required_and_partnered_candidates_in_rank_order():
    ranked = [f"h{i}" for i in range(1, 11)]
    graph = _graph([_handoff(slug) for slug in ranked])
    ctx = _ctx(graph, constraints={"require": ["h9"]})
    assert best_few(ctx, ranked, keep=set()) == ["h1", "h2", "h3", "h4", "h5", "h6", "h9"]
    assert best_few(ctx, ranked, keep={"h10", "h7", "h2"}) == ["h1", "h2", "h3", "h4", "h5", "h6", "h7", "h9", "h10"]
    assert best_few(_ctx(graph), ranked, keep=set()) == ranked[:TOP_POOL_OPTIONS]
    assert best_few(_ctx(graph), ranked[:4], keep={"h1"}) == ranked[:4]


# --- top_cluster ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def schedulers():
    """Seven good whole-GPU schedulers, the default scheduler and one running inside it, four that bind
    only MIG, four that provide per-team quota, one plain one and one the request requires."""
    return [
        *[_scheduler(f"top-{i}", caps=c) for i, c in enumerate([6, 5, 5, 4, 4, 3, 3], start=1)],
        _scheduler("kube-scheduler"),  # the default scheduler, in the cluster baseline: no component cost
        _scheduler("plug", requires=["kube-scheduler"]),
        *[_scheduler(f"mig-{x}", units=("mig_instance",)) for x in "abcd"],
        *[_scheduler(f"quota-{i}", extra=["per-team-quota"]) for i in range(1, 5)],
        _scheduler("plain"),
        _scheduler("req"),
        _handoff("plugin"),
    ]


def _all(graph, slot):
    return sorted(graph.slot_candidates[slot])


def test_scheduling_keeps_the_best_six_the_default_scheduler_the_best_three_per_unit_and_per_required_capability(schedulers):
    graph = _graph(schedulers)
    ctx = _ctx(graph, slo=TEAMS, constraints={"require": ["req", "plugin"]})
    kept = top_cluster(ctx, SlotName.SCHEDULING_POLICY, _all(graph, SlotName.SCHEDULING_POLICY), {WHOLE, MIG}, set())
    assert kept == [
        "top-1", "top-2", "top-3", "top-4", "top-5", "top-6",  # by local score (ties by name)
        "kube-scheduler", "plug",  # keep the default scheduler
        "mig-a", "mig-b", "mig-c",  # MIG: the best three that bind it (whole GPU: top-1..3, already in)
        "quota-1", "quota-2", "quota-3",  # per-team-quota, required for several teams
        "req",  # required; the required handoff fills no scheduling slot
    ]


def test_scheduling_keeps_only_the_best_six_when_nothing_else_is_needed(schedulers):
    graph = _graph(schedulers)
    ctx = _ctx(graph)
    slugs = [s for s in _all(graph, SlotName.SCHEDULING_POLICY) if s not in ("kube-scheduler", "plug")]
    assert top_cluster(ctx, SlotName.SCHEDULING_POLICY, slugs, {WHOLE}, set()) == [f"top-{i}" for i in range(1, 7)]
    # a unit nobody binds adds nobody; units are taken in a fixed order
    assert top_cluster(ctx, SlotName.SCHEDULING_POLICY, slugs, {ResourceUnit.TIME_SLICE}, set()) == [
        f"top-{i}" for i in range(1, 7)]


def test_a_unit_brings_its_best_binders_in_unit_order(schedulers):
    graph = _graph([*schedulers, *[_scheduler(f"ts-{x}", units=("time_slice",)) for x in "ab"]])
    ctx = _ctx(graph)
    slugs = [s for s in _all(graph, SlotName.SCHEDULING_POLICY) if s not in ("kube-scheduler", "plug")]
    # in the order of the units' names, whatever order they come in
    for units in ((WHOLE, ResourceUnit.TIME_SLICE, MIG), (MIG, ResourceUnit.TIME_SLICE), (ResourceUnit.TIME_SLICE, MIG)):
        kept = top_cluster(ctx, SlotName.SCHEDULING_POLICY, slugs, units, set())
        assert kept[TOP_CLUSTER:] == ["mig-a", "mig-b", "mig-c", "ts-a", "ts-b"]  # mig_instance < time_slice


def test_admission_counts_a_unit_by_its_bind_role_else_by_its_units_and_takes_companions():
    graph = _graph([
        *[_queue(f"q-{i}", caps=c) for i, c in enumerate([6, 5, 4, 3, 2, 1, 1], start=1)],
        *[_queue(f"mq-{x}", units=("mig_instance",)) for x in "abcd"],
        # counts MIG through its units (no bind role)
        make_document("counter", layer="L1", units=["mig_instance"], capabilities=["per-team-quota", "admission-control"]),
        _scheduler("dual", caps=6, secondary=["L1"]),
        _scheduler("mig-sched", units=("mig_instance",)),
    ])
    ctx = _ctx(graph)
    slugs = _all(graph, SlotName.ADMISSION_QUOTA)
    assert "dual" in slugs
    kept = top_cluster(ctx, SlotName.ADMISSION_QUOTA, slugs, {WHOLE, MIG}, set())
    # no default-scheduler rule outside the scheduling slot; the scheduler is no companion yet
    assert kept == ["q-1", "q-2", "q-3", "q-4", "q-5", "q-6", "counter", "mq-a", "mq-b"]
    kept = top_cluster(ctx, SlotName.ADMISSION_QUOTA, slugs, {WHOLE, MIG}, {"dual"})
    assert kept == ["dual", "q-1", "q-2", "q-3", "q-4", "q-5", "counter", "mq-a", "mq-b"]


def test_admission_keeps_the_best_queues_that_stand_alone_beside_better_companions():
    # six schedulers acting as admission rank first for whole GPUs and per-team quota; each fills the
    # slot only beside its scheduler role, so the best three real queues per unit and capability stay too
    rich = ["per-team-quota", "admission-control", "fair-sharing", "preemption", "job-queueing", "bin-packing"]
    graph = _graph([
        *[_scheduler(f"big-{i}", secondary=["L1"], extra=rich) for i in range(1, 7)],
        *[_queue(f"q-{i}", caps=c) for i, c in enumerate([3, 2, 1, 0], start=1)],
        _queue("mq", units=("mig_instance",)),
    ])
    ctx = _ctx(graph, slo=TEAMS)
    slugs = _all(graph, SlotName.ADMISSION_QUOTA)
    bigs = [f"big-{i}" for i in range(1, 7)]
    assert top_cluster(ctx, SlotName.ADMISSION_QUOTA, slugs, {WHOLE}, set(bigs)) == [*bigs, "q-1", "q-2", "q-3"]
    assert top_cluster(ctx, SlotName.ADMISSION_QUOTA, slugs, {WHOLE, MIG}, set(bigs)) == [*bigs, "mq", "q-1", "q-2", "q-3"]
    # for the required capability alone (a unit no big one counts)
    assert top_cluster(ctx, SlotName.ADMISSION_QUOTA, slugs, {MIG}, set(bigs)) == [*bigs, "mq", "q-1", "q-2", "q-3"]


def test_a_required_candidate_outside_the_slot_list_is_not_added(schedulers):
    graph = _graph(schedulers)
    ctx = _ctx(graph, constraints={"require": ["req"]})
    slugs = [s for s in _all(graph, SlotName.SCHEDULING_POLICY) if s != "req"]
    assert "req" not in top_cluster(ctx, SlotName.SCHEDULING_POLICY, slugs, {WHOLE}, set())
    kept = top_cluster(ctx, SlotName.SCHEDULING_POLICY, [*slugs, "req"], {WHOLE}, set())
    assert kept.count("req") == 1 and kept[-1] == "req"
    ctx = _ctx(graph, constraints={"require": ["top-2"]})
    assert top_cluster(ctx, SlotName.SCHEDULING_POLICY, slugs, {WHOLE}, set()).count("top-2") == 1


# --- pool_options ---------------------------------------------------------------------------------


def _options(ctx):
    (spec,) = ctx.pools
    return [(o.unit.value, o.data_plane, o.handoff) for o in pool_options(ctx, spec, set())]


def test_a_pool_keeps_its_six_best_options_and_a_required_handoff_that_ranks_below_them():
    # named against their rank: h8 is the best, h1 and h2 the worst
    graph = _graph([
        *[_handoff(f"h{i}", caps=c) for i, c in enumerate([0, 0, 1, 2, 3, 4, 5, 6], start=1)],
        _scheduler("sched"), _queue("queue"),
    ])
    best = [("whole_gpu", None, f"h{i}") for i in range(8, 2, -1)]
    assert _options(_ctx(graph)) == best
    assert _options(_ctx(graph, constraints={"require": ["h1"]})) == [*best, ("whole_gpu", None, "h1")]
    assert _options(_ctx(graph, constraints={"require": ["h6"]})) == best


def test_a_handoff_built_for_the_pools_unit_ranks_by_its_native_bonus_before_the_cut():
    # six handoffs built around MIG (their first unit) also hand out whole GPUs and have one preferred
    # capability more; the whole-GPU one's native bonus (composition.yaml native_handoff, 1 point)
    # evens that out, and its name wins the tie
    graph = _graph([
        _handoff("a-native"),
        *[_handoff(f"multi-{i}", caps=1, units=("mig_instance", "whole_gpu")) for i in range(1, 7)],
        _scheduler("sched"), _queue("queue"),
    ])
    assert _options(_ctx(graph)) == [("whole_gpu", None, "a-native")] + [
        ("whole_gpu", None, f"multi-{i}") for i in range(1, 6)]


def test_a_required_mechanism_that_ranks_below_the_cut_stays_with_its_two_best_handoffs():
    graph = _graph([
        *[_slicer(f"m{i}", caps=c) for i, c in enumerate([6, 5, 4, 3, 2, 1, 1, 0], start=1)],
        *[_handoff(f"mh{i}", caps=c, units=("mig_instance",)) for i, c in enumerate([3, 2, 1], start=1)],
        _scheduler("sched", units=("whole_gpu", "mig_instance")), _queue("queue", units=("whole_gpu", "mig_instance")),
    ])
    # hard isolation: whole GPUs (no handoff here) or MIG, which needs a mechanism on a MIG-capable card
    slo = {**SINGLE_TEAM, "isolation": "hard"}
    pool = {"gpu_model": "A100-80GB"}
    best = _options(_ctx(graph, slo=slo, pool=pool))
    assert len(best) == TOP_POOL_OPTIONS and all(o[0] == "mig_instance" for o in best)
    assert [o[1:] for o in best] == [("m1", "mh1"), ("m1", "mh2"), ("m2", "mh1"), ("m1", "mh3"), ("m2", "mh2"),
                                     ("m3", "mh1")]
    required = _options(_ctx(graph, slo=slo, pool=pool, constraints={"require": ["m8"]}))
    assert required == [*best, ("mig_instance", "m8", "mh1"), ("mig_instance", "m8", "mh2")]
    required = _options(_ctx(graph, slo=slo, pool=pool, constraints={"require": ["m8", "mh3"]}))
    assert required == [*best, ("mig_instance", "m8", "mh1"), ("mig_instance", "m8", "mh2")]  # mh3 is in the best six


def test_a_handoff_that_creates_its_unit_itself_is_paired_with_itself_though_it_ranks_below_six_mechanisms():
    # mig-suite hands out MIG instances and creates them (like HAMi its memory caps); seven cheaper
    # mechanisms rank above it as the data plane, yet its own option (one project, not two) is the best
    mechanisms = [make_document(f"m{i}", layer="L4", units=["mig_instance"], capabilities=["hardware-partitioning", PREFERRED[0]])
                  for i in range(1, 8)]
    graph = _graph([
        *mechanisms,
        _handoff("mig-suite", units=("mig_instance",), extra=["hardware-partitioning"]),
        _scheduler("sched", units=("mig_instance",)), _queue("queue", units=("mig_instance",)),
    ])
    ctx = _ctx(graph, slo={**SINGLE_TEAM, "isolation": "hard"}, pool={"gpu_model": "A100-80GB"})
    assert _options(ctx) == [("mig_instance", "mig-suite", "mig-suite")] + [
        ("mig_instance", f"m{i}", "mig-suite") for i in range(1, 6)]


# --- compose: pruning keeps a stack possible ------------------------------------------------------


def test_pruning_keeps_an_admission_project_that_can_stand_alone_when_better_ones_need_their_scheduler_role():
    # Seven schedulers also act as admission (secondary layer L1) and rank above the one real queue, but
    # each conflicts with the only device plugin: the one stack is kube-scheduler + queue + plugin.
    rich = ["per-team-quota", "admission-control", "fair-sharing", "preemption", "job-queueing", "bin-packing"]
    graph = _graph([
        _handoff("plugin"),
        _scheduler("kube-scheduler"),
        _queue("queue"),
        *[_scheduler(f"big-{i}", secondary=["L1"], extra=rich, conflicts=["plugin"]) for i in range(1, 8)],
    ])
    result = compose(graph, ComposeRequest(profile="batch_inference", slo=TEAMS))
    assert result.feasible, result.failures
    assert [s.title for s in result.stacks] == ["Whole GPU (Plugin) + Kube Scheduler + Queue"]
