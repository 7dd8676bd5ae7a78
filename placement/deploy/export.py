"""Scenario (stack applied, as the simulator ran it) -> the objects and values that make it real,
with the ordered install (install.sh and the README) that puts them on an empty cluster."""

from __future__ import annotations

import re

import yaml

from placement.deploy import install
from placement.deploy import targets as t
from placement.deploy.bundle import Export, ExportFile, to_yaml
from placement.deploy.control_plane import control_plane_files
from placement.deploy.data_plane import data_plane_files, pool_plans
from placement.deploy.frameworks import OPERATORS
from placement.deploy.workloads import priority_class_file, workload_files
from scheduler_core.scenario import Scenario

APPLY_ORDER = ["namespaces.yaml", "priorityclasses.yaml", "gpu-operator/", "hami/", "dra/", "training-operator/", "kube-scheduler/", "kueue/",
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
    vgpu = {g.name for g in plan.node_groups if g.data_plane.project == t.VOLCANO_VGPU.project} if plan is not None else set()
    plans = pool_plans(scenario, vgpu)
    stack_plan = plan  # `plan` below is the export's own summary (atlas-export.yaml)
    workloads = workload_files(scenario, plan)
    kinds = {o["kind"] for f in workloads for o in f.objects}
    files: list[ExportFile] = []
    files += data_plane_files(scenario, plans)
    files += control_plane_files(scenario, plans, kinds)  # may add flavor labels to the pool plans
    files += workloads
    priorities = priority_class_file(scenario)
    if priorities:
        files.append(priorities)
    _chart_owned(files)
    if plan is not None:
        _plan_settings(files, plan)
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
    targets.update({c.project: c.version for c in install.pinned([*files])})
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
    missing = not_installed(stack_plan, [atlas, *files], steps)
    readme = ExportFile("README.md", "text", body=_readme(name, scenario, plans, [atlas, *files], steps, missing))
    return Export(name=_slug(name), files=[readme, script, atlas, *files], targets=targets)


def _plan_settings(files: list[ExportFile], plan) -> None:
    """The settings the plan relies on (Component.settings, dotted Helm keys) into that component's chart
    values: e.g. KAI's `binder.plugins.hamicore.enabled` for the kai-resource-isolator's memory cap."""
    charts = {f.chart: f for f in files if f.kind == "helm-values"}
    for component in plan.components:
        target = charts.get(component.project)
        for key, value in sorted(component.settings.items()) if target is not None else ():
            if key not in t.HELM_SETTINGS.get(component.project, ()):
                continue
            _set(target.values, key, yaml.safe_load(value) if isinstance(value, str) else value)


def not_installed(plan, files: list[ExportFile], steps) -> list[tuple[str, str]]:
    """(project, why) for the operators the bundle's workload kinds need and the plan's components that no
    step of this bundle installs and that are neither part of Kubernetes nor installed by another component
    of the bundle: the operator installs them by hand."""
    installed = {f.chart for f in files if f.kind == "helm-values"} | {s.title.split()[0] for s in steps}
    kinds = sorted({o["kind"] for f in files if f.path.startswith("workloads/") for o in f.objects})
    out = [(op.project, f"the {op.name} {op.version} that runs the bundle's {kind} objects: {op.install}")
           for kind in kinds if (op := OPERATORS.get(kind)) is not None and op.project not in installed]
    named = {project for project, _ in out}
    for component in (plan.components if plan is not None else ()):
        if component.project in named:
            continue
        project = component.project
        if (project in installed or project in t.IN_KUBERNETES or t.DELIVERED_BY.get(project) in installed
                or set(t.ALSO_DELIVERED_BY.get(project, ())) & installed):
            continue
        if project not in t.COMPONENTS and component.role in ("admission_quota", "workload_unit") and not component.settings:
            if project in ("resource-quota", "dra") or project.startswith("kubernetes-"):
                continue  # Kubernetes APIs
        brought_by = component.role.removeprefix("required by ")
        if brought_by != component.role and brought_by not in installed:
            continue  # installing the component that requires it brings it (the isolator deploys HAMi-core)
        settings = ", ".join(f"{k}={v}" for k, v in sorted(component.settings.items()))
        out.append((project, f"{component.role}" + (f"; needs {settings}" if settings else "")))
    return out


def _readme(name: str, scenario: Scenario, plans, files: list[ExportFile], steps, missing=()) -> str:
    lines = [f"# {name}", "",
             f"Generated by the GPU Placement Atlas from scenario `{scenario.name}`: the quotas, MIG layouts and "
             "policies below are the ones the simulator ran.", "",
             "## Install on an empty cluster", "",
             "Run `./install.sh` from this folder (after setting one `ATLAS_NODES_<POOL>` variable per pool), or "
             "the same commands one step at a time:", ""]
    for p in plans:
        lines.append(f"- `export {install.pool_variable(p.name)}=\"<node> ...\"`: the {p.count} node(s) of pool "
                     f"**{p.name}** ({p.gpus_per_node} x {p.gpu}, {p.device_plugin or p.mechanism})"
                     + (f"; racks also carry `{t.RACK_LABEL}=<rack>`" if p.hardware.get("racks", 1) > 1 else ""))
    lines += ["", *install.install_readme(steps),
              f"`{t.GPU_PRODUCT}` is set by GPU Feature Discovery; atlas-export.yaml lists it per pool for checking.", "",
              "## Targets", "", "| project | version | used for |", "|---|---|---|"]
    lines += [f"| {p} | {tag} | {what} |" for p, (tag, what) in t.UPSTREAM.items()]
    if missing:
        lines += ["", "## Not installed by this bundle", "",
                  "The plan names these components but the bundle has no chart or manifest for them: install them from "
                  "their upstream instructions before the workloads (the stack does not hold without them).", ""]
        lines += [f"- `{project}` ({why})" for project, why in missing]
    lines += ["", "## Files", ""]
    lines += [f"- `{f.path}`" + (f": {f.note}" if f.note else "") for f in files]
    lines.append("")
    return "\n".join(lines)
