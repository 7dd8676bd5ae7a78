"""A ClusterQueue's memory quota is a Kubernetes quantity in bytes; the scenario counts it in GiB. The
bundle wrote the scenario's number bare (`nominalQuota: 192` for 192 GiB), and on the local plane
(docs/controlplane.md, the gang trial) the real Kueue v0.19.2 then admitted nothing that asked memory:
"couldn't assign flavors to pod set main: insufficient quota for memory in flavor default, previously
considered podsets requests (0) + current podset request (192Gi) > maximum capacity (384)"."""

from __future__ import annotations

from placement.deploy import export_scenario
from placement.deploy.quantity import parse_quantity
from placement.deploy.queues import kueue_cluster_queue
from scheduler_core.scenario import parse_scenario

SCENARIO = {
    "name": "memory-quota", "horizon": "1h",
    "pool": {"node_groups": [{"name": "a100", "gpu": "A100-SXM4-80GB", "count": 2, "gpus_per_node": 8,
                              "cpu": 64, "memory_gib": 512}]},
    "stack": {"name": "kueue", "data_plane": {"mechanism": "whole"}, "control_plane": {
        "scheduler": "kube-default", "admission": "kueue", "kueue": {"cluster_queues": [{
            "name": "team", "cohort": "atlas", "flavors": [{"name": "default", "quotas": {
                "nvidia.com/gpu": 8, "cpu": 24, "memory": {"nominal": 192, "borrowing_limit": 64, "lending_limit": 0.5}}}]}]}}},
    "tenants": [{"name": "team", "queue": "team"}],
    "workloads": [{"name": "train", "kind": "training", "tenant": "team", "workers": 1, "gpus_per_worker": 1,
                   "cpu": 8, "host_memory_gib": 64, "duration": "1h", "arrival": {"at": "0m"}}],
}


def _cluster_queue():
    export = export_scenario(parse_scenario(SCENARIO))
    (cq,) = export.file("kueue/clusterqueues.yaml").objects
    return cq


def _memory(cq) -> dict:
    resources = cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    return next(r for r in resources if r["name"] == "memory")


def test_the_cluster_queues_memory_quota_is_written_in_bytes_as_kubernetes_reads_it():
    memory = _memory(_cluster_queue())
    assert parse_quantity(memory["nominalQuota"]) == 192 * 2**30
    assert parse_quantity(memory["borrowingLimit"]) == 64 * 2**30
    assert parse_quantity(memory["lendingLimit"]) == 0.5 * 2**30
    # the other resources keep their plain counts
    resources = _cluster_queue()["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    assert {r["name"]: r["nominalQuota"] for r in resources if r["name"] != "memory"} == {"nvidia.com/gpu": 8, "cpu": 24}


def test_a_cluster_queue_read_back_counts_memory_in_gib_again():
    imported = kueue_cluster_queue(_cluster_queue(), {"default": None})
    quota = imported["flavors"][0]["quotas"]["memory"]
    assert (quota["nominal"], quota["borrowing_limit"], quota["lending_limit"]) == (192, 64, 0.5)
    assert imported["flavors"][0]["quotas"]["nvidia.com/gpu"]["nominal"] == 8
