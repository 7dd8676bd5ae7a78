"""Start and stop a local control plane on loopback: etcd, kube-apiserver, kube-controller-manager,
kube-scheduler, the KWOK controller (fake nodes) and Kueue's manager, built by controlplane/build.sh;
on demand (a stack whose pods name them), Volcano's scheduler and controller-manager, and
scheduler-plugins' kube-scheduler with Coscheduling as a second scheduler with its PodGroup controller.

Every process runs in its own session with its output in ``<workdir>/<component>.log``, dies with
this process (PR_SET_PDEATHSIG) and is stopped in reverse start order by :meth:`LocalPlane.stop`.
A component that exits or does not become ready raises :class:`ComponentFailed` with the tail of its
own log; a port already taken raises it before anything starts. Nothing is left running either way.
"""

from __future__ import annotations

import copy
import ctypes
import json
import os
import resource
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import yaml

from placement.deploy import targets as t
from placement.deploy.localplane.kube import Kube

REPO = Path(__file__).resolve().parents[3]
BUILD = REPO / "controlplane" / "build.sh"
# ../shared (main checkout) or ../../shared (a worktree), as tests/deploy/schemas.py looks for it.
SHARED = next((p for p in (REPO.parent / "shared", REPO.parent.parent / "shared") if p.is_dir()), REPO.parent / "shared")
KUEUE_CHART = "kueue/v0.19.2/kueue"
KWOK_STAGES_CHART = "kwok/v0.8.0/stage-fast"
# Stages of stage-fast that the plane uses: nodes become Ready and keep their lease, bound pods become
# Running and go when deleted. pod-complete is left out: a workload keeps its pods, as a long job would.
KWOK_STAGES = ("node-initialize", "node-heartbeat-with-lease", "pod-ready", "pod-delete")
KWOK_NODE_ANNOTATION = ("kwok.x-k8s.io/node", "fake")
# CRDs of objects the bundles carry whose controllers are not part of the plane: the objects are
# applied and their Kueue Workloads admitted, no pods are created for them.
EXTRA_CRDS = ("kubeflow-trainer/v1.9.4/kubeflow.org_pytorchjobs.yaml", "jobset/v0.12.0/jobset.x-k8s.io_jobsets.yaml",
              "lws/v0.10.0/leaderworkerset.x-k8s.io_leaderworkersets.yaml")
# Kueue integrations turned on beside the chart's defaults (the bundles' PyTorchJobs).
KUEUE_EXTRA_FRAMEWORKS = ("kubeflow.org/pytorchjob",)
KUEUE_METRICS_CERTS = "/etc/kueue/metrics/certs"
# Kubernetes 1.37's Workload API (scheduling.k8s.io/v1beta1 Workload and PodGroup, pods'
# spec.schedulingGroup): the GenericWorkload gate is beta but off by default, and a beta API group is
# served only when --runtime-config names it. With the gate on, kube-scheduler's default profile adds the
# GangScheduling plugin (pkg/scheduler/apis/config/v1/default_plugins.go), which leaves pods without a
# schedulingGroup alone. On for every plane, not only for bundles that carry PodGroups: the plane is shared
# by a session's trials, and with the gate off the API server drops a pod's schedulingGroup silently
# (pkg/api/pod/util.go dropDisabledSchedulingGroup), so a gang would run one pod at a time unnoticed.
WORKLOAD_API_GATES = f"{t.WORKLOAD_API_GATE}=true"
WORKLOAD_API_RUNTIME_CONFIG = f"{t.WORKLOAD_API_VERSION}=true"
# Volcano v1.14.1 (controlplane/volcano: v1.15.1, the chart's version, does not build from the proxy);
# CRDs and the scheduler's configuration are rendered from the v1.15.1 chart with the bundle's values.
VOLCANO_CHART = "volcano/v1.15.1/volcano"
VOLCANO_NAMESPACE = "volcano-system"
VOLCANO_SCHEDULER_CONF = "volcano-scheduler.conf"
# scheduler-plugins v0.34.7 as a second scheduler: its PodGroup CRD and the KubeSchedulerConfiguration
# the chart renders from the bundle's coscheduling/values.yaml.
COSCHEDULING_CHART = "scheduler-plugins/v0.34.7/as-a-second-scheduler"
COSCHEDULING_NAMESPACE = "scheduler-plugins"
COSCHEDULING_CRDS = ("scheduling.x-k8s.io_podgroups.yaml", "scheduling.x-k8s.io_elasticquotas.yaml")
DEFAULT_PORT_BASE = 47100
READY_TIMEOUT = float(os.environ.get("ATLAS_CONTROLPLANE_READY_TIMEOUT", "180"))
COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "kueue")
# Started only for a stack that needs them (LocalPlane.ensure): the Kueue stacks' plane stays as it was.
# vc-webhook-manager (Volcano's admission webhooks) is not built: the plane runs without them.
OPTIONAL_COMPONENTS = ("volcano-controller-manager", "volcano-scheduler", "coscheduling-controller", "coscheduling-scheduler")
KNOWN_COMPONENTS = COMPONENTS + OPTIONAL_COMPONENTS
# component -> (controlplane/ module, binary name)
BINARIES = {"etcd": ("etcd", "server"), "kube-apiserver": ("kubernetes", "kube-apiserver"),
            "kube-controller-manager": ("kubernetes", "kube-controller-manager"),
            "kube-scheduler": ("kubernetes", "kube-scheduler"), "kwok": ("kwok", "kwok"), "kueue": ("kueue", "kueue"),
            "helm": ("helm", "helm"), "volcano-controller-manager": ("volcano", "controller-manager"),
            "volcano-scheduler": ("volcano", "scheduler"), "coscheduling-controller": ("coscheduling", "controller"),
            "coscheduling-scheduler": ("coscheduling", "scheduler")}


