"""Whole-GPU replay: FIFO and least-attained-service on a pool, checked against hand timelines."""

import json

import pytest

from scheduler_core.traces import (
    TraceJob,
    WholeGpuConfig,
    load_jobs,
    replay_trace,
    replay_whole_gpu,
    result_json,
    synthetic_whole_gpu_jobs,
)

H = 3600.0


def jobs(*rows):
    """rows: (submit_s, gpus, duration_s)"""
    return [TraceJob(index=i, job_id=f"j{i}", submit_s=s, num_gpus=g, gpu_milli=1000, duration_s=d)
            for i, (s, g, d) in enumerate(rows)]


def test_fifo_runs_jobs_in_arrival_order_on_one_gpu():
    r = replay_whole_gpu(jobs((0, 1, 10), (1, 1, 5), (2, 1, 1)), servers=1, gpus_per_server=1)
    assert r.first_start == [0, 10, 15]
    assert r.finish == [10, 15, 16]
    s = r.summary
    assert s["jct_s"]["mean"] == pytest.approx((10 + 14 + 14) / 3)
    assert s["queue_wait_s"]["median"] == 9
    assert s["makespan_s"] == 16
    assert s["utilisation"] == 1.0


def test_fifo_head_of_line_blocks_later_jobs_unless_backfill():
    # 4 GPUs: a 2-GPU job runs; a 4-GPU job waits at the head; a 1-GPU job behind it.
    trace = jobs((0, 2, 100), (1, 4, 10), (2, 1, 5))
    strict = replay_whole_gpu(trace, servers=1, gpus_per_server=4)
    assert strict.first_start == [0, 100, 110]
    back = replay_whole_gpu(trace, servers=1, gpus_per_server=4, fifo_backfill=True)
    assert back.first_start == [0, 100, 2]


def test_las_preempts_a_long_job_for_a_newcomer_and_resumes_it():
    # One GPU; threshold 1 GPU-hour.  A (10 h) is demoted at 1 h; B arrives at 2 h
    # in the top queue, preempts A, runs 1 h; A resumes at 3 h and ends at 11 h.
    trace = jobs((0, 1, 10 * H), (2 * H, 1, 1 * H))
    r = replay_whole_gpu(trace, servers=1, gpus_per_server=1, policy="las", las_thresholds_gpu_h=(1.0,))
    assert r.finish == [11 * H, 3 * H]
    assert r.preemptions == [1, 0]
    assert r.summary["time_not_running_s"]["max"] == pytest.approx(1 * H)
    fifo = replay_whole_gpu(trace, servers=1, gpus_per_server=1, policy="fifo")
    assert fifo.finish == [10 * H, 11 * H]


def test_preemption_overhead_delays_the_resumed_job():
    trace = jobs((0, 1, 10 * H), (2 * H, 1, 1 * H))
    r = replay_whole_gpu(trace, servers=1, gpus_per_server=1, policy="las",
                         las_thresholds_gpu_h=(1.0,), preemption_overhead_s=600)
    assert r.finish == [11 * H + 600, 3 * H]


def test_las_threshold_counts_gpu_hours_not_wall_hours():
    # A 4-GPU job reaches 1 GPU-hour after 15 minutes, so a 1-GPU newcomer
    # arriving at 30 min outranks it and, on a 4-GPU pool, preempts it.
    trace = jobs((0, 4, 2 * H), (0.5 * H, 1, 0.25 * H))
    r = replay_whole_gpu(trace, servers=1, gpus_per_server=4, policy="las", las_thresholds_gpu_h=(1.0,))
    assert r.preemptions == [1, 0]
    assert r.finish == [2.25 * H, 0.75 * H]


