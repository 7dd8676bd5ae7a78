"""Control-plane policies: L2 schedulers and the L1 admission controller.

``make_scheduler`` returns the scheduler named by
``stack.control_plane.scheduler``; ``make_admission`` returns the Kueue
admission controller or ``None``.  Each lives in its own module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from scheduler_core.policies.port import ClusterPort


def make_scheduler(sim: "ClusterPort"):
    name = sim.cp.scheduler
    if name == "kube-default":
        from scheduler_core.policies.kube import (
            KubeScheduler,
            KubeWorkloadGangScheduler,
        )
        return KubeWorkloadGangScheduler(sim) if sim.cp.kube.workload_gang else KubeScheduler(sim)
    if name == "coscheduling":
        from scheduler_core.policies.kube import CoschedulingScheduler
        return CoschedulingScheduler(sim)
    if name == "volcano":
        from scheduler_core.policies.volcano import VolcanoScheduler
        return VolcanoScheduler(sim)
    if name == "kai":
        from scheduler_core.policies.kai import KaiScheduler
        return KaiScheduler(sim)
    raise ValueError(f"unknown scheduler {name!r}")  # pragma: no cover - schema prevents it


def make_admission(sim: "ClusterPort"):
    if sim.cp.admission == "kueue":
        from scheduler_core.policies.kueue import KueueAdmission
        return KueueAdmission(sim)
    return None