class ComponentFailed(Exception):
    """A component did not start: its name and its own message (the tail of its log)."""

    def __init__(self, component: str, message: str):
        super().__init__(f"{component}: {message}")
        self.component, self.message = component, message


@dataclass(frozen=True)
class Ports:
    """Loopback ports, from one base (ATLAS_CONTROLPLANE_PORT_BASE) so parallel runs do not collide."""

    base: int

    @property
    def etcd(self): return self.base
    @property
    def etcd_peer(self): return self.base + 1
    @property
    def apiserver(self): return self.base + 2
    @property
    def controller_manager(self): return self.base + 3
    @property
    def scheduler(self): return self.base + 4
    @property
    def kwok(self): return self.base + 5
    @property
    def kueue_webhook(self): return self.base + 6
    @property
    def kueue_health(self): return self.base + 7
    @property
    def volcano_scheduler_health(self): return self.base + 8
    @property
    def volcano_scheduler_metrics(self): return self.base + 9
    @property
    def volcano_controllers_health(self): return self.base + 10
    @property
    def volcano_controllers_metrics(self): return self.base + 11
    @property
    def coscheduling_scheduler(self): return self.base + 12
    @property
    def coscheduling_controller_health(self): return self.base + 13
    @property
    def coscheduling_controller_metrics(self): return self.base + 14

    def owners(self) -> dict[int, str]:
        return {self.etcd: "etcd client", self.etcd_peer: "etcd peer", self.apiserver: "kube-apiserver",
                self.controller_manager: "kube-controller-manager", self.scheduler: "kube-scheduler",
                self.kwok: "kwok", self.kueue_webhook: "kueue webhook", self.kueue_health: "kueue health probe",
                self.volcano_scheduler_health: "volcano-scheduler health", self.volcano_scheduler_metrics: "volcano-scheduler",
                self.volcano_controllers_health: "volcano-controller-manager health",
                self.volcano_controllers_metrics: "volcano-controller-manager",
                self.coscheduling_scheduler: "coscheduling-scheduler",
                self.coscheduling_controller_health: "coscheduling-controller health",
                self.coscheduling_controller_metrics: "coscheduling-controller"}


def port_base() -> int:
    raw = os.environ.get("ATLAS_CONTROLPLANE_PORT_BASE", str(DEFAULT_PORT_BASE))
    try:
        base = int(raw)
    except ValueError:
        raise ComponentFailed("plane", f"ATLAS_CONTROLPLANE_PORT_BASE={raw!r} is not a port number") from None
    if not 1024 <= base <= 65000:
        raise ComponentFailed("plane", f"ATLAS_CONTROLPLANE_PORT_BASE={base} is outside 1024..65000")
    return base


