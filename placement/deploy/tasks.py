"""Celery task of the deploy package: a stack tried on the local control plane. A thin wrapper over
services.trial, queued by name (placement.common.queue). Its time limits come with the message
(ATLAS_TRIAL_TIME_LIMIT); on the soft limit the plane is stopped and the trial failed with the reason."""

from celery import shared_task

from placement.deploy.services import trial


@shared_task(name=trial.TASK, acks_late=False)
def try_stack_on_plane(trial_id: int) -> str:
    # acks_late=False: a trial lost with its worker is not redelivered onto a plane whose ports its dead
    # processes may still hold; the next request fails it as lost (trial_fail_lost) instead.
    return trial.trial_execute(trial_id)
