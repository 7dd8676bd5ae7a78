"""HAMi's device fit and webhook tables, ported from Project-HAMi/HAMi (chart 2.10.0, 4707fb02).

* ``pkg/device/nvidia/device_test.go`` ``TestDevices_Fit``: each case states cards (slots ``Count``,
  ``Used``, ``Totalmem``/``Usedmem`` MiB, ``Usedcores``) and a request (``Nums``, ``Memreq`` MiB or
  ``MemPercentagereq``, ``Coresreq``) and expects HAMi's verdict, reason string
  (``1/1 CardInsufficientMemory``) and chosen card.
* ``pkg/scheduler/score_test.go`` ``Test_fitInDevices``: the node-level check before Fit.
* The webhook and request generation (``Test_MutateAdmission``, ``..._MemoryPercentageValidation``,
  ``TestMutateAdmissionDefaultsExclusiveCore``, ``TestGenerateResourceRequests`` and its
  ``_MemoryFactor``/``_DefaultMemory`` variants, ``TestZeroMemoryPercentageIsAccountedAsWholeCard``;
  ``pkg/scheduler/webhook_test.go`` ``TestPodHasDifferentScheduler``): stated as a workload's
  ``unit.hami`` (the container as written), read back as the request the simulator places.

Cases the model cannot state are listed in docs/upstream-tests.md.
"""

import pytest

from scheduler_core import ScenarioError, parse_scenario
from scheduler_core.cluster import DeviceRequest
from scheduler_core.hami import HamiLimits, generate_request
from scheduler_core.scenario import HamiConfig
from scheduler_core.simulation import ClusterSimulation
from scheduler_core.simulation.explain import hami_fit_reason, hami_node_reason
from scheduler_core.workloads import expand_workloads

DEVICE_TEST = "HAMi pkg/device/nvidia/device_test.go"


def _node(cards):
    sc = parse_scenario({
        "name": "hami-fit", "horizon": "1h",
        "pool": {"node_groups": [{"name": "n", "count": 1, "gpu": "A100-PCIE-80GB", "gpus_per_node": len(cards)}]},
        "stack": {"data_plane": {"mechanism": "hami", "hami": {"device_split_count": 100}}},
        "workloads": [{"kind": "batch", "name": "j", "duration": "1m"}]})
    node = ClusterSimulation(sc).nodes[0]
    for c, card in zip(node.contexts, cards):
        used, totalmem, usedmem, usedcores = card[:4]
        c.slots, c.used_slots, c.memory_mib, c.mem_declared, c.cores_used = 100, used, totalmem, usedmem, usedcores
        if len(card) > 4:
            c.gpu.healthy = card[4]
    return node


def _hami(nums, mem, cores, pct=0):
    return DeviceRequest(kind="hami", resource="hami/nvidia.com/gpu", count=nums, memory_mib=mem, cores=cores,
                         mem_percentage=pct)


# (upstream case name, cards [(Used, Totalmem, Usedmem, Usedcores[, Health])], (Nums, Memreq, Coresreq[, pct]),
#  want reason or None, index of the card HAMi chooses)
FIT_CASES = [
    ("fit success", [(0, 128, 0, 0), (0, 128, 0, 0)], (1, 64, 50), None, 1),  # wantDevIDs dev-1
    ("fit fail: memory not enough", [(0, 128, 0, 0)], (1, 512, 50), "1/1 CardInsufficientMemory", None),
    ("fit fail: core not enough", [(0, 1024, 0, 100)], (1, 512, 50), "1/1 CardInsufficientCore", None),
    ("fit fail: card overused", [(100, 1280, 0, 0)], (1, 512, 50), "1/1 CardTimeSlicingExhausted", None),
    ("fit success: but core limit can't exceed 100", [(0, 1280, 0, 0)], (1, 512, 120), None, 0),
    ("fit fail:  card exclusively", [(20, 1280, 0, 0)], (1, 512, 100), "1/1 ExclusiveDeviceAllocateConflict", None),
    ("fit fail:  CardComputeUnitsExhausted", [(20, 1280, 0, 100)], (1, 512, 0), "1/1 CardComputeUnitsExhausted",
     None),
    ("fit fail:  AllocatedCardsInsufficientRequest", [(20, 1280, 0, 10)], (2, 512, 20),
     "1/1 AllocatedCardsInsufficientRequest", None),
    ("fit fail: partial allocation AllocatedCardsInsufficientRequest for multiple cards",
     [(0, 1280, 0, 0), (0, 1280, 0, 0)], (3, 512, 20), "2/2 AllocatedCardsInsufficientRequest", None),
    ("fit success:  memory percentage", [(20, 1280, 0, 10)], (1, 0, 20, 10), None, 0),
    ("fit fail:  CardNotHealth", [(20, 1280, 0, 10, False)], (1, 0, 20, 10), "1/1 CardNotHealth", None),
]


