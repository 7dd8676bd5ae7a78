"""clean() between two trials on one plane, against a model of the API server's deletion rules (no plane):
a pod bound to a node ends when that node's kubelet (KWOK) confirms, so once the node is gone it stays
Terminating, and its namespace with it, and the next trial's objects are refused ("unable to create new
content in namespace ... because it is being terminated", seen in CI on the Volcano gang trials)."""

from __future__ import annotations

import pytest

from placement.deploy import export_scenario
from placement.deploy.localplane import trial as trial_module
from placement.deploy.localplane.kube import KubeError
from placement.deploy.localplane.trial import CleanError, bundle_workloads, clean
from scheduler_core import load_scenario
from tests.localplane.test_trials import SCENARIOS


class DeletionRulesApi:
    """Nodes, namespaces and the pods the trial's workloads made; the rest of the bundle is simply deleted."""

    def __init__(self, nodes: list[str], pods: dict[str, list[tuple[str, str]]], stuck: set[str] = frozenset()):
        self.nodes = set(nodes)
        self.pods = {ns: {name: node for name, node in ps} for ns, ps in pods.items()}
        self.terminating_pods: set[tuple[str, str]] = set()
        self.terminating_ns: set[str] = set()
        self.stuck = set(stuck)  # namespaces whose content never goes (a finalizer no controller removes)

    def delete(self, api_version, kind, name, namespace=None, grace_seconds=None):
        if kind == "Node":
            self.nodes.discard(name)
        elif kind == "Namespace":
            self.terminating_ns.add(name)
            for pod in list(self.pods.get(name, {})):
                self.delete("v1", "Pod", pod, name)
        elif kind == "Pod":
            node = self.pods.get(namespace, {}).get(name)
            if grace_seconds == 0 or node in self.nodes:  # forced, or the node's kubelet confirms
                self.pods[namespace].pop(name, None)
            else:
                self.terminating_pods.add((namespace, name))
        # a Job deleted in the background: its pods stay until the garbage collector gets to them

    def list(self, api_version, kind, namespace=None, label_selector=None):
        assert kind == "Pod"
        return [{"metadata": {"name": n, "namespace": namespace}} for n in self.pods.get(namespace, {})]

    def get(self, api_version, kind, name, namespace=None):
        assert kind == "Namespace"
        if name in self.terminating_ns and not self.pods.get(name) and name not in self.stuck:
            raise KubeError(404, f'namespaces "{name}" not found', "NotFound")
        left = len(self.pods.get(name, {}))
        return {"metadata": {"name": name}, "status": {"phase": "Terminating", "conditions": [
            {"type": "NamespaceContentRemaining", "status": "True",
             "message": f"Some resources are remaining: pods. has {left} resource instances"}]}}


def _gang_bound_on_two_nodes():
    scenario = load_scenario(SCENARIOS / "partial-gang-volcano.yaml")
    export = export_scenario(scenario)
    nodes = [n for g in scenario.pool.node_groups for n in g.node_names()]
    namespaces = sorted({o["metadata"].get("namespace", "default") for _, o in bundle_workloads(export)})
    pods = {ns: [(f"{ns}-pod-{i}", nodes[i % len(nodes)]) for i in range(8)] for ns in namespaces}
    return scenario, export, nodes, pods


def test_clean_leaves_no_namespace_terminating_when_the_pods_nodes_are_deleted(monkeypatch):
    monkeypatch.setattr(trial_module, "NAMESPACE_GONE_TIMEOUT", 0.2)
    scenario, export, nodes, pods = _gang_bound_on_two_nodes()
    api = DeletionRulesApi(nodes, pods)
    clean(api, scenario, export)
    assert api.terminating_ns >= set(pods)
    assert {ns: list(p) for ns, p in api.pods.items() if p} == {}  # nothing left to hold a namespace
    assert api.nodes.isdisjoint(nodes)


def test_clean_says_which_namespace_is_still_terminating_instead_of_letting_the_next_trial_fail(monkeypatch):
    monkeypatch.setattr(trial_module, "NAMESPACE_GONE_TIMEOUT", 0.2)
    scenario, export, nodes, pods = _gang_bound_on_two_nodes()
    stuck = sorted(pods)[0]
    api = DeletionRulesApi(nodes, pods, stuck={stuck})
    with pytest.raises(CleanError, match=rf"namespace {stuck} is still Terminating after 0 s"):
        clean(api, scenario, export)
