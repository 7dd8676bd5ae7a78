"""The event engine: ordering, cancellation, clock semantics."""

import math

import pytest

from scheduler_core.events import Environment, Priority, SchedulingError


def test_events_fire_in_time_then_priority_then_schedule_order():
    env = Environment()
    out = []
    env.schedule(5, Priority.SCHEDULE, out.append, "5-schedule")
    env.schedule(5, Priority.COMPLETION, out.append, "5-completion-a")
    env.schedule(1, Priority.SAMPLE, out.append, "1-sample")
    env.schedule(5, Priority.COMPLETION, out.append, "5-completion-b")
    env.run()
    assert out == ["1-sample", "5-completion-a", "5-completion-b", "5-schedule"]
    assert env.now == 5


def test_cancelled_event_never_fires_and_pending_counts_live_events():
    env = Environment()
    out = []
    ev = env.schedule(1, 0, out.append, "x")
    env.schedule(2, 0, out.append, "y")
    assert env.pending == 2
    ev.cancel()
    ev.cancel()  # idempotent
    assert env.pending == 1
    env.run()
    assert out == ["y"] and env.processed == 1


def test_run_until_fires_events_at_the_horizon_and_parks_the_clock_there():
    env = Environment()
    out = []
    env.schedule(10, 0, out.append, "at-10")
    env.schedule(11, 0, out.append, "at-11")
    assert env.run(until=10) == 1
    assert out == ["at-10"] and env.now == 10
    assert env.peek() == 11


def test_scheduling_in_the_past_or_at_nan_is_an_error():
    env = Environment(start=5)
    with pytest.raises(SchedulingError):
        env.schedule(4, 0, print)
    with pytest.raises(SchedulingError):
        env.schedule(math.nan, 0, print)
    with pytest.raises(SchedulingError):
        env.schedule_in(-1, 0, print)


def test_callbacks_can_schedule_more_events_and_stop_the_run():
    env = Environment()
    seen = []

    def tick(n):
        seen.append((env.now, n))
        if n == 3:
            env.stop()
        env.schedule_in(1.0, 0, tick, n + 1)

    env.schedule(0, 0, tick, 0)
    env.run()
    assert seen == [(0, 0), (1, 1), (2, 2), (3, 3)]
    assert env.pending == 1


def test_seeded_rng_is_per_environment():
    a, b = Environment(seed=7), Environment(seed=7)
    assert [a.rng.random() for _ in range(3)] == [b.rng.random() for _ in range(3)]