@pytest.mark.parametrize("name,cards,request_,want,chosen", FIT_CASES, ids=[c[0] for c in FIT_CASES])
def test_hami_fit_matches_upstream(name, cards, request_, want, chosen):
    req = _hami(*request_)
    node = _node(cards)
    assert hami_fit_reason(node.contexts, req, 1.0) == want, f"{DEVICE_TEST} TestDevices_Fit / {name}"
    if req.count <= len(cards):
        assert (node.fit_count(req) >= 1) == (want is None)
    if chosen is not None:
        assert [c.index for c in node.choose_contexts(req, None)] == [chosen]


def test_a_pod_asking_more_gpus_than_the_node_has_is_refused_before_fit():
    # HAMi pkg/scheduler/score_test.go Test_fitInDevices / "request devices nums cannot exceed the total number
    # of devices on the node": one card, Nums 2.
    node = _node([(1, 8192, 2048, 1)])
    assert hami_node_reason(node, _hami(2, 1024, 1)) == "NodeInsufficientDevice"
    assert node.fit_count(_hami(2, 1024, 1)) == 0


def test_fit_reasons_sort_as_hami_sorts_the_strings():
    # GenReason (pkg/device/common/common.go) sorts "count/total Reason" strings, so "1/3 Exclusive..." comes
    # before "2/3 CardInsufficientMemory" although C < E.
    node = _node([(1, 1280, 1200, 0), (1, 1280, 1200, 0), (1, 1280, 0, 0)])
    assert hami_fit_reason(node.contexts, _hami(1, 512, 100), 1.0) == (
        "1/3 ExclusiveDeviceAllocateConflict, 2/3 CardInsufficientMemory")


# ------------------------------------------------------------------ webhook and request generation
def _scenario(hami_unit, scheduler="kube-default", hami_cfg=None, **workload):
    cp = {"scheduler": scheduler}
    if scheduler == "kai":
        cp["kai"] = {"queues": [{"name": "default"}]}
    return parse_scenario({
        "name": "hami-webhook", "horizon": "1h",
        "pool": {"node_groups": [{"name": "n", "count": 1, "gpu": "A100-PCIE-80GB", "gpus_per_node": 4}]},
        "stack": {"data_plane": {"mechanism": "hami", "hami": hami_cfg or {}}, "control_plane": cp},
        "workloads": [{"kind": "batch", "name": "c", "duration": "1m", "unit": {"hami": hami_unit}, **workload}]})


def _admitted(hami_unit, **kw):
    """(GPUs, gpumem MiB, gpumem percentage, gpucores) of the pod as HAMi's Fit receives it."""
    r = expand_workloads(_scenario(hami_unit, **kw))[0].request
    return r.count, r.memory_mib, r.mem_percentage, r.cores


