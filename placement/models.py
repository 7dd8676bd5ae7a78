"""Django loads an app's models from this module. The models live in their concept packages
(catalog, review, stacks, evidence, deploy, decisions, access); importing them here registers them. Code
imports a model from its concept package, never from here: this module sits above all of them.
Tables keep their names (app label `placement`), so moving a model never needs a migration."""

from placement.access.models import ApiAccess
from placement.catalog.models import Capability, CatalogVersion, Layer, Map, Project, ProjectFacet, ProjectLayer
from placement.decisions.models import DecisionEvent, DecisionRecord, ProjectRing, Webhook, WebhookDelivery
from placement.deploy.models import PlaneTrial
from placement.evidence.models import EvaluationCandidate, SimulationRun, StoryBand, Sweep
from placement.review.models import Revision
from placement.stacks.models import Stack

__all__ = [
    "ApiAccess",
    "Capability",
    "CatalogVersion",
    "DecisionEvent",
    "DecisionRecord",
    "EvaluationCandidate",
    "Layer",
    "Map",
    "PlaneTrial",
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
