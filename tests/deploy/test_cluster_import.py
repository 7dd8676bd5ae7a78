"""A cluster snapshot (kubectl JSON) becomes a scenario that runs; bad objects get per-object errors
and nothing is written."""

import copy
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from placement.deploy.cluster_import import SnapshotInvalid, cluster_scenario
from placement.evidence.models import SimulationRun
from placement.stacks.models import Stack
from placement.stacks.services.stacks import compose_stacks
from scheduler_core import parse_scenario, simulate

SAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "clusters" / "sample"


def sample():
    return tuple(json.loads((SAMPLE / f"{n}.json").read_text()) for n in ("nodes", "pods", "queues"))


def test_sample_snapshot_becomes_node_groups_workloads_tenants_and_queues_that_run():
    nodes, pods, queues = sample()
    doc = cluster_scenario(nodes, pods, queues, name="sample")
    groups = {g["name"]: g for g in doc["pool"]["node_groups"]}
    assert groups["a100-sxm4-80gb-8g"]["count"] == 6 and groups["a100-sxm4-80gb-8g"]["racks"] == 3
    assert groups["a100-sxm4-80gb-8g-all-2g-20gb"]["mig"] == [{"devices": "all", "layout": "all-2g.20gb"}]
    assert groups["a100-pcie-40gb-4g-hami"]["gpu"] == "A100-PCIE-40GB"
    planes = doc["stack"]["node_group_data_plane"]
    assert planes["a100-sxm4-80gb-8g-all-2g-20gb"] == {"mechanism": "mig", "mig_strategy": "mixed"}
    assert planes["a100-pcie-40gb-4g-hami"]["mechanism"] == "hami"
    assert {t["name"]: t["queue"] for t in doc["tenants"]} == {"team-data": "data", "team-product": "product", "team-research": "research"}
    workloads = {w["name"]: w for w in doc["workloads"]}
    assert workloads["team-research-llm-pretrain"]["workers"] == 2 and workloads["team-research-llm-pretrain"]["gpus_per_worker"] == 8
    assert workloads["team-product-ranker"]["kind"] == "inference" and workloads["team-product-ranker"]["replicas"] == 3
    assert workloads["team-product-ranker"]["unit"] == {"mig_profile": "2g.20gb"}
    assert "team-research-old-eval-0" not in workloads  # a Succeeded pod is history, not load
    research = next(q for q in doc["stack"]["control_plane"]["kueue"]["cluster_queues"] if q["name"] == "research")
    assert research["cohort"] == "org" and research["flavors"][0]["quotas"]["nvidia.com/gpu"] == {"nominal": 32.0}
    result = simulate(parse_scenario(doc))
    assert result.jobs.submitted > 0 and result.utilisation.allocated_gpu_hours > 0


def test_single_strategy_counts_mig_devices_and_custom_configs_read_from_mixed_labels():
    nodes, _pods, _queues = sample()
    single = copy.deepcopy(nodes["items"][6])
    labels = single["metadata"]["labels"]
    labels.update({"nvidia.com/mig.strategy": "single", "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB-MIG-2g.20gb",
                   "nvidia.com/gpu.count": "24"})
    single["metadata"]["name"] = "gpu-m-single"
    custom = copy.deepcopy(nodes["items"][7])
    custom["metadata"]["name"] = "gpu-m-custom"
    custom["metadata"]["labels"]["nvidia.com/mig.config"] = "team-layout"
    custom["metadata"]["labels"].pop("nvidia.com/mig-2g.20gb.count")
    custom["metadata"]["labels"].update({"nvidia.com/mig-3g.40gb.count": "8", "nvidia.com/mig-1g.10gb.count": "16"})
    doc = cluster_scenario({"items": [single, custom]}, {"items": []})
    by_layout = {str(g.get("mig")): g for g in doc["pool"]["node_groups"]}
    single_group = next(g for g in doc["pool"]["node_groups"] if g["mig"][0]["layout"] == "all-2g.20gb")
    assert single_group["gpus_per_node"] == 8  # 24 MIG devices / 3 per GPU
    custom_group = next(g for g in by_layout.values() if isinstance(g["mig"][0]["layout"], list))
    assert sorted(custom_group["mig"][0]["layout"]) == sorted(["3g.40gb@0", "1g.10gb@4", "1g.10gb@5"])


