"""Run Gavel's own simulator on a Philly trace, beside this project (used by gavel_compare.py and
sim_bench.py ``--peer-gavel``).

Gavel (stanford-futuredata/gavel, MIT) is not part of this repository: pass the path of a checkout
and a Python that has its simulator's imports (numpy, cvxpy with ECOS, psutil).  The job list is
written in Gavel's 10-column trace format (``utils.parse_trace``) and a driver equivalent to
``scheduler/scripts/drivers/simulate_scheduler_with_trace.py`` runs ``Scheduler.simulate`` in a
child process; its gRPC runtime and the ``matrix_completion`` module, which simulation never calls,
are replaced by empty modules so they need not be installed.  The child's whole-process CPU time is
measured with ``getrusage(RUSAGE_CHILDREN)``.
"""

from __future__ import annotations

import csv
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Sequence

#: Gavel policy name -> this project's policy in ``mode="gavel"``.
POLICIES = {"fifo": "fifo", "max_min_fairness": "las"}

_DRIVER = r"""
import json, os, sys, time, types
sched_dir, trace, policy_name, solver, v100, per_server = sys.argv[1:7]
for name in ("matrix_completion", "runtime", "runtime.rpc", "runtime.rpc.scheduler_server",
             "runtime.rpc.scheduler_client"):
    mod = types.ModuleType(name)
    mod.__path__ = []
    sys.modules[name] = mod
sys.modules["runtime"].rpc = sys.modules["runtime.rpc"]
sys.modules["runtime.rpc"].scheduler_server = sys.modules["runtime.rpc.scheduler_server"]
sys.modules["runtime.rpc"].scheduler_client = sys.modules["runtime.rpc.scheduler_client"]
sys.path.insert(0, sched_dir)
os.chdir(sched_dir)
import scheduler, utils
t0, c0 = time.perf_counter(), time.process_time()
jobs, arrival_times = utils.parse_trace(trace)
policy = utils.get_policy(policy_name, solver=solver, seed=0)
s = scheduler.Scheduler(policy, throughputs_file="simulation_throughputs.json", simulate=True, seed=0,
                        time_per_iteration=360)
s.simulate({"v100": int(v100), "p100": 0, "k80": 0}, arrival_times, jobs,
           num_gpus_per_server={"v100": int(per_server), "p100": 1, "k80": 1})
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
jct = {int(j[0]): t for j, t in s._job_completion_times.items()}
print(json.dumps({"jct": jct, "simulate_wall_s": wall, "simulate_cpu_s": cpu}))
"""


def scheduler_dir(gavel: str | os.PathLike) -> Path:
    """The ``scheduler`` directory of a Gavel checkout (the checkout itself or that directory)."""
    p = Path(gavel)
    for cand in (p / "scheduler", p):
        if (cand / "scheduler.py").exists() and (cand / "simulation_throughputs.json").exists():
            return cand
    raise FileNotFoundError(f"{gavel}: not a Gavel checkout (no scheduler/scheduler.py)")


def write_gavel_trace(jobs: Sequence, path: str | os.PathLike) -> None:
    """Write whole-GPU ``TraceJob``s (arrival order) in Gavel's trace format; they need steps and job_type."""
    with open(path, "w", encoding="utf-8") as fh:
        for j in jobs:
            if not j.steps or not j.job_type:
                raise ValueError(f"job {j.job_id}: Gavel needs total_steps and job_type (the philly format)")
            # job_type, command, working_directory, num_steps_arg, needs_data_dir, total_steps,
            # scale_factor, priority_weight, SLO, arrival_time
            fh.write("\t".join([j.job_type, "-", "-", "-", "0", str(j.steps), str(j.num_gpus), "1", "-1",
                                repr(float(j.submit_s))]) + "\n")


def run_gavel(gavel: str | os.PathLike, python: str, jobs: Sequence, policy: str = "fifo", *,
              solver: str = "ECOS", gpus: int = 96, gpus_per_server: int = 8) -> dict:
    """Run Gavel's simulator on ``jobs``; returns ``{"jct": {job_id: s}, "cpu_s", "wall_s", ...}``.

    ``cpu_s`` and ``wall_s`` cover the whole child process (interpreter start, imports, trace read,
    simulation and Gavel's logging, which goes to a discarded stderr); ``simulate_cpu_s`` only the
    trace read and ``Scheduler.simulate``.
    """
    if policy not in POLICIES:
        raise ValueError(f"policy {policy!r}: choose one of {', '.join(POLICIES)}")
    sdir = scheduler_dir(gavel)
    ordered = sorted(jobs, key=lambda j: (j.submit_s, j.index))
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "trace.txt"
        write_gavel_trace(ordered, trace)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run(
            [python, "-c", _DRIVER, str(sdir), str(trace), policy, solver, str(gpus), str(gpus_per_server)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"Gavel's simulator exited with {proc.returncode}; run it by hand with {python}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["jct"] = {ordered[int(i)].job_id: t for i, t in out["jct"].items()}
    out["cpu_s"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    out["wall_s"] = wall
    return out


def read_jcts(path: str | os.PathLike) -> dict[str, float]:
    """A ``job_id,jct_s`` CSV (what :func:`write_jcts` and gavel_compare.py --save-gavel-jcts write)."""
    with open(path, newline="", encoding="utf-8") as fh:
        return {row["job_id"]: float(row["jct_s"]) for row in csv.DictReader(fh)}


def write_jcts(jct: dict[str, float], path: str | os.PathLike) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["job_id", "jct_s"])
        for job_id, t in jct.items():
            w.writerow([job_id, repr(t)])


if __name__ == "__main__":  # pragma: no cover
    sys.exit("import this module; see benchmarks/gavel_compare.py")
