"""Trace replay: real cluster traces (Philly via Gavel, Alibaba GPU-sharing 2023) and any CSV.

* :func:`load_jobs` / :func:`load_nodes` read CSV through a :class:`ColumnMap`
  (built in: ``philly``, ``alibaba``, ``generic``); bad input raises
  :class:`TraceError` naming file, line and column.
* :func:`replay_whole_gpu` -- FIFO or least-attained-service on a whole-GPU pool.
* :func:`replay_sharing` -- HAMi-style binpack/spread GPU sharing with the
  fragmentation measure after every pod.
* :func:`replay_fgd` -- the FGD paper's experiment (Weng et al., ATC '23): its fragmentation
  measure, FGD and the paper's baselines, load inflated to 130% of capacity
  (:mod:`scheduler_core.traces.fgd`; CLI ``python -m scheduler_core.traces fgd ...``).
* :func:`replay_trace` -- both, from a path; :func:`result_json` gives the
  canonical JSON.  CLI: ``python -m scheduler_core.traces replay ...``.

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
from scheduler_core.traces.fgd import FGD_POLICIES, FgdCluster, FgdResult, TargetWorkload, replay_fgd
from scheduler_core.traces.records import MILLI, TraceJob, TraceNode
from scheduler_core.traces.replay import POLICIES, default_node_list, replay_trace, result_json
from scheduler_core.traces.sharing import (
    SharingCluster,
    SharingConfig,
    SharingResult,
    TypicalPods,
    replay_sharing,
)
from scheduler_core.traces.synthetic import synthetic_sharing_trace, synthetic_whole_gpu_jobs
from scheduler_core.traces.whole_gpu import WholeGpuConfig, WholeGpuResult, replay_whole_gpu

__all__ = [
    "FGD_POLICIES",
    "FORMATS",
    "GPU_MEMORY_MIB",
    "MILLI",
    "POLICIES",
    "ColumnMap",
    "FgdCluster",
    "FgdResult",
    "NodeColumnMap",
    "SharingCluster",
    "SharingConfig",
    "SharingResult",
    "TargetWorkload",
    "TraceError",
    "TraceJob",
    "TraceNode",
    "TypicalPods",
    "WholeGpuConfig",
    "WholeGpuResult",
    "default_node_list",
    "load_jobs",
    "load_nodes",
    "replay_fgd",
    "replay_sharing",
    "replay_trace",
    "replay_whole_gpu",
    "result_json",
    "synthetic_sharing_trace",
    "synthetic_whole_gpu_jobs",
    "uniform_nodes",
]