def build_dir(module: str) -> Path:
    """controlplane/build.sh MODULE: the cached bin directory (builds on first use). One build of a module
    at a time: build.sh starts a missing build afresh, so a second caller waits for the first."""
    import fcntl

    cache = Path(os.environ.get("ATLAS_CONTROLPLANE_CACHE", Path.home() / ".cache" / "atlas-controlplane"))
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / f".{module}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        proc = subprocess.run([str(BUILD), module], capture_output=True, text=True)
    if proc.returncode != 0:
        raise ComponentFailed(module, f"build failed: {proc.stderr.strip()[-3000:]}")
    return Path(proc.stdout.strip().splitlines()[-1])


def binary(component: str) -> Path:
    module, name = BINARIES[component]
    return build_dir(module) / name


def _die_with_parent():  # runs in the child before exec
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass
    # A Celery pool process carries a soft address-space limit (ATLAS_WORKER_MEMORY_LIMIT_MB, config/celery.py)
    # meant for simulations; the components are not bounded by it: etcd maps 10 GiB for bbolt at start
    # ("mmap failed, size 10737418240; error: cannot allocate memory") and Go reserves address space freely.
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (hard, hard))


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def helm_template(chart: Path, release: str, namespace: str, values: dict | None = None,
                  include_crds: bool = False) -> list[dict]:
    args = [str(binary("helm")), "template", release, str(chart), "--namespace", namespace]
    if include_crds:
        args.append("--include-crds")
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
        if values:
            yaml.safe_dump(values, f)
            f.flush()
            args += ["-f", f.name]
        proc = subprocess.run(args, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ComponentFailed("helm", proc.stderr.strip())
    return [d for d in yaml.safe_load_all(proc.stdout) if d]


def _deep_merge(base: dict, over: dict) -> dict:
    out = copy.deepcopy(base)
    for k, v in over.items():
        out[k] = _deep_merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else copy.deepcopy(v)
    return out


@dataclass
class Process:
    component: str
    popen: subprocess.Popen
    log: Path


@dataclass
class LocalPlane:
    """``with LocalPlane() as plane: plane.kube.apply(...)``; ``kueue_config`` (a Kueue Configuration,
    e.g. the bundle's kueue-manager-config) is merged over the chart's before the network settings;
    ``volcano_values`` (the bundle's volcano/values.yaml) render the Volcano chart whose scheduler
    configuration the plane's Volcano scheduler runs."""

    workdir: Path | None = None
    ports: Ports | None = None
    components: tuple[str, ...] = COMPONENTS
    kueue_config: dict | None = None
    scheduler_config: dict | None = None  # the bundle's KubeSchedulerConfiguration (profiles) for kube-scheduler
    volcano_values: dict | None = None
    coscheduling_values: dict | None = None
    progress: Callable[[str], None] | None = None
    processes: list[Process] = field(default_factory=list)
    kube: Kube | None = None
    _own_workdir: bool = False

    def __post_init__(self):
        self.ports = self.ports or Ports(port_base())
        unknown = set(self.components) - set(KNOWN_COMPONENTS)
        if unknown:
            raise ComponentFailed("plane", f"unknown components {sorted(unknown)} (known: {', '.join(KNOWN_COMPONENTS)})")

    # --- lifecycle ---------------------------------------------------------------------------
    def __enter__(self) -> "LocalPlane":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def _say(self, message: str) -> None:
        if self.progress:
            self.progress(message)

    def start(self) -> "LocalPlane":
        busy = [f"port {p} ({who}) is in use" for p, who in self.ports.owners().items() if not _port_free(p)]
        if busy:
            raise ComponentFailed("plane", "; ".join(busy) + " (set ATLAS_CONTROLPLANE_PORT_BASE to another base)")
        self._say("finding the components' binaries (controlplane/build.sh builds what is missing; cold builds take minutes)")
        bins = {c: binary(c) for c in self.components}  # build everything before starting anything
        if self.workdir is None:
            self.workdir = Path(tempfile.mkdtemp(prefix="atlas-plane-"))
            self._own_workdir = True
        self.workdir.mkdir(parents=True, exist_ok=True)
        from placement.deploy.localplane.certs import make_certs

        self.certs = make_certs(self.workdir / "pki")
        self.kubeconfig = self._write_kubeconfig()
        self.kube = Kube(f"https://127.0.0.1:{self.ports.apiserver}", str(self.certs.ca), str(self.certs.admin),
                         str(self.certs.admin_key))
        try:
            for component in self.components:
                self._say(f"starting {component}")
                getattr(self, "_start_" + component.replace("-", "_"))(bins[component])
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        for proc in reversed(self.processes):
            if proc.popen.poll() is None:
                proc.popen.terminate()
        deadline = time.monotonic() + 15
        for proc in reversed(self.processes):
            try:
                proc.popen.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.popen.kill()
                proc.popen.wait()
        self.processes.clear()
        if self._own_workdir and self.workdir and not os.environ.get("ATLAS_CONTROLPLANE_KEEP"):
            shutil.rmtree(self.workdir, ignore_errors=True)

    def use_kueue_config(self, config: dict | None) -> None:
        """Run Kueue with ``config`` (a bundle's manager Configuration) from now on: Kueue reads its
        configuration once at start, so a plane shared by several bundles' trials restarts Kueue when the
        next bundle's differs (integrations, waitForPodsReady, fair sharing)."""
        if config == self.kueue_config or "kueue" not in self.components:
            return
        self.kueue_config = config
        self._restart("kueue")

    def use_scheduler_config(self, config: dict | None) -> None:
        """Run kube-scheduler with ``config`` (the bundle's KubeSchedulerConfiguration: its profiles' scoring
        and preemption) from now on, restarting it when the next bundle's differs."""
        if config == self.scheduler_config or "kube-scheduler" not in self.components:
            return
        self.scheduler_config = config
        self._restart("kube-scheduler")

    def ensure(self, components: tuple[str, ...] | list[str]) -> None:
        """Start the optional ``components`` a stack's trial needs (e.g. Volcano) on a running plane; those
        already running stay."""
        unknown = set(components) - set(KNOWN_COMPONENTS)
        if unknown:
            raise ComponentFailed("plane", f"unknown components {sorted(unknown)} (known: {', '.join(KNOWN_COMPONENTS)})")
        missing = [c for c in KNOWN_COMPONENTS if c in components and c not in self.components]
        bins = {c: binary(c) for c in missing}
        for component in missing:
            self._say(f"starting {component}")
            getattr(self, "_start_" + component.replace("-", "_"))(bins[component])
            self.components = (*self.components, component)

    def _restart(self, component: str) -> None:
        """A component that reads its configuration once at start, restarted with the current one."""
        for proc in [p for p in self.processes if p.component == component]:
            proc.popen.terminate()
            try:
                proc.popen.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.popen.kill()
                proc.popen.wait()
            self.processes.remove(proc)
        self._say(f"restarting {component} with the bundle's configuration")
        getattr(self, "_start_" + component.replace("-", "_"))(binary(component))

    def use_volcano_values(self, values: dict | None) -> None:
        """Run the Volcano scheduler with the configuration the chart renders from ``values`` (a bundle's
        volcano/values.yaml) from now on; it restarts when the next bundle's differs."""
        if values == self.volcano_values:
            return
        self.volcano_values = values
        if "volcano-scheduler" in self.components:
            self._restart("volcano-scheduler")

    def use_coscheduling_values(self, values: dict | None) -> None:
        """Run scheduler-plugins' scheduler with the KubeSchedulerConfiguration the chart renders from
        ``values`` (a bundle's coscheduling/values.yaml) from now on; it restarts when the next bundle's differs."""
        if values == self.coscheduling_values:
            return
        self.coscheduling_values = values
        if "coscheduling-scheduler" in self.components:
            self._restart("coscheduling-scheduler")

    def running(self) -> list[str]:
        return [p.component for p in self.processes if p.popen.poll() is None]

    # --- helpers -----------------------------------------------------------------------------
    def _spawn(self, component: str, args: list[str], env: dict | None = None) -> Process:
        log = self.workdir / f"{component}.log"
        out = open(log, "ab")
        popen = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 start_new_session=True, preexec_fn=_die_with_parent,
                                 env={**os.environ, **(env or {})}, cwd=self.workdir)
        out.close()
        proc = Process(component, popen, log)
        self.processes.append(proc)
        return proc

    def log_tail(self, component: str, lines: int = 15) -> str:
        path = self.workdir / f"{component}.log"
        if not path.exists():
            return ""
        text = path.read_text(errors="replace").strip().splitlines()
        # The component's own errors first: klog E-lines / "level=error" / Go panics, else the tail.
        errors = [l for l in text if l.startswith(("E", "F")) or "error" in l.lower() or "panic" in l.lower()]
        return "\n".join((errors or text)[-lines:])

    def _wait(self, proc: Process, ready: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            code = proc.popen.poll()
            if code is not None:
                raise ComponentFailed(proc.component, f"exited with code {code}:\n{self.log_tail(proc.component)}")
            try:
                if ready():
                    return
            except Exception:  # noqa: BLE001 - not ready yet
                pass
            time.sleep(0.5)
        raise ComponentFailed(proc.component, f"not {what} after {READY_TIMEOUT:.0f}s:\n{self.log_tail(proc.component)}")

    def _https_ok(self, port: int, path: str) -> bool:
        ctx = ssl.create_default_context(cafile=str(self.certs.ca))
        with urllib.request.urlopen(f"https://127.0.0.1:{port}{path}", context=ctx, timeout=3) as resp:
            return resp.status == 200

    @staticmethod
    def _http_ok(port: int, path: str) -> bool:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=3) as resp:
            return resp.status == 200

    def _write_kubeconfig(self) -> Path:
        c = self.certs
        config = {"apiVersion": "v1", "kind": "Config", "current-context": "atlas",
                  "clusters": [{"name": "atlas", "cluster": {"server": f"https://127.0.0.1:{self.ports.apiserver}",
                                                              "certificate-authority": str(c.ca)}}],
                  "users": [{"name": "admin", "user": {"client-certificate": str(c.admin), "client-key": str(c.admin_key)}}],
                  "contexts": [{"name": "atlas", "context": {"cluster": "atlas", "user": "admin"}}]}
        path = self.workdir / "kubeconfig"
        path.write_text(yaml.safe_dump(config))
        return path

    def _serving_flags(self, port: int) -> list[str]:
        c = self.certs
        return ["--bind-address=127.0.0.1", f"--secure-port={port}", f"--tls-cert-file={c.serving}",
                f"--tls-private-key-file={c.serving_key}", f"--kubeconfig={self.kubeconfig}",
                f"--authentication-kubeconfig={self.kubeconfig}", f"--authorization-kubeconfig={self.kubeconfig}",
                "--leader-elect=false"]

    # --- components --------------------------------------------------------------------------
    def _start_etcd(self, exe: Path) -> None:
        p = self.ports
        client, peer = f"http://127.0.0.1:{p.etcd}", f"http://127.0.0.1:{p.etcd_peer}"
        proc = self._spawn("etcd", [str(exe), "--name=atlas", f"--data-dir={self.workdir / 'etcd'}",
                                    f"--listen-client-urls={client}", f"--advertise-client-urls={client}",
                                    f"--listen-peer-urls={peer}", f"--initial-advertise-peer-urls={peer}",
                                    f"--initial-cluster=atlas={peer}", "--unsafe-no-fsync=true", "--log-level=warn"])
        self._wait(proc, lambda: json.loads(urllib.request.urlopen(f"{client}/health", timeout=3).read())["health"] == "true",
                   "healthy")

    def _start_kube_apiserver(self, exe: Path) -> None:
        c, p = self.certs, self.ports
        proc = self._spawn("kube-apiserver", [
            str(exe), f"--etcd-servers=http://127.0.0.1:{p.etcd}", "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1", f"--secure-port={p.apiserver}",
            f"--tls-cert-file={c.serving}", f"--tls-private-key-file={c.serving_key}", f"--client-ca-file={c.ca}",
            f"--service-account-key-file={c.sa_pub}", f"--service-account-signing-key-file={c.sa_key}",
            "--service-account-issuer=https://kubernetes.default.svc", "--service-cluster-ip-range=10.96.0.0/16",
            "--authorization-mode=AlwaysAllow",
            f"--feature-gates={WORKLOAD_API_GATES}", f"--runtime-config={WORKLOAD_API_RUNTIME_CONFIG}",
            # No kubelets: pods need no service-account token mounted.
            "--disable-admission-plugins=ServiceAccount", "--endpoint-reconciler-type=none"])
        self._wait(proc, self.kube.healthy, "ready")

    def _start_kube_controller_manager(self, exe: Path) -> None:
        c, p = self.certs, self.ports
        proc = self._spawn("kube-controller-manager", [
            str(exe), *self._serving_flags(p.controller_manager), f"--service-account-private-key-file={c.sa_key}",
            f"--root-ca-file={c.ca}", "--node-monitor-grace-period=60s", f"--feature-gates={WORKLOAD_API_GATES}"])
        self._wait(proc, lambda: self._https_ok(p.controller_manager, "/healthz"), "healthy")

    def _start_kube_scheduler(self, exe: Path) -> None:
        p = self.ports
        flags = self._serving_flags(p.scheduler)
        if self.scheduler_config:
            # With --config, the connection and leader election come from the file, not from flags.
            config = {**self.scheduler_config, "clientConnection": {"kubeconfig": str(self.kubeconfig)},
                      "leaderElection": {"leaderElect": False}}
            path = self.workdir / "kube-scheduler-config.yaml"
            path.write_text(yaml.safe_dump(config))
            flags = [f for f in flags if not f.startswith(("--kubeconfig=", "--leader-elect="))] + [f"--config={path}"]
        proc = self._spawn("kube-scheduler", [str(exe), *flags, f"--feature-gates={WORKLOAD_API_GATES}"])
        self._wait(proc, lambda: self._https_ok(p.scheduler, "/healthz"), "healthy")

    def _start_kwok(self, exe: Path) -> None:
        stages = [d for d in helm_template(SHARED / "charts" / KWOK_STAGES_CHART, "stages", "kube-system")
                  if d.get("kind") == "Stage" and d["metadata"]["name"] in KWOK_STAGES]
        config = self.workdir / "kwok-stages.yaml"
        config.write_text("".join("---\n" + yaml.safe_dump(s) for s in stages))
        key, value = KWOK_NODE_ANNOTATION
        proc = self._spawn("kwok", [str(exe), f"--config={config}", f"--kubeconfig={self.kubeconfig}",
                                    f"--manage-nodes-with-annotation-selector={key}={value}",
                                    f"--server-address=127.0.0.1:{self.ports.kwok}", "--node-ip=127.0.0.1"])
        self._wait(proc, lambda: self._http_ok(self.ports.kwok, "/healthz"), "healthy")

    # Kueue: CRDs and webhook configurations rendered from the upstream chart, pointed at this process.
    def _kueue_objects(self) -> tuple[list[dict], list[dict], dict]:
        docs = helm_template(SHARED / "charts" / KUEUE_CHART, "kueue", "kueue-system")
        ca = __import__("base64").b64encode(self.certs.ca.read_bytes()).decode()
        base = f"https://127.0.0.1:{self.ports.kueue_webhook}"

        def local(client_config: dict) -> dict:
            return {"url": base + client_config["service"].get("path", "/"), "caBundle": ca}

        crds, hooks, config = [], [], {}
        for d in docs:
            if d["kind"] == "CustomResourceDefinition":
                hook = d["spec"].get("conversion", {}).get("webhook")
                if hook and "service" in hook.get("clientConfig", {}):
                    hook["clientConfig"] = local(hook["clientConfig"])
                crds.append(d)
            elif d["kind"] in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
                for w in d["webhooks"]:
                    w["clientConfig"] = local(w["clientConfig"])
                hooks.append(d)
            elif d["kind"] == "ConfigMap" and "controller_manager_config.yaml" in d.get("data", {}):
                config = yaml.safe_load(d["data"]["controller_manager_config.yaml"])
        return crds, hooks, config

    def _wait_established(self, crds: list[dict]) -> None:
        deadline = time.monotonic() + READY_TIMEOUT
        for crd in crds:
            name = crd["metadata"]["name"]
            while True:
                got = self.kube.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", name)
                if any(c["type"] == "Established" and c["status"] == "True" for c in got.get("status", {}).get("conditions", [])):
                    break
                if time.monotonic() > deadline:
                    raise ComponentFailed("kube-apiserver", f"CRD {name} not established")
                time.sleep(0.3)
        self.kube.refresh()

    def _start_kueue(self, exe: Path) -> None:
        crds, hooks, chart_config = self._kueue_objects()
        extra = [yaml.safe_load((SHARED / "schemas" / rel).read_text()) for rel in EXTRA_CRDS]
        for obj in [*crds, *extra, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kueue-system"}}]:
            self.kube.apply(obj)
        self._wait_established(crds + extra)
        config = _deep_merge(chart_config, self.kueue_config or {})
        frameworks = config.setdefault("integrations", {}).setdefault("frameworks", [])
        frameworks += [f for f in KUEUE_EXTRA_FRAMEWORKS if f not in frameworks]
        certs = self.workdir / "kueue-certs"
        certs.mkdir(exist_ok=True)
        shutil.copy(self.certs.serving, certs / "tls.crt")
        shutil.copy(self.certs.serving_key, certs / "tls.key")
        # Kueue v0.19.2 reads its metrics certificate from a fixed path when internal cert management is
        # off (cmd/kueue/main.go: "/etc/kueue/metrics/certs"), even with metrics disabled.
        metrics = Path(KUEUE_METRICS_CERTS)
        metrics.mkdir(parents=True, exist_ok=True)
        shutil.copy(self.certs.serving, metrics / "tls.crt")
        shutil.copy(self.certs.serving_key, metrics / "tls.key")
        config = _deep_merge(config, {
            "health": {"healthProbeBindAddress": f"127.0.0.1:{self.ports.kueue_health}"},
            "metrics": {"bindAddress": "0"},
            "webhook": {"port": self.ports.kueue_webhook, "host": "127.0.0.1", "certDir": str(certs)},
            "leaderElection": {"leaderElect": False},
            "internalCertManagement": {"enable": False},
        })
        path = self.workdir / "kueue-config.yaml"
        path.write_text(yaml.safe_dump(config))
        # The on-demand visibility API server (an aggregated API on a fixed port) is not part of the plane.
        proc = self._spawn("kueue", [str(exe), f"--config={path}", "--zap-log-level=2", "--feature-gates=VisibilityOnDemand=false"],
                           env={"KUBECONFIG": str(self.kubeconfig), "POD_NAMESPACE": "kueue-system"})
        self._wait(proc, lambda: self._http_ok(self.ports.kueue_health, "/readyz"), "ready")
        for hook in hooks:
            self.kube.apply(hook)

    # Volcano: CRDs from the upstream chart; the scheduler's configuration is the chart's
    # volcano-scheduler-configmap rendered with the bundle's values (custom.scheduler_config_override).
    def _volcano_render(self) -> tuple[list[dict], str]:
        docs = helm_template(SHARED / "charts" / VOLCANO_CHART, "volcano", VOLCANO_NAMESPACE, self.volcano_values)
        crds = [d for d in docs if d["kind"] == "CustomResourceDefinition"]
        conf = next((d["data"][VOLCANO_SCHEDULER_CONF] for d in docs
                     if d["kind"] == "ConfigMap" and VOLCANO_SCHEDULER_CONF in d.get("data", {})), None)
        if conf is None:
            raise ComponentFailed("volcano-scheduler", f"the chart rendered no ConfigMap with {VOLCANO_SCHEDULER_CONF}")
        return crds, conf

    def _volcano_crds(self) -> None:
        if getattr(self, "_volcano_crds_applied", False):
            return
        crds, _ = self._volcano_render()
        for obj in [*crds, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": VOLCANO_NAMESPACE}}]:
            self.kube.apply(obj)
        self._wait_established(crds)
        self._volcano_crds_applied = True

    def _start_volcano_controller_manager(self, exe: Path) -> None:
        """Volcano's controllers: the PodGroup controller makes a PodGroup for each pod with schedulerName
        volcano that has none (a batch Job's, a Deployment's), the queue controller opens the Queues."""
        self._volcano_crds()
        p = self.ports
        proc = self._spawn("volcano-controller-manager", [
            str(exe), f"--kubeconfig={self.kubeconfig}", "--leader-elect=false", "--enable-healthz=true",
            f"--healthz-address=127.0.0.1:{p.volcano_controllers_health}",
            f"--listen-address=127.0.0.1:{p.volcano_controllers_metrics}", "--logtostderr", "-v=3"],
            env={"KUBE_POD_NAMESPACE": VOLCANO_NAMESPACE})
        self._wait(proc, lambda: self._http_ok(p.volcano_controllers_health, "/healthz"), "healthy")

    def _start_volcano_scheduler(self, exe: Path) -> None:
        self._volcano_crds()
        _, conf = self._volcano_render()
        # A directory of its own: vc-scheduler watches the configuration's directory and reloads on every
        # write in it (pkg/scheduler/scheduler.go NewScheduler, watchSchedulerConf); beside the plane's logs
        # it reloaded for each log line, logging each reload, and wrote 2.8 GB of log in 15 minutes.
        confdir = self.workdir / "volcano-scheduler-conf"
        confdir.mkdir(exist_ok=True)
        path = confdir / VOLCANO_SCHEDULER_CONF
        path.write_text(conf)
        p = self.ports
        proc = self._spawn("volcano-scheduler", [
            str(exe), f"--kubeconfig={self.kubeconfig}", f"--scheduler-conf={path}", "--leader-elect=false",
            "--enable-healthz=true", f"--healthz-address=127.0.0.1:{p.volcano_scheduler_health}",
            f"--listen-address=127.0.0.1:{p.volcano_scheduler_metrics}", "--schedule-period=1s", "--logtostderr", "-v=3"],
            env={"KUBE_POD_NAMESPACE": VOLCANO_NAMESPACE})
        self._wait(proc, lambda: self._http_ok(p.volcano_scheduler_health, "/healthz"), "healthy")

    # scheduler-plugins: a second kube-scheduler whose profile (schedulerName, Coscheduling, its
    # permitWaitingTimeSeconds) is the chart's scheduler-config rendered with the bundle's values.
    def _coscheduling_render(self) -> tuple[list[dict], dict]:
        docs = helm_template(SHARED / "charts" / COSCHEDULING_CHART, "scheduler-plugins", COSCHEDULING_NAMESPACE,
                             self.coscheduling_values, include_crds=True)
        crds = [d for d in docs if d["kind"] == "CustomResourceDefinition"
                and f"{d['spec']['group']}_{d['spec']['names']['plural']}.yaml" in COSCHEDULING_CRDS]
        config = next((yaml.safe_load(d["data"]["scheduler-config.yaml"]) for d in docs
                       if d["kind"] == "ConfigMap" and "scheduler-config.yaml" in d.get("data", {})), None)
        if config is None:
            raise ComponentFailed("coscheduling-scheduler", "the chart rendered no scheduler-config (plugins.enabled empty?)")
        return crds, config

    def _coscheduling_crds(self) -> None:
        if getattr(self, "_coscheduling_crds_applied", False):
            return
        crds, _ = self._coscheduling_render()
        for obj in [*crds, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": COSCHEDULING_NAMESPACE}}]:
            self.kube.apply(obj)
        self._wait_established(crds)
        self._coscheduling_crds_applied = True

    def _start_coscheduling_controller(self, exe: Path) -> None:
        """The PodGroup controller: a PodGroup's status (phase, scheduled / running counts)."""
        self._coscheduling_crds()
        p = self.ports
        proc = self._spawn("coscheduling-controller", [
            str(exe), f"--kubeconfig={self.kubeconfig}", f"--probeAddr=127.0.0.1:{p.coscheduling_controller_health}",
            f"--metricsAddr=127.0.0.1:{p.coscheduling_controller_metrics}", "--qps=50", "--burst=100"])
        self._wait(proc, lambda: self._http_ok(p.coscheduling_controller_health, "/healthz"), "healthy")

    def _start_coscheduling_scheduler(self, exe: Path) -> None:
        self._coscheduling_crds()
        _, config = self._coscheduling_render()
        config["leaderElection"] = {"leaderElect": False}
        config["clientConnection"] = {"kubeconfig": str(self.kubeconfig)}
        path = self.workdir / "coscheduling-scheduler-config.yaml"
        path.write_text(yaml.safe_dump(config))
        p = self.ports
        serving = [f for f in self._serving_flags(p.coscheduling_scheduler) if not f.startswith("--leader-elect")]
        proc = self._spawn("coscheduling-scheduler", [str(exe), f"--config={path}", *serving])
        self._wait(proc, lambda: self._https_ok(p.coscheduling_scheduler, "/healthz"), "healthy")
