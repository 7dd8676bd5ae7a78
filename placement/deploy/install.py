"""How an operator installs a bundle on an empty cluster: ordered steps, each a few commands.

One list of steps feeds both ``install.sh`` (run it) and the zip's README (read it), so the two
never differ. Order: namespaces, node labels, the data plane's ConfigMaps then its charts, the
operators whose CRDs the workloads use, the control plane's charts, a wait for every CRD to be
Established and every webhook's Deployment to be Available, then the objects, workloads last.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field

from placement.deploy import targets as t
from placement.deploy.bundle import ExportFile
from placement.deploy.frameworks import OPERATORS

# Workload kind -> the component whose CRDs and controller it needs (installed by this bundle).
WORKLOAD_OPERATORS = {"JobSet": "jobset", "LeaderWorkerSet": "lws", "RayJob": "kuberay", "RayCluster": "kuberay",
                      "RayService": "kuberay", "PyTorchJob": "training-operator"}
# Gang scheduler -> the training operator's --gang-scheduler-name (it creates that scheduler's PodGroup
# from runPolicy.schedulingPolicy). KAI groups pods itself (its podgrouper): no flag.
GANG_SCHEDULER_NAMES = {"volcano": "volcano", "coscheduling": "scheduler-plugins-scheduler"}
DATA_PLANE_CHARTS = ("gpu-operator", "hami", "k8s-dra-driver-gpu")
CONTROL_PLANE_CHARTS = ("kueue", "volcano", "kai-scheduler", "scheduler-plugins")
WAIT = "600s"


@dataclass
class Step:
    title: str
    why: str
    commands: list[str] = field(default_factory=list)


def pool_variable(pool: str) -> str:
    return "ATLAS_NODES_" + re.sub(r"[^A-Za-z0-9]+", "_", pool).upper()


def helm_command(c: t.Component, values_file: str | None) -> str:
    chart = c.repo if not c.chart else c.chart
    parts = ["helm", "upgrade", "--install", c.release, chart]
    if c.chart:
        parts += ["--repo", c.repo]
    parts += ["--version", c.version, "--namespace", c.namespace, "--create-namespace"]
    if values_file:
        parts += ["-f", values_file]
    parts += ["--wait", "--timeout", WAIT]
    return " ".join(shlex.quote(p) for p in parts)


def _waits(c: t.Component) -> list[str]:
    out = [f"kubectl wait --for=condition=Established crd/{crd} --timeout={WAIT}" for crd in c.crds]
    out += [f"kubectl -n {c.namespace} rollout status deployment/{d} --timeout={WAIT}" for d in c.deployments]
    return out


def _apply(paths: list[str]) -> list[str]:
    return [f"kubectl apply --server-side -f {p}" for p in paths]


def training_operator_kustomization(gang_scheduler: str | None) -> dict:
    """The v1 training operator at its pinned tag; with a gang scheduler, its --gang-scheduler-name."""
    doc: dict = {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
                 "resources": [t.TRAINING_OPERATOR_KUSTOMIZE]}
    if gang_scheduler:
        doc["patches"] = [{"target": {"kind": "Deployment", "name": "training-operator"},
                           "patch": "- op: add\n  path: /spec/template/spec/containers/0/command/-\n"
                                    f"  value: --gang-scheduler-name={gang_scheduler}\n"}]
    return doc


def component(project: str, values: dict) -> t.Component:
    """The chart as this bundle installs it: KAI at the release that supports the kai-resource-isolator when
    its values turn on the hamicore binder plugin (the plan has the isolator), else the pinned release."""
    hamicore = (((values.get("binder") or {}).get("plugins") or {}).get("hamicore") or {}).get("enabled")
    if project == "kai-scheduler" and hamicore:
        return t.KAI_HAMICORE
    return t.COMPONENTS[project]


def _hamicore(files: list[ExportFile]) -> bool:
    return any(f.kind == "helm-values" and component(f.chart or "", f.values) is t.KAI_HAMICORE for f in files
               if f.chart in t.COMPONENTS)


def _vgpu(files: list[ExportFile]) -> bool:
    """The bundle's pods request Volcano's vGPU resources: only its device plugin advertises them."""
    return any(name in t.VOLCANO_VGPU.resources for f in files if f.path.startswith("workloads/") for o in f.objects
               for name in re.findall(r"volcano\.sh/vgpu-[a-z]+", str(o)))


def pinned(files: list[ExportFile]) -> list:
    """What this bundle installs at a version other than targets.UPSTREAM's, or beyond it: KAI v0.17.0 and the
    isolator for a plan with the kai-resource-isolator, the vGPU device plugin for Volcano vGPU pools."""
    out: list = [t.KAI_HAMICORE, t.KAI_RESOURCE_ISOLATOR] if _hamicore(files) else []
    return out + ([t.VOLCANO_VGPU] if _vgpu(files) else [])


def vgpu_step(pools: list) -> Step:
    m = t.VOLCANO_VGPU
    checks = [f"kubectl get nodes -l {t.POOL_LABEL}={p.name} -o 'custom-columns=NODE:.metadata.name,"
              f"VGPU:.status.allocatable.{m.resources[0].replace('.', chr(92) + '.')}'" for p in pools if p.device_plugin == m.project]
    others = [p.name for p in pools if p.device_plugin != m.project]
    selector = json.dumps({"spec": {"template": {"spec": {"nodeSelector": {t.VOLCANO_VGPU_NODE: "on"}}}}}, separators=(",", ":"))
    patch = [f"kubectl -n {m.namespace} patch daemonset/{d} --type=strategic -p '{selector}'" for d in m.daemonsets] if others else []
    return Step(f"{m.project} {m.version}",
                f"Volcano's vGPU device plugin from its upstream manifest at tag {m.version} (upstream ships no chart): "
                f"without it no node advertises {', '.join(m.resources)} and every vGPU pod stays Pending. Its DaemonSet "
                f"(upstream: no nodeSelector) runs --device-split-count={m.split_count}, the plan's split; the NVIDIA device plugin stays off there "
                f"({t.DEPLOY_DEVICE_PLUGIN}=false) and HAMi is not installed for these pools (both would claim the same "
                f"GPUs); Volcano binds the resources through its deviceshare plugin with {t.VOLCANO_VGPU_ARGUMENT}: true "
                "(volcano/values.yaml)" + (f". A nodeSelector on {t.VOLCANO_VGPU_NODE}=on (set when labelling the nodes) keeps it "
                f"off pool{'s' if len(others) > 1 else ''} {', '.join(others)}" if others else "")
                + ". Each pool's nodes list their vGPU count once the plugin registers",
                [f"kubectl apply -f {m.url}", *patch]
                + [f"kubectl -n {m.namespace} rollout status daemonset/{d} --timeout={WAIT}" for d in m.daemonsets] + checks)


def isolator_step() -> Step:
    c = t.KAI_RESOURCE_ISOLATOR
    return Step(f"{c.project} {c.version}",
                f"chart {c.repo} {c.version}, release {c.release} in namespace {c.namespace}, as KAI's "
                "docs/gpu-sharing/hami/README.md installs it: its DaemonSet puts HAMi-core on the GPU nodes and its webhook "
                "injects it into pods with a gpu-fraction or gpu-memory annotation, which then cannot allocate past the "
                "CUDA_DEVICE_MEMORY_LIMIT KAI's hamicore binder plugin writes (pods created before this step are not capped)",
                [helm_command(c, None)])


def components_needed(files: list[ExportFile], workload_kinds: set[str]) -> list[str]:
    charts = {f.chart for f in files if f.kind == "helm-values"}
    needed = [c for c in DATA_PLANE_CHARTS if c in charts]
    needed += sorted({WORKLOAD_OPERATORS[k] for k in workload_kinds if k in WORKLOAD_OPERATORS})
    needed += [c for c in CONTROL_PLANE_CHARTS if c in charts]
    return needed


def install_steps(files: list[ExportFile], pools: list, scheduler: str) -> list[Step]:
    """Every step from an empty cluster (with GPU nodes) to running workloads."""
    objects = [o for f in files if f.kind == "manifests" for o in f.objects]
    kinds = {o["kind"] for f in files if f.path.startswith("workloads/") for o in f.objects}
    values = {f.chart: f.path for f in files if f.kind == "helm-values"}
    documents = {f.chart: f.values for f in files if f.kind == "helm-values"}
    needed = components_needed(files, kinds)
    gangs = sorted({o["metadata"]["name"] for f in files if f.path.startswith("workloads/") for o in f.objects
                    if o["apiVersion"] == t.WORKLOAD_API_VERSION and o["kind"] == "PodGroup"})
    version = t.WORKLOAD_API_KUBERNETES if gangs else t.KUBERNETES_VERSION
    steps = [Step("Prerequisites", "a cluster of Kubernetes "
                  f"{version} or later with its GPU nodes joined, kubectl and helm (v3.8+ for oci:// charts)",
                  ["kubectl version", "helm version"])]
    if gangs:
        steps.append(workload_api_step(gangs))
    if any(f.path == "namespaces.yaml" for f in files):
        steps.append(Step("Namespaces", "every namespace an object of this bundle lives in", _apply(["namespaces.yaml"])))
    label_cmds = []
    for p in pools:
        labels = " ".join(f"{k}={v}" for k, v in p.labels.items() if k != t.GPU_PRODUCT)
        var = pool_variable(p.name)
        label_cmds.append(f": \"${{{var}:?set {var} to the {p.count} node name(s) of pool {p.name} ({p.gpus_per_node} x {p.gpu})}}\"")
        label_cmds.append(f"kubectl label node --overwrite ${var} {labels}")
    steps.append(Step("Label the nodes of each pool",
                      "the labels select each pool's MIG layout, device plugin config, queue flavor and workloads; "
                      "set one variable per pool to its node names", label_cmds))
    for project in needed:
        if project == "training-operator":
            gang = GANG_SCHEDULER_NAMES.get(scheduler)
            steps.append(Step("Kubeflow training operator (v1.9.4)",
                              "PyTorchJob CRD and controller" + (f"; --gang-scheduler-name={gang} makes it create the "
                                                                 "gang scheduler's PodGroups" if gang else ""),
                              [f"kubectl apply --server-side -k {t.TRAINING_OPERATOR_DIR}"]
                              + [f"kubectl wait --for=condition=Established crd/{c} --timeout={WAIT}" for c in t.TRAINING_OPERATOR_CRDS]
                              + [f"kubectl -n {t.TRAINING_OPERATOR_NAMESPACE} rollout status deployment/training-operator --timeout={WAIT}"]))
            continue
        c = component(project, documents.get(project, {}))
        folder = values.get(project, "").rpartition("/")[0]
        before = [f.path for f in files if f.kind == "manifests" and folder and f.path.startswith(folder + "/")
                  and project in DATA_PLANE_CHARTS and not _needs_crds(f)]
        cmds = _apply(before) + [helm_command(c, values.get(project))] + _waits(c)
        cmds += [f"kubectl -n {c.namespace} rollout restart {r}" for r in c.restart]
        why = f"chart {c.chart or c.repo} {c.version}, release {c.release} in namespace {c.namespace}"
        if c.restart:
            why += "; restarted because it reads its configuration only at start"
        if c.note:
            why += f" ({c.note})"
        tag = c.version if c is not t.COMPONENTS[project] else t.UPSTREAM.get(project, (c.version,))[0]
        steps.append(Step(f"{project} {tag}", why, cmds))
        if c is t.KAI_HAMICORE:
            steps.append(isolator_step())
        if project == "volcano" and _vgpu(files):
            steps.append(vgpu_step(pools))
    done = {p for s in steps for cmd in s.commands for p in re.findall(r"-f (\S+\.yaml)$", cmd)}
    rest = [f.path for f in files if f.kind == "manifests" and f.path not in done and f.path != "namespaces.yaml"
            and not f.path.startswith("workloads/")]
    if rest:
        steps.append(Step("Queues, flavors and configuration", "the objects the simulation ran with", _apply(rest)))
    manual = [f for f in files if f.path.startswith("kube-scheduler/")]
    if manual:
        steps.append(Step("Default scheduler profile (control-plane nodes)",
                          "kube-scheduler reads --config only at start: copy the profile to every control-plane node "
                          "and restart kube-scheduler (managed clusters: set it through the provider)",
                          ["kubectl -n kube-system get configmap scheduler-config -o jsonpath='{.data.scheduler-config\\.yaml}' "
                           "> /etc/kubernetes/scheduler-config.yaml  # on each control-plane node; then add "
                           "--config=/etc/kubernetes/scheduler-config.yaml to its static pod manifest"]))
    external = sorted({OPERATORS[k].crd: OPERATORS[k] for k in kinds if k in OPERATORS}.values(), key=lambda o: o.crd)
    if external:
        steps.append(Step("Operators this bundle does not install",
                          "install " + "; ".join(f"the {o.name} {o.version} ({o.install})" for o in external)
                          + " first (README: Not installed by this bundle); these waits stop here until their CRDs exist",
                          [f"kubectl wait --for=condition=Established crd/{o.crd} --timeout={WAIT}" for o in external]))
    workloads = [f.path for f in files if f.path.startswith("workloads/")]
    if workloads:
        steps.append(Step("Example workloads", "one per workload class and pool, as the simulation ran them", _apply(workloads)))
    steps.append(Step("Check", "every workload admitted and running",
                      ["kubectl get pods -A -l app.kubernetes.io/name -o wide"]
                      + (["kubectl get workloads.kueue.x-k8s.io -A"] if "kueue" in needed else [])
                      + ([f"kubectl get podgroups.{t.WORKLOAD_API_VERSION.split('/')[0]} -A"] if gangs else [])))
    del objects
    return steps


def workload_api_step(pod_groups: list[str]) -> Step:
    """kube-scheduler's own gang: the flags the control plane needs before the PodGroups can be created.
    From k8s.io/kubernetes v1.37.2: GenericWorkload is beta but off by default (pkg/features/kube_features.go),
    beta APIs are served only when --runtime-config enables them, kube-scheduler adds its GangScheduling
    plugin when the gate is on (pkg/scheduler/apis/config/v1/default_plugins.go: no profile change), and
    kube-controller-manager runs the PodGroup protection controller with it. WorkloadWithJob, which would
    have the Job controller create Workloads and PodGroups itself, is alpha and off: leave it off, or the
    Job controller would make a second PodGroup beside this bundle's."""
    gate = f"--feature-gates={t.WORKLOAD_API_GATE}=true"
    group = t.WORKLOAD_API_VERSION.split("/")[0]
    return Step(f"Workload API (Kubernetes >= {t.WORKLOAD_API_KUBERNETES})",
                f"the API server must serve {t.WORKLOAD_API_VERSION} with the {t.WORKLOAD_API_GATE} feature gate on, "
                f"or kube-scheduler places the pods of PodGroup{'s' if len(pod_groups) > 1 else ''} {', '.join(pod_groups)} "
                f"one by one instead of all-or-nothing (gang minCount): set `{gate} --runtime-config={t.WORKLOAD_API_VERSION}=true` on kube-apiserver and "
                f"`{gate}` on kube-scheduler and kube-controller-manager on every control-plane node and restart them "
                "(a managed cluster: through the provider, if it allows beta gates that are off by default); its "
                "GangScheduling plugin then runs in the default profile. Keep WorkloadWithJob off: this bundle writes "
                "each Workload and PodGroup itself",
                [f"# kube-apiserver: {gate} --runtime-config={t.WORKLOAD_API_VERSION}=true",
                 f"# kube-scheduler, kube-controller-manager: {gate}",
                 f"kubectl api-resources --api-group={group} -o name | grep -x workloads.{group}",
                 f"kubectl api-resources --api-group={group} -o name | grep -x podgroups.{group}"])


def _needs_crds(f: ExportFile) -> bool:
    return any("." in o["apiVersion"].split("/")[0] for o in f.objects)


def install_script(steps: list[Step]) -> str:
    lines = ["#!/usr/bin/env bash", "# Generated by the GPU Placement Atlas: run from this folder against an empty cluster.",
             "set -euo pipefail", 'cd "$(dirname "$0")"', ""]
    for n, step in enumerate(steps, 1):
        lines += [f"# {n}. {step.title}: {step.why}", f"echo '== {n}. {step.title}'", *step.commands, ""]
    return "\n".join(lines)


def install_readme(steps: list[Step]) -> list[str]:
    lines = []
    for n, step in enumerate(steps, 1):
        lines += [f"### {n}. {step.title}", "", step.why[0].upper() + step.why[1:] + ".", "", "```sh", *step.commands, "```", ""]
    return lines