@pytest.mark.parametrize("name,limits,gpus", [
    ("having ResourceName set to resource limits.", {"gpu": 1}, 1),
    ("don't having ResourceName, but having ResourceCores set to resource limits", {"gpucores": 1}, 1),
    ("don't having ResourceName, but having ResourceMem set to resource limits", {"gpumem": 1}, 1),
    ("don't having ResourceName, but having ResourceMemPercentage set to resource limits",
     {"gpumem_percentage": 1}, 1),
])
def test_webhook_makes_every_hami_container_ask_for_gpus(name, limits, gpus):
    # device_test.go Test_MutateAdmission (DefaultGPUNum 1): MutateAdmission reports the resource.
    assert _admitted(limits)[0] == gpus, name


def test_webhook_leaves_a_container_without_hami_resources_alone():
    # device_test.go Test_MutateAdmission / "don't having math resources.": no resource, nothing to schedule.
    with pytest.raises(ScenarioError, match="states no HAMi resource"):
        _scenario({})


def test_default_gpu_num_zero_adds_no_gpu():
    # mutateContainerResource adds nvidia.com/gpu only when DefaultGPUNum > 0.
    with pytest.raises(ScenarioError, match="defaultGPUNum is 0"):
        _scenario({"gpumem": 1024}, hami_cfg={"default_gpu_num": 0})
    assert _admitted({"gpumem": 1024}, hami_cfg={"default_gpu_num": 2})[0] == 2


@pytest.mark.parametrize("name,pct,refused", [
    ("percentage of 0 is accepted", 0, False),
    ("percentage of 100 is accepted", 100, False),
    ("percentage of 101 is rejected", 101, True),
    ("percentage above 100 is rejected", 150, True),
])
def test_webhook_refuses_a_memory_percentage_outside_0_to_100(name, pct, refused):
    # device_test.go Test_MutateAdmission_MemoryPercentageValidation.
    limits = {"gpu": 1, "gpumem_percentage": pct}
    if refused:
        with pytest.raises(ScenarioError, match=f"invalid nvidia.com/gpumem-percentage value {pct} in container c: "
                                                "must be an integer between 0 and 100"):
            _scenario(limits)
    else:
        _scenario(limits)


@pytest.mark.parametrize("name,limits,cores", [
    ("exclusive via percentage", {"gpu": 1, "gpumem_percentage": 100}, 100),
    ("non-exclusive percentage", {"gpu": 1, "gpumem_percentage": 50}, 0),  # no core limit: defaultCores 0
    ("no memory fields defaults to exclusive", {"gpu": 1}, 100),
    ("explicit cores remains unchanged", {"gpu": 1, "gpucores": 70}, 70),
    ("memory size present treated as shareable", {"gpu": 1, "gpumem": 8192}, 0),
])
def test_webhook_makes_whole_card_containers_exclusive(name, limits, cores):
    # device_test.go TestMutateAdmissionDefaultsExclusiveCore.
    assert _admitted(limits)[3] == cores, name


def test_a_pod_of_another_scheduler_skips_the_webhook():
    # webhook_test.go TestPodHasDifferentScheduler: the pod names another scheduler, the webhook allows it
    # unchanged, so nvidia.com/gpu alone keeps gpucores unset (0), not the exclusive 100.
    assert _admitted({"gpu": 1}, scheduler="volcano") == (1, 0, 100, 0)
    assert _admitted({"gpu": 1}, scheduler="kube-default") == (1, 0, 100, 100)
    with pytest.raises(ScenarioError, match="leaves pods of 'kai-scheduler' alone"):
        _scenario({"gpumem": 1024}, scheduler="kai")


