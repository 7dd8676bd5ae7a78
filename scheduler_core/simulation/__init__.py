"""The cluster simulation, in the rooms a reader expects.

* :mod:`.cluster_sim` - :class:`ClusterSimulation`: state, scheduling cycle, arrivals, run.
* :mod:`.state` - capacity index, eviction probe, service state.
* :mod:`.phases` - binding, running, termination, memory, disruptions, sampling.
* :mod:`.results` - the finished run as a :class:`~scheduler_core.metrics.SimulationResult`.

Policies (``scheduler_core.policies``) see the simulation only through
:class:`~scheduler_core.policies.port.ClusterPort`; the import arrows point one way.
"""

from scheduler_core.simulation.cluster_sim import ClusterSimulation

__all__ = ["ClusterSimulation"]
