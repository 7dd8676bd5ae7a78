"""How co-location slows work: per-mechanism speed of a tenant in a device context.

``speed`` is throughput relative to the same pod alone on a dedicated full
A100 (1.0).  Inputs per tenant: ``need`` (the share of a full A100 the pod
can use, ``compute_fraction``), ``activity`` (busy share of time: 1 for a
running training worker, utilisation for an inference replica, 0 when idle
or crashed) and ``cap`` (its own limit: HAMi ``gpucores``/100, MPS active
thread share).  The models follow domain-facts.md §7.2 "modeling guidance":

* exclusive (whole GPU, MIG instance): roofline ``min(1, capacity / need,
  bandwidth / memory_bandwidth_fraction)`` where capacity is 1 or the
  instance's SMs / 108 (§1.1) and bandwidth 1 or its memory slices / 8 (§7.2).  MIG instances leak
  only through the optional ``mig_interference`` parameter (power, §1.3).
* time-slicing, KAI fractions (no enforcement) and HAMi (time-sharing with a
  utilisation cap): a tenant gets ``1 / (1 + sum of the others' activity)``
  of GPU time, and a tenant whose offered busy share ``u`` exceeds its cap
  ``c`` is throttled to ``c / u`` of its speed; minus ``timeslice_switch_overhead``
  scaled by how busy the others are - "at most N x slowdown of each tenant when N
  tenants are compute-bound, plus switch overhead" (§7.2).  HAMi's cap also
  bounds what a neighbour can take: its competing activity is
  ``min(activity, cap)``.
* MPS: spatial sharing up to the active-thread share (§2.2); if the
  co-runners' SM demand exceeds the GPU it is scaled down, if their bandwidth
  demand exceeds the HBM it is shared in proportion, and shared L2 / DRAM
  contention divides speed by ``1 + mps_contention_penalty x`` the others'
  bandwidth load (§7.2).  Calibration: docs/simulator-model.md §6.1.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from scheduler_core.cluster import DeviceContext
    from scheduler_core.scenario import ModelParameters
    from scheduler_core.workloads import Pod


def _alone(capacity: float, bandwidth: float, pod: "Pod") -> float:
    """Roofline speed with ``capacity`` of the SMs and ``bandwidth`` of the HBM bandwidth to itself."""
    s = min(1.0, capacity / pod.need)
    if pod.bw > 0:
        s = min(s, bandwidth / pod.bw)
    return s


def speed_in(ctx: "DeviceContext", pod: "Pod", params: "ModelParameters") -> float:
    iso = ctx.isolation
    need = pod.need
    if iso == "exclusive":
        s = _alone(ctx.capacity, ctx.bandwidth, pod)
        if params.mig_interference > 0 and ctx.placement is not None:
            load = sum(max((p.activity for p in c.tenants), default=0.0) * c.placement.profile.compute_slices / 7.0
                       for c in ctx.gpu.contexts if c is not ctx and c.placement is not None)
            s /= 1.0 + params.mig_interference * load
        return s
    tenants = ctx.tenants
    if iso == "mps":
        # Spatial sharing: SMs up to the active-thread share; HBM bandwidth and L2 are shared.
        cap_ctx = ctx.capacity
        mine = min(need, pod.cap * cap_ctx)
        s = mine / need
        demand = bw_demand = 0.0
        for p in tenants:
            demand += p.activity * min(p.need, p.cap * cap_ctx)
            bw_demand += p.activity * p.bw
        if demand > cap_ctx:
            s *= cap_ctx / demand
        if pod.bw > 0 and bw_demand > ctx.bandwidth:
            s = min(s, ctx.bandwidth / bw_demand)
        others_bw = max(0.0, bw_demand - pod.activity * pod.bw)
        return s / (1.0 + params.mps_contention_penalty * others_bw)
    # time-slicing, KAI (unenforced fractions), HAMi (utilisation cap on time-sharing): one tenant
    # at a time owns the whole GPU (SMs and bandwidth), so only the time share and switches count.
    others = 0.0
    for p in tenants:
        if p is not pod:
            others += min(p.activity, p.cap)
    share = 1.0 / (1.0 + others)
    # A utilisation cap (HAMi gpucores) throttles only a pod that wants more GPU time than the
    # cap: the token limiter lets short bursts through (§3), so a lightly loaded pod runs at speed.
    capped = 1.0 if pod.offered <= pod.cap else pod.cap / pod.offered
    s = _alone(ctx.capacity, ctx.bandwidth, pod) * min(capped, share)
    # Switches happen as often as others are busy: the full overhead once one other tenant is.
    return s * (1.0 - params.timeslice_switch_overhead * min(1.0, others))


def node_uplink(node, gpus: set[int], params: "ModelParameters") -> float:
    """GB/s the job's GPUs on ``node`` push off the node in a ring all-reduce.

    NCCL runs one channel per NIC; each GPU uses the NICs on its own PCIe switch (shared with the
    job's other GPUs there).  A GPU with no local NIC reaches all of them through the socket
    interconnect (x ``cross_numa_factor``).  A GPU's share is capped by its PCIe link.  Every GPU
    carries the same share of the ring, so the node's uplink is the number of the job's GPUs
    times the smallest per-GPU share."""
    per_nic = node.nic_gbs if node.nic_gbs is not None else params.inter_node_bandwidth_gbs
    users = [len(loc & gpus) for loc in node.nic_gpus]
    worst = math.inf
    for g in gpus:
        mine = [t for t, loc in enumerate(node.nic_gpus) if g in loc]
        if mine:
            share = sum(per_nic / users[t] for t in mine)
        else:
            share = len(node.nic_gpus) * per_nic * params.cross_numa_factor / len(gpus)
        # GPUDirect RDMA goes through the GPU's own PCIe link: no GPU pushes more than that.
        worst = min(worst, share, params.pcie_bandwidth_gbs)
    return len(gpus) * worst


def _bottleneck(ctxs: list["DeviceContext"], params: "ModelParameters") -> float:
    nodes = {c.node.name: c.node for c in ctxs}
    ref = params.nvswitch_bandwidth_gbs
    if len(nodes) > 1:
        # A ring enters and leaves every node: bound by the slowest node uplink.
        used: dict[str, set[int]] = {}
        for c in ctxs:
            used.setdefault(c.node.name, set()).add(c.gpu.index)
        bw = min(node_uplink(n, used[name], params) for name, n in nodes.items())
        bw = min(bw, ref)
        if len({n.rack for n in nodes.values()}) > 1:
            bw *= params.inter_rack_factor  # the ring crosses the oversubscribed spine
        # Inside each node hops may also be PCIe; the ring is bound by its slowest hop.
        if any(n.link == "pcie" for n in nodes.values()):
            bw = min(bw, params.pcie_bandwidth_gbs)
        return bw
    node = next(iter(nodes.values()))
    gpus = {c.gpu.index for c in ctxs}
    numas = {c.gpu.numa for c in ctxs}
    cross = params.cross_numa_factor if len(numas) > 1 else 1.0
    if any(c.placement is not None for c in ctxs):
        return params.pcie_bandwidth_gbs * cross  # no CUDA IPC / NVLink between MIG instances (§1.3)
    if len(gpus) <= 1 or node.link == "nvswitch":
        return ref
    return params.pcie_bandwidth_gbs * cross


def topology_factor(pod_contexts: list[list["DeviceContext"]], sensitivity: float, params: "ModelParameters",
                    node_gpus: int = 8) -> float:
    """Step-time multiplier of a multi-GPU job vs its ideal placement (>= 1 normally).

    step = compute + communication; communication (share ``sensitivity`` of
    the step on NVSwitch) scales with NVSwitch bandwidth / the bottleneck
    bandwidth of the ring (ring all-reduce is bound by its slowest hop):

    * several nodes: the slowest node uplink - the NICs local to the job's GPUs there, each
      ``nic_gbps`` (default ``inter_node_bandwidth_gbs``); no local NIC: all NICs x
      ``cross_numa_factor`` - (x ``inter_rack_factor`` when the ring crosses racks);
    * one node, MIG instances: no CUDA IPC / NVLink between instances (§1.3), so PCIe via host;
    * one node, NVSwitch: ``nvswitch_bandwidth_gbs`` (the reference);
    * one node, PCIe: ``pcie_bandwidth_gbs`` (x ``cross_numa_factor`` across sockets).

    The ideal is one NVSwitch node when the job fits in ``node_gpus`` GPUs,
    else the fewest nodes of one rack; ``duration`` in a scenario is the run
    time at that ideal.
    """
    ctxs = [c for group in pod_contexts for c in group]
    if sensitivity <= 0 or len(ctxs) <= 1:
        return 1.0
    ref = params.nvswitch_bandwidth_gbs
    # Ideal beyond one node: whole nodes of one rack, one NIC per GPU (DGX A100 class).
    ideal_bw = ref if len(ctxs) <= node_gpus else min(ref, node_gpus * params.inter_node_bandwidth_gbs)
    actual = (1.0 - sensitivity) + sensitivity * (ref / _bottleneck(ctxs, params))
    ideal = (1.0 - sensitivity) + sensitivity * (ref / ideal_bw)
    return actual / ideal
