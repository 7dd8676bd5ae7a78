"""Inference latency without simulating every request.

Each ready replica is an M/G/1 queue between two events that change it
(placement, co-location, readiness, arrival rate): Kubernetes Services
spread requests evenly, so replica *i* sees Poisson arrivals at
``lambda_i = lambda / ready_replicas`` and serves them with mean time
``S_i = S / speed_i`` where ``speed_i`` comes from the interference model.

Service times follow a shifted exponential ``d + Exp(m)`` with
``m = cv * S_i`` and ``d = S_i - m`` (so ``cv`` in [0, 1] is exact).  The
queueing delay is approximated by the classic exponential tail: with
probability ``1 - rho`` no wait, otherwise ``Exp(r)`` with
``r = 2 (1 - rho) / (S_i (1 + cv^2))``, which reproduces the
Pollaczek-Khinchine mean wait ``rho S (1 + cv^2) / (2 (1 - rho))`` exactly.
The response time ``T = d + Exp(m) + W`` then has a closed-form CDF
(hypoexponential), evaluated on a fixed log-spaced grid and added to a
per-service histogram weighted by the requests of the interval
(``lambda_i * dt``).  Percentiles come from the histogram; the SLO
violation count uses the exact CDF at the SLO.

Overload (``rho >= 1``): the backlog grows linearly through the interval;
its requests are recorded at ``S_i + (1 - 1/rho) * dt / 2`` (the mean wait
of a linearly growing queue).  The backlog is not carried into the next
interval - a documented simplification.  Requests that arrive while no
replica is ready are *unserved*: counted as SLO violations and put in the
overflow bin.
"""

from __future__ import annotations

import math

import numpy as np

LOW_EXP, HIGH_EXP = -4, 4  # grid from 0.1 ms to 10^4 s


class LatencyGrid:
    def __init__(self, per_decade: int = 40) -> None:
        n = (HIGH_EXP - LOW_EXP) * per_decade + 1
        self.edges = np.logspace(LOW_EXP, HIGH_EXP, n)

    def new_hist(self) -> np.ndarray:
        # bins: [0, e0), [e0, e1), ..., [e_last, inf)
        return np.zeros(len(self.edges) + 1)


def response_cdf(x: np.ndarray | float, mean_s: float, cv: float, rho: float) -> np.ndarray | float:
    """P(T <= x) for the replica model above (rho < 1)."""
    m = cv * mean_s
    d = mean_s - m
    t = np.maximum(np.asarray(x, dtype=float) - d, 0.0)
    r = 2.0 * (1.0 - rho) / (mean_s * (1.0 + cv * cv))
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        if m <= 0.0:
            fx = np.where(t > 0, 1.0, 0.0) if np.ndim(t) else float(t > 0)
            fw = 1.0 - np.exp(-r * t)
        else:
            a = 1.0 / m
            fx = 1.0 - np.exp(-a * t)
            if abs(a - r) <= 1e-9 * max(a, r):
                fw = 1.0 - np.exp(-a * t) * (1.0 + a * t)
            else:
                fw = 1.0 - (r * np.exp(-a * t) - a * np.exp(-r * t)) / (r - a)
        out = (1.0 - rho) * fx + rho * fw
    out = np.where(np.asarray(x, dtype=float) < d, 0.0, np.clip(out, 0.0, 1.0))
    return out if np.ndim(out) else float(out)


class ServiceLatency:
    """Latency histogram and SLO counters of one inference service."""

    __slots__ = ("grid", "hist", "requests", "violations", "unserved", "slo", "cv", "mean", "overload_seconds")

    def __init__(self, grid: LatencyGrid, mean_s: float, cv: float, slo_s: float) -> None:
        self.grid = grid
        self.hist = grid.new_hist()
        self.requests = 0.0
        self.violations = 0.0
        self.unserved = 0.0
        self.slo = slo_s
        self.cv = cv
        self.mean = mean_s
        self.overload_seconds = 0.0

    def add_unserved(self, n: float) -> None:
        if n <= 0:
            return
        self.requests += n
        self.unserved += n
        self.violations += n
        self.hist[-1] += n

    def add_replica(self, lam: float, speed: float, dt: float) -> None:
        """Add ``lam * dt`` requests served by a replica running at ``speed``."""
        n = lam * dt
        if n <= 0:
            return
        if speed <= 0:
            self.add_unserved(n)
            return
        s = self.mean / speed
        rho = lam * s
        self.requests += n
        if rho >= 1.0:
            lat = s + (1.0 - 1.0 / rho) * dt / 2.0
            idx = int(np.searchsorted(self.grid.edges, lat, side="right"))
            self.hist[idx] += n
            if lat > self.slo:
                self.violations += n
            self.overload_seconds += dt
            return
        cdf = response_cdf(self.grid.edges, s, self.cv, rho)
        mass = np.empty(len(cdf) + 1)
        mass[0] = cdf[0]
        mass[1:-1] = np.diff(cdf)
        mass[-1] = 1.0 - cdf[-1]
        self.hist += n * np.clip(mass, 0.0, None)
        self.violations += n * (1.0 - response_cdf(self.slo, s, self.cv, rho))


def quantile(grid: LatencyGrid, hist: np.ndarray, q: float) -> float | None:
    """Quantile of a latency histogram (seconds), log-interpolated inside a bin; None if empty."""
    total = float(hist.sum())
    if total <= 0:
        return None
    target = q * total
    cum = np.cumsum(hist)
    i = int(np.searchsorted(cum, target, side="left"))
    edges = grid.edges
    if i >= len(hist) - 1:
        return math.inf
    lo = edges[i - 1] if i > 0 else edges[0] / 10.0
    hi = edges[i]
    before = cum[i - 1] if i > 0 else 0.0
    frac = (target - before) / hist[i] if hist[i] > 0 else 0.0
    return float(lo * (hi / lo) ** min(max(frac, 0.0), 1.0))
