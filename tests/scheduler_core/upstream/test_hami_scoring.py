"""HAMi's node and card scoring, ported from Project-HAMi/HAMi at 4707fb02 (chart 2.10.0).

* ``pkg/scheduler/policy/node_policy.go``: a node scores 10 x (used slots / slots + used cores / cores +
  used MiB / MiB) over its cards before the pod (``ComputeDefaultScore``); ``NodeScoreList.Less`` sorts
  binpack ascending, spread descending, and the extender binds the last node.
* ``pkg/scheduler/policy/gpu_policy.go``: a card scores 10 x (slot + core + memory share) with the pod on
  it (``ComputeScore``, weights from ``hami.io/device-scoring-weights``); ``DeviceUsageList.Less`` sorts by
  score (binpack ascending, spread descending), then NUMA node, and Fit takes cards from the end.
"""

import pytest

from scheduler_core import parse_scenario
from scheduler_core.cluster import DeviceRequest, hami_node_score
from scheduler_core.hami import CardUsage, ScoringWeights, card_order_key, card_score, node_order_key, node_score
from scheduler_core.simulation import ClusterSimulation
from scheduler_core.simulation.explain import hami_node_reason

COMMIT = "Project-HAMi/HAMi@4707fb02"
NODE_TEST = f"{COMMIT} pkg/scheduler/policy/node_policy_test.go"
GPU_TEST = f"{COMMIT} pkg/scheduler/policy/gpu_policy_test.go"
SCORE_TEST = f"{COMMIT} pkg/scheduler/score_test.go"


# ------------------------------------------------------------------ the defect, in a run
def _crowded_run(node_policy):
    """Node a holds four small vGPUs (4 of 10 slots, 80% of cores, 4 GiB); node b one 40 GiB vGPU (1 slot,
    no cores, half the memory). HAMi scores a 12.5 and b 6; by free memory alone a looks emptier."""
    def at(t, name, group, gpumem, cores, workers=1):
        return {"kind": "batch", "name": name, "workers": workers, "duration": "10h", "node_group": group,
                "arrival": {"at": t}, "memory_gib": gpumem / 1024, "unit": {"hami": {"gpu": 1, "gpumem": gpumem, "gpucores": cores}}}
    sc = parse_scenario({
        "name": "hami-crowded", "horizon": "1h",
        "pool": {"node_groups": [{"name": g, "count": 1, "gpu": "A100-PCIE-80GB", "gpus_per_node": 1}
                                 for g in ("a", "b")]},
        "stack": {"data_plane": {"mechanism": "hami", "hami": {"node_scheduler_policy": node_policy}}},
        "workloads": [{**at(0, f"small{i}", "a", 1024, 20)} for i in range(4)]
                     + [at(0, "big", "b", 40960, 0), {**at(60, "probe", None, 1024, 10)}]})
    sim = ClusterSimulation(sc)
    sim.execute()
    probe = next(w for w in sim.workloads if w.name == "probe")
    return probe.pods[0].node.group


def test_hami_binpack_puts_a_pod_on_the_node_with_most_slots_and_cores_used():
    # Upstream: binpack binds the highest node score (a: 12.5 > b: 6). The model used to rank by free
    # memory only and chose b (50% free against a's 95%).
    assert _crowded_run("binpack") == "a"


def test_hami_spread_puts_a_pod_on_the_node_with_the_lowest_score():
    assert _crowded_run("spread") == "b"


# ------------------------------------------------------------------ node_policy_test.go
DEVICE1 = CardUsage(used=50, count=100, usedmem=100, totalmem=100, usedcores=100, totalcore=100, numa=0)
DEVICE2 = CardUsage(used=75, count=150, usedmem=200, totalmem=200, usedcores=200, totalcore=200, numa=1)


@pytest.mark.parametrize("name,cards,want", [
    ("Zero capacity devices returns score 0 without panic", [CardUsage(0, 0, 0, 0, 0, 0)], 0),
    ("Empty device list returns score 0 without panic", [], 0),
    ("Test with no devices", [DEVICE1, DEVICE2], 25),
    ("Test with devices", [DEVICE1, DEVICE2], 25),  # upstream: the same cards with a card Score of 1
])
def test_node_score_matches_compute_default_score(name, cards, want):
    assert node_score(cards) == want, f"{NODE_TEST} TestComputeDefaultScore / {name}"


