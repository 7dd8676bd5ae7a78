"""The engine stays linear in the number of jobs (events per job roughly constant)."""

from scheduler_core import simulate, synthetic_scenario


def test_events_per_job_do_not_grow_with_the_backlog():
    small = simulate(synthetic_scenario(nodes=8, jobs=500, services=4, days=1, seed=1))
    big = simulate(synthetic_scenario(nodes=8, jobs=2000, services=4, days=4, seed=1))
    per_small = small.events_processed / small.jobs.submitted
    per_big = big.events_processed / big.jobs.submitted
    assert per_big < 1.5 * per_small


def test_a_thousand_jobs_simulate_to_completion():
    # How fast is measured in benchmarks/sim_bench.py, never asserted here (a shared machine flakes).
    r = simulate(synthetic_scenario(nodes=16, jobs=1000, services=8, days=1, seed=2))
    assert r.jobs.completed > 0.8 * r.jobs.submitted
