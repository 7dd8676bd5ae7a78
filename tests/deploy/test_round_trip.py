"""The scenario rebuilt from an export (pools, data planes, queues read from the objects) gives the
same simulation result as the scenario the stack ran."""

from pathlib import Path

import pytest

from scheduler_core import load_scenario
from tests.deploy.roundtrip import rebuilt, result_json

SCENARIOS = sorted((Path(__file__).resolve().parents[2] / "fixtures" / "scenarios").glob("*.yaml"))


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_export_of_every_builtin_scenario_rebuilds_the_same_run(path):
    scenario = load_scenario(path)
    again = rebuilt(scenario)
    assert again.stack.control_plane.scheduler == scenario.stack.control_plane.scheduler
    assert result_json(again) == result_json(scenario)


def test_a_changed_quota_in_the_export_changes_the_rebuilt_run():
    """The round trip reads the quotas from the objects: the comparison can fail."""
    from placement.deploy import export_scenario
    from placement.deploy.readback import read_export
    from scheduler_core import parse_scenario

    scenario = load_scenario(SCENARIOS[0].parent / "starved-tenant-kueue.yaml")
    export = export_scenario(scenario)
    for obj in export.objects():
        if obj["kind"] == "ClusterQueue" and obj["metadata"]["name"] == "team-b":
            obj["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = 2
    changed = parse_scenario(read_export(export, scenario))
    assert changed.stack.control_plane.kueue.cluster_queues[1].flavors[0].quotas["nvidia.com/gpu"].nominal == 2
    assert result_json(changed) != result_json(scenario)


def _with_host_resources(scheduler: str):
    from scheduler_core import parse_scenario

    pool = {"node_groups": [{"name": "cpu-rich", "count": 2, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8,
                             "cpu": 64, "memory_gib": 512}]}
    if scheduler == "volcano":
        queues = [{"name": "a", "capability": {"nvidia.com/gpu": 12, "cpu": 48, "memory": 384.5}},
                  {"name": "b", "guarantee": {"cpu": 8}, "deserved": {"nvidia.com/gpu": 4, "memory": 64}}]
        control = {"scheduler": "volcano", "volcano": {"queues": queues, "plugins": ["gang", "capacity"],
                                                       "actions": ["allocate", "reclaim"]}}
    else:
        queues = [{"name": "a", "quota": 8, "cpu": {"quota": 32, "limit": 48}, "memory": {"quota": 256, "limit": 400}},
                  {"name": "b", "quota": 8, "cpu": {"over_quota_weight": 2}}]
        control = {"scheduler": "kai", "kai": {"queues": queues}}
    work = [{"kind": "batch", "name": f"{t}-job", "tenant": t, "count": 6, "gpus_per_worker": 2, "cpu": 12,
             "host_memory_gib": 96, "duration": "2h", "arrival": {"every": "10m"}} for t in ("a", "b")]
    return parse_scenario({"name": f"{scheduler}-host", "horizon": "6h", "pool": pool, "stack": {"control_plane": control},
                           "tenants": [{"name": "a", "queue": "a"}, {"name": "b", "queue": "b"}], "workloads": work})


@pytest.mark.parametrize("scheduler", ["volcano", "kai"])
def test_queue_cpu_and_memory_survive_the_export_and_its_readback(scheduler):
    scenario = _with_host_resources(scheduler)
    again = rebuilt(scenario)
    if scheduler == "volcano":
        assert [q.model_dump() for q in again.stack.control_plane.volcano.queues] == [
            q.model_dump() for q in scenario.stack.control_plane.volcano.queues]
    else:
        for got, want in zip(again.stack.control_plane.kai.queues, scenario.stack.control_plane.kai.queues):
            assert (got.cpu, got.quota) == (want.cpu, want.quota)
            assert got.memory.quota == pytest.approx(want.memory.quota) and got.memory.limit == pytest.approx(want.memory.limit)
    assert result_json(again) == result_json(scenario)


def test_volcano_queue_memory_is_exported_as_a_kubernetes_quantity():
    from placement.deploy import export_scenario

    objects = export_scenario(_with_host_resources("volcano")).objects()
    specs = {o["metadata"]["name"]: o["spec"] for o in objects if o["kind"] == "Queue"}
    assert specs["a"]["capability"] == {"nvidia.com/gpu": 12, "cpu": 48, "memory": "393728Mi"}
    assert specs["b"]["guarantee"] == {"resource": {"cpu": 8}}
    assert specs["b"]["deserved"] == {"nvidia.com/gpu": 4, "memory": "64Gi"}


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_readback_reads_every_object_of_an_export_workloads_included(path):
    from placement.deploy import export_scenario
    from placement.deploy.readback import read_objects, workload_mismatches

    scenario = load_scenario(path)
    export = export_scenario(scenario)
    read = read_objects(export)
    assert read["unread"] == []
    assert sum(read["read"].values()) == len(export.objects())
    assert len(read["workloads"]) == len([f for f in export.files if f.path.startswith("workloads/")])
    assert all(w["pods"] >= 1 and any(w["requests"]) for w in read["workloads"])
    assert workload_mismatches(export, scenario) == []


def test_readback_reports_an_object_it_cannot_read_and_a_workload_that_left_its_queue():
    from placement.deploy import export_scenario
    from placement.deploy.readback import read_objects, workload_mismatches

    scenario = load_scenario(SCENARIOS[0].parent / "starved-tenant-kueue.yaml")
    export = export_scenario(scenario)
    workload = next(f for f in export.files if f.path.startswith("workloads/"))
    workload.objects.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc", "namespace": "team-a"}})
    obj = next(o for o in workload.objects if o["kind"] != "Service")
    obj["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "elsewhere"
    assert read_objects(export)["unread"] == ["v1 Service svc: no reader for this kind"]
    assert any("queue ['elsewhere']" in p for p in workload_mismatches(export, scenario))


def test_volcano_queue_tree_survives_the_export_and_its_readback():
    """Hierarchical queues: spec.parent on the Queues and the capacity plugin's enableHierarchy."""
    from placement.deploy import export_scenario
    from scheduler_core import parse_scenario

    queues = [{"name": "org", "capability": {"nvidia.com/gpu": 12}}, {"name": "a", "parent": "org"},
              {"name": "b", "parent": "org", "capability": {"nvidia.com/gpu": 4}}]
    control = {"scheduler": "volcano", "volcano": {"queues": queues, "plugins": ["gang", "capacity"],
                                                   "actions": ["enqueue", "allocate", "reclaim"],
                                                   "enable_hierarchy": True}}
    work = [{"kind": "batch", "name": f"{t}-job", "tenant": t, "count": 6, "gpus_per_worker": 2, "duration": "2h",
             "arrival": {"every": "10m"}} for t in ("a", "b")]
    scenario = parse_scenario({"name": "volcano-tree", "horizon": "6h",
                               "pool": {"node_groups": [{"name": "g", "count": 2, "gpu": "A100-SXM4-80GB",
                                                         "gpus_per_node": 8}]},
                               "stack": {"control_plane": control},
                               "tenants": [{"name": "a", "queue": "a"}, {"name": "b", "queue": "b"}], "workloads": work})
    objects = export_scenario(scenario).objects()
    assert {o["metadata"]["name"]: o["spec"].get("parent") for o in objects if o["kind"] == "Queue"} == {
        "org": None, "a": "org", "b": "org"}
    again = rebuilt(scenario)
    assert again.stack.control_plane.volcano.enable_hierarchy
    assert [q.model_dump() for q in again.stack.control_plane.volcano.queues] == [
        q.model_dump() for q in scenario.stack.control_plane.volcano.queues]
    assert result_json(again) == result_json(scenario)


def test_kueue_cohort_tree_survives_the_export_and_its_readback():
    """Hierarchical cohorts: the simulated run lends quota through the tree; the rebuilt one must too."""
    from scheduler_core import parse_scenario

    def cq(name, cohort, nominal):
        return {"name": name, "cohort": cohort, "preemption": {"reclaim_within_cohort": "Any"},
                "flavors": [{"name": "a100", "quotas": {"nvidia.com/gpu": {"nominal": nominal}}}]}

    cohorts = [{"name": "org", "flavors": [{"name": "a100", "quotas": {"nvidia.com/gpu": {"nominal": 6}}}]},
               {"name": "research", "parent_name": "org", "fair_sharing_weight": 2,
                "flavors": [{"name": "a100", "quotas": {"nvidia.com/gpu": {"nominal": 2, "lending_limit": 1}}}]}]
    control = {"scheduler": "kube-default", "admission": "kueue",
               "kueue": {"cluster_queues": [cq("a", "research", 4), cq("b", "org", 4)], "cohorts": cohorts}}
    work = [{"kind": "batch", "name": f"{t}-job", "tenant": t, "count": 6, "gpus_per_worker": 2, "duration": "2h",
             "arrival": {"every": "10m"}} for t in ("a", "b")]
    scenario = parse_scenario({"name": "kueue-tree", "horizon": "6h",
                               "pool": {"node_groups": [{"name": "g", "count": 2, "gpu": "A100-SXM4-80GB",
                                                         "gpus_per_node": 8}]},
                               "stack": {"control_plane": control},
                               "tenants": [{"name": "a", "queue": "a"}, {"name": "b", "queue": "b"}], "workloads": work})
    again = rebuilt(scenario)
    def tree(s):
        return sorted((c.model_dump() for c in s.stack.control_plane.kueue.cohorts), key=lambda c: c["name"])

    assert tree(again) == tree(scenario)
    assert result_json(again) == result_json(scenario)
