"""Gavel-compatible whole-GPU replay (``mode="gavel"``), checked against timelines derived by hand
from Gavel's own rules (stanford-futuredata/gavel, ``scheduler/scheduler.py`` and
``scheduler/policies/``; the functions are named in each test)."""

import pytest

from scheduler_core.traces import TraceJob, WholeGpuConfig, replay_trace, replay_whole_gpu, result_json
from scheduler_core.traces.cli import main as trace_cli
from scheduler_core.traces.gavel_rounds import fifo_allocation, max_min_shares


def jobs(*rows):
    """rows: (submit_s, gpus, duration_s[, steps])"""
    return [TraceJob(index=i, job_id=f"j{i}", submit_s=r[0], num_gpus=r[1], gpu_milli=1000, duration_s=r[2],
                     steps=r[3] if len(r) > 3 else None)
            for i, r in enumerate(rows)]


def gavel(trace, gpus, policy="fifo", **kw):
    return replay_whole_gpu(trace, servers=1, gpus_per_server=gpus, policy=policy, mode="gavel", **kw)


def test_an_arrival_waits_for_the_round_end_and_then_for_the_1920_s_allocation_reset():
    # 2 GPUs.  A (1 GPU, 3,600 s) from t=0.  B arrives at 100 and is added at the round end 360; the
    # reset at t=0 left Scheduler._last_reset_time at 0, which _update_priorities reads as "never reset",
    # so B is allocated at once and runs [360, 460].  C arrives at 500, is added at 720, but the last
    # reset was at 360: no new allocation before a round end >= 360 + 1,920, i.e. 2,520.
    r = gavel(jobs((0, 1, 3600), (100, 1, 100), (500, 1, 100)), gpus=2)
    assert r.first_start == [0, 360, 2520]
    assert r.finish == [3600, 460, 2620]  # a job's JCT ends at its last step, not at the round end
    event = replay_whole_gpu(jobs((0, 1, 3600), (100, 1, 100), (500, 1, 100)), servers=1, gpus_per_server=2)
    assert event.finish == [3600, 200, 600]


def test_gavel_fifo_over_admits_into_a_small_jobs_slot_and_time_shares_by_rounds():
    # 8 GPUs.  J0 (1 GPU, 720 s) and J1 (7 GPUs, 10,000 s) at 0; J2 (8 GPUs, 720 s) at 1, added at 360.
    # FIFOPolicy.get_allocation at the reset at 360: no room.  J0 ends at 720, but the next reset is at
    # the first round end >= 2,280, i.e. 2,520: walking the old allocation in id order, J0 has finished
    # and nothing later is subtracted yet, so J2 (8 GPUs) is admitted beside J1 (7): 15 GPUs on 8.
    # _schedule_jobs_on_workers_helper then alternates them by priority = allocation / share of time:
    # J1 (tie, earlier id) [2520, 2880], J2 [2880, 3240], J1 [3240, 3600], J2 [3600, 3960] -> done.
    # J1 then runs alone: 10,000 - 7 x 360 - 2 x 360 = 6,760 s more, ending at 10,720.
    r = gavel(jobs((0, 1, 720), (0, 7, 10_000), (1, 8, 720)), gpus=8)
    assert r.first_start == [0, 0, 2880]
    assert r.finish == [720, 10_720, 3960]
    assert r.preemptions == [0, 2, 1]
    # This simulator's own FIFO never over-admits: J2 waits for J1.
    event = replay_whole_gpu(jobs((0, 1, 720), (0, 7, 10_000), (1, 8, 720)), servers=1, gpus_per_server=8)
    assert event.finish == [720, 10_000, 10_720]


def test_fifo_allocation_admits_by_gpus_counted_so_far_and_stops_at_the_first_misfit():
    # FIFOPolicy.get_allocation, base mode, one worker type.
    k = {0: 1, 1: 7, 2: 8, 3: 1}
    allocated = {0: None, 1: None}  # 0 has finished, 1 runs
    fifo_allocation(allocated, [1, 2, 3], k, 8)
    assert list(allocated) == [1, 2]  # 2 took 0's place though only 1 GPU was free; 3 does not fit after
    held = {1: None}
    fifo_allocation(held, [1, 2, 3], k, 8)
    assert list(held) == [1]  # the head (8 GPUs) does not fit in 1 free GPU and blocks the 1-GPU job


def test_max_min_fairness_shares_gpu_time_in_leases_in_proportion_to_allocation():
    # 2 GPUs, A (2 GPUs, 720 s) and B (1 GPU, 720 s) at 0.  MaxMinFairnessPolicy: max min(2 x_A, 1 x_B)
    # s.t. 2 x_A + x_B <= 2, x <= 1 -> x_A = 0.5, x_B = 1.  Priority = x / (time share since reset):
    # B [0, 360] (priority 2 vs 1; A cannot fit beside it), A [360, 720], B [720, 1080] -> done,
    # then A alone [1080, 1440].
    r = gavel(jobs((0, 2, 720), (0, 1, 720)), gpus=2, policy="las")
    assert r.first_start == [360, 0]
    assert r.finish == [1440, 1080]
    assert r.preemptions == [1, 1]


