"""Fixtures for scheduler_core tests: plain functions, no Django database."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

SCENARIOS = Path(__file__).resolve().parents[2] / "fixtures" / "scenarios"


@lru_cache(maxsize=None)
def _run(name: str):
    from scheduler_core import simulate

    return simulate(SCENARIOS / f"{name}.yaml")


@pytest.fixture(scope="session")
def run_builtin():
    """Run a built-in scenario by file stem, once per test session."""
    return _run


def service(result, name):
    return next(s for s in result.inference.services if s.name == name)


def tenant(result, name):
    return next(t for t in result.fairness.tenants if t.name == name)


def workload(result, name):
    return next(w for w in result.workloads if w.name == name)


def minimal(**over):
    """A small valid scenario document; keyword arguments replace top-level keys."""
    doc = {
        "name": "t",
        "horizon": "4h",
        "pool": {"node_groups": [{"name": "dgx", "count": 2, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8}]},
        "workloads": [{"kind": "batch", "name": "j", "duration": "1h"}],
    }
    doc.update(over)
    return doc
