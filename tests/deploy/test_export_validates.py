"""Every exported object validates against the schema of the exact upstream version the export names."""

from pathlib import Path

import pytest
import yaml

from placement.deploy import export_scenario
from scheduler_core import load_scenario
from scheduler_core import mig as migmod
from tests.deploy.schemas import chart_defaults, object_errors, schemas_dir, values_errors

SCENARIOS = sorted((Path(__file__).resolve().parents[2] / "fixtures" / "scenarios").glob("*.yaml"))
FORMS = ["form-a-mig-volcano", "form-b-hami-kueue", "form-c-mig-hami-volcano"]


def export_of(name: str):
    return export_scenario(load_scenario(Path(__file__).resolve().parents[2] / "fixtures" / "scenarios" / f"{name}.yaml"))


def all_errors(export) -> list[str]:
    errors = [e for obj in export.objects() for e in object_errors(obj)]
    errors += [e for chart, values in export.helm_values().items() for e in values_errors(chart, values)]
    errors += embedded_config_errors(export)
    return errors


def embedded_config_errors(export) -> list[str]:
    """Configs carried inside ConfigMaps: mig-parted (format v1, profiles of the pool's GPUs) and
    the device plugin's config v1 (api/config/v1: version, flags, sharing)."""
    errors = []
    for obj in export.objects():
        name = obj["metadata"]["name"]
        if name == "atlas-mig-parted-config":
            doc = yaml.safe_load(obj["data"]["config.yaml"])
            if set(doc) != {"version", "mig-configs"} or doc["version"] != "v1":
                errors.append(f"mig-parted: top-level keys {sorted(doc)}")
            for label, entries in doc["mig-configs"].items():
                for entry in entries:
                    if not set(entry) <= {"devices", "mig-enabled", "mig-devices", "device-filter"}:
                        errors.append(f"mig-parted {label}: keys {sorted(entry)}")
                    for profile in entry.get("mig-devices", {}):
                        if not any(profile in migmod.PROFILES[f] for f in migmod.PROFILES):
                            errors.append(f"mig-parted {label}: unknown profile {profile}")
        if name == "atlas-device-plugin-config":
            for key, text in obj["data"].items():
                doc = yaml.safe_load(text)
                if doc.get("version") != "v1" or not set(doc) <= {"version", "flags", "resources", "sharing", "imex"}:
                    errors.append(f"device plugin config {key}: {sorted(doc)}")
                if doc["flags"].get("migStrategy") not in ("none", "single", "mixed"):
                    errors.append(f"device plugin config {key}: migStrategy {doc['flags'].get('migStrategy')}")
                for strategy, body in doc.get("sharing", {}).items():
                    if strategy not in ("timeSlicing", "mps") or not set(body) <= {"renameByDefault", "failRequestsGreaterThanOne", "resources"}:
                        errors.append(f"device plugin config {key}: sharing.{strategy} {sorted(body)}")
                    for r in body["resources"]:
                        if not set(r) <= {"name", "rename", "devices", "replicas"} or r["replicas"] < 2:
                            errors.append(f"device plugin config {key}: resource {r}")
    return errors


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_every_object_of_every_builtin_scenario_validates_against_its_upstream_schema(path):
    export = export_scenario(load_scenario(path))
    assert export.objects()
    assert all_errors(export) == []


def test_the_validator_catches_a_typo_a_wrong_enum_and_an_unknown_helm_key():
    export = export_of("form-b-hami-kueue")
    cq = next(o for o in export.objects() if o["kind"] == "ClusterQueue")
    cq["spec"]["queueingStrategy"] = "Fifo"
    cq["spec"]["cohort"] = "org"  # v1beta1 spelling; v1beta2 calls it cohortName
    errors = object_errors(cq)
    assert any("queueingStrategy" in e for e in errors) and any("cohort" in e and "Additional" in e for e in errors)
    job = next(o for o in export_of("form-c-mig-hami-volcano").objects() if o["kind"] == "Job")
    job["spec"]["backoffLimit"] = "six"
    assert object_errors(job)
    assert values_errors("hami", {"devicePlugin": {"deviceSplitcount": 10}}) == [
        "hami: devicePlugin.deviceSplitcount: not a key of the chart's values.yaml"]