def test_max_min_shares_equalise_gpus_held_and_use_the_whole_pool_when_contended():
    # More jobs than GPUs: the optimum is unique, every job holds capacity / n GPUs on average.
    x = max_min_shares([1, 2, 4, 8] * 10, 16)
    assert [round(k * s, 9) for k, s in zip([1, 2, 4, 8] * 10, x)] == [0.4] * 40
    # Fewer jobs: 1-GPU jobs are pinned at a full share, larger ones get at least 1 GPU's worth, the pool
    # is not exceeded, and jobs of one size get one share (ECOS returns a central optimum, not a vertex).
    k = [1] * 20 + [8] * 12
    x = max_min_shares(k, 96)
    assert x[:20] == [1.0] * 20
    assert all(1 / 8 < s < 1 for s in x[20:]) and len({round(s, 12) for s in x[20:]}) == 1
    assert sum(a * b for a, b in zip(k, x)) <= 96


def test_steps_make_rounds_end_at_whole_steps_as_gavel_counts_them():
    # Scheduler._get_num_steps: int(throughput x 360) steps per round.  1,000 steps in 1,000.5 s ->
    # 359 steps = 359.18 s per round, so the round ends before an arrival at 359.5, which is added at
    # the next round end, 718.36 s.  Without steps a round is 360 s of duration.
    r = gavel(jobs((0, 1, 1000.5, 1000), (359.5, 1, 100)), gpus=2)
    assert r.first_start[1] == pytest.approx(2 * 359 / (1000 / 1000.5))
    assert r.finish[0] == pytest.approx(1000.5)
    r = gavel(jobs((0, 1, 1000.5), (359.5, 1, 100)), gpus=2)
    assert r.first_start[1] == 360


def test_reset_interval_and_round_length_are_parameters():
    trace = jobs((0, 1, 3600), (100, 1, 100), (500, 1, 100))
    r = gavel(trace, gpus=2, reset_interval_s=0)
    assert r.first_start == [0, 360, 720]
    r = gavel(trace, gpus=2, round_s=100, reset_interval_s=0)
    assert r.first_start == [0, 100, 500]


def test_gavel_mode_refuses_options_it_does_not_model():
    with pytest.raises(ValueError, match="do not apply"):
        WholeGpuConfig(mode="gavel", fifo_backfill=True)
    with pytest.raises(ValueError, match="do not apply"):
        WholeGpuConfig(mode="gavel", policy="las", las_thresholds_gpu_h=(2.0,))


def test_every_job_completes_and_rounds_never_oversubscribe_on_a_philly_shaped_trace():
    from scheduler_core.traces import synthetic_whole_gpu_jobs

    trace = synthetic_whole_gpu_jobs(300, capacity=32, seed=3)
    for policy in ("fifo", "las"):
        r = replay_whole_gpu(trace, servers=4, gpus_per_server=8, policy=policy, mode="gavel")
        assert r.summary["completed"] == 300
        assert all(f >= s + j.duration_s - 1e-6 for f, s, j in zip(r.finish, r.submit, trace))
        assert r.summary["utilisation"] <= 1.0


def test_philly_csv_steps_and_job_type_reach_the_gavel_mode_and_the_cli(tmp_path, capsys):
    p = tmp_path / "jobs.csv"
    p.write_text(
        "job_id,submit_s,num_gpus,job_type,total_steps,duration_s\n"
        "a,0,1,LM (batch size 80),1000,1000.5\n"
        "b,359.5,1,LM (batch size 80),100,100.05\n"
    )
    r = replay_trace(p, "philly", "fifo", servers=1, gpus_per_server=2, mode="gavel")
    assert r.first_start[1] == pytest.approx(718.359, abs=1e-3)
    assert trace_cli(["replay", "--trace", str(p), "--format", "philly", "--policy", "fifo",
                      "--servers", "1", "--gpus-per-server", "2", "--gavel-compatible"]) == 0
    out = capsys.readouterr().out
    assert "rounds in" in out and "completed 2" in out
    assert trace_cli(["replay", "--trace", str(p), "--format", "philly", "--policy", "fifo", "--round", "60"]) == 2
    assert "--round needs --gavel-compatible" in capsys.readouterr().err


def test_gavel_mode_gives_byte_identical_json_for_the_same_trace():
    from scheduler_core.traces import synthetic_whole_gpu_jobs

    trace = synthetic_whole_gpu_jobs(200, capacity=16, seed=5)
    for policy in ("fifo", "las"):
        a, b = (result_json(replay_whole_gpu(trace, servers=2, gpus_per_server=8, policy=policy, mode="gavel"))
                for _ in range(2))
        assert a == b and '"mode": "gavel"' in a
