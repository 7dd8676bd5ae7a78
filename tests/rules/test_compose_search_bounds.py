"""The compose search's bounds (placement/rules/compose.py): above EXHAUSTIVE_LIMIT combinations it
stops early where an upper bound says no combination left can enter the kept cores, and must still
return what checking every combination returns. Three workload classes (three pools) take the
shipped catalog past the limit; synthetic catalogs of 300 and 500 projects add candidates that rank
alike."""

from __future__ import annotations

import importlib

import pytest

from placement.rules import ComposeRequest, build_graph, clear_graph_cache, compose
from placement.rules.context import EXHAUSTIVE_LIMIT
from placement.rules.synthetic import synthetic_catalog

COMPOSE = importlib.import_module("placement.rules.compose")  # the module (placement.rules.compose is the function)

CLASSES = {
    "train": {"name": "train", "kind": "training", "replicas": 4, "gpus_per_replica": 1, "gpu_memory_gib": 40},
    "chat": {"name": "chat", "kind": "online_inference", "replicas": 8, "gpus_per_replica": 0.5, "gpu_memory_gib": 10},
    "batch": {"name": "batch", "kind": "batch_inference", "replicas": 8, "gpus_per_replica": 0.25, "gpu_memory_gib": 8},
    "nb": {"name": "nb", "kind": "interactive", "replicas": 8, "gpus_per_replica": 0.1, "gpu_memory_gib": 4, "tenants": 3},
}


SYNTHETIC = {"syn300": (300, 1), "syn500": (500, 7)}


class _Graphs(dict):
    """Catalog graphs by name, built on first use (each test pays only for the catalogs it reads)."""

    def __init__(self, documents):
        super().__init__()
        self.documents = documents

    def __missing__(self, name):
        clear_graph_cache()
        size, seed = SYNTHETIC.get(name, (0, 0))
        self[name] = build_graph(synthetic_catalog(size, base=self.documents, seed=seed) if size else self.documents)
        clear_graph_cache()
        return self[name]


@pytest.fixture(scope="module")
def graphs(catalog_documents):
    return _Graphs(catalog_documents)


def _request(classes, limit=5):
    return ComposeRequest(workloads=[CLASSES[c] for c in classes], limit=limit)


def _exhaustive(monkeypatch, graph, request):
    with monkeypatch.context() as m:
        m.setattr(COMPOSE, "EXHAUSTIVE_LIMIT", 10**9)
        return compose(graph, request)


def _stacks(result):
    return [stack.model_dump() for stack in result.stacks]


def test_the_search_checks_every_combination_up_to_the_limit_and_stops_early_above_it(graphs, monkeypatch):
    graph, request = graphs["shipped"], _request(["train", "chat", "batch"])
    every = _exhaustive(monkeypatch, graph, request).combinations_checked
    # 336 pool-option combinations x 36 (scheduler, admission) pairs: Armada, a batch system, admits no
    # chat (online_inference) class
    assert every == 12096
    monkeypatch.setattr(COMPOSE, "EXHAUSTIVE_LIMIT", every)
    assert compose(graph, request).combinations_checked == every
    monkeypatch.setattr(COMPOSE, "EXHAUSTIVE_LIMIT", every - 1)
    assert compose(graph, request).combinations_checked == 11546


def test_a_real_catalog_profile_is_searched_exhaustively(graphs):
    # one pool: a few hundred combinations, far below the limit; the bound never cuts them
    result = compose(graphs["shipped"], ComposeRequest(profile="online_inference"))
    assert result.combinations_checked == 336


@pytest.mark.parametrize(("catalog", "classes", "limit"), [
    ("shipped", ["train", "chat", "batch"], 5),
    ("shipped", ["chat", "batch", "nb"], 20),
    ("syn300", ["chat", "batch", "nb"], 5),
    ("syn500", ["chat", "batch"], 5),
    ("syn500", ["train", "chat", "batch"], 10),
    ("syn500", ["chat", "batch", "nb"], 20),
])
def test_the_bounded_search_returns_the_stacks_of_the_exhaustive_one_from_fewer_combinations(
        graphs, monkeypatch, catalog, classes, limit):
    graph, request = graphs[catalog], _request(classes, limit)
    bounded = compose(graph, request)
    exhaustive = _exhaustive(monkeypatch, graph, request)
    assert exhaustive.combinations_checked > EXHAUSTIVE_LIMIT
    assert bounded.feasible and len(bounded.stacks) == limit
    assert _stacks(bounded) == _stacks(exhaustive)
    assert bounded.combinations_checked < exhaustive.combinations_checked


