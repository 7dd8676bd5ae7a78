"""Reading job/pod and node CSV files into :class:`TraceJob`/:class:`TraceNode`.

Any CSV with a header row can be read once a :class:`ColumnMap` says which of
its columns holds each canonical field.  Three maps are built in:

``philly``   Gavel's Philly export: ``job_id, submit_s, num_gpus, job_type,
             total_steps, duration_s`` (whole GPUs only).
``alibaba``  Alibaba ``cluster-trace-gpu-v2023`` pod lists: ``name,
             cpu_milli, memory_mib, num_gpu, gpu_milli, gpu_spec, qos,
             pod_phase, creation_time, deletion_time, scheduled_time``
             (duration = ``deletion_time - (scheduled_time or creation_time)``;
             the ``multigpu50`` variant has no time columns at all, so its
             rows arrive in file order, one per second).
``generic``  this project's own column names: ``job_id, submit_s, gpus,
             gpu_milli, gpu_mem_mib, duration_s, tenant, priority_class,
             cpu_milli, mem_mib, gpu_spec``.  ``gpus`` may be fractional
             (``0.25``) when there is no ``gpu_milli`` column.

Every problem is reported as :class:`TraceError` naming the file, the line
and the column, e.g. ``jobs.csv:17: column 'num_gpus': expected a whole
number >= 0, got 'two'``.
"""

from __future__ import annotations

import csv
import math
import os
import sys
from dataclasses import replace
from typing import Iterable

from pydantic import BaseModel, ConfigDict, Field

from scheduler_core.traces.records import MILLI, TraceJob, TraceNode

__all__ = [
    "ColumnMap",
    "FORMATS",
    "GPU_MEMORY_MIB",
    "NodeColumnMap",
    "TraceError",
    "load_jobs",
    "load_nodes",
    "uniform_nodes",
]


class TraceError(ValueError):
    """A trace file could not be read; the message names file, line and column."""

    def __init__(self, path: str | os.PathLike, line: int | None, column: str | None, message: str):
        self.path = os.fspath(path)
        self.line = line
        self.column = column
        self.detail = message
        where = self.path if line is None else f"{self.path}:{line}"
        col = f" column {column!r}:" if column else ""
        super().__init__(f"{where}:{col} {message}")


class ColumnMap(BaseModel):
    """Which CSV column holds each canonical job field (``None`` = not in file).

    ``gpus`` is the only column that must exist.  A mapped column that is
    missing from the header is an error unless it is listed in ``optional``
    (the known formats mark columns that some variants of a trace lack).
    """

    model_config = ConfigDict(frozen=True)

    job_id: str | None = None
    submit: str | None = Field(None, description="arrival time; None = file order, 1 s apart")
    gpus: str = Field(description="GPU devices needed; fractional allowed without gpu_milli")
    gpu_milli: str | None = Field(None, description="share of each GPU in 1/1000")
    gpu_mem_mib: str | None = None
    duration: str | None = None
    end: str | None = Field(None, description="end time; duration = end - (start or submit)")
    start: str | None = Field(None, description="actual start time, used with `end`")
    tenant: str | None = None
    priority_class: str | None = None
    cpu_milli: str | None = None
    mem_mib: str | None = None
    gpu_spec: str | None = None
    steps: str | None = Field(None, description="training steps (Gavel's total_steps); used by the gavel mode")
    job_type: str | None = Field(None, description="model and batch size (Gavel's job_type); used by the gavel mode")
    time_scale: float = Field(1.0, gt=0, description="multiply times and durations by this to get seconds")
    optional: tuple[str, ...] = ()


FORMATS: dict[str, ColumnMap] = {
    "philly": ColumnMap(job_id="job_id", submit="submit_s", gpus="num_gpus", duration="duration_s",
                        steps="total_steps", job_type="job_type", optional=("total_steps", "job_type")),
    "alibaba": ColumnMap(
        job_id="name",
        submit="creation_time",
        gpus="num_gpu",
        gpu_milli="gpu_milli",
        cpu_milli="cpu_milli",
        mem_mib="memory_mib",
        gpu_spec="gpu_spec",
        priority_class="qos",
        end="deletion_time",
        start="scheduled_time",
        optional=("creation_time", "deletion_time", "scheduled_time", "gpu_spec", "qos", "cpu_milli", "memory_mib"),
    ),
    "generic": ColumnMap(
        job_id="job_id",
        submit="submit_s",
        gpus="gpus",
        gpu_milli="gpu_milli",
        gpu_mem_mib="gpu_mem_mib",
        duration="duration_s",
        tenant="tenant",
        priority_class="priority_class",
        cpu_milli="cpu_milli",
        mem_mib="mem_mib",
        gpu_spec="gpu_spec",
        optional=(
            "job_id", "submit_s", "gpu_milli", "gpu_mem_mib", "duration_s", "tenant",
            "priority_class", "cpu_milli", "mem_mib", "gpu_spec",
        ),
    ),
}


