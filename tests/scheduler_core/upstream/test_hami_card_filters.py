"""HAMi's card filters ``nvidia.com/use-gputype``, ``nouse-gputype``, ``use-gpuuuid`` and ``nouse-gpuuuid``,
ported from Project-HAMi/HAMi at 4707fb02: ``pkg/device/devices_test.go`` ``TestCheckType`` and
``TestCheckUUID``, the filter cases of ``pkg/device/nvidia/device_test.go`` ``TestDevices_Fit`` and of
``pkg/scheduler/score_test.go`` ``Test_fitInCertainDevice``.

The model's card type is NVML's product name ``NVIDIA <gpu>``; it has no GPU UUIDs, so a card's id is
``<node>/gpu<i>``. Upstream's Fit cases whose request type is not NVIDIA's (``OtherType``, ``test``) are
restated with a ``nouse-gputype`` excluding the card: the model's requests are all NVIDIA's, and the reason
is the same ``CardTypeMismatch``.
"""

import pytest

from scheduler_core import ScenarioError, parse_scenario
from scheduler_core.cluster import DeviceRequest
from scheduler_core.hami import NOUSE_GPUTYPE, NOUSE_GPUUUID, USE_GPUTYPE, USE_GPUUUID, check_type, check_uuid
from scheduler_core.simulation import ClusterSimulation
from scheduler_core.simulation.explain import hami_fit_reason

COMMIT = "Project-HAMi/HAMi@4707fb02"
DEVICES_TEST = f"{COMMIT} pkg/device/devices_test.go"

CHECK_TYPE = [
    ("no annotation is no constraint", {}, True),
    ("use list matches by substring", {USE_GPUTYPE: "A100,V100"}, True),
    ("use list does not match", {USE_GPUTYPE: "V100"}, False),
    ("nouse list matches excludes the device", {NOUSE_GPUTYPE: "A100"}, False),
    ("nouse list does not match keeps the device", {NOUSE_GPUTYPE: "V100"}, True),
    ("empty use value is no constraint", {USE_GPUTYPE: ""}, True),
    ("whitespace-only nouse value excludes nothing", {NOUSE_GPUTYPE: "   "}, True),
    ("use satisfied and nouse matches still excludes", {USE_GPUTYPE: "A100", NOUSE_GPUTYPE: "A100"}, False),
    ("nouse with trailing comma only excludes named type", {NOUSE_GPUTYPE: "V100,"}, True),
    ("nouse with leading comma only excludes named type", {NOUSE_GPUTYPE: ",V100"}, True),
    ("use with trailing comma matches named type only", {USE_GPUTYPE: "V100,"}, False),
]


@pytest.mark.parametrize("name,annotations,want", CHECK_TYPE, ids=[c[0] for c in CHECK_TYPE])
def test_check_type_matches_upstream(name, annotations, want):
    assert check_type(annotations, "NVIDIA-A100") == want, f"{DEVICES_TEST} TestCheckType / {name}"


CHECK_UUID = [
    ("don't set GPUUseUUID and GPUNoUseUUID annotation", {}, "abc", True),
    ("use set GPUUseUUID don't set GPUNoUseUUID annotation,device match", {USE_GPUUUID: "abc,123"}, "abc", True),
    ("use set GPUUseUUID don't set GPUNoUseUUID annotation,device don't match", {USE_GPUUUID: "abc,123"}, "1abc",
     False),
    ("use don't set GPUUseUUID set GPUNoUseUUID annotation,device match", {NOUSE_GPUUUID: "abc,123"}, "abc", False),
    ("use don't set GPUUseUUID set GPUNoUseUUID annotation,device  don't match", {NOUSE_GPUUUID: "abc,123"}, "1abc",
     True),
    ("both GPUUseUUID and GPUNoUseUUID set, device in use list but also in nouse list",
     {USE_GPUUUID: "abc,123", NOUSE_GPUUUID: "abc"}, "abc", False),
    ("both GPUUseUUID and GPUNoUseUUID set, device in use list and not in nouse list",
     {USE_GPUUUID: "abc,123", NOUSE_GPUUUID: "456"}, "abc", True),
    ("use list with spaces around uuids, device matches after trim", {USE_GPUUUID: " abc , 123 "}, "abc", True),
    ("empty GPUUseUUID annotation should not filter out any device", {USE_GPUUUID: ""}, "abc", True),
    ("whitespace-only GPUUseUUID annotation should not filter out any device", {USE_GPUUUID: "   "}, "abc", True),
    ("empty GPUNoUseUUID annotation should not exclude any device", {NOUSE_GPUUUID: ""}, "abc", True),
]


@pytest.mark.parametrize("name,annotations,card,want", CHECK_UUID, ids=[c[0] for c in CHECK_UUID])
def test_check_uuid_matches_upstream(name, annotations, card, want):
    assert check_uuid(annotations, card) == want, f"{DEVICES_TEST} TestCheckUUID / {name}"


