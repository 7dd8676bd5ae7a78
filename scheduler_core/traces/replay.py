"""One entry point for both kinds of replay, used by the CLI and the benchmarks."""

from __future__ import annotations

import json
import os
from typing import Any

from scheduler_core.traces.csvio import load_jobs, load_nodes, uniform_nodes
from scheduler_core.traces.sharing import SharingConfig, SharingResult, replay_sharing
from scheduler_core.traces.whole_gpu import WholeGpuConfig, WholeGpuResult, replay_whole_gpu

__all__ = ["POLICIES", "default_node_list", "replay_trace", "result_json"]

#: Policy name -> kind of replay.
POLICIES = {"fifo": "whole_gpu", "las": "whole_gpu", "binpack": "sharing", "spread": "sharing"}

_ALIBABA_NODE_LIST = "openb_node_list_gpu_node.csv"


def default_node_list(trace: str | os.PathLike) -> str | None:
    """The Alibaba node list next to a pod list, if there is one."""
    cand = os.path.join(os.path.dirname(os.fspath(trace)) or ".", _ALIBABA_NODE_LIST)
    return cand if os.path.exists(cand) else None


def replay_trace(
    trace: str | os.PathLike,
    fmt: str,
    policy: str,
    *,
    nodes: str | os.PathLike | None = None,
    servers: int | None = None,
    gpus_per_server: int | None = None,
    gpu_model: str = "A100-80GB",
    **options: Any,
) -> WholeGpuResult | SharingResult:
    """Read ``trace`` in format ``fmt`` and replay it under ``policy``.

    * ``fifo``/``las``: whole-GPU pool of ``servers x gpus_per_server``
      (default 12 x 8, the Philly-Gavel reference pool).
    * ``binpack``/``spread``: GPU sharing on the node list ``nodes`` (for the
      ``alibaba`` format, the ``openb_node_list_gpu_node.csv`` next to the
      trace is used when ``nodes`` is not given), or on a uniform pool of
      ``servers x gpus_per_server`` ``gpu_model`` GPUs.

    ``options`` are fields of :class:`WholeGpuConfig` / :class:`SharingConfig`.
    """
    kind = POLICIES.get(policy)
    if kind is None:
        raise ValueError(f"unknown policy {policy!r}; choose one of {', '.join(POLICIES)}")
    if kind == "whole_gpu":
        jobs = load_jobs(trace, fmt, require_duration=True)
        pool = {}
        if servers is not None:
            pool["servers"] = servers
        if gpus_per_server is not None:
            pool["gpus_per_server"] = gpus_per_server
        cfg = WholeGpuConfig(policy=policy, **pool, **options)
        return replay_whole_gpu(jobs, cfg)
    pods = load_jobs(trace, fmt)
    if nodes is None and servers is None and fmt == "alibaba":
        nodes = default_node_list(trace)
    if nodes is not None:
        node_list = load_nodes(nodes)
    elif servers is not None:
        node_list = uniform_nodes(servers, gpus_per_server or 8, gpu_model)
    else:
        raise ValueError(
            f"{policy} needs a node list: pass nodes=PATH (--nodes) or servers=N (--servers)"
        )
    return replay_sharing(pods, node_list, SharingConfig(policy=policy, **options))


def result_json(result: WholeGpuResult | SharingResult) -> str:
    """Canonical JSON of a result: sorted keys, so the same run gives the same bytes."""
    return json.dumps(result.to_dict(), sort_keys=True, indent=1, allow_nan=False) + "\n"
