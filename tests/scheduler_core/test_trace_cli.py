"""The ``replay`` command: exit codes, JSON output, error messages; and no Django in the package."""

import json
import subprocess
import sys

from scheduler_core.traces.cli import main

PHILLY = "job_id,submit_s,num_gpus,job_type,total_steps,duration_s\n0,0,8,a,1,100\n1,5,4,b,1,50\n"


def test_replay_command_prints_metrics_and_writes_json(tmp_path, capsys):
    trace = tmp_path / "jobs.csv"
    trace.write_text(PHILLY)
    out = tmp_path / "r.json"
    rc = main(["replay", "--trace", str(trace), "--format", "philly", "--policy", "fifo",
               "--servers", "1", "--json", str(out)])
    assert rc == 0
    text = capsys.readouterr().out
    assert "jobs 2: completed 2" in text and "JCT mean" in text
    data = json.loads(out.read_text())
    assert data["summary"]["makespan_s"] == 150.0
    assert data["per_job"]["start_s"] == [0.0, 100.0]


def test_replay_command_reports_bad_csv_with_file_line_and_column(tmp_path, capsys):
    trace = tmp_path / "jobs.csv"
    trace.write_text(PHILLY + "2,9,x,c,1,5\n")
    rc = main(["replay", "--trace", str(trace), "--format", "philly", "--policy", "las"])
    assert rc == 2
    assert f"error: {trace}:4: column 'num_gpus': expected a number, got 'x'" in capsys.readouterr().err


def test_sharing_replay_on_a_uniform_pool_from_the_command_line(tmp_path, capsys):
    trace = tmp_path / "pods.csv"
    trace.write_text("job_id,submit_s,gpus\na,0,0.5\nb,1,0.5\nc,2,1\n")
    rc = main(["replay", "--trace", str(trace), "--policy", "spread", "--servers", "1",
               "--gpus-per-server", "2", "--json", "-"])
    assert rc == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["summary"]["unplaced"] == 1  # spread split the two halves over both GPUs
    assert "placed 2, unplaced 1" in captured.err


def test_scheduler_core_traces_imports_no_django_or_celery():
    code = ("import sys, scheduler_core.traces, scheduler_core.traces.cli; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('django', 'celery')]; "
            "print(bad); sys.exit(1 if bad else 0)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_replay_is_mounted_in_the_simulator_cli(tmp_path, capsys):
    from scheduler_core.cli import main as core_main

    trace = tmp_path / "jobs.csv"
    trace.write_text(PHILLY)
    assert core_main(["replay", "--trace", str(trace), "--format", "philly", "--policy", "las",
                      "--servers", "1"]) == 0
    assert "jobs 2: completed 2" in capsys.readouterr().out
