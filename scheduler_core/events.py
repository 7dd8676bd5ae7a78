"""Deterministic discrete-event engine: one clock, one event heap.

This is the small kernel everything else in ``scheduler_core`` runs on
(the cluster simulator and the trace replayer in ``scheduler_core.traces``).
It is SimPy-like in spirit -- a clock that jumps from event to event -- but
deliberately tiny: no generators/processes, only callbacks, because the
simulator's hot loop must handle millions of events per minute and the
scheduling logic is easier to reason about as plain state transitions.

Ordering and determinism
------------------------
Events live in one binary heap keyed by ``(time, priority, sequence)``:

* ``time``     -- simulated seconds (float) at which the event fires;
* ``priority`` -- integer, *lower fires first* among events at the same time
  (see :class:`Priority` for the conventional bands);
* ``sequence`` -- a monotonically increasing counter assigned by
  :meth:`Environment.schedule`, so two events with equal time and priority
  fire in the order they were scheduled (FIFO).

Because the key is a total order that never compares callbacks, a run is a
pure function of the calls made on the environment: the same inputs give the
same event order, bit for bit, on every machine.  No wall-clock time, no
hash-order iteration and no global random state is consulted here; put a
seeded ``random.Random`` on the environment (``env.rng``) for stochastic
models.

API (stable -- other modules build on it)
-----------------------------------------
``env = Environment(start=0.0)``
``env.now``                                current simulated time (read-only)
``ev = env.schedule(at, priority, callback, *args)``
                                           fire ``callback(*args)`` at absolute time ``at``
``ev = env.schedule_in(delay, priority, callback, *args)``
                                           same, relative to ``now``
``env.cancel(ev)`` / ``ev.cancel()``       lazily drop a pending event
``env.run(until=None)``                    process events; returns number processed
``env.step()``                             process exactly one event (False if none)
``env.peek()``                             time of the next live event (``inf`` if none)
``env.stop()``                             ask a running ``run`` to return after the current event
``env.pending``                            number of live (not cancelled) events queued
``env.processed``                          total events processed so far

Scheduling in the past (``at < now``) raises :class:`SchedulingError`: a
silent clamp would hide causality bugs.  ``run(until=T)`` processes every
event with ``time <= T`` and then sets ``now = T`` (so a horizon event at
exactly ``T`` still fires); ``run()`` without ``until`` drains the heap.
"""

from __future__ import annotations

import heapq
import math
import random
from enum import IntEnum
from typing import Any, Callable

__all__ = ["Environment", "Event", "Priority", "SchedulingError"]


class SchedulingError(ValueError):
    """An event was scheduled at an invalid time (past or not finite)."""


class Priority(IntEnum):
    """Conventional priority bands for events at the same instant.

    Lower values fire first.  The order encodes causality at a tie: resources
    are released (completions, faults) before new demand arrives, and the
    scheduler runs after both so it sees the freshest state; samplers run
    last so a time-series point reflects everything that happened at ``t``.
    Any ``int`` is accepted; these are just the shared vocabulary.
    """

    FAULT = 0  # node/GPU failures, plugin restarts: change capacity first
    COMPLETION = 10  # jobs finishing, pods terminating: free resources
    RECONFIGURE = 20  # MIG re-partition / drain completions
    ARRIVAL = 30  # job submissions, trace records, request-rate changes
    ADMISSION = 40  # quota admission (Kueue/Volcano queues)
    SCHEDULE = 50  # placement pass (kube-scheduler cycle)
    MONITOR = 80  # periodic model updates (latency intervals, KV growth)
    SAMPLE = 90  # metric sampling, progress reporting


class Event:
    """A scheduled callback.  Returned by :meth:`Environment.schedule`.

    Only ``time``, ``priority``, ``cancelled`` and :meth:`cancel` are meant
    for callers.  Cancellation is lazy (O(1)): the entry stays in the heap
    and is skipped when popped.
    """

    __slots__ = ("time", "priority", "seq", "callback", "args", "cancelled", "_env")

    def __init__(self, env: "Environment", time: float, priority: int, seq: int,
                 callback: Callable[..., Any], args: tuple) -> None:
        self._env = env
        self.time = time
        self.priority = priority
        self.seq = seq
        self.callback = callback
        self.args = args
        self.cancelled = False

    def cancel(self) -> None:
        """Drop this event if it has not fired yet (idempotent)."""
        self._env.cancel(self)

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        name = getattr(self.callback, "__qualname__", repr(self.callback))
        state = " cancelled" if self.cancelled else ""
        return f"<Event t={self.time:g} p={self.priority} #{self.seq} {name}{state}>"


