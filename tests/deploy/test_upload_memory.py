"""Snapshot uploads read with memory bounded per upload (issue 37.6): every object is reduced to the
record the import reads as it is parsed, one object's size is bounded before its tree is built, and
what the three files of one upload keep is counted against one budget. The worst upload accepted
peaks under 256 MB (benchmarks/upload_memory_bench.py, run here in a fresh process); the same
numeric bounds as the API (nodes, pods, GPUs per pod) and duplicate names are refused by name."""

from __future__ import annotations

import gc
import json
import re
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile

from placement.deploy.cluster_import import cluster_scenario
from placement.deploy.services import imports
from placement.deploy.services.imports import decode_snapshot_file, snapshot_scenario
from placement.deploy.snapshot_objects import Kept

ROOT = Path(__file__).resolve().parents[2]
CLUSTERS = ROOT / "fixtures" / "clusters"
SAMPLE = CLUSTERS / "sample"
WASTE = "[" + ",".join(["[]"] * 400_000) + "]"  # 1.1 MiB of JSON, ~25 MiB as a tree
MUCH_WASTE = "[" + ",".join(["[]"] * 2_000_000) + "]"  # 5.7 MiB of JSON, ~120 MiB as a tree


def _pod(i: int, name_pad: int = 0) -> dict:
    job = f"job-{i:06d}" + "j" * name_pad
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"{job}-0", "namespace": "team-a", "labels": {"job-name": job}},
            "spec": {"nodeName": "gpu-a-001", "containers": [{"name": "main", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]},
            "status": {"phase": "Running"}}


def _listed(items: list, **outside) -> bytes:
    return json.dumps({"apiVersion": "v1", "kind": "List", **outside, "items": items}).encode()


def _problem(exc: pytest.ExceptionInfo) -> str:
    return " ".join(m for ms in exc.value.message_dict.values() for m in ms)


def test_one_object_past_1_mib_is_refused_naming_it_before_its_tree_is_built():
    pods = json.dumps({"items": [_pod(0), {**_pod(1), "waste": "WASTE"}, _pod(2)]}).replace('"WASTE"', MUCH_WASTE).encode()
    gc.collect()
    tracemalloc.start()
    try:
        with pytest.raises(ValidationError) as exc:
            decode_snapshot_file(pods, "pods_file", "pods")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "items[1]: an object of more than 1 MiB of JSON" in _problem(exc)
    # at most 1 MiB + one 64 KiB chunk of it is parsed before it is refused: a ~25 MiB tree at worst
    assert peak < 40 * 2**20, f"{peak / 2**20:.1f} MiB: the 5.7 MiB object's tree (~120 MiB) was built"


def test_values_outside_items_count_against_the_same_bound():
    with pytest.raises(ValidationError) as exc:
        decode_snapshot_file(_listed([_pod(0)], metadata="WASTE").replace(b'"WASTE"', WASTE.encode()), "pods_file", "pods")
    assert "metadata: values outside `items` of more than 1 MiB of JSON in all" in _problem(exc)
    single = json.dumps({**_pod(0), "waste": "WASTE"}).replace('"WASTE"', WASTE).encode()  # one object, not a List
    with pytest.raises(ValidationError):
        decode_snapshot_file(single, "pods_file", "pods")


def test_an_upload_past_its_budget_is_refused_naming_the_file_and_the_budget():
    kept = Kept(limit=2 * 2**20)  # the three files of one upload share one budget
    decode_snapshot_file((SAMPLE / "nodes.json").read_bytes(), "nodes_file", "nodes", kept)
    with pytest.raises(ValidationError) as exc:
        decode_snapshot_file(_listed([_pod(i, name_pad=200) for i in range(10_000)]), "pods_file", "pods", kept)
    assert list(exc.value.message_dict) == ["pods_file"]
    assert "too large to import" in _problem(exc) and "pass 2 MiB" in _problem(exc)


@pytest.mark.django_db
def test_the_import_page_refuses_an_upload_past_the_budget_and_says_why(client, monkeypatch):
    monkeypatch.setattr(imports, "MAX_KEPT_BYTES", 64 * 1024)
    response = client.post("/import/", {"nodes_file": SimpleUploadedFile("nodes.json", (SAMPLE / "nodes.json").read_bytes()),
                                        "pods_file": SimpleUploadedFile("pods.json", _listed([_pod(i) for i in range(2000)]))})
    assert response.status_code == 400
    assert "This snapshot is too large to import" in response.content.decode()
    limits = client.get("/import/").content.decode()
    assert "Up to 128 MiB per file and 5,000 nodes and 150,000 pods per cluster" in limits


