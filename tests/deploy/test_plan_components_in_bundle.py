"""What the plan relies on reaches the bundle: the settings it names for a component land in that
component's chart values, the components it names are installed by the bundle's steps, and only what
really lies outside (an operator this bundle has no chart for) is named under "Not installed by this bundle".

Issue 30: two plan components were only named there. Volcano's vGPU device plugin
(Project-HAMi/volcano-vgpu-device-plugin, plain manifests, no chart): without it no node advertises
volcano.sh/vgpu-* and every vGPU pod stays Pending. The kai-resource-isolator (KAI fractions capped by HAMi-core):
kai-scheduler/KAI-Scheduler docs/gpu-sharing/hami/README.md needs KAI >= v0.17.0 with global.gpuSharing and
binder.plugins.hamicore.enabled, then `helm install kai-resource-isolator oci://docker.io/projecthami/kai-resource-isolator
--version 1.1.0-chart`; the bundle pinned KAI v0.13.0. Failed on main: no step installed either, the isolator
bundle installed KAI v0.13.0, HAMi was installed beside the vGPU plugin and Volcano's deviceshare was off.
"""

from __future__ import annotations

import json
import re

import pytest
import yaml

from placement.deploy import export_scenario
from placement.deploy import targets as t
from placement.plans.scenario import scenario_document
from placement.rules import ComposeRequest, compose
from scheduler_core.scenario import parse_scenario
from tests.deploy.charts import charts_dir, render
from tests.deploy.plan_bundles import graph, plan_bundle

NOT_INSTALLED = "## Not installed by this bundle"
KAI_V017 = ("helm upgrade --install kai-scheduler oci://ghcr.io/kai-scheduler/kai-scheduler/kai-scheduler --version v0.17.0 "
            "--namespace kai-scheduler --create-namespace -f kai/values.yaml")
ISOLATOR = ("helm upgrade --install kai-resource-isolator oci://docker.io/projecthami/kai-resource-isolator --version 1.1.0-chart "
            "--namespace kai-resource-isolator --create-namespace")


def test_the_kai_settings_the_isolator_needs_are_in_kais_chart_values():
    _plan, bundle = plan_bundle("plan-kai-isolator")
    values = bundle.file("kai/values.yaml").values
    assert values["global"]["gpuSharing"] is True
    assert values["binder"]["plugins"]["hamicore"]["enabled"] is True


def test_the_isolator_and_the_kai_release_it_needs_are_installed_before_the_workloads():
    _plan, bundle = plan_bundle("plan-kai-isolator")
    script, readme = bundle.file("install.sh").body, bundle.file("README.md").body
    assert KAI_V017 in script and ISOLATOR in script
    assert script.index(KAI_V017) < script.index(ISOLATOR) < script.index("-f workloads/")
    assert "--version v0.13.0" not in script  # v0.13.0 has no hamicore binder plugin
    assert NOT_INSTALLED not in readme  # hami-core comes with the isolator's DaemonSet
    assert "no chart of that version is stored offline" in readme  # said, not hidden: KAI v0.17.0 was not rendered here
    targets = yaml.safe_load(bundle.file("atlas-export.yaml").objects[0]["data"]["plan.yaml"])["targets"]
    assert (targets["kai-scheduler"], targets["kai-resource-isolator"]) == ("v0.17.0", "1.1.0-chart")


def _shared_vgpu():
    """The sources.json entry of the plugin's manifest, and its objects."""
    copies = json.loads((charts_dir() / "sources.json").read_text())["copies"]
    entry = next(c for c in copies if c["project"] == t.VOLCANO_VGPU.project and c["upstream_path"] == t.VOLCANO_VGPU.file)
    return entry, [d for d in yaml.safe_load_all((charts_dir() / entry["local_path"]).read_text()) if d]


def test_a_volcano_vgpu_bundle_applies_the_plugin_at_the_shared_tag_after_volcano_and_waits_for_its_daemonset():
    _plan, bundle = plan_bundle("plan-volcano-vgpu")
    script, readme = bundle.file("install.sh").body, bundle.file("README.md").body
    entry, objects = _shared_vgpu()
    owner_repo = entry["repository"].removeprefix("https://github.com/")
    apply = f"kubectl apply -f https://raw.githubusercontent.com/{owner_repo}/{entry['tag']}/{entry['upstream_path']}"
    assert apply in script and apply in readme
    wait = re.search(r"kubectl -n (\S+) rollout status daemonset/(\S+) ", script[script.index(apply):])
    assert wait, "no wait for the plugin's DaemonSet"
    daemonsets = {(o["metadata"]["namespace"], o["metadata"]["name"]) for o in objects if o["kind"] == "DaemonSet"}
    assert wait.groups() in daemonsets
    order = [script.index(s) for s in ("helm upgrade --install volcano ", apply, wait.group(0), "-f workloads/")]
    assert order == sorted(order)
    assert NOT_INSTALLED not in readme  # hami-core: the plugin's image copies it onto the node