def test_las_reduces_median_jct_vs_fifo_on_mixed_lengths():
    # Long jobs arrive first and fill the pool; many short jobs queue behind them.
    rows = [(0, 2, 50 * H) for _ in range(4)]
    rows += [(60.0 * i, 1, 0.5 * H) for i in range(1, 41)]
    trace = jobs(*rows)
    fifo = replay_whole_gpu(trace, servers=1, gpus_per_server=8, policy="fifo")
    las = replay_whole_gpu(trace, servers=1, gpus_per_server=8, policy="las")
    assert las.summary["jct_s"]["median"] < 0.1 * fifo.summary["jct_s"]["median"]
    assert las.summary["completed"] == fifo.summary["completed"] == 44


def test_jobs_larger_than_the_pool_are_rejected_not_run():
    r = replay_whole_gpu(jobs((0, 16, 10), (0, 1, 10)), servers=1, gpus_per_server=8)
    assert r.rejected == ["j0"] and r.summary["completed"] == 1 and r.summary["jobs"] == 2


def test_fractional_job_is_refused_with_a_pointer_to_the_sharing_replay():
    j = TraceJob(index=0, job_id="p", submit_s=0, num_gpus=1, gpu_milli=500, duration_s=5, line=7)
    with pytest.raises(ValueError, match=r"job 'p' \(line 7\) asks for 0.5 GPU.*binpack/spread"):
        replay_whole_gpu([j])


def test_config_rejects_unordered_thresholds():
    with pytest.raises(ValueError):
        WholeGpuConfig(las_thresholds_gpu_h=(10.0, 1.0))


def test_every_job_completes_and_gpus_are_never_oversubscribed_on_a_synthetic_trace():
    trace = synthetic_whole_gpu_jobs(300, capacity=16, load=0.9, seed=3)
    for policy in ("fifo", "las"):
        r = replay_whole_gpu(trace, servers=2, gpus_per_server=8, policy=policy)
        assert r.summary["completed"] == 300
        # Busy GPU-seconds equal the work done (no overhead configured).
        assert r.busy_gpu_s == pytest.approx(sum(j.num_gpus * j.duration_s for j in trace), rel=1e-9)
        assert 0 < r.summary["utilisation"] <= 1


def test_same_trace_and_policy_give_identical_json(tmp_path):
    p = tmp_path / "jobs.csv"
    rows = ["job_id,submit_s,num_gpus,job_type,total_steps,duration_s"]
    rows += [f"{j.job_id},{j.submit_s},{j.num_gpus},x,1,{j.duration_s}" for j in synthetic_whole_gpu_jobs(200, capacity=16, seed=1)]
    p.write_text("\n".join(rows) + "\n")
    for policy in ("fifo", "las"):
        a = result_json(replay_trace(p, "philly", policy, servers=2))
        b = result_json(replay_trace(p, "philly", policy, servers=2))
        assert a == b
        d = json.loads(a)
        assert d["kind"] == "whole_gpu" and d["config"]["policy"] == policy
        assert len(d["per_job"]["finish_s"]) == 200


def test_philly_csv_round_trip_through_replay_trace(tmp_path):
    p = tmp_path / "philly.csv"
    p.write_text("job_id,submit_s,num_gpus,job_type,total_steps,duration_s\n"
                 "0,0,8,a,1,100\n1,0,8,b,1,100\n2,0,8,c,1,100\n")
    r = replay_trace(p, "philly", "fifo", servers=2)
    assert r.finish == [100, 100, 200]
    assert load_jobs(p, "philly")[2].line == 4


def test_tenant_column_gives_per_tenant_metrics(tmp_path):
    p = tmp_path / "g.csv"
    p.write_text("job_id,submit_s,gpus,duration_s,tenant\na,0,1,10,red\nb,0,1,10,blue\nc,0,1,10,red\n")
    r = replay_trace(p, "generic", "fifo", servers=1, gpus_per_server=1)
    by = r.summary["by_tenant"]
    assert list(by) == ["blue", "red"]
    assert by["red"]["completed"] == 2 and by["red"]["jct_s"]["max"] == 30
    assert by["blue"]["queue_wait_s"]["mean"] == 10 and by["blue"]["gpu_s"] == 10
