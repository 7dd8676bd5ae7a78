"""Fixtures for the rules engine tests: the real catalog graph and small synthetic documents.

No database and no Django: `pytest tests/rules -p no:django` runs these alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from placement.catalog.files import read_catalog_dir
from placement.rules import build_graph
from placement.rules.synthetic import make_document

ROOT = Path(__file__).resolve().parents[2]
CATALOG_DIR = ROOT / "fixtures" / "catalog"
RULES_DIR = ROOT / "fixtures" / "rules"


@pytest.fixture(scope="session")
def catalog_documents():
    documents = read_catalog_dir(CATALOG_DIR)
    assert len(documents) >= 30, f"the shipped catalog has only {len(documents)} projects"
    return documents


@pytest.fixture(scope="session")
def graph(catalog_documents):
    return build_graph(catalog_documents)


@pytest.fixture
def small_catalog():
    """A handful of synthetic projects, one per role, enough to produce every verdict."""
    return [
        make_document("queue-a", layer="L1", units=["whole_gpu"], roles={"bind": ["whole_gpu"]},
                      capabilities=["per-team-quota", "admission-control"]),
        make_document("sched-a", layer="L2", units=["whole_gpu", "mig_instance"], roles={"bind": ["whole_gpu", "mig_instance"]},
                      capabilities=["pod-binding", "gang-scheduling"]),
        make_document("sched-b", layer="L2", secondary=["L3"], units=["whole_gpu"], roles={"bind": ["whole_gpu"]},
                      capabilities=["pod-binding", "bin-packing"]),
        make_document("sched-frac", layer="L2", units=["fraction", "whole_gpu"], roles={"bind": ["fraction"]},
                      capabilities=["pod-binding"]),
        make_document("plugin-a", layer="L4", units=["whole_gpu", "mig_instance"],
                      roles={"advertise": ["whole_gpu", "mig_instance"], "allocate": ["whole_gpu", "mig_instance"]},
                      capabilities=["device-discovery", "device-allocation"], requires=["runtime-hook"]),
        make_document("runtime-hook", layer="L4", units=["whole_gpu"], capabilities=["container-runtime-injection"]),
        make_document("slicer", kind="mechanism", layer="L4", units=["mig_instance"],
                      capabilities=["hardware-partitioning", "gpu-memory-isolation"]),
        make_document("sharer", layer="L4", units=["memory_compute_share"],
                      roles={"advertise": ["memory_compute_share"], "allocate": ["memory_compute_share"]},
                      capabilities=["gpu-sharing", "gpu-memory-isolation"], conflicts=["plugin-a"]),
        make_document("exporter", layer="L4", units=["node"], capabilities=["gpu-telemetry"]),
        make_document("suite", kind="platform", layer="L4", plane="platform", units=["whole_gpu"],
                      capabilities=["driver-lifecycle", "gpu-telemetry"], bundles=["plugin-a", "exporter"]),
    ]
