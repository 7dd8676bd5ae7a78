"""The Celery app. With no CELERY_BROKER_URL, tasks run eagerly in-process (embedded default)."""

import os
import resource

from celery import Celery
from celery.signals import worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("atlas")
app.config_from_object("django.conf:settings", namespace="CELERY")
# Task modules live in the concept packages that own them; services queue them by name.
app.autodiscover_tasks(["placement.evidence", "placement.decisions", "placement.deploy"])


@worker_process_init.connect
def limit_pool_process_memory(**_kwargs) -> None:
    """Each pool process gets an address-space limit, so one run that outgrows its memory fails
    with a MemoryError (recorded as the run's reason) instead of taking the machine or the worker
    down. Set in the pool child only: the web process and eager runs are not limited here."""
    from django.conf import settings

    limit_mb = settings.ATLAS_WORKER_MEMORY_LIMIT_MB
    if limit_mb > 0:
        _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = limit_mb * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))
