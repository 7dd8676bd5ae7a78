"""Read an evidence ranking back: per stack the rules rank and score next to what its run measured,
the order by evidence, and where rules and evidence disagree (with the metric that decided)."""

from __future__ import annotations

from functools import cmp_to_key

from placement.evidence.models import EvaluationCandidate, SimulationRun, Sweep

# Evidence order: the first metric that differs by more than its tolerance decides between two
# stacks. SLO attainment first (what users feel), then OOM kills, starved tenants, queue wait,
# utilisation (what the platform pays for).
METRICS = (
    ("slo_attainment", "SLO attainment", "higher", 0.005),
    ("oom_kills", "OOM kills", "lower", 0),
    ("starved_tenants", "starved tenants", "lower", 0),
    ("queue_wait_p95_s", "queue wait P95", "lower", 60.0),
    ("utilisation", "effective utilisation", "higher", 0.01),
)
STARVED_SHARE = 0.5  # a tenant that got less than half its fair GPU-hours is starved
# One line per column of the evidence page, shown beside the table.
DEFINITIONS = {
    "SLO attainment": "share of inference requests served within their P99 target (n/a without inference traffic)",
    "P99 vs target": "the slowest service's 99th-percentile latency against the tightest target of the request",
    "OOM kills": "pods killed for memory, their own overruns and the collateral kills of shared cards",
    "Utilisation": "useful GPU work over the pool's GPU-time (allocated but idle or slowed GPUs do not count)",
    "Queue wait P95": "95th percentile of the time a job waited from submission to start",
    "Starved tenants": f"tenants that received less than {STARVED_SHARE:.0%} of their fair GPU-hours",
}
EVALUATION_PREFIX = "Evidence ranking"  # the sweep name of an evidence ranking
OWN_PLANS = "each stack's own plan"  # the scenario name of a ranking that runs each stack's own plan


def run_figures(metrics: dict | None) -> dict:
    m = metrics or {}
    inference = m.get("inference") or {}
    fairness = m.get("fairness") or {}
    jobs = m.get("jobs") or {}
    requests = inference.get("requests") or 0
    return {
        "slo_attainment": round(1 - (inference.get("slo_violation_fraction") or 0.0), 4) if requests else None,
        "p99_ms": inference.get("p99_ms"),
        "oom_kills": (m.get("oom") or {}).get("kills", 0),
        "utilisation": (m.get("utilisation") or {}).get("effective"),
        "queue_wait_p95_s": (jobs.get("queue_wait") or {}).get("p95"),
        "starved_tenants": sorted(t["name"] for t in fairness.get("tenants", []) or []
                                  if t.get("fair_gpu_hours") and (t.get("share_ratio") or 0) < STARVED_SHARE),
    }


def _value(fig: dict, key: str):
    value = fig.get(key)
    return len(value) if isinstance(value, list) else value


def deciding_metric(a: dict, b: dict) -> tuple[int, str | None]:
    """(-1 if a is better, 1 if b is, 0 if equal on every metric; the metric that decided)."""
    for key, label, better, tolerance in METRICS:
        va, vb = _value(a, key), _value(b, key)
        if va is None or vb is None or abs(va - vb) <= tolerance:
            continue
        a_better = va > vb if better == "higher" else va < vb
        return (-1 if a_better else 1), label
    return 0, None


def _entries(sweep: Sweep) -> tuple[list[dict], dict]:
    """(per candidate: composition, run, saved stack id, candidate id; the request it answers). Rankings
    made before candidates were kept read their auto-saved stacks the same way."""
    candidates = list(EvaluationCandidate.objects.filter(sweep=sweep).select_related("run").defer(
        "run__scenario", "run__timeseries"))
    if candidates:
        return [{"composition": c.composition or {}, "title": c.title, "run": c.run, "stack_id": c.saved_stack_id,
                 "candidate_id": c.pk} for c in candidates], sweep.request or {}
    stacks = list(sweep.stacks.all())
    runs = {r.stack_id: r for r in SimulationRun.objects.filter(sweep=sweep).defer("scenario", "timeseries")}
    request = sweep.request or next((s.request for s in stacks if s.request), {}) or {}
    return [{"composition": s.composition or {}, "title": (s.composition or {}).get("title", s.name), "run": runs.get(s.pk),
             "stack_id": s.pk, "candidate_id": None} for s in stacks], request