class NodeColumnMap(BaseModel):
    """Columns of a node list (defaults: Alibaba ``openb_node_list_gpu_node.csv``)."""

    model_config = ConfigDict(frozen=True)

    name: str = "sn"
    gpus: str = "gpu"
    model: str = "model"
    cpu_milli: str = "cpu_milli"
    mem_mib: str = "memory_mib"
    gpu_mem_mib: str = "gpu_mem_mib"  # optional column; else GPU_MEMORY_MIB[model]


#: GPU memory per device (MiB) by model name, used when a node list has no
#: ``gpu_mem_mib`` column.  Public datasheet sizes.  ``G2``/``G3`` are
#: anonymised models in the Alibaba trace; 32 GiB is a named assumption.  It
#: does not affect the openb replays: their pods state no GPU memory, so
#: memory is charged in proportion to the milli-share and never binds alone.
GPU_MEMORY_MIB: dict[str, int] = {
    "T4": 16 * 1024,
    "P100": 16 * 1024,
    "V100M16": 16 * 1024,
    "V100M32": 32 * 1024,
    "A10": 24 * 1024,
    "G2": 32 * 1024,
    "G3": 32 * 1024,
    "V100": 32 * 1024,
    "A100-40GB": 40 * 1024,
    "A100-80GB": 80 * 1024,
    "H100-80GB": 80 * 1024,
}


# -- cell parsers -----------------------------------------------------------

def _num(path, line, col, raw: str, *, minimum: float = 0.0) -> float:
    try:
        v = float(raw)
    except ValueError:
        raise TraceError(path, line, col, f"expected a number, got {raw!r}") from None
    if not math.isfinite(v) or v < minimum:
        raise TraceError(path, line, col, f"expected a finite number >= {minimum:g}, got {raw!r}")
    return v


def _int(path, line, col, raw: str, *, minimum: int = 0) -> int:
    v = _num(path, line, col, raw, minimum=minimum)
    if v != int(v):
        raise TraceError(path, line, col, f"expected a whole number >= {minimum}, got {raw!r}")
    return int(v)


def _open_rows(path: str | os.PathLike) -> tuple[list[str], Iterable[tuple[int, list[str]]]]:
    """Return (header, iterator of (line, row)); raises TraceError for I/O problems."""
    try:
        fh = open(path, newline="", encoding="utf-8-sig")
    except OSError as exc:
        raise TraceError(path, None, None, f"cannot open: {exc.strerror or exc}") from None
    reader = csv.reader(fh)
    try:
        header = next(reader)
    except StopIteration:
        fh.close()
        raise TraceError(path, 1, None, "empty file, expected a header row") from None
    except (csv.Error, UnicodeDecodeError) as exc:
        fh.close()
        raise TraceError(path, 1, None, f"unreadable CSV: {exc}") from None
    header = [h.strip() for h in header]

    def rows():
        with fh:
            line = reader.line_num
            while True:
                start = line + 1
                try:
                    row = next(reader)
                except StopIteration:
                    return
                except (csv.Error, UnicodeDecodeError) as exc:
                    raise TraceError(path, start, None, f"unreadable CSV: {exc}") from None
                line = reader.line_num
                if not row or all(not c.strip() for c in row):
                    continue  # blank line
                if len(row) != len(header):
                    raise TraceError(
                        path, start, None,
                        f"expected {len(header)} fields (as in the header), found {len(row)}",
                    )
                yield start, row

    return header, rows()


def _column_index(path, header: list[str], name: str | None, optional: tuple[str, ...], required: bool = False):
    if name is None:
        if required:
            raise TraceError(path, 1, None, "the column map names no column for a required field")
        return None
    try:
        return header.index(name)
    except ValueError:
        if name in optional and not required:
            return None
        raise TraceError(
            path, 1, name, f"missing from the header (found: {', '.join(header) or 'nothing'})"
        ) from None


def _spec(raw: str) -> tuple[str, ...]:
    raw = raw.strip()
    if not raw:
        return ()
    parts = [p.strip() for p in raw.replace(",", "|").split("|")]
    return tuple(sorted({p for p in parts if p}))