def test_an_upload_that_takes_too_long_to_read_is_refused_before_gunicorn_would_kill_the_worker(settings):
    settings.ATLAS_SNAPSHOT_READ_SECONDS = 0.0
    with pytest.raises(ValidationError) as exc:
        decode_snapshot_file(_listed([_pod(0)]), "pods_file", "pods", imports.upload_budget())
    assert "This snapshot is too slow to import: reading it took longer than 0 s" in _problem(exc)


def test_what_the_budget_counts_is_at_least_what_the_records_hold():
    pods = _listed([_pod(i, name_pad=i % 50) for i in range(10_000)])
    gc.collect()
    tracemalloc.start()
    try:
        kept = Kept()
        before = tracemalloc.get_traced_memory()[0]
        document = decode_snapshot_file(pods, "pods_file", "pods", kept)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before  # the records, their strings and Kept's tables
    finally:
        tracemalloc.stop()
    assert len(document["items"]) == 10_000
    assert held <= kept.bytes <= 1.5 * held, (held, kept.bytes)


@pytest.mark.parametrize("folder", sorted(p.name for p in CLUSTERS.iterdir() if (p / "nodes.json").exists()))
def test_records_read_from_the_files_import_as_the_parsed_documents_do(folder):
    files = [CLUSTERS / folder / f"{n}.json" for n in ("nodes", "pods", "queues")]
    parsed = [json.loads(f.read_text()) if f.exists() else None for f in files]
    kept = imports.upload_budget()
    streamed = [decode_snapshot_file(f.read_bytes(), f.name, f.stem, kept) if f.exists() else None for f in files]
    assert snapshot_scenario(*streamed) == cluster_scenario(*parsed)


def test_the_api_bounds_hold_for_uploads_nodes_pods_and_names():
    nodes = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"}} for i in range(5_001)]
    with pytest.raises(ValidationError) as exc:
        decode_snapshot_file(_listed(nodes), "nodes_file", "nodes")
    assert "more than 5,000 nodes (a cluster has at most 5,000)" in _problem(exc)
    with pytest.raises(ValidationError) as exc:
        decode_snapshot_file(_listed([{}] * 150_001), "pods_file", "pods")
    assert "more than 150,000 pods (a cluster has at most 150,000)" in _problem(exc)
    nodes = json.loads((SAMPLE / "nodes.json").read_text())
    pods = [_pod(0), _pod(0)]
    with pytest.raises(ValidationError) as exc:
        snapshot_scenario(decode_snapshot_file(json.dumps(nodes).encode(), "nodes_file", "nodes"),
                          decode_snapshot_file(_listed(pods), "pods_file", "pods"))
    assert "duplicate pod name 'team-a/job-000000-0' (also items[0])" in _problem(exc)


def test_a_priority_or_owner_of_the_wrong_type_is_refused_by_name():
    nodes = json.loads((SAMPLE / "nodes.json").read_text())
    bad_priority, bad_owner = _pod(0), _pod(1)
    bad_priority["spec"]["priority"] = "high"
    bad_owner["metadata"]["ownerReferences"] = [{"kind": "Job", "name": True}]
    with pytest.raises(ValidationError) as exc:
        snapshot_scenario(nodes, {"items": [bad_priority, bad_owner]})
    problems = _problem(exc)
    assert "items[0] (Pod team-a/job-000000-0): spec.priority: expected a whole number, got 'high'" in problems
    assert "items[1] (Pod team-a/job-000001-0): metadata.ownerReferences[0].name: expected a string, got bool" in problems


def test_a_file_of_broken_pods_keeps_a_thousand_messages_and_counts_the_rest():
    nodes = json.loads((SAMPLE / "nodes.json").read_text())
    pods = [{**_pod(i), "kind": "Pad"} for i in range(3_000)]
    with pytest.raises(ValidationError) as exc:
        snapshot_scenario(nodes, {"items": pods})
    shown = exc.value.message_dict["snapshot"]
    assert len(shown) == 51 and shown[-1] == "... and 2,950 more problems"


def test_the_worst_upload_accepted_peaks_under_256_mb():
    """The benchmark's worst case in a fresh process: 150,000 pods with names as long as the budget
    accepts, a 1 MiB object of [[],[],...] among them and 1 MiB of it outside `items`."""
    out = subprocess.run([sys.executable, "benchmarks/upload_memory_bench.py", "--only", "worst"], cwd=ROOT,
                         capture_output=True, text=True, check=True, timeout=600).stdout
    assert "worst: 150,000 pods" in out and "(accepted: " in out, out
    peak = int(re.search(r"highest upload peak: (\d+) MiB", out).group(1))
    assert peak * 2**20 < 256 * 10**6, out
