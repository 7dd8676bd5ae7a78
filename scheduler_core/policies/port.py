"""The narrow interface a policy is handed: what a scheduler or admission controller may see and do.

Policies never import the simulation; :func:`make_scheduler` and
:func:`make_admission` hand them an object satisfying :class:`ClusterPort`
(the cluster simulation does, structurally).  Reading: the clock, the
configuration, nodes, quota accounting.  Acting: plan and bind pods, create
pods, evict or preempt, ask for a pass, set a timer.  A test checks that
policies use nothing else, so the arrows point one way: simulation -> policies -> port.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Protocol

if TYPE_CHECKING:  # pragma: no cover
    from scheduler_core.cluster import Node
    from scheduler_core.events import Event
    from scheduler_core.scenario import ControlPlane, ModelParameters
    from scheduler_core.workloads import Pod, Workload


class EvictionCheck(Protocol):
    """Would the pods of a preemptor fit once the added victims' pods are gone?"""

    def add(self, victim_pods) -> None: ...

    def fits(self) -> bool: ...


class ClusterPort(Protocol):
    # ---- what a policy reads
    now: float
    cp: "ControlPlane"                         # the stack's control-plane configuration
    params: "ModelParameters"
    nodes: list["Node"]
    capacity_gpus: int
    capacity_total: dict[str, float]           # allocatable per queue resource (nvidia.com/gpu, cpu, memory GiB)
    full_pass: bool                            # capacity was freed since the last pass
    queue_usage: dict[str, dict[str, float]]   # resources (DeviceRequest.share) bound per queue
    queue_releasing: dict[str, dict[str, float]]  # the part of queue_usage held by terminating pods
    queue_pending: dict[str, dict[str, float]]  # resources of pending pods per queue
    running_priorities: dict[int, int]         # priority -> bound pods

    # ---- placement questions
    def node_eligible(self, node: "Node") -> bool: ...

    def candidate_nodes(self, wl: "Workload") -> list["Node"]: ...

    def quick_fit(self, wl: "Workload", pods: int = 1) -> bool: ...

    def queue_allocated(self, queue: str) -> dict[str, float]: ...

    def plan(self, wl: "Workload", pods: int, strategy: str, level: str | None = None,
             nodes: list["Node"] | None = None) -> list[tuple["Node", int]] | None: ...

    def plan_group(self, parts: list[tuple["Workload", int]], strategy: str,
                   level: str | None = None) -> list[tuple["Workload", list[tuple["Node", int]]]] | None: ...

    def kube_scoring(self, wl: "Workload") -> str: ...

    def eviction_probe(self, wl: "Workload", pods: int, nodes: list["Node"] | None = None) -> EvictionCheck: ...

    def unschedulable(self, wl: "Workload", siblings_fill: bool = False, wording: str = "available") -> str | None: ...

    def pods_that_fit(self, wl: "Workload", pods: int) -> int: ...

    def topology_unschedulable(self, wl: "Workload", level: str) -> tuple[str, int] | None: ...

    # ---- actions
    def bind_plan(self, wl: "Workload", plan: list[tuple["Node", int]]) -> int: ...

    def place_pods_individually(self, wl: "Workload", strategy: str, max_pods: int | None = None) -> int: ...

    def create_pods(self, wl: "Workload", n: int | None = None) -> None: ...

    def set_state(self, wl: "Workload", state: str) -> None: ...

    def evict(self, wl: "Workload", reason: str, requeue_delay: float = 0.0, preemption: bool = True,
              message: str = "") -> None: ...

    def preempt_pod(self, pod: "Pod", reason: str, message: str = "") -> None: ...

    def fail_workload(self, wl: "Workload", reason: str) -> None: ...

    def count_admission_error(self, reason: str) -> None: ...

    def log_event(self, kind: str, wl: "Workload", detail: str = "", node: str | None = None) -> None: ...

    # ---- time
    def request_cycle(self) -> None: ...

    def retry_at(self, t: float) -> None: ...

    def schedule_in(self, delay: float, priority: int, callback: Callable[..., Any], *args: Any) -> "Event": ...
