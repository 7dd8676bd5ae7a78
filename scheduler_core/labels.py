"""Human labels and units for result metrics, and the headline that leads with each failure.

Works on the JSON form of a :class:`~scheduler_core.metrics.SimulationResult` (what the web app
stores), so a page shows "Horizon 12 h" instead of ``horizon 43200.0000`` and an unbounded P99 as
"unbounded (overloaded)" instead of a blank.
"""

from __future__ import annotations

import math
from typing import Any

UNBOUNDED = "unbounded (overloaded)"
NO_TRAFFIC = "no traffic in the scenario: set arrival_rate to measure latency"

SECTIONS = {
    "jobs": "Jobs", "gangs": "Gangs", "utilisation": "Utilisation", "inference": "Inference",
    "oom": "OOM", "faults": "Faults", "preemption": "Preemption", "fairness": "Fairness",
    "admission_errors": "Admission errors", "reconfiguration": "MIG reconfiguration",
    "queue_wait": "queue wait", "completion_time": "completion time", "topology_factor": "step-time factor",
    "by_reason": "by reason", "kills_by_workload": "kills by workload",
}

# Exact labels where the field name alone would mislead or is jargon.
LABELS = {
    "horizon": "Horizon",
    "seed": "Seed",
    "jobs.makespan": "Jobs · makespan (horizon if a job failed or is unfinished)",
    "utilisation.allocated": "Utilisation · GPUs allocated",
    "utilisation.effective": "Utilisation · useful work",
    "utilisation.stranded_gpus_mean": "Utilisation · stranded GPUs (mean)",
    "utilisation.fragmentation_mean": "Utilisation · free capacity no waiting job fits",
    "gangs.partial_start_gpu_hours": "GPU-hours held by partial gangs",
    "oom.collateral_kills": "Collateral OOM kills (killed without exceeding anything)",
    "fairness.jain_index": "Jain's fairness index (tenants with demand)",
    "inference.p50_ms": "Inference · P50 latency",
    "inference.p99_ms": "Inference · P99 latency",
    "inference.slo_violation_fraction": "Inference · requests over SLO or unserved",
    "inference.services_missing_slo": "Inference · services missing their SLO",
}

_DURATION_KEYS = ("queue_wait", "completion_time", "makespan", "horizon")
_FRACTIONS = ("allocated", "effective", "fragmentation_mean", "slo_violation_fraction", "violation_fraction")


def label(name: str) -> str:
    if name in LABELS:
        return LABELS[name]
    *path, leaf = name.split(".")
    parts = [SECTIONS.get(p, p.replace("_", " ")) for p in path] + [leaf.replace("_", " ")]
    text = " · ".join(parts).replace("gpu hours", "GPU-hours").replace("gpus", "GPUs")
    return text[:1].upper() + text[1:]


def _num(x: float) -> str:
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.4g}"


def _duration(seconds: float) -> str:
    if abs(seconds) >= 3600:
        return f"{_num(round(seconds / 3600, 2))} h"
    if abs(seconds) >= 60:
        return f"{_num(round(seconds / 60, 1))} min"
    return f"{_num(round(seconds, 2))} s"


def unit_of(name: str) -> str:
    last = name.rsplit(".", 1)[-1]
    if name == "seed" or last in ("n", "count"):
        return ""
    if last.endswith("_ms"):
        return "ms"
    if last.endswith("_seconds") or any(k in name.split(".") for k in _DURATION_KEYS):
        return "duration"
    if "gpu_hours" in last:
        return "GPU-h"
    if last in _FRACTIONS:
        return "%"
    return ""


def format_value(name: str, value: Any) -> str:
    """A metric value in its unit; ``None`` P99s read as unbounded."""
    if value is None:
        return UNBOUNDED if name.endswith("p99_ms") else "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        return str(value)
    unit = unit_of(name)
    if unit == "duration":
        return _duration(float(value))
    if unit == "%":
        return f"{_num(round(value * 100, 2))}%"
    if unit in ("ms", "GPU-h"):
        return f"{_num(round(value, 2))} {unit}"
    return _num(round(value, 4))


