"""Realistic snapshots import as they are: queue names from the objects that own the pods, LocalQueues
by namespace, Jobs as Jobs, MIG memory from the profile, resource groups and pods' CPU/memory kept,
KAI and Volcano queues, a GPU model the simulator does not know reported by node; they simulate and
re-export with their resource groups intact."""

import copy
import json
from pathlib import Path

import pytest

from placement.deploy import export_scenario
from placement.deploy.readback import read_export
from placement.deploy.cluster_import import SnapshotInvalid, cluster_scenario
from scheduler_core import parse_scenario, simulate

CLUSTERS = Path(__file__).resolve().parents[2] / "fixtures" / "clusters"


def snapshot(system: str):
    folder = CLUSTERS / f"realistic-{system}"
    return tuple(json.loads((folder / f"{n}.json").read_text()) for n in ("nodes", "pods", "queues"))


def workloads(doc) -> dict:
    return {w["name"]: w for w in doc["workloads"]}


@pytest.mark.parametrize("system", ["kueue", "kai", "volcano"])
def test_a_realistic_snapshot_imports_with_queues_from_the_owning_objects_and_simulates(system):
    doc = cluster_scenario(*snapshot(system), name=system)
    tenants = {t["name"]: t.get("queue") for t in doc["tenants"]}
    assert tenants["team-product"] == "product" and tenants["team-data"] == "data"
    cp = doc["stack"]["control_plane"]
    assert (cp.get("admission"), cp["scheduler"]) == {"kueue": ("kueue", "kube-default"), "kai": (None, "kai"),
                                                       "volcano": (None, "volcano")}[system]
    if system == "kai":
        assert {q["name"]: q.get("parent") for q in cp["kai"]["queues"]} == {
            "org": None, "research": "org", "product": "org", "data": "org"}
    result = simulate(parse_scenario(doc))
    assert result.jobs.submitted > 0


def test_a_batch_job_stays_a_job_and_mig_pods_get_their_profiles_memory():
    w = workloads(cluster_scenario(*snapshot("kai")))
    sweep = w["team-research-eval-sweep"]  # a batch/v1 Job of 3 pods: independent pods, not a gang
    assert (sweep["kind"], sweep["workers"], sweep["min_available"]) == ("batch", 3, 0)
    pretrain = w["team-research-llm-pretrain"]  # a JobSet: one workload of its pods
    assert (pretrain["kind"], pretrain["workers"], pretrain["gpus_per_worker"]) == ("training", 2, 8)
    ranker = w["team-product-ranker"]  # a Deployment's pods through their ReplicaSet
    assert ranker["kind"] == "inference" and ranker["replicas"] == 3 and ranker["unit"] == {"mig_profile": "1g.10gb"}
    assert ranker["model_memory_gib"] < 10  # fits the 1g.10gb instance, not a 16 GiB default
    assert (ranker["cpu"], ranker["host_memory_gib"]) == (2.0, 16.0)
    big = w["team-product-big-llm"]  # a LeaderWorkerSet group of 2 pods x 8 GPUs is one replica of 16
    assert (big["replicas"], big["gpus_per_replica"]) == (1, 16)
    assert "team-data-etl" in w  # a RayJob's cluster pods, its queue read from the RayJob


def test_an_unknown_gpu_model_is_reported_by_node_and_the_rest_imports():
    nodes, pods, queues = snapshot("volcano")
    h100 = next(n for n in nodes["items"] if n["metadata"]["name"] == "h100-01")
    h100["metadata"]["labels"]["nvidia.com/gpu.product"] = "Tesla-V100-SXM2-32GB"  # a model the hardware model lacks
    doc = cluster_scenario(nodes, pods, queues)
    assert "h100-01" in doc["description"] and "Tesla-V100-SXM2-32GB" in doc["description"]
    assert sum(g["count"] for g in doc["pool"]["node_groups"]) == 8
    assert not any("h100" in w["name"] for w in doc["workloads"])


