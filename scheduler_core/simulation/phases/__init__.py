"""The phases of a workload's life, one room each, mixed into :class:`ClusterSimulation`.

binding (plan nodes, bind pods, gang start and rendezvous), running (speeds,
progress, completion, service load), termination (release, finish, evict,
preempt, crash and restart), memory (OOM watch), disruptions (scenario events
and MIG reconfiguration), sampling (time series and stranded capacity).
Every phase works on the state the simulation owns; none imports a policy.
"""
