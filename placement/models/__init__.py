from placement.models.catalog import Capability, CatalogVersion, Layer, Map, Project, ProjectFacet, ProjectLayer
from placement.models.decisions import DecisionEvent, DecisionRecord, ProjectRing, Webhook, WebhookDelivery
from placement.models.review import Revision
from placement.models.stacks import ApiAccess, SimulationRun, Stack, StoryBand, Sweep

__all__ = [
    "ApiAccess",
    "Capability",
    "CatalogVersion",
    "DecisionEvent",
    "DecisionRecord",
    "Layer",
    "Map",
    "Project",
    "ProjectFacet",
    "ProjectLayer",
    "ProjectRing",
    "Revision",
    "SimulationRun",
    "Stack",
    "StoryBand",
    "Sweep",
    "Webhook",
    "WebhookDelivery",
]
