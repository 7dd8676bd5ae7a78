"""A bundle installs as an operator would: every chart renders with its values (`helm template` on the
upstream charts in ../shared/charts/), upstream configuration goes through the charts' own values,
and the install steps name each chart's repository, version, namespace and release, in order."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from placement.deploy import export_scenario, install
from placement.deploy import targets as t
from placement.deploy.control_plane import KUEUE_CHART_CONFIG
from scheduler_core import load_scenario, parse_scenario
from tests.deploy.charts import chart_defaults, charts_dir, render, values_errors
from tests.deploy.plan_bundles import PLAN_BUNDLES, plan_bundle, scenario_of
from tests.deploy.test_round_trip import _with_host_resources

SCENARIOS = sorted((Path(__file__).resolve().parents[2] / "fixtures" / "scenarios").glob("*.yaml"))
FRAMEWORKS = {"Job": {"batch/job"}, "JobSet": {"jobset.x-k8s.io/jobset"}, "PyTorchJob": {"kubeflow.org/pytorchjob"},
              "Deployment": {"pod", "deployment"}, "LeaderWorkerSet": {"pod", "leaderworkerset.x-k8s.io/leaderworkerset"},
              "RayJob": {"ray.io/rayjob"}}


def bundles():
    out = [(p.stem, load_scenario(p)) for p in SCENARIOS]
    out.append(("kai-host", _with_host_resources("kai")))
    # Composed stacks: what only a plan carries (the kai-resource-isolator's KAI release, Volcano's vGPU plugin).
    out += [(name, scenario_of(name)) for name in PLAN_BUNDLES]
    return out


BUNDLES = bundles()


def export_of(name: str, scenario):
    return plan_bundle(name)[1] if name in PLAN_BUNDLES else export_scenario(scenario)


def charts_of(export) -> dict[str, dict]:
    values = export.helm_values()
    kinds = {o["kind"] for f in export.files if f.path.startswith("workloads/") for o in f.objects}
    return {c: values.get(c, {}) for c in install.components_needed(export.files, kinds) if c in t.COMPONENTS}


def rendered_config(objects, name: str, key: str) -> dict:
    cm = next(o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == name)
    return yaml.safe_load(cm["data"][key])


@pytest.mark.parametrize("name,scenario", BUNDLES, ids=[b[0] for b in BUNDLES])
def test_every_chart_a_bundle_installs_renders_with_its_values_and_no_unknown_key(name, scenario):
    export = export_of(name, scenario)
    charts = charts_of(export)
    assert "gpu-operator" in charts
    chart_objects = set()
    for chart, values in charts.items():
        if not install.component(chart, values).local:
            # Skipped, not rendered: no chart of this release is stored offline (KAI v0.17.0, the oldest release
            # upstream supports the kai-resource-isolator with; ../shared/charts holds v0.13.0 only, whose values.yaml
            # has no binder.plugins). Rendering v0.13.0 with values it does not know would check nothing; the
            # bundle's README says the chart was not rendered.
            assert install.component(chart, values).note in export.file("README.md").body
            continue
        assert values_errors(chart, values) == []
        objects = render(chart, values)
        assert objects, chart
        chart_objects |= {(o["kind"], o["metadata"].get("namespace") or t.COMPONENTS[chart].namespace, o["metadata"]["name"])
                          for o in objects}
    # Nothing in the bundle replaces an object a chart owns (Helm would revert or refuse it).
    for obj in export.objects():
        key = (obj["kind"], obj["metadata"].get("namespace"), obj["metadata"]["name"])
        assert key not in chart_objects and (obj["kind"], None, obj["metadata"]["name"]) not in {
            (k, None, n) for k, _ns, n in chart_objects if k == "DeviceClass"}, key


@pytest.mark.parametrize("name,scenario", [b for b in BUNDLES if b[1].stack.control_plane.admission == "kueue"],
                         ids=lambda b: b if isinstance(b, str) else "")
def test_kueue_manager_config_keeps_the_charts_defaults_and_enables_every_workload_kind_of_the_bundle(name, scenario):
    export = export_of(name, scenario)
    config = rendered_config(render("kueue", export.helm_values()["kueue"]), "kueue-manager-config", "controller_manager_config.yaml")
    default = yaml.safe_load(chart_defaults("kueue")["managerConfig"]["controllerManagerConfigYaml"])
    assert {k: v for k, v in config.items() if k in default and k != "integrations"} == {
        k: v for k, v in default.items() if k != "integrations"}
    frameworks = set(config["integrations"]["frameworks"])
    assert set(default["integrations"]["frameworks"]) <= frameworks
    kinds = {o["kind"] for o in export.objects() if o["metadata"].get("labels", {}).get("kueue.x-k8s.io/queue-name")}
    assert kinds
    for kind in kinds:
        assert FRAMEWORKS[kind] <= frameworks, kind
    assert "kubeflow.org/pytorchjob" in frameworks or "PyTorchJob" not in kinds


def test_the_export_mirrors_the_kueue_charts_default_config():
    default = yaml.safe_load(chart_defaults("kueue")["managerConfig"]["controllerManagerConfigYaml"])
    assert KUEUE_CHART_CONFIG == default


def test_a_pytorchjob_under_kueue_is_managed_by_kueue():
    data = load_scenario(SCENARIOS[0].parent / "form-b-hami-kueue.yaml").model_dump(mode="json")
    export = export_scenario(parse_scenario(data))
    assert any(o["kind"] == "PyTorchJob" for o in export.objects())
    config = rendered_config(render("kueue", export.helm_values()["kueue"]), "kueue-manager-config", "controller_manager_config.yaml")
    assert "kubeflow.org/pytorchjob" in config["integrations"]["frameworks"]


@pytest.mark.parametrize("name", ["form-a-mig-volcano", "partial-gang-coscheduling", "topology-cliff-kueue-tas"])
def test_scheduler_configuration_goes_through_the_charts_values(name):
    scenario = load_scenario(SCENARIOS[0].parent / f"{name}.yaml")
    export = export_scenario(scenario)
    cp = scenario.stack.control_plane
    if cp.scheduler == "volcano":
        conf = rendered_config(render("volcano", export.helm_values()["volcano"]), "volcano-scheduler-configmap", "volcano-scheduler.conf")
        assert [a.strip() for a in conf["actions"].split(",")] == cp.volcano.actions
        assert [p["name"] for tier in conf["tiers"] for p in tier["plugins"]] == cp.volcano.plugins
    elif cp.scheduler == "coscheduling":
        conf = rendered_config(render("scheduler-plugins", export.helm_values()["scheduler-plugins"]), "scheduler-config",
                               "scheduler-config.yaml")
        assert conf["leaderElection"]["leaderElect"] is False
        profile = conf["profiles"][0]
        assert profile["plugins"]["multiPoint"]["enabled"] == [{"name": "Coscheduling"}]
        args = next(c["args"] for c in profile["pluginConfig"] if c["name"] == "Coscheduling")
        assert args["permitWaitingTimeSeconds"] == int(cp.coscheduling.permit_waiting_timeout)
    names = {(o["kind"], o["metadata"]["name"]) for o in export.objects()}
    assert not names & {("ConfigMap", "kueue-manager-config"), ("ConfigMap", "volcano-scheduler-configmap")}


def test_dra_values_pass_the_charts_own_validation_and_the_chart_alone_creates_the_device_classes():
    export = export_scenario(load_scenario(SCENARIOS[0].parent / "device-plugin-dra.yaml"))
    objects = render("k8s-dra-driver-gpu", export.helm_values()["k8s-dra-driver-gpu"])
    classes = {o["metadata"]["name"] for o in objects if o["kind"] == "DeviceClass"}
    assert {"gpu.nvidia.com", "mig.nvidia.com"} <= classes
    assert not [o for o in export.objects() if o["kind"] == "DeviceClass"]


@pytest.mark.parametrize("project", sorted(t.COMPONENTS))
def test_each_components_waits_and_restarts_name_what_its_chart_installs(project):
    c = t.COMPONENTS[project]
    values = dict(c.set_values) if project != "k8s-dra-driver-gpu" else {"gpuResourcesEnabledOverride": True}
    objects = render(project, values, include_crds=True)
    crds = {o["metadata"]["name"] for o in objects if o["kind"] == "CustomResourceDefinition"}
    for path in (charts_dir() / c.local).rglob("*.yaml"):  # crds/ folders and CRDs read through .Files.Get
        if path.is_file() and "kind: CustomResourceDefinition" in path.read_text() and "{{" not in path.read_text():
            crds |= {d["metadata"]["name"] for d in yaml.safe_load_all(path.read_text())
                     if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition"}
    assert set(c.crds) <= crds
    workloads = {f"{o['kind'].lower()}/{o['metadata']['name']}" for o in objects}
    assert {f"deployment/{d}" for d in c.deployments} | set(c.restart) <= workloads
    assert chart_defaults(project) is not None


def test_install_steps_put_namespaces_crds_and_operators_before_the_objects_that_need_them():
    export = export_scenario(load_scenario(SCENARIOS[0].parent / "form-a-mig-volcano.yaml"))
    script = export.file("install.sh").render()
    readme = export.file("README.md").render()
    order = [script.index(s) for s in ("-f namespaces.yaml", "ATLAS_NODES_", "-f gpu-operator/mig-parted-config.yaml",
                                        "helm upgrade --install gpu-operator", "-k training-operator",
                                        "helm upgrade --install volcano volcano --repo https://volcano-sh.github.io/helm-charts "
                                        "--version 1.15.1 --namespace volcano-system",
                                        "crd/queues.scheduling.volcano.sh", "rollout status deployment/volcano-admission",
                                        "-f volcano/queues.yaml", "-f workloads/")]
    assert order == sorted(order)
    for line in script.splitlines():  # every command of the script is written out in the README
        if line and not line.startswith(("#", "echo", "set ", "cd ")):
            assert line in readme, line
    namespaces = {o["metadata"]["name"] for o in export.file("namespaces.yaml").objects}
    assert {o["metadata"]["namespace"] for o in export.objects() if o["metadata"].get("namespace")} - {"default", "kube-system"} <= namespaces
    assert "gpu-operator" in namespaces  # the MIG and device plugin ConfigMaps go in before the operator


@pytest.mark.skipif(not shutil.which("kubectl"), reason="kubectl builds the kustomization")
@pytest.mark.parametrize("scheduler,flag", [("volcano", "--gang-scheduler-name=volcano"),
                                            ("coscheduling", "--gang-scheduler-name=scheduler-plugins-scheduler")])
def test_the_training_operator_gets_the_gang_scheduler_flag(tmp_path, scheduler, flag):
    name = "partial-gang-volcano" if scheduler == "volcano" else "partial-gang-coscheduling"
    export = export_scenario(load_scenario(SCENARIOS[0].parent / f"{name}.yaml"))
    doc = yaml.safe_load(export.file("training-operator/kustomization.yaml").render())
    assert doc["resources"] == [t.TRAINING_OPERATOR_KUSTOMIZE]
    doc["resources"] = [os.path.relpath(charts_dir() / t.TRAINING_OPERATOR_LOCAL, tmp_path)]  # the same tag, offline
    (tmp_path / "kustomization.yaml").write_text(yaml.safe_dump(doc))
    built = subprocess.run(["kubectl", "kustomize", "--load-restrictor", "LoadRestrictionsNone", str(tmp_path)],
                           capture_output=True, text=True, check=True).stdout
    deployment = next(d for d in yaml.safe_load_all(built) if d and d["kind"] == "Deployment")
    assert flag in deployment["spec"]["template"]["spec"]["containers"][0]["command"]