@pytest.mark.parametrize("form", FORMS)
def test_each_form_of_seeds_002_exports_its_data_plane_and_queues(form):
    export = export_of(form)
    kinds = {o["kind"] for o in export.objects()}
    charts = set(export.helm_values())
    assert "gpu-operator" in charts
    if form != "form-b-hami-kueue":
        assert "Queue" in kinds and "PyTorchJob" in kinds  # Volcano queues, a gang training job
        mig = yaml.safe_load(next(o for o in export.objects() if o["metadata"]["name"] == "atlas-mig-parted-config")["data"]["config.yaml"])
        assert len(mig["mig-configs"]) >= 2
    else:
        assert {"ClusterQueue", "ResourceFlavor", "Cohort", "LocalQueue", "WorkloadPriorityClass"} <= kinds
        assert "hami" in charts
    assert all_errors(export) == []


def test_form_a_mig_layout_is_the_one_the_simulation_used_and_selected_by_the_node_label():
    export = export_of("form-a-mig-volcano")
    mig = yaml.safe_load(next(o for o in export.objects() if o["metadata"]["name"] == "atlas-mig-parted-config")["data"]["config.yaml"])
    assert mig["mig-configs"]["atlas-mig"] == [
        # one entry per GPU model, selected by its PCI device id (A100-SXM4-80GB: 0x20B2, vendor 10DE)
        {"device-filter": "0x20B210DE", "devices": [0, 1, 2, 3, 4, 5], "mig-enabled": True, "mig-devices": {"2g.20gb": 3}},
        {"device-filter": "0x20B210DE", "devices": [6, 7], "mig-enabled": True, "mig-devices": {"1g.10gb": 7}},
    ]
    plan = yaml.safe_load(next(o for o in export.objects() if o["metadata"]["name"] == "atlas-export")["data"]["plan.yaml"])
    mig_pool = next(p for p in plan["pools"] if p["pool"] == "mig")
    assert mig_pool["labels"]["nvidia.com/mig.config"] == "atlas-mig"
    values = export.helm_values()["gpu-operator"]
    assert values["mig"]["strategy"] == "mixed" and values["migManager"]["enabled"] is True
    rank = next(o for o in export.objects() if o["metadata"]["name"] == "rank")
    limits = rank["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert limits == {"nvidia.com/mig-2g.20gb": 1} and rank["spec"]["template"]["spec"]["schedulerName"] == "volcano"


def test_form_b_clusterqueues_cover_every_resource_name_with_the_scenarios_quotas():
    export = export_of("form-b-hami-kueue")
    research = next(o for o in export.objects() if o["kind"] == "ClusterQueue" and o["metadata"]["name"] == "research")
    group = research["spec"]["resourceGroups"][0]
    assert group["coveredResources"] == ["nvidia.com/gpu", "nvidia.com/gpumem"]
    assert group["flavors"][0]["resources"] == [{"name": "nvidia.com/gpu", "nominalQuota": 16},
                                                {"name": "nvidia.com/gpumem", "nominalQuota": 1400000}]
    assert research["spec"]["cohortName"] == "org"
    hami = export.helm_values()["hami"]
    assert hami["devicePlugin"]["deviceSplitCount"] == 10
    chat = next(o for o in export.objects() if o["kind"] == "Deployment")
    pod = chat["spec"]["template"]["spec"]
    assert pod["schedulerName"] == "hami-scheduler"
    assert set(pod["containers"][0]["resources"]["limits"]) >= {"nvidia.com/gpu", "nvidia.com/gpumem"}
    assert chat["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "product"


def test_a_hami_container_is_exported_as_written_so_the_webhook_applies_its_own_defaults():
    sc = load_scenario(Path(__file__).resolve().parents[2] / "fixtures" / "scenarios" / "form-b-hami-kueue.yaml")
    data = sc.model_dump(mode="json")
    chat = next(w for w in data["workloads"] if w["kind"] == "inference")
    chat["unit"].update(hami={"gpumem_percentage": 50}, gpucores=None)
    chat.pop("memory_request_gib", None)
    from scheduler_core import parse_scenario
    export = export_scenario(parse_scenario(data))
    pod = next(o for o in export.objects() if o["kind"] == "Deployment")["spec"]["template"]["spec"]
    assert pod["containers"][0]["resources"]["limits"] == {"nvidia.com/gpumem-percentage": 50}
    assert pod["schedulerName"] == "hami-scheduler" and export.helm_values()["hami"]["schedulerName"] == "hami-scheduler"
    assert all_errors(export) == []


def test_the_schemas_read_are_the_stored_upstream_files_not_copies():
    assert (schemas_dir() / "sources.json").exists()
    assert "devicePlugin" in chart_defaults("gpu-operator")
    assert not list(Path(__file__).resolve().parents[2].rglob("kueue.x-k8s.io_clusterqueues.yaml"))
