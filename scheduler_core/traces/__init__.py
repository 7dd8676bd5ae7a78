"""Trace replay: real cluster traces (Philly via Gavel, Alibaba GPU-sharing 2023) and any CSV.

No Django, no Celery.  See ``docs/simulator-model.md`` ("Trace replay").
"""

from scheduler_core.traces.csvio import (
    FORMATS,
    GPU_MEMORY_MIB,
    ColumnMap,
    NodeColumnMap,
    TraceError,
    load_jobs,
    load_nodes,
    uniform_nodes,
)
from scheduler_core.traces.records import MILLI, TraceJob, TraceNode
from scheduler_core.traces.whole_gpu import WholeGpuConfig, WholeGpuResult, replay_whole_gpu

__all__ = [
    "FORMATS",
    "GPU_MEMORY_MIB",
    "MILLI",
    "ColumnMap",
    "NodeColumnMap",
    "TraceError",
    "TraceJob",
    "TraceNode",
    "WholeGpuConfig",
    "WholeGpuResult",
    "load_jobs",
    "load_nodes",
    "replay_whole_gpu",
    "uniform_nodes",
]
