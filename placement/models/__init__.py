from placement.models.catalog import Capability, Layer, Map, Project, ProjectFacet, ProjectLayer
from placement.models.review import Revision
from placement.models.stacks import ApiAccess, SimulationRun, Stack, Sweep

__all__ = [
    "ApiAccess",
    "Capability",
    "Layer",
    "Map",
    "Project",
    "ProjectFacet",
    "ProjectLayer",
    "Revision",
    "SimulationRun",
    "Stack",
    "Sweep",
]