@pytest.mark.parametrize(("catalog", "classes", "checked"), [
    ("shipped", ["train", "chat", "batch"], {5: 11546, 20: 12026}),
    ("shipped", ["chat", "batch", "nb"], {5: 11232, 20: 12028}),
    ("syn500", ["chat", "batch", "nb"], {5: 29714, 20: 36681}),
    ("syn500", ["chat", "batch"], {5: 11692, 20: 12312}),
])
def test_the_bounds_stop_sooner_the_fewer_stacks_are_asked_for(graphs, catalog, classes, checked):
    # the search keeps 2 x max(25, 3 x limit) cores; a bound can only cut once that many are kept
    assert {limit: compose(graphs[catalog], _request(classes, limit)).combinations_checked for limit in checked} == checked


def test_a_pool_combination_that_could_still_enter_the_kept_cores_is_checked(graphs):
    # A pool combination whose bound reaches the lowest kept core could still enter the kept cores, so the
    # walk over pool combinations stops only below the lowest, not below the second lowest: for this
    # request that is a few combinations more than stopping below the second lowest.
    request = ComposeRequest(profile="online_inference", workloads=[CLASSES[c] for c in ("train", "chat", "batch")],
                             limit=5, slo={"isolation": "soft", "goal": "throughput_first"})
    result = compose(graphs["shipped"], request)
    assert result.feasible and result.combinations_checked == 8505


@pytest.mark.parametrize("required", [["coscheduling"], ["resource-quota"], ["jobset"], ["dcgm-exporter", "kai-scheduler"]])
def test_a_bounded_search_still_finds_the_stacks_with_a_required_project(graphs, required):
    # scheduler and admission projects must be in the core the search scores; an optional-slot project
    # (a workload API, an exporter) joins after it, so the core cannot be asked to hold it
    result = compose(graphs["shipped"], ComposeRequest(workloads=[CLASSES[c] for c in ("train", "chat", "batch")],
                                                       constraints={"require": required}))
    assert result.feasible, result.failures
    assert result.combinations_checked > EXHAUSTIVE_LIMIT
    for stack in result.stacks:
        assert set(required) <= set(stack.components)


def test_three_classes_on_the_shipped_catalog_rank_these_stacks(graphs):
    # past the limit the search keeps the best cores by their fast score (ties: the first checked);
    # two stacks of the same projects and score then differ only in which pool gets MIG
    result = compose(graphs["shipped"], _request(["train", "chat", "batch"]))
    vgpu, plugin = "volcano-vgpu-device-plugin", "nvidia-device-plugin"

    def pools(stack):
        return {a.pool: a.project.slug for a in stack.slots if a.pool and a.slot.value == "device_handoff"}

    assert [(s.score, s.title, pools(s)) for s in result.stacks] == [
        (18.5, "Volcano vGPU device plugin + Volcano", {"train": vgpu, "chat": vgpu, "batch": vgpu}),
        (18.5, "Volcano vGPU device plugin + Volcano + Kubernetes ResourceQuota", {"train": vgpu, "chat": vgpu, "batch": vgpu}),
        (18.0, "NVIDIA Multi-Instance GPU (MIG) + KAI Scheduler + NVIDIA Run:ai", {"train": plugin, "chat": plugin, "batch": plugin}),
        (17.5, "NVIDIA Multi-Instance GPU (MIG) + Volcano vGPU device plugin + Volcano", {"train": plugin, "chat": vgpu, "batch": vgpu}),
        (17.5, "Volcano vGPU device plugin + NVIDIA Multi-Instance GPU (MIG) + Volcano", {"train": vgpu, "chat": vgpu, "batch": plugin}),
    ]


def test_a_unit_no_preference_names_adds_nothing_to_a_pools_bound(graphs):
    # The training profile names no preference for memory_compute_share (HAMi's unit), an option of the
    # chat and batch pools: such an option's base is 0, so the bound stays tight; crediting it 1 point
    # would check more combinations for the same stacks.
    request = ComposeRequest(profile="training", workloads=[CLASSES[c] for c in ("train", "chat", "batch")],
                             limit=5, slo={"isolation": "soft", "goal": "throughput_first"})
    result = compose(graphs["shipped"], request)
    assert result.feasible and result.combinations_checked == 10321
