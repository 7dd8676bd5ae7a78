"""The rules decide from catalog data only: reverting a corrected fact in a copy of the catalog
changes the answer with no code change (issue 12). No Django: the rules engine is pure Python."""

from __future__ import annotations

import shutil

import yaml

from placement.catalog.files import read_catalog_dir
from placement.rules import MisuseStatus, build_graph, check_misuse
from tests.rules.conftest import CATALOG_DIR


def _graph_with(tmp_path, slug, change):
    directory = tmp_path / "catalog"
    shutil.copytree(CATALOG_DIR, directory)
    path = directory / f"{slug}.yaml"
    data = yaml.safe_load(path.read_text())
    change(data["placement"])
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return build_graph(read_catalog_dir(directory))


def test_kueue_topology_placement_follows_the_catalog_fact(graph, tmp_path):
    # Shipped (corrected): Kueue's TAS is beta and on by default, so asking it for topology is fine.
    assert check_misuse(graph, "kueue", "topology-aware-placement").status == MisuseStatus.PROVIDED
    # The pre-correction fact (no TAS capability) turns the same question into a wrong-layer misuse.
    stale = _graph_with(tmp_path, "kueue", lambda p: p["capabilities"].remove("topology-aware-placement"))
    verdict = check_misuse(stale, "kueue", "topology-aware-placement")
    assert verdict.is_misuse and verdict.status == MisuseStatus.WRONG_LAYER
    assert "volcano" in {p.slug for p in verdict.providers}


def test_volcano_backfill_follows_the_catalog_fact(graph, tmp_path):
    # Shipped (corrected): Volcano's backfill action places only BestEffort pods, not GPU jobs.
    assert check_misuse(graph, "volcano", "backfill").is_misuse
    stale = _graph_with(tmp_path, "volcano", lambda p: (p["capabilities"].append("backfill"), p.pop("denied_capabilities")))
    assert check_misuse(stale, "volcano", "backfill").status == MisuseStatus.PROVIDED