def test_an_h100_node_imports_as_an_h100_beside_the_a100s():
    doc = cluster_scenario(*snapshot("volcano"))
    assert "h100-01" not in doc["description"]
    gpus = {g["gpu"] for g in doc["pool"]["node_groups"]}
    assert any(g.startswith("H100") for g in gpus) and any(g.startswith("A100") for g in gpus)
    assert sum(g["count"] for g in doc["pool"]["node_groups"]) == 9


def test_a_node_mid_mig_reconfiguration_takes_the_layout_being_applied():
    doc = cluster_scenario(*snapshot("volcano"))
    assert "mig-02 (all-2g.20gb, nvidia.com/mig.config.state=pending)" in doc["description"]
    groups = doc["pool"]["node_groups"]
    layouts = sorted(g["mig"][0]["layout"] for g in groups if g.get("mig"))
    assert layouts == ["all-1g.10gb", "all-2g.20gb"]


def test_kueue_local_queues_are_read_by_namespace_and_resource_groups_survive_the_re_export():
    nodes, pods, queues = snapshot("kueue")
    doc = cluster_scenario(nodes, pods, queues)
    kueue = doc["stack"]["control_plane"]["kueue"]
    tenants = {t["name"]: t.get("queue") for t in doc["tenants"]}
    # team-research's LocalQueue "research" points at research; sandbox's "research" at data: two queues.
    assert kueue["local_queues"][tenants["team-research"]] == "research"
    assert kueue["local_queues"]["research-sandbox"] == "data"
    exported = export_scenario(parse_scenario(doc))
    research = next(o for o in exported.objects() if o["kind"] == "ClusterQueue" and o["metadata"]["name"] == "research")
    original = next(o for o in queues["items"] if o["kind"] == "ClusterQueue" and o["metadata"]["name"] == "research")
    groups = [(g["coveredResources"], [f["name"] for f in g["flavors"]]) for g in research["spec"]["resourceGroups"]]
    assert groups == [(g["coveredResources"], [f["name"] for f in g["flavors"]]) for g in original["spec"]["resourceGroups"]]
    local = {(o["metadata"]["namespace"], o["metadata"]["name"]): o["spec"]["clusterQueue"]
             for o in exported.objects() if o["kind"] == "LocalQueue"}
    assert local[("team-research", tenants["team-research"])] == "research"


