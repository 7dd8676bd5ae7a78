"""Decision-record fixtures: two saved stacks (made directly, so these tests do not depend on what
compose ranks today) and one finished simulation run to attach as evidence."""

from __future__ import annotations

import pytest

from placement.evidence.models import SimulationRun
from placement.stacks.models import Stack
from tests.evidence.scenarios import batch_scenario


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def stacks(db, architect):
    whole = Stack.objects.create(
        name="Whole GPUs + Kueue", profile="training", created_by=architect,
        request={"profile": "training"}, composition={"components": ["kueue", "kube-scheduler", "nvidia-device-plugin"]},
    )
    hami = Stack.objects.create(
        name="HAMi shares", profile="training", created_by=architect,
        request={"profile": "training"}, composition={"components": ["hami"]},
    )
    return whole, hami


@pytest.fixture
def finished_run(architect, django_capture_on_commit_callbacks):
    from placement.evidence.services import runs as evidence

    with django_capture_on_commit_callbacks(execute=True):
        run, _ = evidence.simulation_start(user=architect, stack=None, scenario_document=batch_scenario(60))
    run.refresh_from_db()
    assert run.status == SimulationRun.SUCCEEDED, run.error
    return run


def proposal(stacks, **extra) -> dict:
    whole, hami = stacks
    data = {
        "title": "Pool training runs whole GPUs + Kueue",
        "context_text": "8 workers x 8 GPUs, gang, NVLink",
        "options": [whole.pk, hami.pk],
        "chosen": whole.pk,
        "consequences": "Hold HAMi until its memory cap covers our runtime.",
        "rings": [
            {"project": "kueue", "ring": "adopt", "reason": "quota per team with cohorts"},
            {"project": "hami", "ring": "hold", "reason": "memory cap not proven on our runtime"},
        ],
        "reason": "Board meeting 2026-12-01",
    }
    data.update(extra)
    return data
