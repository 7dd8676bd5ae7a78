"""Rank by evidence on a 64-GPU pool for one simulated day: how long the evaluation of the top 5
stacks takes (issue 11 target: < 30 s on a 2-core machine).

What the Celery group does, without a broker: compose the request, build the scenario from its
workload classes (placement.evidence.services.evaluation), lay each stack onto it (stack_scenario) and run
scheduler_core once per stack - sequentially (one worker) and with 2 processes (two worker
processes, the group's parallelism on this machine). Prints wall times and each stack's figures.

    DATABASE_URL=sqlite:///tmp/bench.sqlite3 .venv/bin/python benchmarks/evaluate_bench.py
"""

from __future__ import annotations

import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from placement.catalog.files import read_catalog_dir  # noqa: E402
from placement.evidence.selectors.evaluation import run_figures  # noqa: E402
from placement.rules import build_graph, compose  # noqa: E402
from placement.rules.models import ComposeRequest  # noqa: E402
from placement.stacks.models import Stack  # noqa: E402
from placement.stacks.services.scenario import scenario_for_stack  # noqa: E402
from scheduler_core.api import simulate  # noqa: E402

REQUEST = ComposeRequest.model_validate({
    "workloads": [
        {"name": "llm", "kind": "training", "replicas": 4, "gpus_per_replica": 8, "gpu_memory_gib": 70,
         "gang": True, "peer_to_peer": True, "tenants": 2},
        {"name": "chat", "kind": "online_inference", "replicas": 32, "gpus_per_replica": 0.25, "gpu_memory_gib": 12,
         "p99_ms": 150, "tenants": 3},
        {"name": "notebooks", "kind": "interactive", "replicas": 24, "gpus_per_replica": 0.25, "gpu_memory_gib": 8,
         "tenants": 4},
    ],
    "pool": {"gpu_model": "A100-80GB", "gpu_count": 64},
    "limit": 5,
})


def _run(scenario_json: dict) -> tuple[float, dict]:
    start = time.perf_counter()
    result = simulate(scenario_json).model_dump(mode="json")
    return time.perf_counter() - start, run_figures(result)


def main() -> None:
    t0 = time.perf_counter()
    graph = build_graph(read_catalog_dir(ROOT / "fixtures" / "catalog"))
    result = compose(graph, REQUEST)
    scenarios = []
    for chosen in result.stacks:
        stack = Stack(name=chosen.title, profile=result.profile, request=REQUEST.model_dump(mode="json"),
                      composition=chosen.model_dump(mode="json"))
        # each stack's own plan (placement/plans/scenario.py)
        scenarios.append(scenario_for_stack(stack, scenario_name=None, document=None, seed=1).model_dump(mode="json"))
    prepare = time.perf_counter() - t0
    document = scenarios[0]
    gpus = sum(g["count"] * g["gpus_per_node"] for g in document["pool"]["node_groups"])
    print(f"evaluate bench: {len(scenarios)} stacks, {gpus} GPUs, horizon {document['horizon']}, "
          f"{len(document['workloads'])} workload entries; compose + scenarios {prepare:.2f} s")

    start = time.perf_counter()
    sequential = [_run(s) for s in scenarios]
    one_worker = time.perf_counter() - start
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=2) as pool:
        list(pool.map(_run, scenarios))
    two_workers = time.perf_counter() - start
    for chosen, (seconds, figures) in zip(result.stacks, sequential):
        print(f"  #{chosen.rank} {chosen.title[:70]:70s} {seconds:6.2f} s  SLO {figures['slo_attainment']}  "
              f"P99 {figures['p99_ms']} ms  OOM {figures['oom_kills']}  util {figures['utilisation']}  "
              f"wait p95 {figures['queue_wait_p95_s']} s  starved {len(figures['starved_tenants'])}")
    verdict = "ok" if two_workers + prepare < 30 else "MISSED"
    print(f"  one worker {one_worker:.2f} s   two worker processes {two_workers:.2f} s   target < 30 s   {verdict}")


if __name__ == "__main__":
    main()
