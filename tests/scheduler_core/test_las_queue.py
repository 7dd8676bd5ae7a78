"""The incremental LAS pass picks exactly the jobs the full greedy scan picks."""

import random

from scheduler_core.traces.las_queue import LasQueue


def _greedy(q: LasQueue, live: set[int]) -> set[int]:
    """Reference: scan every live job in (level, index) order, take each one that still fits."""
    cap, chosen = q.cap, set()
    for i in sorted(live, key=lambda i: (q.level[i], i)):
        if q.k[i] <= cap:
            chosen.add(i)
            cap -= q.k[i]
    return chosen


def test_incremental_pass_matches_a_full_scan_under_random_arrivals_completions_and_demotions():
    rng = random.Random(7)
    n = 400
    k = [rng.choice([1, 1, 1, 2, 4, 8, 16]) for _ in range(n)]
    q = LasQueue(k, levels=4, capacity=24)
    live: set[int] = set()
    nxt = 0
    for _ in range(1500):
        op = rng.random()
        if op < 0.4 and nxt < n:
            q.arrive(nxt)
            live.add(nxt)
            nxt += 1
        elif op < 0.7 and q.running:
            i = rng.choice(sorted(q.running))
            q.finish(i)
            live.discard(i)
        elif q.running:
            i = rng.choice(sorted(q.running))
            if q.level[i] < 3:
                q.demote(i)
        before = set(q.running)
        starts, stops = q.decide()
        want = _greedy(q, live)
        assert q.running == want
        assert set(starts) == want - before and set(stops) == before - want
        assert starts == sorted(starts, key=lambda i: (q.level[i], i))  # started in LAS order
