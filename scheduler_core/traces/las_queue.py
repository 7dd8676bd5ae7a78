"""Incremental discretised LAS: which jobs run, without rescanning the running ones at every event.

The LAS pass picks, in (level, arrival) order, every job that still fits in what is left of the pool
(greedy with skipping).  Rescanning that order at every arrival, completion and demotion costs
O(running jobs) per event, so CPU per job grew with the pool.  Here the running set R is kept in a
Fenwick tree over positions ``level * n + index``, waiting jobs in per-(level, GPU count) sorted
lists, and a pass only visits the positions where the greedy result differs from R:

* a running job must stop when the GPUs running before it, plus its own, exceed the pool - the first
  such position is one descent of the tree;
* a waiting job may start when its GPU count fits beside the running jobs before it - within one
  (level, size) list only the first job after the current position can be the next to fit, since the
  running total before a position never decreases along the order.

Applying the earliest of the two and moving on reproduces the greedy exactly, at O(changes x
(levels x sizes + log n)) per pass instead of O(running jobs).
"""

from __future__ import annotations

import bisect


class LasQueue:
    __slots__ = ("n", "levels", "cap", "k", "level", "tree", "size", "waiting", "sizes", "running", "used")

    def __init__(self, k: list[int], levels: int, capacity: int) -> None:
        self.n = n = max(1, len(k))
        self.levels = levels
        self.cap = capacity
        self.k = k
        self.level = [0] * len(k)
        self.size = levels * n
        self.tree = [0] * (self.size + 1)
        self.waiting: list[dict[int, list[int]]] = [{} for _ in range(levels)]
        self.sizes: list[list[int]] = [[] for _ in range(levels)]  # GPU counts with waiting jobs, ascending
        self.running: set[int] = set()
        self.used = 0  # GPUs of the running jobs

    # -- Fenwick tree over positions ------------------------------------------------------
    def _add(self, pos: int, delta: int) -> None:
        self.used += delta
        i, tree, size = pos + 1, self.tree, self.size
        while i <= size:
            tree[i] += delta
            i += i & -i

    def _before(self, pos: int) -> int:
        """GPUs of running jobs at positions < pos."""
        s, tree = 0, self.tree
        while pos > 0:
            s += tree[pos]
            pos -= pos & -pos
        return s

    def _first_over(self, limit: int) -> int | None:
        """First position where the running GPUs up to and including it exceed ``limit``."""
        pos, rem, tree, size = 0, limit, self.tree, self.size
        step = 1 << size.bit_length()
        while step:
            nxt = pos + step
            if nxt <= size and tree[nxt] <= rem:
                pos = nxt
                rem -= tree[nxt]
            step >>= 1
        return pos if pos < size else None

    # -- state changes ------------------------------------------------------------------------
    def _wait(self, lvl: int, i: int) -> None:
        s = self.k[i]
        lst = self.waiting[lvl].get(s)
        if not lst:
            lst = self.waiting[lvl][s] = []
            bisect.insort(self.sizes[lvl], s)
        bisect.insort(lst, i)

    def _unwait(self, lvl: int, i: int) -> None:
        s = self.k[i]
        lst = self.waiting[lvl][s]
        del lst[bisect.bisect_left(lst, i)]
        if not lst:
            del self.waiting[lvl][s]
            sizes = self.sizes[lvl]
            del sizes[bisect.bisect_left(sizes, s)]

    def arrive(self, i: int) -> None:
        self._wait(0, i)

    def finish(self, i: int) -> None:
        """A running job completed."""
        self.running.discard(i)
        self._add(self.level[i] * self.n + i, -self.k[i])

    def demote(self, i: int) -> None:
        """A running job crossed its level's threshold."""
        self._add(self.level[i] * self.n + i, -self.k[i])
        self.level[i] += 1
        self._add(self.level[i] * self.n + i, self.k[i])

    def decide(self) -> tuple[list[int], list[int]]:
        """(jobs to start in position order, jobs to preempt); the state already reflects them."""
        n, k, cap = self.n, self.k, self.cap
        before, levels, sizes_by, waiting_by = self._before, self.levels, self.sizes, self.waiting
        bisect_left = bisect.bisect_left
        starts: list[int] = []
        stops: list[int] = []
        pos = 0
        while True:
            over = self._first_over(cap) if self.used > cap else None  # no job can overflow otherwise
            before_pos = before(pos) if pos else 0
            best = None
            best_s = 0
            for lvl in range(levels):
                base = lvl * n
                if best is not None and base > best:
                    break
                room_here = cap - before_pos  # an upper bound on the room at any later position
                waiting = waiting_by[lvl]
                for s in sizes_by[lvl]:
                    if s > room_here:
                        break
                    lst = waiting[s]
                    j = bisect_left(lst, pos - base) if pos > base else 0
                    if j == len(lst):
                        continue
                    p = base + lst[j]
                    if (best is None or p < best) and (over is None or p < over) and s <= cap - before(p):
                        best, best_s = p, s
            if best is None and over is None:
                return starts, stops
            if best is not None and (over is None or best < over):
                i = best - (best // n) * n
                self._unwait(best // n, i)
                self._add(best, k[i])
                self.running.add(i)
                starts.append(i)
                pos = best + 1
            else:
                i = over - (over // n) * n
                self._add(over, -k[i])
                self.running.discard(i)
                self._wait(over // n, i)
                stops.append(i)
                pos = over + 1
