"""Plotly figures (as plain JSON dicts) for simulation evidence. Rendered by plotly.js served from
the app itself. Input is a stored SimulationRun: `metrics` (scheduler_core SimulationResult minus
its time series) and `timeseries` (its `time_series`)."""

from __future__ import annotations

from typing import Any

LAYOUT = {"margin": {"l": 60, "r": 20, "t": 40, "b": 90}, "height": 360, "legend": {"orientation": "h", "y": -0.3}}


def _figure(title: str, data: list[dict], x_title: str, y_title: str, x_from_zero: bool = False, **layout: Any) -> dict:
    xaxis: dict[str, Any] = {"title": {"text": x_title}}
    if x_from_zero:
        xaxis["rangemode"] = "nonnegative"
    return {
        "data": data,
        "layout": {**LAYOUT, "title": {"text": title}, "xaxis": xaxis, "yaxis": {"title": {"text": y_title}}, **layout},
    }


def _chart(run_key: str, name: str, title: str, figure: dict) -> dict:
    chart_id = f"chart-{run_key}-{name}"
    return {"id": chart_id, "data_id": f"{chart_id}-data", "title": title, "figure": figure}


def _hours(ts: list[float]) -> list[float]:
    return [round(t / 3600.0, 4) for t in ts]


def _ms_text(value: float | None) -> str:
    # A missing P99 means more than 1% of requests were never served: the tail is unbounded.
    return "unbounded" if value is None else f"{value:.1f} ms"


def latency_cdf(metrics: dict, label: str = "") -> tuple[list[dict], list[float]]:
    """Per service, the latency CDF from its reported quantiles; the P99 SLOs as vertical lines."""
    traces, slos = [], []
    for service in (metrics.get("inference") or {}).get("services", []):
        points = [tuple(p) for p in service.get("latency_cdf_ms") or []]
        if len(points) < 2:
            continue
        traces.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": f"{label}{service['name']} (P50 {_ms_text(service.get('p50_ms'))}, P99 {_ms_text(service.get('p99_ms'))})",
                "x": [p[0] for p in points],
                "y": [p[1] for p in points],
                "line": {"shape": "spline"},
            }
        )
        slos.append(service.get("slo_p99_ms"))
    return traces, [s for s in slos if s]


def _slo_shapes(slos: list[float]) -> list[dict]:
    return [
        {"type": "line", "x0": s, "x1": s, "y0": 0, "y1": 1, "yref": "paper", "line": {"dash": "dash", "color": "#b3261e"}}
        for s in sorted(set(slos))
    ]


def run_charts(run) -> list[dict]:
    metrics = run.metrics or {}
    series = run.timeseries or {}
    key = str(run.pk)
    charts = []
    traces, slos = latency_cdf(metrics)
    if traces:
        charts.append(
            _chart(key, "latency", "Inference latency CDF (dashed: P99 SLO)",
                   _figure("Inference latency CDF", traces, "latency (ms)", "fraction of requests", shapes=_slo_shapes(slos)))
        )
    t = _hours(series.get("t", []))
    if t:
        charts.append(
            _chart(key, "util", "Allocated and effective GPUs over time",
                   _figure("Utilisation", [
                       {"type": "scatter", "mode": "lines", "name": "allocated GPUs", "x": t, "y": series.get("allocated_gpus", [])},
                       {"type": "scatter", "mode": "lines", "name": "effective GPUs", "x": t, "y": series.get("effective_gpus", [])},
                       {"type": "scatter", "mode": "lines", "name": "stranded GPUs", "x": t, "y": series.get("stranded_gpus", [])},
                   ], "hours", "GPU-equivalents"))
        )
        charts.append(
            _chart(key, "pending", "Pending pods and queued workloads over time",
                   _figure("Queue", [
                       {"type": "scatter", "mode": "lines", "name": "pending pods", "x": t, "y": series.get("pending_pods", [])},
                       {"type": "scatter", "mode": "lines", "name": "waiting workloads", "x": t, "y": series.get("waiting_workloads", [])},
                       {"type": "scatter", "mode": "lines", "name": "GPUs held by partial gangs", "x": t, "y": series.get("partial_gang_gpus", [])},
                   ], "hours", "count"))
        )
        tenants = series.get("tenant_allocated_gpus") or {}
        if tenants:
            charts.append(
                _chart(key, "tenants", "Per-tenant allocated GPUs over time",
                       _figure("Per-tenant share", [
                           {"type": "scatter", "mode": "lines", "stackgroup": "one", "name": name, "x": t, "y": values}
                           for name, values in sorted(tenants.items())
                       ], "hours", "GPUs"))
            )
    waits = [w["queue_wait"] / 60.0 for w in metrics.get("workloads", []) if w.get("queue_wait") is not None]
    if waits:
        charts.append(
            _chart(key, "wait", "Queue-wait distribution",
                   _figure("Queue wait", [{"type": "histogram", "x": waits, "name": "workloads", "xbins": {"start": 0}}],
                           "minutes", "workloads", x_from_zero=True))
        )
    fairness = (metrics.get("fairness") or {}).get("tenants", [])
    if fairness:
        names = [t["name"] for t in fairness]
        charts.append(
            _chart(key, "share", f"Per-tenant GPU-hours against the fair share (Jain {metrics['fairness'].get('jain_index')})",
                   _figure("Tenant share", [
                       {"type": "bar", "name": "received", "x": names, "y": [t["gpu_hours"] for t in fairness]},
                       {"type": "bar", "name": "fair share", "x": names, "y": [t["fair_gpu_hours"] for t in fairness]},
                   ], "tenant", "GPU-hours", barmode="group"))
        )
    return charts


def comparison_charts(runs: list) -> list[dict]:
    """Overlaid charts of several runs (one per stack) on the same scenario."""
    key = "cmp"
    charts = []
    util, pending, cdf, slos = [], [], [], []
    for run in runs:
        label = run.stack.name if run.stack else f"run {run.pk}"
        series = run.timeseries or {}
        t = _hours(series.get("t", []))
        util.append({"type": "scatter", "mode": "lines", "name": f"{label}: effective", "x": t, "y": series.get("effective_gpus", [])})
        pending.append({"type": "scatter", "mode": "lines", "name": label, "x": t, "y": series.get("pending_pods", [])})
        traces, run_slos = latency_cdf(run.metrics or {}, label=f"{label}: ")
        cdf += traces
        slos += run_slos
    if cdf:
        charts.append(_chart(key, "latency", "Inference latency CDF by stack",
                             _figure("Latency", cdf, "latency (ms)", "fraction of requests", shapes=_slo_shapes(slos))))
    charts.append(_chart(key, "util", "Effective GPUs by stack", _figure("Effective utilisation", util, "hours", "GPU-equivalents")))
    charts.append(_chart(key, "pending", "Pending pods by stack", _figure("Pending pods", pending, "hours", "pods")))
    return charts
