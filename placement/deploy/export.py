"""Scenario (stack applied, as the simulator ran it) -> the objects and values that make it real,
with the ordered install (install.sh and the README) that puts them on an empty cluster."""

from __future__ import annotations

import re

from placement.deploy import install
from placement.deploy import targets as t
from placement.deploy.bundle import Export, ExportFile, to_yaml
from placement.deploy.control_plane import control_plane_files
from placement.deploy.data_plane import data_plane_files, pool_plans
from placement.deploy.workloads import workload_files
from scheduler_core.scenario import Scenario

APPLY_ORDER = ["namespaces.yaml", "gpu-operator/", "hami/", "dra/", "training-operator/", "kube-scheduler/", "kueue/",
               "volcano/", "kai/", "coscheduling/", "workloads/"]
# Namespaces that exist on every cluster, or that the chart installs create (helm --create-namespace).
_PRESENT = {"default", "kube-system"}


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "stack"


def _set(values: dict, dotted: str, value) -> None:
    *parents, last = dotted.split(".")
    for key in parents:
        values = values.setdefault(key, {})
    values[last] = value


def _chart_owned(files: list[ExportFile]) -> None:
    """Release pins into each chart's values; objects a chart creates itself leave the manifests."""
    owned = set()
    for f in files:
        component = t.COMPONENTS.get(f.chart or "")
        if f.kind != "helm-values" or component is None:
            continue
        for key, value in component.set_values:
            _set(f.values, key, value)
        owned |= set(component.creates)
    for f in files:
        if f.kind == "manifests":
            f.objects = [o for o in f.objects if (o["kind"], o["metadata"]["name"]) not in owned]
    files[:] = [f for f in files if f.kind != "manifests" or f.objects]


def namespaces_file(files: list[ExportFile]) -> ExportFile | None:
    names = sorted({o["metadata"]["namespace"] for f in files if f.kind == "manifests" for o in f.objects
                    if o["metadata"].get("namespace")} - _PRESENT)
    if not names:
        return None
    return ExportFile("namespaces.yaml", "manifests", note="every namespace an object of this bundle lives in",
                      objects=[{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in names])


def export_scenario(scenario: Scenario, *, stack_name: str | None = None, projects: list[str] | None = None,
                    plan=None) -> Export:
    """Every file for the scenario's pools and stack; raises ExportError when a target cannot express it."""
    plans = pool_plans(scenario)
    workloads = workload_files(scenario, plan)
    kinds = {o["kind"] for f in workloads for o in f.objects}
    files: list[ExportFile] = []
    files += data_plane_files(scenario, plans)
    files += control_plane_files(scenario, plans, kinds)  # may add flavor labels to the pool plans
    files += workloads
    _chart_owned(files)
    cp = scenario.stack.control_plane
    if "PyTorchJob" in kinds:
        files.append(ExportFile(f"{t.TRAINING_OPERATOR_DIR}/kustomization.yaml", "text",
                                note="the v1 training operator at its tag, with its gang scheduler flag",
                                body=to_yaml(install.training_operator_kustomization(install.GANG_SCHEDULER_NAMES.get(cp.scheduler)))))
    namespaces = namespaces_file(files)
    if namespaces:
        files.append(namespaces)
    files.sort(key=lambda f: (next(i for i, p in enumerate(APPLY_ORDER + [""]) if f.path.startswith(p)), f.path))
    name = stack_name or scenario.stack.name
    targets = {project: tag for project, (tag, _) in t.UPSTREAM.items()}
    plan = {
        "stack": name, "scenario": scenario.name, "projects": projects or [],
        "targets": targets,
        "pools": [p.as_dict() for p in plans],
        # An operator taints a node NoSchedule while its device plugin is not registered.
        "deviceReadinessTaint": cp.respect_device_plugin_readiness,
    }
    atlas = ExportFile("atlas-export.yaml", "manifests", note="what this export targets and how nodes are labelled per pool",
                       objects=[{"apiVersion": "v1", "kind": "ConfigMap",
                                 "metadata": {"name": t.EXPORT_CONFIGMAP, "namespace": "default"},
                                 "data": {"plan.yaml": to_yaml(plan)}}])
    steps = install.install_steps([atlas, *files], plans, cp.scheduler)
    script = ExportFile("install.sh", "text", note="the README's steps as one script", body=install.install_script(steps))
    readme = ExportFile("README.md", "text", body=_readme(name, scenario, plans, [atlas, *files], steps))
    return Export(name=_slug(name), files=[readme, script, atlas, *files], targets=targets)


def _readme(name: str, scenario: Scenario, plans, files: list[ExportFile], steps) -> str:
    lines = [f"# {name}", "",
             f"Generated by the GPU Placement Atlas from scenario `{scenario.name}`: the quotas, MIG layouts and "
             "policies below are the ones the simulator ran.", "",
             "## Install on an empty cluster", "",
             "Run `./install.sh` from this folder (after setting one `ATLAS_NODES_<POOL>` variable per pool), or "
             "the same commands one step at a time:", ""]
    for p in plans:
        lines.append(f"- `export {install.pool_variable(p.name)}=\"<node> ...\"`: the {p.count} node(s) of pool "
                     f"**{p.name}** ({p.gpus_per_node} x {p.gpu}, {p.mechanism})"
                     + (f"; racks also carry `{t.RACK_LABEL}=<rack>`" if p.hardware.get("racks", 1) > 1 else ""))
    lines += ["", *install.install_readme(steps),
              f"`{t.GPU_PRODUCT}` is set by GPU Feature Discovery; atlas-export.yaml lists it per pool for checking.", "",
              "## Targets", "", "| project | version | used for |", "|---|---|---|"]
    lines += [f"| {p} | {tag} | {what} |" for p, (tag, what) in t.UPSTREAM.items()]
    lines += ["", "## Files", ""]
    lines += [f"- `{f.path}`" + (f": {f.note}" if f.note else "") for f in files]
    lines.append("")
    return "\n".join(lines)
