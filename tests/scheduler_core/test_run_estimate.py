"""The run-time estimate counts the work a run does (issue 39.2), from the document alone.

A run is refused before queueing when its estimate is over the time limit, so the estimate must
count what the simulation spends its time on. It missed the memory phase: a replica whose KV cache
grows past its memory cap is OOM-killed and restarted again and again over the horizon, every kill
and restart settles the pods on its cards and puts them through the latency model, and on a shared
card (HAMi, time-slicing) that includes its co-tenants. It also took 240 samples whatever the
document asked. benchmarks/estimate_bench.py compares estimate and measured time; these tests hold
the counts, not the clock."""

from __future__ import annotations

import copy

import pytest

from scheduler_core.scenario import load_scenario, parse_scenario
from scheduler_core.scenario.limits import estimate_cost, estimate_seconds
from tests.scheduler_core.conftest import SCENARIOS

SERVICE = {"kind": "inference", "name": "chat", "tenant": "chat", "replicas": 1, "model_memory_gib": 12,
           "memory_request_gib": 18, "kv_cache": {"initial_gib": 2, "growth_gib_per_hour": 0, "max_gib": 60},
           "compute_fraction": 0.15, "arrival_rate": 10, "service_time": {"mean": "15ms"}, "slo": {"p99": "200ms"},
           "unit": {"gpucores": 25}}


def _doc(*workloads, horizon="6h", mechanism="hami", **extra) -> dict:
    return {"name": "estimate", "horizon": horizon,
            "pool": {"node_groups": [{"name": "infer", "count": 1, "gpus_per_node": 1, "numa_nodes": 1}]},
            "stack": {"data_plane": {"mechanism": mechanism}}, "workloads": list(workloads), **extra}


def _service(name="chat", **changes) -> dict:
    out = copy.deepcopy(SERVICE)
    out.update(name=name, tenant=name, **{k: v for k, v in changes.items() if k != "growth"})
    out["kv_cache"]["growth_gib_per_hour"] = changes.get("growth", 0)
    return out


def _cost(doc: dict):
    return estimate_cost(parse_scenario(doc))


def test_a_replica_whose_kv_cache_outgrows_its_cap_is_counted_killed_and_restarted_over_the_horizon():
    fits = _cost(_doc(_service(growth=0)))
    grows = _cost(_doc(_service(growth=24)))  # 14 GiB at start, 18 GiB cap: killed every ~10 minutes
    longer = _cost(_doc(_service(growth=24), horizon="12h"))
    assert fits.work.oom_kills == 0
    assert grows.work.oom_kills == pytest.approx(6 * 3600 / (600 + 10), rel=0.01)
    # the kills are the work: twice the horizon, twice the kills and twice their settling and events
    assert longer.work.oom_kills == pytest.approx(2 * grows.work.oom_kills)
    assert grows.work.events == fits.work.events + round(2 * grows.work.oom_kills)
    assert longer.work.pod_updates - fits.work.pod_updates == pytest.approx(
        2 * (grows.work.pod_updates - fits.work.pod_updates))
    assert estimate_seconds(grows) > 2 * estimate_seconds(fits)


def test_a_cache_that_stops_growing_under_its_cap_is_never_killed():
    assert _cost(_doc(_service(growth=24, kv_cache={"initial_gib": 2, "growth_gib_per_hour": 24, "max_gib": 5}))
                 ).work.oom_kills == 0


def test_each_kill_on_a_shared_card_also_updates_the_co_tenants():
    alone = _cost(_doc(_service(growth=24)))
    shared = _cost(_doc(_service(growth=24), *(_service(name) for name in ("ads", "feed", "search"))))
    assert shared.work.oom_kills == alone.work.oom_kills
    # four replicas on the card (25% cores each) go through the latency model at every kill and restart
    assert shared.work.latency_updates == pytest.approx(4 * alone.work.latency_updates, rel=0.05)
    assert shared.work.pod_updates > 3 * alone.work.pod_updates


def test_the_memory_cap_follows_the_data_plane():
    mig = {"node_groups": [{"name": "infer", "count": 1, "gpus_per_node": 1, "numa_nodes": 1,
                            "mig": [{"layout": "all-1g.20gb"}]}]}
    hami = _cost(_doc(_service(growth=24)))  # gpumem = the declared 18 GiB
    in_mig = _cost({**_doc(_service(growth=24, unit={"mig_profile": "1g.20gb"}), mechanism="mig"), "pool": mig})
    whole = _cost(_doc(_service(growth=24), mechanism="whole"))  # the 80 GB card holds 12 + 60 GiB
    assert hami.work.oom_kills > in_mig.work.oom_kills > 0 == whole.work.oom_kills