def test_malformed_snapshot_gives_one_error_per_object_naming_it():
    nodes, pods, queues = sample()
    nodes["items"][0]["metadata"]["labels"]["nvidia.com/gpu.product"] = "Tesla-V100-SXM2-32GB"
    del nodes["items"][1]["metadata"]["labels"]["nvidia.com/gpu.count"]
    nodes["items"][2]["kind"] = "Pod"
    pods["items"][0]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "lots"
    queues["items"].append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "not-a-queue"}})
    with pytest.raises(SnapshotInvalid) as exc:
        cluster_scenario(nodes, pods, queues)
    errors = exc.value.errors
    assert not any("Tesla-V100" in e for e in errors)  # a model not modelled leaves its node out, reported by name
    assert any("items[1] (Node gpu-a-002)" in e and "nvidia.com/gpu.count: missing" in e for e in errors)
    assert any("items[2] (Pod gpu-a-003)" in e and "expected a v1 Node" in e for e in errors)
    assert any("pods.json: items[0]" in e and "'lots' is not a quantity" in e for e in errors)
    assert any("queues.json" in e and "ConfigMap not-a-queue" in e for e in errors)


def test_a_pod_on_a_node_that_is_not_in_the_snapshot_is_reported():
    nodes, pods, _ = sample()
    pods["items"][0]["spec"]["nodeName"] = "gpu-z-999"
    with pytest.raises(SnapshotInvalid) as exc:
        cluster_scenario(nodes, pods)
    assert "spec.nodeName: 'gpu-z-999' is not a GPU node of nodes.json" in exc.value.errors[0]


def test_import_command_writes_the_scenario_only_when_the_whole_snapshot_is_understood(tmp_path):
    out = tmp_path / "cluster.yaml"
    call_command("import_cluster", str(SAMPLE / "nodes.json"), str(SAMPLE / "pods.json"), str(SAMPLE / "queues.json"), "-o", str(out))
    assert parse_scenario(__import__("yaml").safe_load(out.read_text())).name == "imported-cluster"
    bad_nodes = tmp_path / "nodes.json"
    nodes = json.loads((SAMPLE / "nodes.json").read_text())
    del nodes["items"][3]["metadata"]["labels"]["nvidia.com/gpu.count"]
    bad_nodes.write_text(json.dumps(nodes))
    out2 = tmp_path / "bad.yaml"
    with pytest.raises(CommandError) as exc:
        call_command("import_cluster", str(bad_nodes), str(SAMPLE / "pods.json"), "-o", str(out2))
    assert "nothing written" in str(exc.value) and "gpu-a-004" in str(exc.value)
    assert not out2.exists()
    not_json = tmp_path / "pods.json"
    not_json.write_text("NAME READY STATUS")
    with pytest.raises(CommandError, match="pods.json: Not JSON"):
        call_command("import_cluster", str(SAMPLE / "nodes.json"), str(not_json))


@pytest.mark.django_db
def test_upload_on_the_stack_page_runs_the_stack_on_the_clusters_shape(client, architect, django_capture_on_commit_callbacks):
    result = compose_stacks({"profile": "mixed", "pool": {"gpu_model": "A100-80GB", "gpu_count": 32}})
    stack = Stack.objects.create(name=result.stacks[0].title, profile="mixed", composition=result.stacks[0].model_dump(mode="json"))
    client.force_login(architect)
    files = {n: open(SAMPLE / f"{n}.json", "rb") for n in ("nodes", "pods", "queues")}
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("stack-simulate-cluster", args=[stack.pk]),
                               {"nodes_file": files["nodes"], "pods_file": files["pods"], "queues_file": files["queues"]})
    run = SimulationRun.objects.get(stack=stack)
    assert response.status_code == 302 and response["Location"] == reverse("run-detail", args=[run.pk])
    assert run.status == SimulationRun.SUCCEEDED, run.error
    assert {g["name"] for g in run.scenario["pool"]["node_groups"]} >= {"a100-sxm4-80gb-8g", "a100-pcie-40gb-4g-hami"}