def _scenario(workloads, groups=(("a100", "A100-PCIE-80GB"),), gpus=1):
    return parse_scenario({
        "name": "hami-filters", "horizon": "1h",
        "pool": {"node_groups": [{"name": g, "count": 1, "gpu": spec, "gpus_per_node": gpus} for g, spec in groups]},
        "stack": {"data_plane": {"mechanism": "hami"}},
        "workloads": workloads})


def _card(annotations, used=0, totalmem=1280, usedmem=0, usedcores=0):
    """One card (node ``a100-0``, id ``a100-0/gpu0``) and a request carrying ``annotations``."""
    node = ClusterSimulation(_scenario([{"kind": "batch", "name": "j", "duration": "1m"}])).nodes[0]
    c = node.contexts[0]
    c.slots, c.used_slots, c.memory_mib, c.mem_declared, c.cores_used = 100, used, totalmem, usedmem, usedcores
    req = DeviceRequest(kind="hami", resource="hami/nvidia.com/gpu", count=1, memory_mib=512, cores=50,
                        card_filter=tuple(sorted(annotations.items())))
    return node, req


# (upstream test / case, annotations standing for it, reason)
FIT_CASES = [
    ("pkg/device/nvidia/device_test.go TestDevices_Fit / fit fail: type mismatch", {NOUSE_GPUTYPE: "A100"},
     "1/1 CardTypeMismatch"),
    ("pkg/device/nvidia/device_test.go TestDevices_Fit / fit fail: user assign use uuid mismatch",
     {USE_GPUUUID: "a100-0/gpu1"}, "1/1 CardUuidMismatch"),
    ("pkg/device/nvidia/device_test.go TestDevices_Fit / fit fail: user assign no use uuid match",
     {NOUSE_GPUUUID: "a100-0/gpu0"}, "1/1 CardUuidMismatch"),
    ("pkg/scheduler/score_test.go Test_fitInCertainDevice / card type don't match", {USE_GPUTYPE: "test"},
     "1/1 CardTypeMismatch"),
    ("pkg/scheduler/score_test.go Test_fitInCertainDevice / card uuid don't match", {USE_GPUUUID: "abc"},
     "1/1 CardUuidMismatch"),
]


@pytest.mark.parametrize("where,annotations,want", FIT_CASES, ids=[c[0].rsplit("/ ", 1)[1] for c in FIT_CASES])
def test_card_filters_fail_fit_with_hamis_reason(where, annotations, want):
    node, req = _card(annotations, used=1, usedmem=2048 // 2, usedcores=1)
    assert hami_fit_reason(node.contexts, req, 1.0) == want, f"{COMMIT} {where}"
    assert node.fit_count(req) == 0


def test_a_health_failure_is_reported_before_the_type():
    # Fit checks health first: an unhealthy card of an excluded type says CardNotHealth.
    node, req = _card({NOUSE_GPUTYPE: "A100"})
    node.contexts[0].gpu.healthy = False
    assert hami_fit_reason(node.contexts, req, 1.0) == "1/1 CardNotHealth"


def _run(annotations):
    sc = _scenario([{"kind": "batch", "name": "p", "duration": "10h", "memory_gib": 1,
                     "unit": {"hami": {"gpu": 1, "gpumem": 1024}, "annotations": annotations}}],
                   groups=(("a100", "A100-PCIE-80GB"), ("h100", "H100-SXM5-80GB")))
    sim = ClusterSimulation(sc)
    sim.execute()
    wl = sim.workloads[0]
    return (wl.pods[0].node.group if wl.pods else None), (sim.pending_reason(wl) if wl.pending else None)


def test_use_gputype_sends_the_pod_to_the_named_card_type():
    assert _run({USE_GPUTYPE: "H100"}) == ("h100", None)
    assert _run({NOUSE_GPUTYPE: "h100"}) == ("a100", None)  # matched case-insensitively


def test_a_pod_whose_filters_exclude_every_card_waits_with_hamis_reason():
    group, reason = _run({USE_GPUTYPE: "V100"})
    assert group is None
    assert reason == "0/2 nodes are available: 2 1/1 CardTypeMismatch."


def test_use_gpuuuid_names_one_card():
    assert _run({USE_GPUUUID: "h100-0/gpu0"}) == ("h100", None)


def test_an_unknown_annotation_is_refused_naming_the_field():
    with pytest.raises(ScenarioError, match="annotations"):
        _scenario([{"kind": "batch", "name": "p", "duration": "1m",
                    "unit": {"annotations": {"nvidia.com/use-gpu-type": "A100"}}}])


def test_card_filters_need_hami():
    sc = {"name": "x", "horizon": "1h",
          "pool": {"node_groups": [{"name": "a", "count": 1, "gpu": "A100-PCIE-80GB", "gpus_per_node": 1}]},
          "workloads": [{"kind": "batch", "name": "p", "duration": "1m",
                         "unit": {"annotations": {USE_GPUTYPE: "A100"}}}]}
    with pytest.raises(ScenarioError, match="unit.annotations"):
        parse_scenario(sc)
