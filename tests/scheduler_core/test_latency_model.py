"""The per-replica M/G/1 latency model reproduces queueing theory where it should."""

import numpy as np

from scheduler_core.latency import LatencyGrid, ServiceLatency, quantile, response_cdf


def mean_from_cdf(s, cv, rho):
    x = np.linspace(0, 400 * s, 400001)
    f = response_cdf(x, s, cv, rho)
    return float(np.trapezoid(1 - f, x))


def test_mean_response_matches_pollaczek_khinchine():
    for s, cv, rho in [(0.02, 0.5, 0.5), (0.05, 1.0, 0.8), (0.01, 0.0, 0.3)]:
        pk = s + rho * s * (1 + cv * cv) / (2 * (1 - rho))
        assert abs(mean_from_cdf(s, cv, rho) - pk) / pk < 0.01


def test_mm1_tail_is_exact_for_cv_one():
    s, rho = 0.02, 0.6
    # M/M/1: response time ~ Exp(mu - lambda)
    t = 0.15
    assert abs((1 - response_cdf(t, s, 1.0, rho)) - np.exp(-(1 / s) * (1 - rho) * t)) < 1e-9


def test_histogram_quantiles_and_slo_counting():
    grid = LatencyGrid(60)
    lat = ServiceLatency(grid, 0.02, 1.0, slo_s=0.1)
    lat.add_replica(lam=30.0, speed=1.0, dt=100.0)  # rho 0.6
    p99 = quantile(grid, lat.hist, 0.99)
    exact = -np.log(0.01) / ((1 / 0.02) * 0.4)
    assert abs(p99 - exact) / exact < 0.05
    assert abs(lat.violations / lat.requests - np.exp(-20 * 0.1)) < 1e-6


def test_slower_replica_and_missing_replicas_hurt():
    grid = LatencyGrid()
    fast, slow = ServiceLatency(grid, 0.02, 0.5, 0.2), ServiceLatency(grid, 0.02, 0.5, 0.2)
    fast.add_replica(20, 1.0, 60)
    slow.add_replica(20, 0.5, 60)
    assert quantile(grid, slow.hist, 0.99) > 2 * quantile(grid, fast.hist, 0.99)
    down = ServiceLatency(grid, 0.02, 0.5, 0.2)
    down.add_unserved(100)
    assert down.violations == down.unserved == 100
    over = ServiceLatency(grid, 0.02, 0.5, 0.2)
    over.add_replica(100, 1.0, 60)  # rho 2: the backlog grows through the interval
    assert over.overload_seconds == 60 and over.violations == over.requests
