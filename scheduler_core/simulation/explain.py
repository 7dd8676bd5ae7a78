"""Why a pod does not fit, in kube-scheduler's words (and HAMi's, through its extender).

``0/N nodes are available: <count> <reason>, ...`` with the reasons sorted,
as the scheduler's FitError prints them; a node the scheduler may not use
says why (taint, unschedulable, selector), a node without room names the
resource (``Insufficient nvidia.com/gpu``), HAMi names the card rule that
failed per card (``1/8 CardInsufficientMemory, 7/8 CardTimeSlicingExhausted``).

The functions are handed what they read (the nodes, the nodes the scheduler may use for the
workload, whether device-plugin readiness is respected), not the simulation, so this module
sits below :mod:`scheduler_core.simulation.cluster_sim`, which asks it on the policies' behalf.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler_core.cluster import hami_card_reason, held_domain, topology_domain
from scheduler_core.dra import CANNOT_ALLOCATE, NOT_AVAILABLE

if TYPE_CHECKING:  # pragma: no cover
    from scheduler_core.cluster import Node
    from scheduler_core.workloads import Workload

SELECTOR = "node(s) didn't match Pod's node affinity/selector"
UNREACHABLE = "node(s) had untolerated taint {node.kubernetes.io/unreachable: }"
UNSCHEDULABLE = "node(s) were unschedulable"
# The NoSchedule taint a readiness check puts on a node whose device plugin is down (its key is
# deployment specific; the GPU Operator's validator and node-problem-detector use their own).
PLUGIN_TAINT = "node(s) had untolerated taint {nvidia.com/gpu.device-plugin: not-ready}"
# InterPodAffinity's reason: a gang that must share one node or rack is co-located by required pod
# affinity on that topology key, so the nodes outside the first pods' domain do not match it.
AFFINITY = "node(s) didn't match pod affinity rules"
# A node whose allocatable pods (kubelet maxPods) are all taken: NodeResourcesFit's words, and the words of
# Volcano's predicates plugin (api.NodePodNumberExceeded), which checks the pod count itself.
TOO_MANY_PODS = "Too many pods"
VOLCANO_TOO_MANY_PODS = "node(s) pod number exceeded"


def node_reasons(node: "Node", wl: "Workload", respect_readiness: bool) -> list[str]:
    """Why one pod of ``wl`` cannot go to ``node`` now (every failing resource, as NodeResourcesFit
    lists them); empty if it fits.  ``respect_readiness``: the stack keeps pods off nodes whose device
    plugin is not registered (``respect_device_plugin_readiness``)."""
    if wl.node_group is not None and node.group != wl.node_group:
        return [SELECTOR]
    if not node.up:
        return [UNREACHABLE]
    if node.cordoned or node.reconfiguring:
        return [UNSCHEDULABLE]
    req = wl.request
    if not node.plugin_ready:
        if node.mechanism == "dra":
            return [CANNOT_ALLOCATE]
        if respect_readiness:
            return [PLUGIN_TAINT]
    if node.fit_count(req) > 0:
        return []
    out = []
    if node.max_pods is not None and node.pods_room() == 0:
        out.append(TOO_MANY_PODS)
        if req.best_effort:
            return out
    if req.cpu and node.cpu_free is not None and node.cpu_free + 1e-9 < req.cpu:
        out.append("Insufficient cpu")
    if req.host_gib and node.host_gib_free is not None and node.host_gib_free + 1e-9 < req.host_gib:
        out.append("Insufficient memory")
    if not out or node.device_fit_count(req) == 0:
        out.append(_device_reason(node, req))
    return out


def _device_reason(node: "Node", req) -> str:
    if req.kind == "count":
        return f"Insufficient {req.resource}"
    if req.kind == "hami":
        return hami_node_reason(node, req)
    if req.kind == "fraction":
        return "node(s) didn't have enough resources: GPUs"
    if req.shared_claim is not None and req.shared_claim in node.shared_claims:
        return NOT_AVAILABLE  # the claim is allocated on another node
    return CANNOT_ALLOCATE


def hami_node_reason(node: "Node", req) -> str | None:
    """HAMi's reason for a node (pkg/scheduler/score.go ``fitInDevices``): ``NodeInsufficientDevice``
    when the pod asks more GPUs than the node has, else its Fit reason; None if the pod fits."""
    if req.count > len(node.contexts):
        return "NodeInsufficientDevice"
    return hami_fit_reason(node.contexts, req, node.data_plane.hami.device_memory_scaling)


def hami_fit_reason(cards, req, scaling: float) -> str | None:
    """HAMi's Fit reason over ``cards`` (pkg/device/nvidia/device.go ``Fit``): per card rule
    ``k/total Reason``, sorted as the strings ``GenReason`` sorts; None if the pod fits."""
    counts: dict[str, int] = {}
    fitting = 0
    for c in cards:
        why = hami_card_reason(c, req, scaling)
        if why is None:
            fitting += 1
        else:
            counts[why] = counts.get(why, 0) + 1
    if fitting >= req.count:
        return None
    if fitting:  # some cards fit, fewer than the pod asks for
        counts["AllocatedCardsInsufficientRequest"] = fitting
    total = len(cards)
    return ", ".join(sorted(f"{n}/{total} {why}" for why, n in counts.items()))


def unschedulable(nodes: list["Node"], wl: "Workload", respect_readiness: bool, siblings_fill: bool = False,
                  wording: str = "available") -> str | None:
    """kube-scheduler's FitError message for one pod of ``wl`` over all ``nodes``, or None if some node fits it.

    ``siblings_fill``: the pod is the first of its group that does not fit once its siblings took
    every place that fits one (gang schedulers), so nodes with room report the resource as short.
    Volcano words it ``nodes are unavailable`` (and a full node's pod count its own way).
    """
    counts: dict[str, int] = {}
    for node in nodes:
        whys = node_reasons(node, wl, respect_readiness)
        if not whys:
            if not siblings_fill:
                return None
            whys = [_short(wl)]
        for why in whys:  # kube counts every failing resource of a node
            if why == TOO_MANY_PODS and wording == "unavailable":
                why = VOLCANO_TOO_MANY_PODS
            counts[why] = counts.get(why, 0) + 1
    parts = ", ".join(f"{n} {why}" for why, n in sorted(counts.items()))
    return f"0/{len(nodes)} nodes are {wording}: {parts}."


def _short(wl: "Workload") -> str:
    req = wl.request
    if req.kind == "count":
        return f"Insufficient {req.resource}"
    if req.kind == "hami":
        return "AllocatedCardsInsufficientRequest"
    if req.kind == "fraction":
        return "node(s) didn't have enough resources: GPUs"
    if req.shared_claim is not None and req.shared_claim in node.shared_claims:
        return NOT_AVAILABLE  # the claim is allocated on another node
    return CANNOT_ALLOCATE


def topology_unschedulable(nodes: list["Node"], candidates: list["Node"], wl: "Workload", level: str,
                           respect_readiness: bool) -> tuple[str, int] | None:
    """kube-scheduler's FitError (over all ``nodes``; ``candidates``: the nodes the scheduler may place
    ``wl`` on) for the first pod of ``wl``'s pending pods that no longer fits when
    they must share one ``level`` (``node`` or ``rack``), and that pod's index among them; None when
    one domain holds them all. The domain with the most room takes the first pods; its nodes then
    report what they lack, nodes elsewhere with room fail the pod affinity (NodeResourcesFit runs
    before InterPodAffinity, so a node short of resources says so). Once some pods are bound, their
    domain is the only one the rest may join."""
    def domain(n: "Node") -> str:
        return topology_domain(n, level)

    room: dict[str, int] = {}
    for n in candidates:
        room[domain(n)] = room.get(domain(n), 0) + n.fit_count(wl.request)
    held = sorted({domain(p.node) for p in wl.pods if p.node is not None})
    best = held[0] if held else min(room, key=lambda d: (-room[d], d), default=None)
    if best is None or room.get(best, 0) >= wl.pending:
        return None
    counts: dict[str, int] = {}
    for node in nodes:
        whys = node_reasons(node, wl, respect_readiness)
        if not whys:
            whys = [_short(wl)] if domain(node) == best else [AFFINITY]
        for why in whys:
            counts[why] = counts.get(why, 0) + 1
    parts = ", ".join(f"{n} {why}" for why, n in sorted(counts.items()))
    return f"0/{len(nodes)} nodes are available: {parts}.", room.get(best, 0)


def pods_that_fit(candidates: list["Node"], wl: "Workload", pods: int) -> int:
    """How many of ``pods`` pods of ``wl`` would fit one by one on ``candidates``, the nodes the scheduler
    may use (for a gang with a required topology and bound pods, only in their domain)."""
    n = 0
    for node in held_domain(wl, candidates):
        n += node.fit_count(wl.request)
        if n >= pods:
            return pods
    return n