# TestGenerateResourceRequests (MemoryFactor 1, no defaults): (case, limits, (Nums, Memreq, pct or 0 unset, Coresreq))
GENERATE_CASES = [
    ("gpu count only — defaults to 100% memory", {"gpu": 1}, (1, 0, 100, 0)),
    ("gpu count + explicit memory", {"gpu": 2, "gpumem": 4096}, (2, 4096, 0, 0)),
    ("gpu count + memory percentage", {"gpu": 1, "gpumem_percentage": 50}, (1, 0, 50, 0)),
    ("gpu count + memory percentage above 100 — clamped to 100", {"gpu": 1, "gpumem_percentage": 150}, (1, 0, 100, 0)),
    ("gpu count + memory percentage beyond int32 range — clamped to 100 without wrapping",
     {"gpu": 1, "gpumem_percentage": (1 << 32) + 50}, (1, 0, 100, 0)),
    ("gpu count + memory percentage equal to sentinel 101 — clamped to 100", {"gpu": 1, "gpumem_percentage": 101},
     (1, 0, 100, 0)),
    ("gpu count + explicit cores", {"gpu": 1, "gpucores": 50}, (1, 0, 100, 50)),
    ("no gpu resource — returns empty request", {}, None),
    ("gpu count + memory percentage of 0 — treated as unset", {"gpu": 1, "gpumem_percentage": 0}, (1, 0, 100, 0)),
    ("negative memory percentage — treated as unset", {"gpu": 1, "gpumem_percentage": -1}, (1, 0, 100, 0)),
    ("memory percentage of 0 + explicit memory — explicit memory wins",
     {"gpu": 1, "gpumem": 2000, "gpumem_percentage": 0}, (1, 2000, 0, 0)),
]


@pytest.mark.parametrize("name,limits,want", GENERATE_CASES, ids=[c[0] for c in GENERATE_CASES])
def test_request_generation_matches_upstream(name, limits, want):
    # device_test.go TestGenerateResourceRequests: the scheduler's side, without the webhook.
    got = generate_request(HamiLimits(**limits), HamiConfig())
    assert (None if got is None else (got.nums, got.memory_mib, got.mem_percentage, got.cores)) == want, name


def test_memory_factor_and_default_memory():
    # device_test.go TestGenerateResourceRequests_MemoryFactor: factor 2, gpumem 1024 -> 2048.
    assert _admitted({"gpu": 1, "gpumem": 1024}, hami_cfg={"memory_factor": 2})[1] == 2048
    # TestGenerateResourceRequests_DefaultMemory: defaultMemory 512 for no memory figure, a percentage of 0
    # and gpumem 0 alike.
    cfg = HamiConfig(default_memory=512)
    for limits in ({"gpu": 1}, {"gpu": 1, "gpumem_percentage": 0}, {"gpu": 1, "gpumem": 0}):
        r = generate_request(HamiLimits(**limits), cfg)
        assert (r.memory_mib, r.mem_percentage) == (512, 0), limits


def test_a_zero_memory_percentage_books_the_whole_card():
    # device_test.go TestZeroMemoryPercentageIsAccountedAsWholeCard: an 11264 MiB card with 10 slots.
    r = generate_request(HamiLimits(gpu=1, gpumem_percentage=0), HamiConfig())
    req = _hami(r.nums, r.memory_mib, r.cores, r.mem_percentage)
    empty = _node([(0, 11264, 0, 0)])
    ctxs = empty.choose_contexts(req, None)
    assert ctxs is not None
    empty.commit(object(), req, ctxs)
    assert ctxs[0].mem_declared == 11264  # booked the whole card, not 0
    almost_full = _node([(0, 11264, 11260, 0)])
    assert "CardInsufficientMemory" in hami_fit_reason(almost_full.contexts, req, 1.0)


def test_percentage_books_a_share_of_each_card_it_lands_on():
    # A 25% pod on an 81920 MiB card books 20480 MiB there (Fit: Totalmem * MemPercentagereq / 100).
    sc = _scenario({"gpu": 1, "gpumem_percentage": 25}, hami_cfg={"device_split_count": 10})
    sim = ClusterSimulation(sc)
    node = sim.nodes[0]
    req = sim.workloads[0].request
    ctxs = node.choose_contexts(req, None)
    node.commit(object(), req, ctxs)
    assert ctxs[0].mem_declared == ctxs[0].memory_mib // 4
    assert "25% memory" in req.describe()


def test_unit_hami_replaces_the_other_ways_to_state_the_request():
    with pytest.raises(ScenarioError, match="gpus_per_worker and unit.hami both state the request"):
        _scenario({"gpu": 2}, gpus_per_worker=2)
