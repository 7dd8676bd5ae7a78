"""`make run`: the web server and a Celery worker from one command; Ctrl-C stops both.

In the embedded default the broker is Kombu's filesystem transport under var/broker (see
config/settings.py), so nothing else has to run. With CELERY_BROKER_URL set (real mode) or
ATLAS_CELERY_EAGER=1 only the web server starts: real mode runs its workers with `make worker`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand

STOP_GRACE_SECONDS = 10


class Command(BaseCommand):
    help = "Serve the app and, on the embedded broker, a Celery worker beside it; Ctrl-C stops both."

    def add_arguments(self, parser):
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000")
        parser.add_argument("--noreload", action="store_true", help="do not restart the web server on code changes")
        parser.add_argument(
            "--prepare", action="store_true",
            help="first migrate, import the catalog, create the demo users and collect static files",
        )

    def handle(self, *args, addrport: str, noreload: bool, prepare: bool, **options):
        if prepare:
            call_command("migrate", interactive=False, verbosity=0)
            call_command("import_catalog", str(settings.ATLAS_CATALOG_DIR))
            call_command("seed_roles", demo_users=True)
            call_command("collectstatic", interactive=False, verbosity=0)
        manage = str(Path(settings.BASE_DIR) / "manage.py")
        web = [sys.executable, manage, "runserver", addrport] + (["--noreload"] if noreload else [])
        commands = {"web server": web}
        if settings.CELERY_BROKER_URL.startswith("filesystem://") and not settings.CELERY_TASK_ALWAYS_EAGER:
            commands["worker"] = [
                sys.executable, "-m", "celery", "-A", "config", "worker", "--concurrency=1", "--loglevel=INFO",
                # the filesystem transport has no broadcast: nothing to gossip or mingle with
                "--without-gossip", "--without-mingle", "--without-heartbeat",
            ]
        else:
            self.stdout.write("A broker is configured (or tasks run eagerly): start workers with `make worker`.")
        # Each child gets its own session, so stopping it also stops what it started (runserver's
        # reloader child, the worker's pool process); this process forwards Ctrl-C to them.
        children = {name: subprocess.Popen(cmd, start_new_session=True) for name, cmd in commands.items()}
        stopping = False

        def stop(signum, frame):
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        self.stdout.write(f"Started {', '.join(f'{n} (pid {p.pid})' for n, p in children.items())}; Ctrl-C stops both.")
        exit_code = 0
        while not stopping:
            ended = [(name, proc) for name, proc in children.items() if proc.poll() is not None]
            if ended:
                name, proc = ended[0]
                self.stderr.write(f"The {name} exited with status {proc.returncode}; stopping the rest.")
                exit_code = proc.returncode or 1
                break
            time.sleep(0.3)
        _stop_all(children.values())
        if exit_code:
            sys.exit(exit_code)


def _stop_all(procs) -> None:
    procs = [p for p in procs if p.poll() is None]
    for proc in procs:
        proc.terminate()  # the worker's main process shuts its pool down; runserver just ends
    deadline = time.monotonic() + STOP_GRACE_SECONDS
    for proc in procs:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
    for proc in procs:
        _signal_group(proc, signal.SIGKILL)  # whatever is left of the group, e.g. a busy pool process
        proc.wait()


def _signal_group(proc: subprocess.Popen, signum: int) -> None:
    try:
        os.killpg(proc.pid, signum)
    except ProcessLookupError:
        pass