class Environment:
    """Simulation clock plus the single event heap.

    Subclasses (or attributes set by the simulator) hold all model state so
    that one object is the whole simulation; nothing is global.

    :param start: initial simulated time in seconds.
    :param seed: seed for ``self.rng``, the environment's own deterministic
        random stream (``random.Random``).  Models that need randomness should
        draw from it (or from generators derived from it) rather than from
        the ``random`` module's global state.
    """

    def __init__(self, start: float = 0.0, seed: int | None = 0) -> None:
        self._now = float(start)
        self._heap: list[tuple[float, int, int, Event]] = []
        self._seq = 0
        self._live = 0
        self._processed = 0
        self._stop = False
        self.rng = random.Random(seed)

    # -- clock -----------------------------------------------------------
    @property
    def now(self) -> float:
        """Current simulated time in seconds."""
        return self._now

    @property
    def pending(self) -> int:
        """Number of queued events that have not been cancelled."""
        return self._live

    @property
    def processed(self) -> int:
        """Number of events whose callbacks have run."""
        return self._processed

    # -- scheduling ------------------------------------------------------
    def schedule(self, at: float, priority: int, callback: Callable[..., Any], *args: Any) -> Event:
        """Fire ``callback(*args)`` at absolute simulated time ``at``.

        Ties on ``(at, priority)`` fire in call order.  Returns the
        :class:`Event`, which can be cancelled.
        """
        at = float(at)
        if not (at >= self._now) or math.isinf(at) or math.isnan(at):
            # NaN fails the >= test too.
            raise SchedulingError(f"cannot schedule at t={at!r} (now={self._now!r})")
        seq = self._seq
        self._seq = seq + 1
        ev = Event(self, at, int(priority), seq, callback, args)
        heapq.heappush(self._heap, (at, ev.priority, seq, ev))
        self._live += 1
        return ev

    def schedule_in(self, delay: float, priority: int, callback: Callable[..., Any], *args: Any) -> Event:
        """Like :meth:`schedule` but ``delay`` seconds after ``now``."""
        if delay < 0:
            raise SchedulingError(f"negative delay {delay!r}")
        return self.schedule(self._now + delay, priority, callback, *args)

    def cancel(self, event: Event) -> None:
        """Lazily cancel ``event``; a no-op if it already fired or was cancelled."""
        if not event.cancelled and event.callback is not None:
            event.cancelled = True
            event.callback = None  # release references early
            event.args = ()
            self._live -= 1

    def peek(self) -> float:
        """Time of the next live event, or ``math.inf`` if the heap is empty."""
        heap = self._heap
        while heap and heap[0][3].cancelled:
            heapq.heappop(heap)
        return heap[0][0] if heap else math.inf

    def stop(self) -> None:
        """Make the current :meth:`run` return after the event being processed."""
        self._stop = True

    # -- running ---------------------------------------------------------
    def step(self) -> bool:
        """Process the next live event.  Returns ``False`` if there was none."""
        heap = self._heap
        while heap:
            t, _p, _s, ev = heapq.heappop(heap)
            if ev.cancelled:
                continue
            self._fire(t, ev)
            return True
        return False

    def _fire(self, t: float, ev: Event) -> None:
        self._now = t
        cb, args = ev.callback, ev.args
        # Mark as consumed before calling so cancel() inside the callback is a no-op.
        ev.callback = None
        ev.args = ()
        self._live -= 1
        self._processed += 1
        cb(*args)

    def run(self, until: float | None = None) -> int:
        """Process events in order until the heap is empty or ``until`` passes.

        With ``until``, every event with ``time <= until`` fires and the clock
        then rests at ``until`` (unless :meth:`stop` was called).  Returns the
        number of events processed by this call.
        """
        if until is not None:
            until = float(until)
            if until < self._now:
                raise SchedulingError(f"until={until!r} is before now={self._now!r}")
        heap = self._heap
        pop = heapq.heappop
        count = 0
        self._stop = False
        limit = math.inf if until is None else until
        while heap:
            top = heap[0]
            if top[0] > limit:
                break
            pop(heap)
            ev = top[3]
            if ev.cancelled:
                continue
            self._fire(top[0], ev)
            count += 1
            if self._stop:
                self._stop = False
                return count
        if until is not None:
            self._now = until
        return count