def evaluation_summary(sweep: Sweep) -> dict:
    entries, request = _entries(sweep)
    rows = []
    for entry in entries:
        run, composition = entry["run"], entry["composition"]
        rows.append({
            "stack_id": entry["stack_id"], "candidate_id": entry["candidate_id"], "saved": entry["stack_id"] is not None,
            "title": composition.get("title", entry["title"]), "rules_rank": composition.get("rank"),
            "rules_score": composition.get("score"), "run_id": run.pk if run else None,
            "status": run.status if run else "missing", "progress": run.progress if run else 0.0,
            "error": run.error if run else "",
            "figures": run_figures(run.metrics) if run and run.status == SimulationRun.SUCCEEDED else None,
            "p99_target_ms": _p99_target(request),
        })
    rows.sort(key=lambda r: r["rules_rank"] or 0)
    done = [r for r in rows if r["figures"] is not None]
    finished = all(r["status"] in (SimulationRun.SUCCEEDED, SimulationRun.FAILED) for r in rows)
    progress = sum(r["progress"] if r["status"] != SimulationRun.SUCCEEDED else 1.0 for r in rows) / max(1, len(rows))
    if finished and done:
        ordered = sorted(done, key=cmp_to_key(lambda a, b: deciding_metric(a["figures"], b["figures"])[0] or
                                              (a["rules_rank"] - b["rules_rank"])))
        for i, row in enumerate(ordered):
            row["evidence_rank"] = i + 1
        for row in done:  # a disagreement: evidence puts a stack above one the rules ranked higher
            beaten = [o for o in done if o["rules_rank"] < row["rules_rank"] and o["evidence_rank"] > row["evidence_rank"]]
            if beaten:
                top = min(beaten, key=lambda o: o["rules_rank"])
                _, metric = deciding_metric(row["figures"], top["figures"])
                row["disagreement"] = (f"Evidence ranks it above rules #{top['rules_rank']} ({top['title']}): "
                                       f"{metric} decided.")
    # Best first once ranked: the evidence order, then the stacks still running or failed by rules rank.
    rows.sort(key=lambda r: (r.get("evidence_rank") is None, r.get("evidence_rank") or 0, r["rules_rank"] or 0))
    winner = next((r for r in rows if r.get("evidence_rank") == 1), None)
    # stacks the evidence cannot tell from the winner: the rules rank ordered them
    tied = [r["rules_rank"] for r in done if r is not winner and winner and deciding_metric(r["figures"], winner["figures"])[0] == 0]
    return {"id": sweep.pk, "name": sweep.name, "title": _title(sweep, request), "scenario": sweep.scenario_name,
            "own_plans": sweep.scenario_name == OWN_PLANS, "tied_with_winner": sorted(tied),
            "all_tied": bool(winner) and len(done) > 1 and len(tied) == len(done) - 1,
            "finished": finished, "progress": round(progress, 3), "stacks": rows, "winner": winner,
            # the saved stacks among the candidates (a person saved them), and every candidate's run
            "stack_ids": [r["stack_id"] for r in rows if r["stack_id"]], "run_ids": [r["run_id"] for r in rows if r["run_id"]],
            "request": request, "metrics_order": [label for _k, label, _b, _t in METRICS], "definitions": DEFINITIONS}


def _title(sweep: Sweep, request: dict) -> str:
    """What the ranking was for, in the request's own words: its workload classes, else its profile."""
    classes = [w.get("name") for w in request.get("workloads") or [] if w.get("name")]
    if classes:
        return f"{EVALUATION_PREFIX}: {', '.join(classes)}"
    return sweep.name


def _p99_target(request: dict) -> float | None:
    targets = [w.get("p99_ms") for w in (request or {}).get("workloads", []) if w.get("p99_ms")]
    return min(targets) if targets else None


def is_evaluation(sweep: Sweep) -> bool:
    return sweep.name.startswith(EVALUATION_PREFIX)
