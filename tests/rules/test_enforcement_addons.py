"""Issue 32, Build 3: an enforcement add-on changes the isolation of the unit it enforces.

KAI's GPU fractions are scheduler accounting ("By default, KAI Scheduler does not enforce memory
allocation limits", docs/gpu-sharing/README.md); the kai-resource-isolator deploys HAMi-core so each
fractional container can allocate only its share (docs/gpu-sharing/hami/README.md). A pool that needs
memory isolation may then be served by KAI fractions with the isolator, and compose must be able to
return that stack: the fraction rides on a whole GPU the NVIDIA device plugin advertises, held by KAI's
reservation pod and handed to the fractional container by KAI's binder (NVIDIA_VISIBLE_DEVICES).
Every case failed on main (the stack was refused: no device handoff delivers fractions), except the
guards marked as such.
"""

from __future__ import annotations

from placement.rules import ComposeRequest, compose

KAI_SHARING = "https://github.com/kai-scheduler/KAI-Scheduler/blob/main/docs/gpu-sharing/README.md"
KAI_HAMI = "https://github.com/kai-scheduler/KAI-Scheduler/blob/main/docs/gpu-sharing/hami/README.md"
KAI_BINDER = "https://github.com/kai-scheduler/KAI-Scheduler/blob/main/docs/developer/binder.md"
HAMI_CORE = "https://github.com/Project-HAMi/HAMi-core (README: device memory capped per container)"

NOTEBOOKS = {"name": "nb", "kind": "interactive", "replicas": 8, "gpus_per_replica": 0.5, "gpu_memory_gib": 20,
             "tenants": 2}
WITH_ISOLATOR = {"workloads": [NOTEBOOKS], "slo": {"isolation": "soft"},
                 "constraints": {"require": ["kai-resource-isolator"]}}


def _compose(graph, body):
    return compose(graph, ComposeRequest.model_validate(body))


def _slots(stack) -> dict[str, str]:
    return {a.slot.value: a.project.slug for a in stack.slots if a.project is not None}


def test_a_soft_pool_is_served_by_kai_fractions_with_the_resource_isolator(graph):
    # source: KAI_HAMI (the isolator enforces each pod's gpu-fraction / gpu-memory as a memory cap)
    result = _compose(graph, WITH_ISOLATOR)
    assert result.feasible, [f.reason for f in result.failures]
    top = result.stacks[0]
    (pool,) = top.pools
    assert (pool.unit.value, pool.data_plane, pool.device_handoff) == ("fraction", "kai-resource-isolator",
                                                                       "nvidia-device-plugin")
    assert _slots(top)["scheduling_policy"] == "kai-scheduler"
    # the isolator makes the fraction isolate memory: soft, not "none (accounting only)"
    assert pool.unit_isolation == "soft"
    assert "hami-core" in top.components  # the isolator injects HAMi-core (catalog requires)


def test_the_fraction_is_advertised_as_the_gpu_the_reservation_pod_holds_and_allocated_by_kais_binder(graph):
    # source: KAI_SHARING (reservation pod in kai-resource-reservation); KAI_BINDER (gpusharing plugin)
    top = _compose(graph, WITH_ISOLATOR).stacks[0]
    checks = {c.point.value: c for c in top.contracts}
    advertise, allocate = checks["advertise"], checks["allocate"]
    assert advertise.by == ["nvidia-device-plugin", "kai-scheduler"]
    assert advertise.interface == ["nvidia.com/gpu", "gpu-fraction annotation", "gpu-memory annotation"]
    assert "advertises nvidia.com/gpu on the nb pool's nodes" in advertise.reason
    assert allocate.by == ["nvidia-device-plugin", "kai-scheduler"]
    assert "reservation pod" in allocate.reason and "NVIDIA_VISIBLE_DEVICES" in allocate.reason
    assert allocate.source.startswith(KAI_SHARING)


def test_the_unit_points_say_what_the_isolator_enforces_and_what_stays_shared(graph):
    # source: KAI_HAMI (memory limit only); HAMI_CORE (no compute cap without a core limit)
    top = _compose(graph, WITH_ISOLATOR).stacks[0]
    unit_fit = [i for i in top.score_breakdown if i.factor == "unit_fit"]
    assert unit_fit and all("With kai-resource-isolator" in i.reason and "compute and the fault domain stay shared"
                            in i.reason for i in unit_fit)


def test_kai_fractions_are_carried_only_by_kai_the_isolator_without_kai_is_refused(graph):
    # guard (held on main too): the fraction rides on KAI's reservation pod, so no other scheduler can
    # bind it; source: KAI_SHARING
    body = {**WITH_ISOLATOR, "constraints": {"require": ["kai-resource-isolator"], "exclude": ["kai-scheduler"]}}
    result = _compose(graph, body)
    assert not result.feasible


def test_a_hard_pool_is_not_served_by_enforced_fractions(graph):
    # guard (held on main too): HAMi-core caps memory but the card is one fault domain (HAMI_CORE), so
    # a pool needing hard isolation still refuses the fraction
    body = {**WITH_ISOLATOR, "slo": {"isolation": "hard"}}
    result = _compose(graph, body)
    assert not result.feasible
    assert any("Fraction" in f.reason or "kai-resource-isolator" in f.reason for f in result.failures)


def test_hamis_vgpu_is_enforced_by_the_hami_core_it_ships_and_serves_a_soft_pool(graph):
    # guard (held on main too): HAMi's memory_compute_share is capped in the container by HAMi-core,
    # which HAMi bundles, so it isolates memory (soft) and is never "accounting only"; source: HAMI_CORE
    body = {"workloads": [{"name": "svc", "kind": "online_inference", "replicas": 8, "gpus_per_replica": 0.25,
                           "gpu_memory_gib": 10, "tenants": 2}],
            "slo": {"isolation": "soft"}, "pool": {"gpu_model": "L40S", "gpu_count": 4},
            "constraints": {"require": ["hami"]}}
    top = _compose(graph, body).stacks[0]
    (pool,) = top.pools
    assert (pool.unit.value, pool.unit_isolation, pool.data_plane) == ("memory_compute_share", "soft", "hami")
    assert "hami-core" in graph.projects["hami"].bundles_all