def load_jobs(
    path: str | os.PathLike,
    fmt: str | ColumnMap = "generic",
    *,
    require_duration: bool = False,
    limit: int | None = None,
) -> list[TraceJob]:
    """Read a job/pod CSV into :class:`TraceJob` records sorted by arrival.

    :param fmt: ``"philly"``, ``"alibaba"``, ``"generic"`` or a :class:`ColumnMap`.
    :param require_duration: raise unless every row yields a duration
        (whole-GPU replays need one; fragmentation replays do not).
    :param limit: read only the first ``limit`` data rows.
    :returns: jobs sorted by ``(submit_s, file order)``, ``index`` = that rank.
    :raises TraceError: naming file, line and column of the first bad cell.
    """
    if isinstance(fmt, str):
        try:
            cmap = FORMATS[fmt]
        except KeyError:
            raise ValueError(f"unknown trace format {fmt!r}; known: {', '.join(sorted(FORMATS))}") from None
    else:
        cmap = fmt
    header, rows = _open_rows(path)
    opt = cmap.optional
    ix = {
        f: _column_index(path, header, getattr(cmap, f), opt, required=(f == "gpus"))
        for f in (
            "job_id", "submit", "gpus", "gpu_milli", "gpu_mem_mib", "duration", "end", "start",
            "tenant", "priority_class", "cpu_milli", "mem_mib", "gpu_spec", "steps", "job_type",
        )
    }
    if require_duration and ix["duration"] is None and ix["end"] is None:
        raise TraceError(path, 1, cmap.duration or cmap.end, "no duration column, which this replay needs")
    scale = cmap.time_scale
    names = {f: header[i] for f, i in ix.items() if i is not None}
    out: list[tuple[float, int, TraceJob]] = []
    for n, (line, row) in enumerate(rows):
        if limit is not None and n >= limit:
            break

        def cell(f):
            i = ix[f]
            return None if i is None else row[i].strip()

        # GPUs: whole count plus per-GPU share.
        raw_g = cell("gpus")
        if raw_g == "":
            raise TraceError(path, line, names["gpus"], "empty, expected a GPU count")
        g = _num(path, line, names["gpus"], raw_g)
        raw_m = cell("gpu_milli")
        if raw_m is not None and raw_m != "":
            if g != int(g):
                raise TraceError(path, line, names["gpus"], f"expected a whole number with a gpu_milli column, got {raw_g!r}")
            num = int(g)
            milli = _int(path, line, names["gpu_milli"], raw_m)
            if milli > MILLI:
                raise TraceError(path, line, names["gpu_milli"], f"share per GPU must be <= {MILLI}, got {raw_m!r}")
            if num == 0:
                milli = 0
            elif milli == 0:
                raise TraceError(path, line, names["gpu_milli"], f"0 with {num} GPUs requested")
        elif g == int(g):
            num, milli = int(g), (MILLI if g > 0 else 0)
        elif g < 1:
            num, milli = 1, int(round(g * MILLI))
            if milli == 0:
                raise TraceError(path, line, names["gpus"], f"fraction {raw_g!r} is below 1/{MILLI} GPU")
        else:
            raise TraceError(path, line, names["gpus"], f"fractions are only allowed below one GPU, got {raw_g!r}")

        raw = cell("submit")
        submit = float(n) if raw is None or raw == "" else _num(path, line, names["submit"], raw) * scale

        duration = None
        raw = cell("duration")
        if raw is not None and raw != "":
            duration = _num(path, line, names["duration"], raw) * scale
        else:
            raw_end = cell("end")
            if raw_end is not None and raw_end != "":
                end = _num(path, line, names["end"], raw_end) * scale
                raw_start = cell("start")
                start = submit if raw_start in (None, "") else _num(path, line, names["start"], raw_start) * scale
                duration = end - start
                if duration < 0:
                    raise TraceError(path, line, names["end"], f"ends at {end:g} s, before it starts at {start:g} s")
        if require_duration and duration is None:
            col = names.get("duration") or names.get("end")
            raise TraceError(path, line, col, "empty, expected a duration")

        raw = cell("gpu_mem_mib")
        gmem = None if raw in (None, "") else _int(path, line, names["gpu_mem_mib"], raw)
        raw = cell("cpu_milli")
        cpu = 0 if raw in (None, "") else _int(path, line, names["cpu_milli"], raw)
        raw = cell("mem_mib")
        mem = 0 if raw in (None, "") else _int(path, line, names["mem_mib"], raw)
        raw = cell("job_id")
        job_id = str(n) if raw in (None, "") else raw
        tenant = cell("tenant") or "default"
        prio = cell("priority_class") or ""
        spec = _spec(cell("gpu_spec") or "")
        raw = cell("steps")
        steps = None if raw in (None, "") else _int(path, line, names["steps"], raw)
        if steps is not None and steps <= 0:
            raise TraceError(path, line, names["steps"], f"expected a positive step count, got {raw!r}")
        job = TraceJob(
            index=0, job_id=job_id, submit_s=submit, num_gpus=num, gpu_milli=milli,
            duration_s=duration, gpu_mem_mib=gmem, tenant=tenant, priority_class=prio,
            cpu_milli=cpu, mem_mib=mem, gpu_spec=spec, steps=steps, job_type=cell("job_type") or "", line=line,
        )
        out.append((submit, n, job))
    if not out:
        raise TraceError(path, None, None, "no data rows")
    out.sort(key=lambda t: (t[0], t[1]))
    return [replace(j, index=i) for i, (_s, _n, j) in enumerate(out)]


