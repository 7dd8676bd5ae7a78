"""A scenario's Cohort tree reaches the bundle: the simulator lends quota through `kueue.cohorts`
(parent, own quota, lending and borrowing limits, fair-sharing weight), so the exported Cohort objects
must carry the same, or the installed Kueue would admit from a flat cohort of the ClusterQueues alone."""

from __future__ import annotations

from placement.deploy import export_scenario
from scheduler_core.scenario import parse_scenario
from tests.deploy.schemas import object_errors


def test_the_exported_cohorts_carry_the_scenarios_parent_quota_limits_and_weight():
    cq = lambda name, cohort, n: {"name": name, "cohort": cohort, "flavors": [  # noqa: E731
        {"name": "a100", "quotas": {"nvidia.com/gpu": {"nominal": n}}}]}
    doc = {"name": "tree", "horizon": "1h",
           "pool": {"node_groups": [{"name": "gpu", "count": 2, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8}]},
           "stack": {"control_plane": {"scheduler": "kube-default", "admission": "kueue", "kueue": {
               "cluster_queues": [cq("team-a", "research", 2), cq("team-b", "org", 2)],
               "cohorts": [{"name": "org", "flavors": [{"name": "a100", "quotas": {"nvidia.com/gpu": {"nominal": 8}}}]},
                           {"name": "research", "parent_name": "org", "fair_sharing_weight": 2,
                            "flavors": [{"name": "a100", "quotas": {"nvidia.com/gpu": {"nominal": 4, "lending_limit": 1,
                                                                                        "borrowing_limit": 3}}}]}]}}},
           "tenants": [{"name": "team-a", "queue": "team-a"}, {"name": "team-b", "queue": "team-b"}],
           "workloads": [{"kind": "batch", "name": "j", "tenant": "team-a", "gpus_per_worker": 1, "duration": "1h"}]}
    export = export_scenario(parse_scenario(doc, source="test"))
    cohorts = {o["metadata"]["name"]: o for o in export.file("kueue/cohorts.yaml").objects}
    assert cohorts["research"]["spec"] == {
        "parentName": "org",
        "resourceGroups": [{"coveredResources": ["nvidia.com/gpu"], "flavors": [{"name": "a100", "resources": [
            {"name": "nvidia.com/gpu", "nominalQuota": 4, "borrowingLimit": 3, "lendingLimit": 1}]}]}],
        "fairSharing": {"weight": 2}}
    assert cohorts["org"]["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] == 8
    assert "parentName" not in cohorts["org"]["spec"]
    assert [e for o in cohorts.values() for e in object_errors(o)] == []