def test_the_vgpu_resources_the_pods_request_are_the_ones_the_pinned_plugin_advertises():
    plan, bundle = plan_bundle("plan-volcano-vgpu")
    _entry, objects = _shared_vgpu()
    requested = {name for f in bundle.files if f.path.startswith("workloads/") for o in f.objects
                 for c in o["spec"]["template"]["spec"]["containers"]
                 for part in ("limits", "requests") for name in c["resources"].get(part, {}) if name.startswith("volcano.sh/")}
    assert requested == set(t.VOLCANO_VGPU.resources)
    config = next(yaml.safe_load(o["data"]["device-config.yaml"])["nvidia"] for o in objects
                  if o["kind"] == "ConfigMap" and "device-config.yaml" in o.get("data", {}))
    assert requested == {config["resourceCountName"], config["resourceMemoryName"], config["resourceCoreName"]}
    daemonset = next(o for o in objects if o["kind"] == "DaemonSet")
    args = [a for c in daemonset["spec"]["template"]["spec"]["containers"] for a in c.get("args", [])]
    split = next(p.settings["deviceSplitCount"] for p in plan.components if p.project == t.VOLCANO_VGPU.project)
    assert f"--device-split-count={split}" in args and int(split) == t.VOLCANO_VGPU.split_count
    assert config["deviceMemoryScaling"] == 1  # the plan's vGPU memory is the card's, unscaled


def test_volcano_binds_vgpu_through_deviceshare_and_hami_does_not_claim_the_same_gpus():
    _plan, bundle = plan_bundle("plan-volcano-vgpu")
    objects = render("volcano", bundle.helm_values()["volcano"])
    cm = next(o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "volcano-scheduler-configmap")
    plugins = {p["name"]: p.get("arguments", {}) for tier in yaml.safe_load(cm["data"]["volcano-scheduler.conf"])["tiers"]
               for p in tier["plugins"]}
    assert plugins["deviceshare"] == {"deviceshare.VGPUEnable": True}
    assert "predicates" in plugins
    assert "hami" not in bundle.helm_values()
    pools = yaml.safe_load(bundle.file("atlas-export.yaml").objects[0]["data"]["plan.yaml"])["pools"]
    for pool in pools:
        assert pool["labels"].get(t.HAMI_NODE) is None and pool["labels"][t.DEPLOY_DEVICE_PLUGIN] == "false"


def test_a_bundle_whose_components_all_install_has_no_such_section():
    body = {"workloads": [{"name": "train", "kind": "training", "replicas": 2, "gpus_per_replica": 8,
                           "gpu_memory_gib": 70, "gang": True}],
            "constraints": {"require": ["kueue"]}, "pool": {"gpu_model": "H100-80GB", "gpu_count": 16}}
    stack = compose(graph(), ComposeRequest.model_validate(body)).stacks[0]
    bundle = export_scenario(parse_scenario(scenario_document(stack.plan)), plan=stack.plan)
    assert NOT_INSTALLED not in bundle.file("README.md").body, [c.project for c in stack.plan.components]


@pytest.mark.parametrize("name", ["plan-kai-isolator", "plan-volcano-vgpu"])
def test_every_plan_component_is_installed_by_a_step_part_of_kubernetes_or_brought_by_one(name):
    plan, bundle = plan_bundle(name)
    titles = {s.split(". ", 1)[1].split()[0] for s in re.findall(r"^### \d+\. .+$", bundle.file("README.md").body, re.MULTILINE)}
    charts = set(bundle.helm_values())
    for c in plan.components:
        brought = {t.DELIVERED_BY.get(c.project), *t.ALSO_DELIVERED_BY.get(c.project, ())}
        assert c.project in titles | charts or brought & (titles | charts) or c.project in t.IN_KUBERNETES \
            or c.role == "workload_unit", c.project


def test_beside_other_gpu_pools_the_vgpu_plugin_runs_only_on_the_vgpu_pools_nodes():
    # The upstream DaemonSet has no nodeSelector: on a MIG pool it would advertise vGPUs of the same cards.
    body = {"profile": "mixed", "pool": {"gpu_model": "A100-80GB", "gpu_count": 32}}
    stack = compose(graph(), ComposeRequest.model_validate(body)).stacks[0]
    assert {g.data_plane.project for g in stack.plan.node_groups} >= {"mig", t.VOLCANO_VGPU.project}
    bundle = export_scenario(parse_scenario(scenario_document(stack.plan)), plan=stack.plan)
    script = bundle.file("install.sh").body
    patch = re.search(r"kubectl -n kube-system patch daemonset/volcano-device-plugin --type=strategic -p '(.+)'", script)
    assert patch and script.index(t.VOLCANO_VGPU.url) < patch.start() < script.index("rollout status daemonset/volcano-device-plugin")
    selector = json.loads(patch.group(1))["spec"]["template"]["spec"]["nodeSelector"]
    pools = yaml.safe_load(bundle.file("atlas-export.yaml").objects[0]["data"]["plan.yaml"])["pools"]
    vgpu = {g.name for g in stack.plan.node_groups if g.data_plane.project == t.VOLCANO_VGPU.project}
    for pool in pools:
        assert (selector.items() <= pool["labels"].items()) == (pool["pool"] in vgpu), pool["pool"]
