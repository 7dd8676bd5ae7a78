"""The cluster simulation, in the rooms a reader expects.

* :mod:`.cluster_sim` - :class:`ClusterSimulation`: policies, scheduling cycle, arrivals, run.
* :mod:`.state` - :class:`ClusterState` (nodes, workloads, accounting, counters), capacity index,
  eviction probe, service state.
* :mod:`.phases` - binding, running, termination, memory, disruptions, sampling (mixed into the simulation).
* :mod:`.explain` - kube-scheduler's "why not" words, from the nodes it is handed.
* :mod:`.results` - the finished run's state as a :class:`~scheduler_core.metrics.SimulationResult`.

Arrows point down: cluster_sim -> phases, explain, results -> state -> eventlog.

Policies (``scheduler_core.policies``) see the simulation only through
:class:`~scheduler_core.policies.port.ClusterPort`; the import arrows point one way.
"""

from scheduler_core.simulation.cluster_sim import ClusterSimulation

__all__ = ["ClusterSimulation"]