@pytest.mark.django_db
def test_upload_of_a_broken_snapshot_queues_nothing_and_says_why(client, architect):
    result = compose_stacks({"profile": "training", "pool": {"gpu_model": "A100-80GB", "gpu_count": 32}})
    stack = Stack.objects.create(name="t", profile="training", composition=result.stacks[0].model_dump(mode="json"))
    client.force_login(architect)
    nodes = json.loads((SAMPLE / "nodes.json").read_text())
    nodes["items"].append(copy.deepcopy(nodes["items"][0]))  # a node listed twice
    from django.core.files.uploadedfile import SimpleUploadedFile

    response = client.post(reverse("stack-simulate-cluster", args=[stack.pk]), {
        "nodes_file": SimpleUploadedFile("nodes.json", json.dumps(nodes).encode()),
        "pods_file": SimpleUploadedFile("pods.json", (SAMPLE / "pods.json").read_bytes())}, follow=True)
    assert not SimulationRun.objects.exists()
    assert "duplicate node name &#x27;gpu-a-001&#x27;" in response.content.decode()


def test_thousands_of_identical_jobs_become_counted_entries_within_the_scenario_bounds():
    from placement.deploy.synthetic_cluster import large_snapshot

    nodes, pods = large_snapshot(node_count=700, pods_per_node=4)  # 2,800 jobs, over 2,000 entries if one per job
    doc = cluster_scenario(nodes, pods)
    jobs = [w for w in doc["workloads"] if w["kind"] != "inference"]
    assert sum(w.get("count", 1) for w in jobs) == 2800
    assert len(doc["workloads"]) < 2000
    assert parse_scenario(doc).pool.total_gpus == 700 // 4 * (8 + 8 + 8 + 4)


def test_an_object_that_lies_about_a_fields_type_is_refused_by_field_name():
    nodes, pods, queues = sample()
    liar = copy.deepcopy(nodes)
    liar["items"][0]["metadata"]["labels"] = ["nvidia.com/gpu.product"]
    with pytest.raises(SnapshotInvalid) as caught:
        cluster_scenario(liar, pods, queues)
    assert any("items[0]" in e and "metadata.labels: expected an object, got list" in e for e in caught.value.errors)
    bad_pod = copy.deepcopy(pods)
    bad_pod["items"][0]["spec"]["containers"][0]["resources"] = "8 GPUs"
    with pytest.raises(SnapshotInvalid) as caught:
        cluster_scenario(nodes, bad_pod, queues)
    assert any("spec.containers[0].resources: expected an object" in e for e in caught.value.errors)


def test_a_snapshot_nested_100000_deep_is_refused_naming_the_upload_and_nothing_runs(client, architect):
    body = compose_stacks({"profile": "mixed", "pool": {"gpu_model": "A100-80GB", "gpu_count": 32}}).stacks[0]
    stack = Stack.objects.create(name=body.title, profile="mixed", request={"profile": "mixed"},
                                 composition=body.model_dump(mode="json"))
    client.force_login(architect)
    from django.core.files.uploadedfile import SimpleUploadedFile
    deep = ("[" * 100_000 + "]" * 100_000).encode()
    response = client.post(reverse("stack-simulate-cluster", args=[stack.pk]), {
        "nodes_file": SimpleUploadedFile("nodes.json", deep),
        "pods_file": SimpleUploadedFile("pods.json", (SAMPLE / "pods.json").read_bytes()),
    }, follow=True)
    assert response.status_code == 200
    assert "nodes_file: items[0]: nested too deeply" in response.content.decode()
    assert not SimulationRun.objects.exists()


def test_a_cluster_upload_with_the_broker_down_says_so_on_the_stack_page_instead_of_a_500(client, architect, monkeypatch):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from placement.evidence.services import runs as evidence

    def broker_down(**kwargs):
        raise evidence.QueueUnavailable("The task queue is unavailable; nothing was queued. Try again in a minute.")

    monkeypatch.setattr(evidence, "simulation_start", broker_down)
    body = compose_stacks({"profile": "mixed", "pool": {"gpu_model": "A100-80GB", "gpu_count": 32}}).stacks[0]
    stack = Stack.objects.create(name=body.title, profile="mixed", request={"profile": "mixed"},
                                 composition=body.model_dump(mode="json"))
    client.force_login(architect)
    response = client.post(reverse("stack-simulate-cluster", args=[stack.pk]), {
        "nodes_file": SimpleUploadedFile("nodes.json", (SAMPLE / "nodes.json").read_bytes()),
        "pods_file": SimpleUploadedFile("pods.json", (SAMPLE / "pods.json").read_bytes()),
    }, follow=True)
    assert response.status_code == 200
    assert "The task queue is unavailable" in response.content.decode()
    assert not SimulationRun.objects.exists()