def flatten(metrics: dict | None, prefix: str = "") -> list[tuple[str, Any]]:
    """Scalar leaves (numbers, booleans and None) as dotted names, in document order."""
    out: list[tuple[str, Any]] = []
    if not isinstance(metrics, dict):
        return out
    for key, value in metrics.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.extend(flatten(value, f"{name}."))
        elif value is None or isinstance(value, (bool, int, float)):
            out.append((name, value))
    return out


def service_rows(metrics: dict) -> list[tuple[str, str]]:
    rows = []
    for s in (metrics.get("inference") or {}).get("services") or []:
        if s.get("no_traffic"):
            rows.append((f"Service {s.get('name')} · P99 latency (objective {_num(s.get('slo_p99_ms', 0))} ms)",
                         NO_TRAFFIC))
            continue
        p99 = format_value("p99_ms", s.get("p99_ms"))
        met = "SLO met" if s.get("slo_met") else "SLO missed"
        rows.append((f"Service {s.get('name')} · P99 latency (objective {_num(s.get('slo_p99_ms', 0))} ms)",
                     f"{p99} · {met}"))
        if s.get("unserved_requests"):
            rows.append((f"Service {s.get('name')} · requests unserved (no replica running)",
                         _num(round(s["unserved_requests"]))))
    return rows


def headline(metrics: dict) -> list[tuple[str, str, bool]]:
    """(label, value, shows a failure) for the metrics that expose each failure story, failures first."""
    jobs = metrics.get("jobs") or {}
    inf = metrics.get("inference") or {}
    rows: list[tuple[str, str, bool]] = []
    submitted = jobs.get("submitted") or 0
    if submitted:
        left = submitted - (jobs.get("completed") or 0)
        rows.append(("Jobs not completed", f"{left} of {submitted} ({jobs.get('failed', 0)} failed)", left > 0))
    oom = metrics.get("oom") or {}
    rows.append((LABELS["oom.collateral_kills"], _num(oom.get("collateral_kills", 0)), oom.get("collateral_kills", 0) > 0))
    partial = (metrics.get("gangs") or {}).get("partial_start_gpu_hours", 0) or 0
    rows.append((LABELS["gangs.partial_start_gpu_hours"], format_value("x.partial_start_gpu_hours", partial),
                 partial > 0))
    if inf.get("services"):
        idle = inf.get("services_without_traffic", 0)
        judged = len(inf["services"]) - idle
        if judged:
            missing = inf.get("services_missing_slo", 0)
            rows.append((LABELS["inference.services_missing_slo"], f"{missing} of {judged}", missing > 0))
        if idle:
            rows.append(("Inference · services without traffic (latency not judged)", f"{idle} of {len(inf['services'])}", False))
    adm = (metrics.get("admission_errors") or {}).get("total", 0)
    rows.append(("Admission errors (pods the kubelet rejected)", _num(adm), adm > 0))
    factor = ((metrics.get("gangs") or {}).get("topology_factor") or {}).get("max")
    if factor:
        rows.append(("Worst all-reduce step-time factor (1 = ideal placement)", _num(round(factor, 3)), factor > 1.2))
    jain = (metrics.get("fairness") or {}).get("jain_index")
    if jain is not None:
        rows.append((LABELS["fairness.jain_index"], _num(round(jain, 3)), jain < 0.9))
    return sorted(rows, key=lambda r: not r[2])


def metric_rows(metrics: dict | None) -> list[tuple[str, str, str]]:
    """(label, value with unit, dotted name) for every scalar metric, then one row per service."""
    if not isinstance(metrics, dict):
        return []
    silent = not (metrics.get("inference") or {}).get("requests")
    rows = [(label(n), NO_TRAFFIC if silent and v is None and n.startswith("inference.") else format_value(n, v), n)
            for n, v in flatten(metrics)]
    rows.extend((lbl, val, "inference.services") for lbl, val in service_rows(metrics))
    return rows
