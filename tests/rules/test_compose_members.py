"""Who may be in a composed stack besides the slot members: no archived project unless asked for,
and no second scheduler riding along as a "supporting" requirement."""

from __future__ import annotations

import pytest

from placement.rules import ComposeRequest, Constraints, SlotName, compose

PROFILES = ("training", "online_inference", "batch_inference", "interactive", "mixed")


@pytest.mark.parametrize("keep_default", [False, True], ids=["any scheduler", "keep default scheduler"])
@pytest.mark.parametrize("profile", PROFILES)
def test_a_stack_never_carries_two_schedulers(graph, profile, keep_default):
    # Grove requires KAI: it used to join a coscheduling stack as "supporting", two binders for one pool.
    schedulers = set(graph.slot_candidates[SlotName.SCHEDULING_POLICY])
    result = compose(graph, ComposeRequest(profile=profile, constraints=Constraints(keep_default_scheduler=keep_default), limit=10))
    for stack in result.stacks:
        slotted = {a.project.slug for a in stack.slots if a.slot == SlotName.SCHEDULING_POLICY and a.project}
        riding = {s.project.slug for s in stack.supporting if s.project.slug in schedulers} - slotted
        assert not riding, (stack.title, slotted, riding)


@pytest.mark.parametrize("profile", PROFILES)
def test_archived_projects_are_not_composed_unless_required(graph, profile):
    archived = {slug for slug, f in graph.projects.items() if f.doc.placement.landscape and f.doc.placement.landscape.archived}
    assert archived, "the catalog marks at least one project archived (nos)"
    result = compose(graph, ComposeRequest(profile=profile, limit=10))
    assert not [s.title for s in result.stacks if archived & set(s.components)]


def test_an_archived_project_is_composed_when_required(graph):
    result = compose(graph, ComposeRequest(profile="mixed", constraints=Constraints(require=["nos"])))
    assert result.feasible and all("nos" in s.components for s in result.stacks), result.failures


def test_a_mig_slice_gives_a_fractional_replica_its_compute_share_not_only_its_memory(graph):
    # A replica asking a quarter of a GPU with 8 GiB: 1g.10gb holds the memory but has 1/7 (14%) of
    # the SMs; the smallest slice with both is 2g.20gb (2/7) (domain-facts §1.1).
    serving = {"name": "serving", "kind": "online_inference", "replicas": 16, "gpus_per_replica": 0.25,
               "gpu_memory_gib": 8, "p99_ms": 200, "tenants": 4}
    result = compose(graph, ComposeRequest(workloads=[serving], constraints=Constraints(require=["mig"]),
                                           pool={"gpu_model": "A100-80GB", "gpu_count": 16}))
    assert result.feasible, result.failures
    sizes = {p.unit_size for s in result.stacks for p in s.pools if p.unit.value == "mig_instance"}
    assert sizes == {"MIG 2g.20gb per replica"}, sizes


def test_armada_never_queues_above_an_in_cluster_batch_scheduler(graph):
    # Armada decides when and where each job runs (its own queues and scheduler, armadaproject.io
    # system overview); stacked over Volcano, KAI or YuniKorn two queue systems place the same pods.
    body = {"name": "pretrain", "kind": "training", "replicas": 8, "gpus_per_replica": 8, "gpu_memory_gib": 70,
            "gang": True, "peer_to_peer": True}
    result = compose(graph, ComposeRequest(workloads=[body], limit=10))
    for stack in result.stacks:
        members = set(stack.components)
        assert not ("armada" in members and members & {"volcano", "kai-scheduler", "yunikorn"}), stack.title


@pytest.mark.parametrize("profile", PROFILES)
def test_requiring_every_project_of_the_top_stack_gives_that_stack_back(graph, profile):
    # an architect pins the stack they chose (every member required) and must get the same stack, first
    def slots(stack):
        return [(a.slot, a.pool, a.project.slug if a.project else None) for a in stack.slots]

    top = compose(graph, ComposeRequest(profile=profile)).stacks[0]
    members = sorted({a.project.slug for a in top.slots if a.project})
    pinned = compose(graph, ComposeRequest(profile=profile, constraints=Constraints(require=members)))
    assert pinned.feasible, pinned.failures
    assert slots(pinned.stacks[0]) == slots(top)