@pytest.mark.parametrize("name,policy,score_i,score_j,less", [
    ("Spread strategy, i score higher", "spread", 20.0, 10.0, True),
    ("Spread strategy,j score higher", "spread", 10.0, 20.0, False),
    ("Default strategy (Binpack), i score lower", "binpack", 10.0, 20.0, True),
    ("Default strategy (Binpack), j score lower", "binpack", 20.0, 10.0, False),
])
def test_node_order_matches_node_score_list_less(name, policy, score_i, score_j, less):
    assert (node_order_key(score_i, policy) < node_order_key(score_j, policy)) == less, f"{NODE_TEST} TestLess / {name}"


# ------------------------------------------------------------------ gpu_policy_test.go
@pytest.mark.parametrize("name,policy,i,j,less", [
    ("Binpack policy with same Numa", "binpack", (10, 0), (20, 0), True),
    ("Binpack: score primary, lower score sorts first across NUMA", "binpack", (10, 1), (20, 0), True),
    ("Binpack: score primary, higher score sorts last even on lower NUMA", "binpack", (10, 0), (20, 1), True),
    ("Binpack: NUMA tiebreaker when scores equal", "binpack", (15, 0), (15, 1), True),
    ("Binpack: score primary over NUMA, high-NUMA high-score sorts last", "binpack", (20, 1), (10, 0), False),
    ("Spread: score primary, higher score sorts first", "spread", (10, 0), (20, 0), False),
    ("Spread: score primary, lower score sorts last across NUMA", "spread", (10, 1), (20, 0), False),
    ("Spread: score primary over NUMA, high-NUMA high-score sorts first", "spread", (20, 1), (10, 0), True),
    ("Spread: NUMA tiebreaker when scores equal", "spread", (15, 0), (15, 1), True),
])
def test_card_order_matches_device_usage_list_less(name, policy, i, j, less):
    assert (card_order_key(*i, policy) < card_order_key(*j, policy)) == less, f"{GPU_TEST} TestDeviceUsageList_Less / {name}"


# (name, card, requests [(Coresreq, Memreq, MemPercentagereq)] of the card's type, expectedScore)
COMPUTE_SCORE = [
    ("Zero capacity device returns score 0 without panic", CardUsage(0, 0, 0, 0, 0, 0), [], 0.0),
    ("Partial zero capacity (Count=0) returns score 0 without panic", CardUsage(0, 0, 0, 4096, 0, 8), [], 0.0),
    ("ContainerDeviceRequests has no data", CardUsage(2, 10, 2048, 8192, 1, 4), [], 7.0),
    # Nums 4 counts one slot; the type2 request is another card type's
    ("Filter other device types and ignore Nums for slots", CardUsage(2, 10, 2048, 8192, 1, 4), [(1, 1024, 0)], 11.75),
    ("MemPercentagereq calculation evaluates correctly", CardUsage(0, 10, 0, 10000, 0, 10), [(2, 0, 50)], 8.0),
    ("Filter other device types and aggregate same device types", CardUsage(0, 10, 0, 10000, 0, 10),
     [(1, 0, 10), (2, 0, 20)], 8.0),
]


@pytest.mark.parametrize("name,card,requests,want", COMPUTE_SCORE, ids=[c[0] for c in COMPUTE_SCORE])
def test_card_score_matches_compute_score(name, card, requests, want):
    assert card_score(card, requests) == pytest.approx(want), f"{GPU_TEST} TestComputeScore / {name}"


def _gpu_a_b(weights):
    a = CardUsage(used=1, count=10, usedmem=10, totalmem=100, usedcores=90, totalcore=100)
    b = CardUsage(used=7, count=10, usedmem=20, totalmem=100, usedcores=10, totalcore=100)
    req = [(0, 0, 40)]
    return card_score(a, req, weights), card_score(b, req, weights)


@pytest.mark.parametrize("name,weights,scores,binpack_last,spread_last", [
    ("default weights preserve current score", ScoringWeights(), (16, 15), None, None),
    ("memory weight changes the device preference", ScoringWeights(1, 1, 3), (26, 27), "gpu-b", "gpu-a"),
    ("core weight can independently change the device preference", ScoringWeights(1, 3, 1), (34, 17), "gpu-a", None),
])
def test_weighted_card_score_matches_upstream(name, weights, scores, binpack_last, spread_last):
    where = f"{GPU_TEST} TestComputeScoreWithResourceWeights / {name}"
    a, b = _gpu_a_b(weights)
    assert (a, b) == pytest.approx(scores), where
    for policy, last in (("binpack", binpack_last), ("spread", spread_last)):
        if last is not None:
            order = sorted([("gpu-a", a), ("gpu-b", b)], key=lambda x: card_order_key(x[1], 0, policy))
            assert order[-1][0] == last, where