def test_a_workload_spanning_resource_groups_is_admitted_and_groups_and_fungibility_survive_the_re_export():
    # research: {cpu, memory: default-cpu}, {nvidia.com/gpu: a100-80gb, a100-40gb}, {mig-1g.10gb: a100-mig};
    # flavorFungibility whenCanBorrow TryNextFlavor, whenCanPreempt Preempt (v1beta1's name for MayStopSearch).
    nodes, pods, queues = snapshot("kueue")
    doc = cluster_scenario(nodes, pods, queues)
    research = next(q for q in doc["stack"]["control_plane"]["kueue"]["cluster_queues"] if q["name"] == "research")
    assert research["flavors"][0] == {"name": "default-cpu", "quotas": {"cpu": {"nominal": 256.0},
                                                                       "memory": {"nominal": 2048.0}}}  # GiB
    scenario = parse_scenario(doc)
    fungibility = scenario.stack.control_plane.kueue.cluster_queues[0].flavor_fungibility
    assert (fungibility.when_can_borrow, fungibility.when_can_preempt) == ("TryNextFlavor", "MayStopSearch")
    # The JobSet asks 8 GPUs, 32 cpu and 256 GiB per pod: one flavor from each of two groups, and it runs.
    events = [e for e in simulate(scenario).events.entries if e.workload == "team-research-llm-pretrain"]
    assert [(e.kind, e.detail) for e in events if e.kind == "admit"] == [
        ("admit", "ClusterQueue research, flavors default-cpu, a100-80gb")]
    assert sum(int(e.detail.split()[0]) for e in events if e.kind == "bind") == 2
    exported = export_scenario(scenario)
    for name in ("research", "product", "data"):
        cq = next(o for o in exported.objects() if o["kind"] == "ClusterQueue" and o["metadata"]["name"] == name)
        original = next(o for o in queues["items"] if o["kind"] == "ClusterQueue" and o["metadata"]["name"] == name)
        assert cq["spec"]["resourceGroups"] == original["spec"]["resourceGroups"]
        assert cq["spec"]["flavorFungibility"] == {"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "MayStopSearch"}
    memory = next(g for g in cq["spec"]["resourceGroups"] if "memory" in g["coveredResources"])
    assert memory["flavors"][0]["resources"][1] == {"name": "memory", "nominalQuota": "512Gi"}
    # Read back from the bundle: the same groups and fungibility in the scenario.
    back = read_export(exported, scenario)
    again = next(q for q in back["stack"]["control_plane"]["kueue"]["cluster_queues"] if q["name"] == "research")
    assert [f["name"] for f in again["flavors"]] == [f["name"] for f in research["flavors"]]
    assert again["flavors"][0]["quotas"]["memory"] == {"nominal": 2048.0}
    assert again["flavor_fungibility"] == {"when_can_borrow": "TryNextFlavor", "when_can_preempt": "MayStopSearch"}


def test_a_workload_naming_a_local_queue_its_namespace_lacks_is_refused_by_name():
    nodes, pods, queues = snapshot("kueue")
    queues = copy.deepcopy(queues)
    queues["items"] = [o for o in queues["items"]
                       if not (o["kind"] == "LocalQueue" and o["metadata"]["namespace"] == "team-data")]
    with pytest.raises(SnapshotInvalid) as exc:
        cluster_scenario(nodes, pods, queues)
    assert any("namespace team-data" in e and "'data'" in e for e in exc.value.errors)


def test_duplicate_node_names_are_refused_with_the_name():
    nodes, pods, queues = snapshot("volcano")
    nodes = copy.deepcopy(nodes)
    nodes["items"].append(copy.deepcopy(nodes["items"][0]))
    with pytest.raises(SnapshotInvalid) as exc:
        cluster_scenario(nodes, pods, queues)
    assert any("duplicate node name 'a100-80-01'" in e for e in exc.value.errors)


@pytest.mark.django_db
def test_a_what_if_on_an_upload_changes_only_the_node_groups_chosen(client, architect, django_capture_on_commit_callbacks):
    from django.urls import reverse

    from placement.evidence.models import SimulationRun
    from placement.stacks.models import Stack
    from placement.stacks.services.scenario import scenario_for_stack
    from placement.stacks.services.stacks import compose_stacks

    result = compose_stacks({"profile": "mixed", "pool": {"gpu_model": "A100-80GB", "gpu_count": 32}})
    stack = Stack.objects.create(name=result.stacks[0].title, profile="mixed", composition=result.stacks[0].model_dump(mode="json"))
    found = cluster_scenario(*snapshot("volcano"))
    found_planes = {g["name"]: found["stack"]["node_group_data_plane"].get(g["name"], found["stack"]["data_plane"])
                    for g in found["pool"]["node_groups"]}
    everywhere = scenario_for_stack(stack, scenario_name=None, document=found, seed=None)
    chosen = "a100-pcie-40gb-4g"
    client.force_login(architect)
    folder = CLUSTERS / "realistic-volcano"
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("stack-simulate-cluster", args=[stack.pk]), {
            **{f"{n}_file": open(folder / f"{n}.json", "rb") for n in ("nodes", "pods", "queues")}, "node_groups": chosen})
    run = SimulationRun.objects.get(stack=stack)
    assert response.status_code == 302, response
    scenario = parse_scenario(run.scenario)
    for group in scenario.pool.node_groups:
        plane = scenario.stack.data_plane_for(group.name).mechanism
        if group.name == chosen:
            assert plane == everywhere.stack.data_plane_for(chosen).mechanism
        else:
            assert plane == found_planes[group.name]["mechanism"], group.name
            assert [m.model_dump(mode="json") for m in group.mig] == next(
                g.get("mig", []) for g in found["pool"]["node_groups"] if g["name"] == group.name)
    response = client.post(reverse("stack-simulate-cluster", args=[stack.pk]), {
        **{f"{n}_file": open(folder / f"{n}.json", "rb") for n in ("nodes", "pods", "queues")}, "node_groups": "gpu-pool-9"},
        follow=True)
    assert "unknown node group(s) &#x27;gpu-pool-9&#x27;" in response.content.decode()
    assert SimulationRun.objects.count() == 1