@pytest.mark.parametrize("name", ["shared-card-oom-hami", "shared-card-oom-mig", "form-b-hami-kueue"])
def test_the_estimate_counts_the_oom_kills_the_simulation_makes(name, run_builtin):
    predicted = estimate_cost(load_scenario(SCENARIOS / f"{name}.yaml")).work.oom_kills
    assert predicted == pytest.approx(run_builtin(name).oom.kills, rel=0.2)


def test_a_job_over_its_memory_cap_crash_loops_until_it_fails():
    job = {"kind": "batch", "name": "leaky", "count": 3, "duration": "20m", "memory_gib": 6, "memory_request_gib": 4,
           "unit": {"gpucores": 10}}
    capped = _cost(_doc(job))
    fits = _cost(_doc({**job, "memory_request_gib": 6}))
    max_restarts = 6
    assert capped.work.events - fits.work.events == 3 * 2 * (max_restarts + 1)


def test_samples_and_tenants_are_counted_as_the_document_asks():
    base = _cost(_doc(_service()))
    more = _cost(_doc(_service(), sampling={"max_points": 2400}))
    tenants = _cost(_doc(_service(), tenants=[{"name": f"t{i}"} for i in range(50)]))
    assert more.work.samples == 10 * base.work.samples and more.work.node_samples == 10 * base.work.node_samples
    assert tenants.work.tenant_samples == 51 * base.work.tenant_samples  # 50 declared and the service's own


def test_a_rate_step_puts_every_replica_through_the_latency_model():
    steps = [{"at": f"{i + 1}h", "rps": 5 + i} for i in range(4)]
    flat = _cost(_doc(_service(replicas=3, unit={"gpucores": 30})))
    stepped = _cost(_doc(_service(replicas=3, unit={"gpucores": 30}, rate_schedule=steps)))
    assert stepped.work.latency_updates - flat.work.latency_updates == 4 * 3


def test_starting_a_service_grows_with_the_cube_of_its_replicas():
    # each replica that starts re-settles the pods placed so far, each counting its ready siblings
    pool = {"node_groups": [{"name": "infer", "count": 50, "gpus_per_node": 8}]}
    small = _cost({**_doc(_service(replicas=100), mechanism="whole"), "pool": pool})
    large = _cost({**_doc(_service(replicas=200), mechanism="whole"), "pool": pool})
    assert large.work.ready_checks == pytest.approx(8 * small.work.ready_checks)
    assert large.work.pod_updates == pytest.approx(4 * small.work.pod_updates)


def test_hami_nodes_check_every_card_at_every_pass_and_sample():
    job = {"kind": "batch", "name": "jobs", "count": 100, "duration": "1h", "unit": {"gpucores": 50}}
    pool = {"node_groups": [{"name": "infer", "count": 4, "gpus_per_node": 8}]}
    hami = _cost({**_doc(job), "pool": pool})
    whole = _cost({**_doc(job, mechanism="whole"), "pool": pool})
    assert whole.work.card_checks == 0
    assert hami.work.card_checks == (hami.work.samples + hami.work.events) * 32


def test_a_pod_placed_visits_the_nodes_of_its_group_only():
    pool = {"node_groups": [{"name": "small", "count": 2, "gpus_per_node": 8}, {"name": "big", "count": 100, "gpus_per_node": 8}]}
    job = {"kind": "batch", "name": "jobs", "count": 10, "duration": "1h", "workers": 2}
    anywhere = _cost({**_doc(job, mechanism="whole"), "pool": pool})
    pinned = _cost({**_doc({**job, "node_group": "small"}, mechanism="whole"), "pool": pool})
    assert anywhere.work.node_visits == 10 * 2 * 102
    assert pinned.work.node_visits == 10 * 2 * 2


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_built_in_scenario_is_estimated_from_its_document(path):
    cost = estimate_cost(load_scenario(path))
    assert 0 < estimate_seconds(cost) < 1  # the stack page shows them as "about < 1 s"
    assert all(value >= 0 for value in cost.work.seconds().values())
