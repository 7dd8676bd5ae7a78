"""Public entry points: simulate() inputs, progress reporting, the synthetic generator."""

from scheduler_core import simulate, synthetic_scenario
from tests.scheduler_core.conftest import SCENARIOS, minimal


def test_simulate_accepts_a_path_a_dict_or_a_model_and_reports_progress():
    seen = []
    r = simulate(minimal(), progress=seen.append)
    assert r.jobs.completed == 1
    assert seen[0] == 0.0 and seen[-1] == 1.0 and seen == sorted(seen)
    assert simulate(SCENARIOS / "lab0-device-facts.yaml").scenario == "lab0-device-facts"


def test_time_series_is_bounded_by_max_points():
    r = simulate(minimal(sampling={"max_points": 50}))
    assert len(r.time_series.t) <= 50 and r.time_series.t[-1] == r.horizon


def test_synthetic_scenario_has_the_requested_size_and_stack():
    sc = synthetic_scenario(nodes=16, jobs=1234, services=7, days=2, seed=1, stack="kueue")
    jobs = sum(w.count for w in sc.workloads if w.kind != "inference")
    assert jobs == 1234 and sum(1 for w in sc.workloads if w.kind == "inference") == 7
    assert sc.pool.total_gpus == 128 and sc.stack.control_plane.admission == "kueue"
