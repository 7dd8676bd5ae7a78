"""A bounded log of the decisions a run made: admit, bind, preempt, evict, OOM, requeue, reconfigure...

Every event is counted by kind; only the first ``per_kind`` of each kind are
kept verbatim, so a 50,000-job week costs the same few hundred kilobytes as a
lab scenario and a flood of binds cannot push out the first preemption.  The
result says how many were left out, so a reader knows the log is a summary.
"""

from __future__ import annotations

from scheduler_core import metrics as M

EVENT_LOG_PER_KIND = 200  # entries kept verbatim per kind; past it the kind is only counted


class EventLog:
    __slots__ = ("per_kind", "entries", "by_kind", "total")

    def __init__(self, per_kind: int = EVENT_LOG_PER_KIND) -> None:
        self.per_kind = per_kind
        self.entries: list[M.LoggedEvent] = []
        self.by_kind: dict[str, int] = {}
        self.total = 0

    def record(self, t: float, kind: str, workload: str, detail: str = "", node: str | None = None) -> None:
        self.total += 1
        n = self.by_kind.get(kind, 0) + 1
        self.by_kind[kind] = n
        if n <= self.per_kind:
            self.entries.append(M.LoggedEvent(t=M.rnd(t), kind=kind, workload=workload, detail=detail, node=node))

    def result(self) -> M.EventLogMetrics:
        return M.EventLogMetrics(total=self.total, kept=len(self.entries), left_out=self.total - len(self.entries),
                                 per_kind_limit=self.per_kind, by_kind=dict(sorted(self.by_kind.items())),
                                 entries=self.entries)
