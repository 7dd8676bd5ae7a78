"""Rank by evidence: the top composed stacks simulated on one scenario, then re-ranked by what the
simulator measured (DESIGN.md §4 "Evidence ranking").

`evaluation_start` composes the request again, saves the top N stacks, builds the scenario from the
same workload classes (or takes a built-in one) and queues one run per stack as ONE Celery group
(the sweep machinery of placement.services.evidence). `placement.selectors.evaluation` reads it back:
per stack the rules score next to the measured metrics, the evidence order, and each place where
rules and evidence disagree with the metric that decided.
"""

from __future__ import annotations

import math

from django.core.exceptions import ValidationError
from django.db import transaction

from placement.models import Stack, Sweep
from placement.rules import builtin_rules
from placement.rules.models import ComposeRequest, ComposeResult
from placement.selectors.evaluation import EVALUATION_PREFIX
from placement.services import evidence
from placement.services.access import require
from placement.services.rules import compose_stacks

MAX_TOP = 8
HORIZON = "24h"
GPUS_PER_NODE = 8
# scheduler_core models A100 nodes; other GPU models are simulated as the A100 of the nearest size
SIMULATED_GPU = {"A100-40GB": ("A100-SXM4-40GB", "A100-40GB")}
DEFAULT_SIMULATED = ("A100-SXM4-80GB", "A100-80GB")


def _mig_layout(profile: str | None) -> list[dict]:
    # mig-parted ships all-<profile> layouts (domain-facts §1.6); a class's replicas fit that layout
    return [{"devices": "all", "layout": f"all-{profile}" if profile else "all-balanced"}]


def _smallest_profile(table_model: str, memory_gib: float) -> str | None:
    profiles = builtin_rules().mig_profiles_for(table_model)
    fitting = sorted((gb, int(name.split("g")[0]), name) for name, gb in profiles.items() if gb >= memory_gib)
    return fitting[0][2] if fitting else None


def scenario_from_classes(result: ComposeResult) -> dict:
    """A one-day scenario with the request's workload classes on its pools (one node group per pool)."""
    sim_gpu, table_model = SIMULATED_GPU.get(result.pool.gpu_model, DEFAULT_SIMULATED)
    pools = result.stacks[0].pools if result.stacks else []
    gpus = {p.name: p.gpus for p in pools}
    node_groups, workloads, tenants = [], [], {}
    for w in result.workloads:
        pool = w.name if w.name in gpus else (pools[0].name if pools else w.name)
        profile = _smallest_profile(table_model, w.gpu_memory_gib) if w.gpus_per_replica <= 1 else None
        if pool not in {g["name"] for g in node_groups}:
            n = gpus.get(pool, max(1, math.ceil(w.replicas * w.gpus_per_replica)))
            node_groups.append({"name": pool, "count": max(1, round(n / GPUS_PER_NODE)), "gpu": sim_gpu,
                                "gpus_per_node": min(GPUS_PER_NODE, n), "mig": _mig_layout(profile)})
        share = min(1.0, w.gpus_per_replica)
        unit = {"gpucores": max(1, round(100 * share))}
        if profile:
            unit["mig_profile"] = profile
        per_tenant = max(1, math.ceil(w.replicas / w.tenants))
        for t in range(w.tenants):
            tenant = f"{w.name}-team-{t + 1}"
            # weights follow each class's share of the pool, so derived queues can hold its gangs
            tenants[tenant] = {"name": tenant, "weight": max(1, round(gpus.get(pool, 1) / w.tenants))}
            common = {"tenant": tenant, "node_group": pool, "unit": unit, "compute_fraction": share,
                      "memory_request_gib": w.gpu_memory_gib}
            if w.kind.value == "training":
                workloads.append({**common, "kind": "training", "name": f"{w.name}-{t + 1}", "count": 4,
                                  "arrival": {"at": f"{t * 7}m", "every": "5h"}, "workers": w.replicas,
                                  "gpus_per_worker": w.whole_gpus, "duration": "3h", "memory_gib": round(0.9 * w.gpu_memory_gib, 2),
                                  "min_available": w.replicas if w.gang else 0,
                                  "topology_sensitivity": 0.3 if w.peer_to_peer else 0.0})
            elif w.kind.value == "online_inference":
                workloads.append({**common, "kind": "inference", "name": f"{w.name}-{t + 1}", "replicas": per_tenant,
                                  "gpus_per_replica": w.whole_gpus, "model_memory_gib": round(0.7 * w.gpu_memory_gib, 2),
                                  "kv_cache": {"initial_gib": round(0.1 * w.gpu_memory_gib, 2), "growth_gib_per_hour": 0.0,
                                               "max_gib": round(0.3 * w.gpu_memory_gib, 2)},
                                  "arrival_rate": round(15 * per_tenant * share, 2), "service_time": {"mean": "20ms", "cv": 0.5},
                                  "slo": {"p99": f"{int(w.p99_ms or 200)}ms"}})
            else:  # batch inference and interactive sessions: jobs that come and go
                workloads.append({**common, "kind": "batch", "name": f"{w.name}-{t + 1}", "count": per_tenant * 3,
                                  "arrival": {"at": f"{t * 5}m", "every": "40m"}, "duration": "1h",
                                  "memory_gib": round(0.9 * w.gpu_memory_gib, 2)})
    return {
        "name": f"classes-{'-'.join(w.name for w in result.workloads)}"[:120],
        "description": "Generated by Rank by evidence from the compose request's workload classes.",
        "seed": 1, "horizon": HORIZON,
        "pool": {"node_groups": node_groups},
        "stack": {"name": "placeholder", "data_plane": {"mechanism": "whole"}, "control_plane": {"scheduler": "kube-default"}},
        "tenants": list(tenants.values()),
        "workloads": workloads,
    }


def evaluation_start(*, user, request_data, top: int = 5, scenario_name: str | None = None) -> Sweep:
    """Compose, save the top `top` stacks and queue one run each on one scenario as one Celery group."""
    require(user, "run_simulation")
    if not isinstance(top, int) or isinstance(top, bool) or not 1 <= top <= MAX_TOP:
        raise ValidationError({"top": [f"Simulate between 1 and {MAX_TOP} stacks."]})
    request = request_data if isinstance(request_data, ComposeRequest) else ComposeRequest.model_validate(request_data)
    request = request.model_copy(update={"limit": max(request.limit, top)})
    result = compose_stacks(request)
    if not result.stacks:
        raise ValidationError({"request": ["No stack to evaluate: " + " ".join(f.reason for f in result.failures)]})
    document = None if scenario_name else scenario_from_classes(result)
    with transaction.atomic():
        sweep = Sweep.objects.create(
            name=f"{EVALUATION_PREFIX}: {result.profile}, top {min(top, len(result.stacks))}",
            scenario_name=scenario_name or document["name"], seeds=1,
            created_by=user if getattr(user, "is_authenticated", False) else None,
        )
        new_runs = []
        for chosen in result.stacks[:top]:
            stack = Stack.objects.create(
                name=f"#{chosen.rank} {chosen.title}"[:200], profile=result.profile,
                request=request.model_dump(mode="json"), composition=chosen.model_dump(mode="json"),
                created_by=user if getattr(user, "is_authenticated", False) else None,
            )
            sweep.stacks.add(stack)
            run, created = evidence.run_for(user, stack, scenario_name, document, 1, sweep)
            if created:
                new_runs.append(run.pk)
        if new_runs:
            evidence.queue_group(user, new_runs)
    return sweep
