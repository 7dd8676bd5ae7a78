"""A real Celery worker on the real Redis broker, started by the test suite (no eager mode).

The worker is a separate process that talks to the same PostgreSQL test database, so the tests
that use it are transactional: what they write is committed and visible to the worker.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]
BROKER = os.environ.get("ATLAS_TEST_BROKER_URL", "redis://127.0.0.1:6379/15")


def _redis_answers(url: str) -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


class Worker:
    """One `celery worker` process; `kill()` takes it down hard, like an OOM kill or a lost node."""

    def __init__(self, env: dict[str, str], log: Path):
        self.env = env
        self.log = log
        self.proc: subprocess.Popen | None = None

    def start(self, hostname: str = "atlas-test") -> "Worker":
        self.log_handle = self.log.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool=prefork", "--concurrency=1",
             "--loglevel=INFO", f"--hostname={hostname}@%h", "--without-gossip", "--without-mingle", "--without-heartbeat"],
            cwd=ROOT,
            env=self.env,
            stdout=self.log_handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, so kill() reaches the pool children too
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if b"ready." in self.log.read_bytes():
                return self
            if self.proc.poll() is not None:
                raise RuntimeError(f"celery worker exited early:\n{self.log.read_text()[-3000:]}")
            time.sleep(0.2)
        raise RuntimeError(f"celery worker did not become ready:\n{self.log.read_text()[-3000:]}")

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()
        self.log_handle.close()


@pytest.fixture
def celery_broker(transactional_db, ensure_catalog):
    """Point the app's Celery at the real Redis broker (not eager) for this test."""
    if not _redis_answers(BROKER):
        pytest.fail(f"Redis does not answer at {BROKER}; .ci/run starts it")
    import redis

    from config.celery import app

    redis.Redis.from_url(BROKER).flushdb()
    saved = {k: app.conf[k] for k in ("broker_url", "result_backend", "task_always_eager")}
    app.conf.update(broker_url=BROKER, result_backend=BROKER, task_always_eager=False)
    _reset_connections(app)
    yield app
    app.conf.update(saved)
    _reset_connections(app)


def _reset_connections(app) -> None:
    """Eager apply_async still opens a producer on the configured (default) broker; drop the
    pools so the next send connects to the broker configured now."""
    app._pool = None  # kombu keeps pools per connection URL; only our references are dropped
    app.amqp._producer_pool = None


def _worker_env(broker: str) -> dict[str, str]:
    db = connection.settings_dict
    env = dict(os.environ)
    env.update(
        DATABASE_URL=f"postgres://{db['USER'] or 'postgres'}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}",
        CELERY_BROKER_URL=broker,
        CELERY_RESULT_BACKEND=broker,
        ATLAS_RUN_HEARTBEAT_TIMEOUT="3",
        DJANGO_SETTINGS_MODULE="config.settings",
    )
    return env


@pytest.fixture
def worker_factory(celery_broker, tmp_path, settings):
    yield from _workers(_worker_env(BROKER), tmp_path)


def _workers(env: dict[str, str], tmp_path: Path):
    workers: list[Worker] = []

    def start(name: str = "w1", **extra_env: str) -> Worker:
        worker = Worker({**env, **extra_env}, tmp_path / f"{name}.log").start(hostname=name)
        workers.append(worker)
        return worker

    yield start
    for worker in workers:
        worker.stop()


def wait_for(predicate, timeout: float = 60.0, interval: float = 0.2, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


class PrivateRedis:
    """A redis-server of the test's own, without persistence (no RDB, no AOF), like the probe's
    production broker: `restart()` loses every message it held; `pause()` SIGSTOPs it (a hung
    broker: connections are accepted by the kernel, nothing answers)."""

    def __init__(self, tmp: Path):
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.dir = tmp
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen | None = None

    def start(self) -> "PrivateRedis":
        self.proc = subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--save", "", "--appendonly", "no",
             "--dir", str(self.dir)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        wait_for(lambda: _redis_answers(self.url), timeout=20, what="the private Redis to answer")
        return self

    def restart(self) -> None:
        self.stop()
        self.start()

    def pause(self) -> None:
        os.kill(self.proc.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.kill(self.proc.pid, signal.SIGCONT)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.resume()
            self.proc.kill()
            self.proc.wait(timeout=10)


@pytest.fixture
def private_redis(transactional_db, ensure_catalog, tmp_path):
    """The app's Celery pointed at a private Redis without persistence (not eager)."""
    from config.celery import app

    server = PrivateRedis(tmp_path).start()
    saved = {k: app.conf[k] for k in ("broker_url", "result_backend", "task_always_eager")}
    app.conf.update(broker_url=server.url, result_backend=None, task_always_eager=False)
    _reset_connections(app)
    yield server
    server.stop()
    app.conf.update(saved)
    _reset_connections(app)


@pytest.fixture
def private_worker_factory(private_redis, tmp_path):
    """Celery workers on the private Redis (see `private_redis`)."""
    yield from _workers(_worker_env(private_redis.url), tmp_path)
