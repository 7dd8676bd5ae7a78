"""Handing work to the task queue, bounded: what every service that queues a Celery task shares.

Services never import a task module (tasks call services, so that would be a circle): they look the
task up by its registered name (`task`), the same name the broker carries, and publish through
`publish`, which fails fast with `QueueUnavailable` when the broker is down or hung."""

from __future__ import annotations

import logging

from django.conf import settings

log = logging.getLogger(__name__)


class RunNotAccepted(Exception):
    """A run request that is valid but cannot be taken now; `status_code` says why (HTTP)."""

    status_code = 503

    def __init__(self, message: str):
        self.message = message
        super().__init__(message)


class QueueUnavailable(RunNotAccepted):
    """The task queue (broker) did not take the run; nothing was queued."""

    status_code = 503


def task(name: str):
    """The Celery task registered under `name` (e.g. "placement.execute_simulation"). The task
    modules are the concept packages' `tasks.py` (config/celery.py autodiscovers them); a web
    process that has not imported them yet imports them here."""
    from config.celery import app

    if name not in app.tasks:
        app.loader.import_default_modules()
    return app.tasks[name]


def publish(send):
    """Hand messages to the broker, failing fast; returns what `send(producer)` returns.

    `send` talks to the broker only (no database work: it may run in a helper thread). One
    connection attempt bounded by ATLAS_BROKER_CONNECT_TIMEOUT, no publish retries, socket reads
    bounded by ATLAS_BROKER_PUBLISH_TIMEOUT, and the whole publish bounded by the sum of both: a
    broker that is down or hung (accepts connections, never answers) answers QueueUnavailable in
    seconds instead of holding the web worker."""
    import threading

    from config.celery import app

    if app.conf.task_always_eager:  # runs the task inline, in this thread and transaction
        try:
            with app.producer_or_acquire() as producer:
                return send(producer)
        except Exception as exc:  # noqa: BLE001 - judged by broker_error
            problem = broker_error(exc)
            log.warning("task queue unavailable: %s", problem)
            raise QueueUnavailable(f"The task queue is unavailable ({problem}); nothing was queued. Try again in a minute.") from None
    connect, read = settings.ATLAS_BROKER_CONNECT_TIMEOUT, settings.ATLAS_BROKER_PUBLISH_TIMEOUT
    outcome: dict = {}

    def publish() -> None:
        try:
            options = {"socket_connect_timeout": connect, "socket_timeout": read}
            with app.connection_for_write(transport_options=options) as connection:
                connection.ensure_connection(max_retries=1, interval_start=0, interval_step=0.2, timeout=connect)
                outcome["value"] = send(connection.Producer())
        except Exception as exc:  # judged below, in the caller's thread
            outcome["error"] = exc

    thread = threading.Thread(target=publish, name="atlas-publish", daemon=True)
    thread.start()
    thread.join(connect + read)
    if thread.is_alive():
        problem = f"the broker did not answer within {connect + read:g} s"
    elif "error" in outcome:
        problem = broker_error(outcome["error"])
    else:
        return outcome.get("value")
    log.warning("task queue unavailable: %s", problem)
    raise QueueUnavailable(f"The task queue is unavailable ({problem}); nothing was queued. Try again in a minute.")


def broker_error(exc: Exception) -> str:
    """What a failed publish says, or re-raise an error that is not the broker's."""
    from kombu.exceptions import KombuError

    try:
        from redis.exceptions import RedisError
    except ImportError:  # pragma: no cover - redis is a dependency
        RedisError = OSError
    if isinstance(exc, (KombuError, OSError, RedisError)):
        return str(exc)
    raise exc
