"""The ``parameters`` section: named modelling assumptions, each default citing domain-facts.md."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from scheduler_core.units import DocumentModel, Duration


class ModelParameters(DocumentModel):
    """Named modelling assumptions.  Each default cites domain-facts.md; [U] = no authoritative figure."""

    timeslice_switch_overhead: float = Field(
        0.31, ge=0, lt=1,
        description="[S §7.2, fitted] throughput lost to context switches when the other tenants are busy: "
                    "MIG 1.00 vs time-slicing 0.76 req/s per A100 (docs/simulator-model.md, calibration)")
    mps_contention_penalty: float = Field(
        0.43, ge=0,
        description="[S §7.2, fitted] MPS shared-L2/HBM contention: slowdown 1 + penalty x co-clients' bandwidth "
                    "load; MPS ~30% worse than MIG when both clients are memory-bound")
    mig_interference: float = Field(
        0.0, ge=0, description="[S §1.3] leak through power throttling between MIG instances; no figure, default 0")
    nvswitch_bandwidth_gbs: float = Field(300.0, gt=0, description="[S §7.1] NVLink3 600 GB/s total = 300 per direction")
    pcie_bandwidth_gbs: float = Field(32.0, gt=0, description="[S §7.1] PCIe Gen4 x16 32 GB/s per direction")
    cross_numa_factor: float = Field(0.5, gt=0, le=1, description="[U] PCIe peer traffic across sockets: bandwidth x factor")
    inter_node_bandwidth_gbs: float = Field(25.0, gt=0, description="[U] one 200 Gb/s NIC per GPU (DGX A100 class)")
    inter_rack_factor: float = Field(0.5, gt=0, le=1, description="[U] oversubscribed spine: bandwidth x factor across racks")
    mig_reconfigure_cost: Duration = Field(
        30.0, description="[U §1.4] node-level drain per re-partition; MISO's simulator default 30 s")
    driver_slot_choice: Literal["lowest", "highest"] = Field(
        "lowest", description="[U §1.1] free slot the driver picks for an instance created without placement")
    # Kubelet: "exponential backoff delay (10s, 20s, 40s, ...), capped at 300 seconds (5 minutes). Once a
    # container has executed for 10 minutes without any problems, the kubelet resets the restart backoff
    # timer" (kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#container-restarts).
    restart_backoff: Duration = Field(10.0, gt=0, description="[V] kubelet CrashLoopBackOff first delay (pod-lifecycle)")
    restart_backoff_max: Duration = Field(300.0, gt=0, description="[V] kubelet CrashLoopBackOff cap, 5 min (pod-lifecycle)")
    restart_backoff_reset: Duration = Field(
        600.0, gt=0, description="[V] kubelet resets the backoff after the container ran this long (pod-lifecycle)")
    # Job controller: "Failed Pods associated with the Job are recreated by the Job controller with an
    # exponential back-off delay (10s, 20s, 40s ...) capped at six minutes"
    # (kubernetes.io/docs/concepts/workloads/controllers/job/#pod-backoff-failure-policy).
    job_retry_backoff: Duration = Field(10.0, gt=0, description="[V] Job controller: first delay before recreating a failed pod")
    job_retry_backoff_max: Duration = Field(360.0, gt=0, description="[V] Job controller retry backoff cap, 6 min")
    controller_recreate_delay: Duration = Field(
        1.0, description="[U] ReplicaSet controller replaces a failed service pod after this delay (no backoff)")
    rendezvous_timeout: Duration = Field(
        900.0, description="[U] workers of an incomplete gang give up (torch elastic style) and the job restarts")
    checkpoint_interval: Duration = Field(1800.0, description="[U] training checkpoints every 30 min of work")
    termination_grace: Duration = Field(30.0, description="[U] terminationGracePeriodSeconds for preempted pods")
    max_restarts: int = Field(6, ge=0, description="[V] Job backoffLimit default 6: failures before a job is marked failed")
    timeslicing_oom_scope: Literal["gpu", "pod"] = Field(
        "gpu", description="[V §2.1] time-slicing shares one fault domain: 'if one workload crashes, they all do'")
    mps_oom_scope: Literal["gpu", "pod"] = Field(
        "pod", description="[V-code §2.2] per-client pinned memory limit: only the client over its limit fails")
    hami_oom_scope: Literal["gpu", "pod"] = Field("pod", description="[V §3] HAMi-core hard memory cap per container")
    kai_oom_scope: Literal["gpu", "pod"] = Field("gpu", description="[V §6.5] KAI fractions: no memory isolation")
    mps_fault_scope: Literal["gpu", "pod"] = Field(
        "gpu", description="[S §2.3] a fatal GPU exception reaches every MPS client on that GPU")
    latency_grid_per_decade: int = Field(40, ge=5, le=200, description="histogram resolution for latency quantiles")
