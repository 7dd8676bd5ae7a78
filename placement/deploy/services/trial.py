"""Try a saved stack on the local control plane (placement.deploy.localplane): its bundle, as the manifests
endpoint serves it, applied to KWOK nodes shaped like its pools, beside the simulator's answer.

`try_stack` runs one trial in the caller's process (the `try_stack` command). From the stack's page a
trial is a PlaneTrial row: `trial_start` checks the request and queues it, the worker's task calls
`trial_execute`, which writes the plane's progress as it goes and the trial or the component's own
message at the end. One plane runs at a time on an installation (its ports are fixed)."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Callable

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from placement.access.services import require
from placement.common.queue import QueueUnavailable, RunNotAccepted, publish, task
from placement.deploy.models import PlaneTrial
from placement.deploy.services.bundles import stack_export
from placement.stacks.models import Stack

log = logging.getLogger(__name__)

TASK = "placement.try_stack_on_plane"


def try_stack(stack: Stack, *, run_id=None, scenario_name: str | None = None,
              progress: Callable[[str], None] | None = None) -> dict:
    """Start a plane, try the stack's bundle on it, stop the plane; the trial as a dict.
    Raises ValidationError (from stack_export) or placement.deploy.localplane.ComponentFailed."""
    from placement.deploy.localplane import LocalPlane
    from placement.deploy.localplane.trial import (
        bundle_coscheduling_values,
        bundle_kueue_config,
        bundle_scheduler_config,
        bundle_volcano_values,
        try_on_plane,
    )

    result = stack_export(stack, run_id=run_id, scenario_name=scenario_name)
    if progress:
        progress(f"bundle exported with the numbers of {result.source}")
    export = result.export
    # Started as the bundle's installs configure each component, so try_on_plane restarts none of them.
    with LocalPlane(kueue_config=bundle_kueue_config(export), scheduler_config=bundle_scheduler_config(export),
                    volcano_values=bundle_volcano_values(export), coscheduling_values=bundle_coscheduling_values(export),
                    progress=progress) as plane:
        trial = try_on_plane(plane, result.scenario, export=export, progress=progress)
    return {"stack": stack.pk, "name": stack.name, "source": result.source, **trial.as_dict()}


class TrialRunning(RunNotAccepted):
    """Another trial holds the plane."""

    status_code = 409


def _lost_before():
    return timezone.now() - timedelta(seconds=settings.ATLAS_TRIAL_HEARTBEAT_TIMEOUT)


def trial_fail_lost() -> int:
    """Fail the trials whose worker stopped reporting (killed, machine restarted): they would hold the
    plane for ever. A queued trial counts from its creation, a running one from its last progress."""
    before = _lost_before()
    lost = PlaneTrial.objects.filter(active=True).filter(
        (Q(status=PlaneTrial.QUEUED) & Q(created_at__lt=before))
        | (Q(status=PlaneTrial.RUNNING) & Q(heartbeat_at__lt=before)))
    return lost.update(status=PlaneTrial.FAILED, active=False, finished_at=timezone.now(),
                       error=f"no progress for {settings.ATLAS_TRIAL_HEARTBEAT_TIMEOUT} s: the worker was lost "
                             "(ATLAS_TRIAL_HEARTBEAT_TIMEOUT); whatever it started died with it")


def trial_start(user, stack: Stack, *, run_id=None, scenario_name: str = "") -> PlaneTrial:
    """Queue a trial of the stack. Raises PermissionDenied, ValidationError (the bundle cannot be
    exported with these numbers: nothing is queued), TrialRunning or QueueUnavailable."""
    require(user, "run_simulation")
    if run_id not in (None, "") and not str(run_id).isdigit():
        raise ValidationError({"run": [f"'{run_id}' is not a run id (a whole number)."]})
    run_id = int(run_id) if run_id not in (None, "") else None
    stack_export(stack, run_id=run_id, scenario_name=scenario_name or None)  # the same checks the worker meets
    trial_fail_lost()
    try:
        with transaction.atomic():
            trial = PlaneTrial.objects.create(stack=stack, run_id=run_id, scenario_name=scenario_name or "",
                                              created_by=user if getattr(user, "is_authenticated", False) else None)
    except IntegrityError:
        busy = PlaneTrial.objects.filter(active=True).select_related("stack").first()
        what = f"trial {busy.pk} of stack '{busy.stack.name}' is {busy.status}" if busy else "another trial is starting"
        raise TrialRunning(f"The control plane is busy: {what}. One trial runs at a time on this installation "
                           "(the plane's ports are fixed); try again when it has finished.") from None
    transaction.on_commit(lambda: _send_or_withdraw(trial.pk))
    return trial


def _send_or_withdraw(trial_id: int) -> None:
    """Send the task; when the broker refuses, delete the trial so nothing waits that no worker will run."""
    execute = task(TASK)
    limit = settings.ATLAS_TRIAL_TIME_LIMIT
    try:
        sent = publish(lambda producer: execute.apply_async(args=[trial_id], producer=producer, retry=False,
                                                            soft_time_limit=limit, time_limit=limit + 60))
    except QueueUnavailable:
        PlaneTrial.objects.filter(pk=trial_id, status=PlaneTrial.QUEUED).delete()
        raise
    PlaneTrial.objects.filter(pk=trial_id, task_id="").update(task_id=getattr(sent, "id", "") or "")


def trial_execute(trial_id: int) -> str:
    """Run the trial (in the worker): claim it, report each step, store the result or the reason."""
    from celery.exceptions import SoftTimeLimitExceeded

    from placement.deploy.localplane import ComponentFailed

    started = timezone.now()
    if not PlaneTrial.objects.filter(pk=trial_id, status=PlaneTrial.QUEUED).update(
            status=PlaneTrial.RUNNING, started_at=started, heartbeat_at=started):
        return "not queued"  # done, failed as lost, or a redelivered message of a trial already running
    trial = PlaneTrial.objects.select_related("stack").get(pk=trial_id)
    entries: list[dict] = []

    def progress(message: str) -> None:
        now = timezone.now()
        entries.append({"s": round((now - started).total_seconds(), 1), "message": message})
        PlaneTrial.objects.filter(pk=trial_id).update(log=entries, heartbeat_at=now)

    status, result, error = PlaneTrial.FAILED, None, ""
    try:
        result = try_stack(trial.stack, run_id=trial.run_id, scenario_name=trial.scenario_name or None, progress=progress)
        status = PlaneTrial.SUCCEEDED
    except ValidationError as exc:
        error = "; ".join(f"{field}: {' '.join(problems)}" for field, problems in exc.message_dict.items())
    except ComponentFailed as exc:
        error = str(exc)
    except SoftTimeLimitExceeded:
        error = (f"stopped after {settings.ATLAS_TRIAL_TIME_LIMIT} s (ATLAS_TRIAL_TIME_LIMIT); "
                 "the plane was stopped")
    except Exception as exc:  # noqa: BLE001 - recorded for the page; the log keeps the traceback
        log.exception("trial %s failed", trial_id)
        error = f"the trial stopped on an internal error ({type(exc).__name__}: {exc}); nothing is left running"
    PlaneTrial.objects.filter(pk=trial_id).update(status=status, result=result, error=error, active=False,
                                                  finished_at=timezone.now(), log=entries)
    return status
