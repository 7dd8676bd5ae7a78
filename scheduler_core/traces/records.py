"""Plain records the trace readers produce and the replayers consume.

They are slotted dataclasses rather than pydantic models on purpose: a trace
has thousands of rows and the replay loops read these attributes millions of
times, so validation happens once, in :mod:`scheduler_core.traces.csvio`,
and the records themselves are cheap immutable tuples-with-names.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["TraceJob", "TraceNode", "MILLI"]

#: One whole GPU in milli-GPU units (the Alibaba trace's ``gpu_milli`` scale).
MILLI = 1000


@dataclass(frozen=True, slots=True)
class TraceJob:
    """One job (Philly) or pod (Alibaba) of a trace.

    :ivar index: position after sorting by ``(submit_s, file order)``; job
        ``index`` is also its FIFO rank.
    :ivar job_id: the trace's own id (``job_id`` / ``name``), or the row number.
    :ivar submit_s: arrival, seconds from the trace start.
    :ivar num_gpus: number of GPU devices it needs at once (0 = CPU-only pod).
    :ivar gpu_milli: share of *each* of those GPUs, 1..1000 (1000 = whole GPU).
    :ivar gpu_mem_mib: GPU memory per GPU in MiB, or ``None`` when the trace
        gives none (then memory is charged in proportion to ``gpu_milli``).
    :ivar duration_s: run time when it has its whole request, or ``None``.
    :ivar tenant: owner (``"default"`` when the trace has no such column).
    :ivar priority_class: e.g. Alibaba's ``qos`` (``LS``, ``BE``...).
    :ivar cpu_milli: CPU request in milli-cores (0 when absent).
    :ivar mem_mib: host memory request in MiB (0 when absent).
    :ivar gpu_spec: GPU models it may run on; empty means any.
    :ivar steps: training steps (Gavel's ``total_steps``), or ``None``; the
        Gavel-compatible replay runs ``steps / duration_s`` steps per second.
    :ivar job_type: model and batch size (Gavel's ``job_type``), or ``""``;
        the Gavel-compatible replay gives jobs of one type and GPU count one rate.
    :ivar line: line of the source CSV (0 for generated jobs), for messages.
    """

    index: int
    job_id: str
    submit_s: float
    num_gpus: int
    gpu_milli: int
    duration_s: float | None = None
    gpu_mem_mib: int | None = None
    tenant: str = "default"
    priority_class: str = ""
    cpu_milli: int = 0
    mem_mib: int = 0
    gpu_spec: tuple[str, ...] = field(default=())
    steps: int | None = None
    job_type: str = ""
    line: int = 0

    @property
    def gpu_demand(self) -> float:
        """GPUs asked for, as a fraction (e.g. 0.47 or 4.0)."""
        return self.num_gpus * self.gpu_milli / MILLI

    @property
    def is_whole_gpu(self) -> bool:
        return self.num_gpus > 0 and self.gpu_milli == MILLI


@dataclass(frozen=True, slots=True)
class TraceNode:
    """One node of a GPU-sharing cluster (Alibaba ``openb_node_list``)."""

    name: str
    num_gpus: int
    model: str
    gpu_mem_mib: int
    cpu_milli: int
    mem_mib: int
    line: int = 0
