"""Compose, step 0: which pools the request asks for, and the workload class each one serves.

With workload classes, one pool per class: its GPUs are the class's demand (replicas x GPUs per
replica; shares packed onto whole GPUs), or the given pool's GPUs split by demand. With only a
profile, the profile's pool templates (narrowed by the SLO's isolation) carry its preset classes.
Bad workload input (a replica larger than any node or GPU) is a `RulesInputError` naming the field.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from placement.rules.data import Isolation, ProfileRule, RulesData
from placement.rules.errors import RulesInputError
from placement.rules.models import ComposeRequest, Pool, Slo
from placement.rules.workloads import WorkloadClass, WorkloadKind


@dataclass(frozen=True)
class PoolSpec:
    name: str
    accepts: tuple[Isolation, ...]
    gpus: int
    serves: str
    workload: WorkloadClass | None = None


# The profile whose preferences score a request that names only workload classes.
KIND_PROFILE = {
    WorkloadKind.TRAINING: "training",
    WorkloadKind.ONLINE_INFERENCE: "online_inference",
    WorkloadKind.BATCH_INFERENCE: "batch_inference",
    WorkloadKind.INTERACTIVE: "interactive",
}
MIXED_PROFILE = "mixed"
# Kinds whose replicas form one job that may be admitted with fewer (Kueue partial admission of a Job's
# parallelism, a PodGroup's minMember/minAvailable below its pods): batch jobs, not services.
ELASTIC_KINDS = (WorkloadKind.TRAINING, WorkloadKind.BATCH_INFERENCE)


def profile_for(request: ComposeRequest) -> str | None:
    if request.profile:
        return request.profile
    kinds = {w.kind for w in request.workloads}
    if not kinds:
        return None
    return KIND_PROFILE[kinds.pop()] if len(kinds) == 1 else MIXED_PROFILE


def check_workloads(rules: RulesData, workloads: list[WorkloadClass], pool: Pool) -> dict[str, list[str]]:
    """Field errors for classes no pool could ever run: too many GPUs for a node, memory above the GPU."""
    errors: dict[str, list[str]] = {}
    names = [w.name for w in workloads]
    if len(set(names)) != len(names):
        errors["workloads"] = ["Workload class names repeat; each names its own pool."]
    model = rules.gpu_model(pool.gpu_model)
    biggest = model or rules.largest_gpu
    for i, w in enumerate(workloads):
        if w.gpus_per_replica > rules.max_gpus_per_node:
            errors[f"workloads[{i}].gpus_per_replica"] = [
                f"{w.gpus_per_replica:g} GPUs per replica: a replica is one pod on one node, and nodes carry at most "
                f"{rules.max_gpus_per_node} GPUs ({rules.max_gpus_per_node_source})"
            ]
        if w.gpu_memory_gib > biggest.memory_gb:
            where = f"the pool's {model.model}" if model else f"any GPU model known (largest: {biggest.model})"
            errors[f"workloads[{i}].gpu_memory_gib"] = [
                f"{w.gpu_memory_gib:g} GiB per GPU is above the {biggest.memory_gb} GB of {where}; split the model "
                f"over more GPUs per replica (tensor parallelism) instead"
            ]
        if w.min_replicas is not None and w.min_replicas > w.replicas:
            errors[f"workloads[{i}].min_replicas"] = [
                f"min_replicas {w.min_replicas} is above replicas {w.replicas}: replicas is the most an elastic job grows to"
            ]
        elif w.min_replicas is not None and w.kind not in ELASTIC_KINDS:
            errors[f"workloads[{i}].min_replicas"] = [
                f"Elastic jobs are {' or '.join(k.value for k in ELASTIC_KINDS)} classes; a {w.kind.value} class's replica "
                f"range is autoscaling, not a job admitted partially"
            ]
    return errors


def _serves(w: WorkloadClass) -> str:
    per = f"{w.gpus_per_replica:g} GPU share" if w.shares_a_gpu else f"{w.whole_gpus} GPU{'s' if w.whole_gpus > 1 else ''}"
    extra = [x for x, on in (("gang", w.gang), ("peer-to-peer", w.peer_to_peer)) if on]
    if w.elastic:
        extra.append(f"elastic from {w.min_replicas} replicas")
    if w.p99_ms:
        extra.append(f"P99 {w.p99_ms:g} ms")
    return (f"{w.name}: {w.replicas} x {per}, {w.gpu_memory_gib:g} GiB per GPU ({w.kind.value}"
            + (", " + ", ".join(extra) if extra else "") + ")")


def _demand(w: WorkloadClass) -> int:
    return max(1, math.ceil(w.replicas * w.gpus_per_replica))


def class_pools(request: ComposeRequest, pool: Pool, slo: Slo, rules: RulesData, notes: list[str]) -> tuple[list[PoolSpec], Pool]:
    """One pool per workload class of the request (`pool`: the request's pool, MIG capability resolved)."""
    accepts = tuple(rules.isolation_accepts[slo.isolation])
    demand = [_demand(w) for w in request.workloads]
    if "pool" in request.model_fields_set and "gpu_count" in request.pool.model_fields_set:
        total = pool.gpu_count
        if total < len(demand):
            raise RulesInputError({"pool.gpu_count": [f"{total} GPU(s) cannot hold {len(demand)} workload pools (one per class)."]})
        counts = [max(1, int(total * d / sum(demand))) for d in demand]
        counts[demand.index(max(demand))] += total - sum(counts)
        if sum(demand) > total:
            notes.append(f"The classes ask for {sum(demand)} GPUs at once; the pool has {total}: work queues for its turn.")
    else:
        counts = demand
        pool = pool.model_copy(update={"gpu_count": sum(demand)})
        notes.append(f"Pool size derived from the workload classes: {sum(demand)} {pool.gpu_model} GPUs.")
    return [PoolSpec(w.name, accepts, n, _serves(w), w) for w, n in zip(request.workloads, counts)], pool


def template_pools(profile: ProfileRule, slo: Slo, pool: Pool, rules: RulesData, notes: list[str],
                   teams: list[str] | None = None) -> list[PoolSpec]:
    """The profile's pool templates narrowed by the SLO's isolation, each with its preset class
    (submitted by `teams` when the request declares teams shared by every class)."""
    slo_accepts = rules.isolation_accepts[slo.isolation]
    templates, dropped = [], []
    for t in profile.pools:
        accepts = tuple(slo_accepts) if t.accepts == "from_slo" else tuple(a for a in t.accepts if a in slo_accepts)
        if not accepts:
            dropped.append(t)
            continue
        templates.append((t, accepts))
    for t in dropped if templates else ():
        notes.append(
            f"Pool {t.name!r} ({'/'.join(t.accepts)} isolation) dropped: the SLO asks for {slo.isolation.value} "
            f"isolation, so its work ({t.serves[0].lower()}{t.serves[1:]}) goes to the remaining pools."
        )
    if not templates:
        first = profile.pools[0]
        notes.append(
            f"No pool of this profile allows {slo.isolation.value} isolation "
            f"({', '.join(f'{t.name!r}: ' + '/'.join(t.accepts) for t in dropped)}): one pool, {first.name!r}, "
            f"takes all {pool.gpu_count} GPU(s) at {slo.isolation.value} isolation."
        )
        templates = [(first, tuple(slo_accepts))]
    if len(templates) > pool.gpu_count:
        for t, _ in templates[pool.gpu_count :]:
            notes.append(f"Pool {t.name!r} dropped: {pool.gpu_count} GPU(s) cannot be split into {len(templates)} pools.")
        templates = templates[: pool.gpu_count]
    total_share = sum(t.share for t, _ in templates)
    counts = [max(1, int(pool.gpu_count * t.share / total_share)) for t, _ in templates]
    counts[0] += pool.gpu_count - sum(counts)
    shared = {"tenants": tuple(teams)} if teams is not None else {}
    preset = {w.pool: WorkloadClass(**{**w.model_dump(exclude={"pool"}), **shared}) for w in profile.workloads}
    return [PoolSpec(t.name, accepts, n, t.serves, preset.get(t.name)) for (t, accepts), n in zip(templates, counts)]
