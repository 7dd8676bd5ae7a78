"""Compatibility name: the simulation lives in :mod:`scheduler_core.simulation`."""

from scheduler_core.simulation.engine import ClusterSimulation

__all__ = ["ClusterSimulation"]
