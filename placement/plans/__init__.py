"""The plan: a ranked stack resolved into node groups, data planes, workloads and queues (docs/plan.md).

Pure Python: no Django, no Celery. `build_plan` makes it at the end of compose; evidence renders it
with `scenario_document`, export renders it through placement.deploy.
"""

from placement.plans.models import Plan

__all__ = ["Plan"]
