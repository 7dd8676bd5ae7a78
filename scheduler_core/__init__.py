"""scheduler_core: discrete-event simulator of GPU placement on Kubernetes.

No Django, no Celery: this package is pure Python (pydantic, PyYAML) so it can
run in a worker, a CLI or a test without a database.
"""

from scheduler_core.engine import Environment, Event, Priority, SchedulingError

__all__ = ["Environment", "Event", "Priority", "SchedulingError"]