def load_nodes(path: str | os.PathLike, cmap: NodeColumnMap | None = None) -> list[TraceNode]:
    """Read a node list (Alibaba ``openb_node_list_gpu_node.csv`` columns by default).

    GPU memory per device comes from a ``gpu_mem_mib`` column when present,
    else from :data:`GPU_MEMORY_MIB` by model (an unknown model is an error).
    """
    cmap = cmap or NodeColumnMap()
    header, rows = _open_rows(path)
    i_name = _column_index(path, header, cmap.name, (), False)
    i_gpu = _column_index(path, header, cmap.gpus, (), True)
    i_model = _column_index(path, header, cmap.model, (), True)
    i_cpu = _column_index(path, header, cmap.cpu_milli, (cmap.cpu_milli,))
    i_mem = _column_index(path, header, cmap.mem_mib, (cmap.mem_mib,))
    i_gmem = _column_index(path, header, cmap.gpu_mem_mib, (cmap.gpu_mem_mib,))
    nodes: list[TraceNode] = []
    for n, (line, row) in enumerate(rows):
        gpus = _int(path, line, cmap.gpus, row[i_gpu].strip())
        model = row[i_model].strip()
        if i_gmem is not None and row[i_gmem].strip():
            gmem = _int(path, line, cmap.gpu_mem_mib, row[i_gmem].strip(), minimum=1)
        elif gpus == 0:
            gmem = 0
        else:
            try:
                gmem = GPU_MEMORY_MIB[model]
            except KeyError:
                raise TraceError(
                    path, line, cmap.model,
                    f"unknown GPU model {model!r}: add a {cmap.gpu_mem_mib!r} column "
                    f"(known: {', '.join(sorted(GPU_MEMORY_MIB))})",
                ) from None
        cpu = _int(path, line, cmap.cpu_milli, row[i_cpu].strip()) if i_cpu is not None else 10**9
        mem = _int(path, line, cmap.mem_mib, row[i_mem].strip()) if i_mem is not None else 10**12
        name = row[i_name].strip() if i_name is not None else f"node-{n:04d}"
        nodes.append(TraceNode(name=name, num_gpus=gpus, model=model, gpu_mem_mib=gmem,
                               cpu_milli=cpu, mem_mib=mem, line=line))
    if not nodes:
        raise TraceError(path, None, None, "no data rows")
    return nodes


def uniform_nodes(
    count: int,
    gpus_per_node: int = 8,
    model: str = "A100-80GB",
    *,
    cpu_milli: int = 10**9,
    mem_mib: int = 10**12,
) -> list[TraceNode]:
    """A homogeneous pool (CPU and host memory unlimited unless given)."""
    if count <= 0 or gpus_per_node <= 0:
        raise ValueError("count and gpus_per_node must be positive")
    gmem = GPU_MEMORY_MIB.get(model)
    if gmem is None:
        raise ValueError(f"unknown GPU model {model!r}; known: {', '.join(sorted(GPU_MEMORY_MIB))}")
    return [TraceNode(name=f"node-{i:04d}", num_gpus=gpus_per_node, model=model, gpu_mem_mib=gmem,
                      cpu_milli=cpu_milli, mem_mib=mem_mib) for i in range(count)]


def write_output(text: str, dest: str) -> None:
    """Write a command's JSON (or other text) to ``dest``: a file path, or ``-`` for stdout."""
    if dest == "-":
        sys.stdout.write(text)
        return
    with open(dest, "w", encoding="utf-8") as fh:
        fh.write(text)