# ------------------------------------------------------------------ score_test.go Test_calcScore
def _node(cards, gpu_policy="spread"):
    sc = parse_scenario({
        "name": "hami-score", "horizon": "1h",
        "pool": {"node_groups": [{"name": "n", "count": 1, "gpu": "A100-PCIE-80GB", "gpus_per_node": len(cards)}]},
        "stack": {"data_plane": {"mechanism": "hami", "hami": {"device_split_count": 10,
                                                               "gpu_scheduler_policy": gpu_policy}}},
        "workloads": [{"kind": "batch", "name": "j", "duration": "1m"}]})
    node = ClusterSimulation(sc).nodes[0]
    for c, (used, totalmem, usedmem, usedcores) in zip(node.contexts, cards):
        c.slots, c.used_slots, c.memory_mib, c.mem_declared, c.cores_used = 10, used, totalmem, usedmem, usedcores
    return node


def _req(nums=1, mem=1000, cores=30):
    return DeviceRequest(kind="hami", resource="hami/nvidia.com/gpu", count=nums, memory_mib=mem, cores=cores)


# (name, cards per node [(Used, Totalmem, Usedmem, Usedcores)] (Count 10, Totalcore 100, GPU policy spread),
#  Nums, want per node: (Score, card indices chosen) or the failed node's reason)
CALC_SCORE = [
    ("one node one device one pod one container use one device.", [[(0, 8000, 0, 0)]], 1, [(0, [0])]),
    ("one node one device one pod one container use one device,but this device before having use.",
     [[(5, 8000, 4000, 50)]], 1, [(15, [0])]),
    ("one node two device one pod one container use one device", [[(0, 8000, 0, 0), (0, 8000, 0, 0)]], 1,
     [(0, [1])]),
    ("one node two device one pod one container use one device,but having use 50%",
     [[(0, 8000, 0, 0), (5, 8000, 4000, 50)]], 1, [(7.5, [0])]),
    ("one node two device one pod one container use two device", [[(0, 8000, 0, 0), (0, 8000, 0, 0)]], 2,
     [(0, [1, 0])]),
    ("one node two device one pod one container use two device,but this two device before having use.",
     [[(5, 8000, 4000, 50), (5, 8000, 4000, 50)]], 2, [(15, [1, 0])]),
    ("two node per node having one device one pod one container use one device",
     [[(0, 8000, 0, 0)], [(0, 8000, 0, 0)]], 1, [(0, [0]), (0, [0])]),
    ("two node per node having one device one pod one container use one device,one device having use 50%",
     [[(5, 8000, 4000, 50)], [(0, 8000, 0, 0)]], 1, [(15, [0]), (0, [0])]),
    ("one node one device one pod one container use one device and not enough resource,node should be failed.",
     [[(0, 50, 0, 0)]], 1, ["1/1 CardInsufficientMemory"]),
]


@pytest.mark.parametrize("name,nodes,nums,want", CALC_SCORE, ids=[c[0] for c in CALC_SCORE])
def test_node_scores_and_cards_match_calc_score(name, nodes, nums, want):
    where = f"{SCORE_TEST} Test_calcScore / {name}"
    req = _req(nums)
    for cards, expected in zip(nodes, want):
        node = _node(cards)
        if isinstance(expected, str):
            assert hami_node_reason(node, req) == expected, where
            continue
        score, chosen = expected
        assert hami_node_score(node, req) == pytest.approx(score), where
        assert [c.index for c in node.choose_contexts(req, None)] == chosen, where


def test_binpack_binds_the_higher_scored_of_two_nodes():
    # Test_calcScore "... one device having use 50%": node1 scores 15, node2 0; the NodeScoreList is binpack,
    # so sort.Sort puts node1 last and the extender binds it.
    scores = {"node1": 15.0, "node2": 0.0}
    assert max(scores, key=lambda n: node_order_key(scores[n], "binpack")) == "node1"
