"""'Try on a control plane' on a stack's page: a trial is queued as a Celery task, reports its progress,
and ends with the trial or the component's own words; one plane at a time; bad requests write nothing."""

import html
import socket
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from placement.deploy.localplane import Ports
from placement.deploy.localplane.plane import port_base
from placement.deploy.models import PlaneTrial
from placement.deploy.services.trial import trial_fail_lost
from placement.stacks.models import Stack
from placement.stacks.services.stacks import compose_stacks

pytestmark = pytest.mark.django_db

KUEUE_REQUEST = {"profile": "training", "pool": {"gpu_model": "A100-80GB", "gpu_count": 16}}


def kueue_stack(user=None) -> Stack:
    """A saved stack whose admission layer is Kueue (the matrix's Kueue + kube-scheduler shape)."""
    for stack in compose_stacks(KUEUE_REQUEST).stacks:
        saved = Stack(name=stack.title, profile="training", request=KUEUE_REQUEST,
                      composition=stack.model_dump(mode="json"), created_by=user)
        if "kueue" in saved.project_slugs and not {"volcano", "kai-scheduler", "hami"} & set(saved.project_slugs):
            saved.save()
            return saved
    raise AssertionError("no Kueue stack composed for the training profile")


def test_the_stack_page_offers_the_trial_to_an_architect(client, architect):
    stack = kueue_stack(architect)
    client.force_login(architect)
    page = client.get(reverse("stack-detail", args=[stack.pk])).content.decode()
    assert f'action="/stacks/{stack.pk}/try/"' in page and "Try on a control plane" in page


def test_a_taken_port_fails_the_trial_with_the_planes_words_and_frees_the_plane(
        client, architect, monkeypatch, django_capture_on_commit_callbacks):
    base = port_base() + 60  # beside the session's plane and the failure-mode tests
    monkeypatch.setenv("ATLAS_CONTROLPLANE_PORT_BASE", str(base))
    stack = kueue_stack(architect)
    client.force_login(architect)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", Ports(base).apiserver))
        taken.listen()
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(reverse("stack-try", args=[stack.pk]))
    trial = PlaneTrial.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/trials/{trial.pk}/"
    assert trial.status == "failed" and not trial.active
    assert f"port {Ports(base).apiserver} (kube-apiserver) is in use" in trial.error
    assert trial.log[0]["message"].startswith("bundle exported with the numbers of")
    page = client.get(response["Location"]).content.decode()
    assert "is in use" in page and 'data-status="failed"' in page
    progress = client.get(reverse("plane-trial-progress", args=[trial.pk]), {"was": "running"})
    assert progress["HX-Refresh"] == "true"  # the page reloads once to show the end


def test_a_second_trial_is_refused_while_one_holds_the_plane(client, architect):
    stack = kueue_stack(architect)
    running = PlaneTrial.objects.create(stack=stack, status="running", heartbeat_at=timezone.now())
    client.force_login(architect)
    response = client.post(reverse("stack-try", args=[stack.pk]), follow=True)
    assert PlaneTrial.objects.count() == 1
    assert f"The control plane is busy: trial {running.pk} of stack" in response.content.decode()


def test_a_trial_whose_worker_went_silent_is_failed_and_frees_the_plane(client, architect, settings):
    stack = kueue_stack(architect)
    lost = PlaneTrial.objects.create(stack=stack, status="running",
                                     heartbeat_at=timezone.now() - timedelta(seconds=settings.ATLAS_TRIAL_HEARTBEAT_TIMEOUT + 5))
    assert trial_fail_lost() == 1
    lost.refresh_from_db()
    assert lost.status == "failed" and not lost.active and "the worker was lost" in lost.error


def test_a_reader_cannot_start_a_trial_and_nothing_is_written(client, reader):
    stack = kueue_stack()
    client.force_login(reader)
    assert client.post(reverse("stack-try", args=[stack.pk])).status_code == 403
    assert PlaneTrial.objects.count() == 0


@pytest.mark.parametrize("form,field", [({"run": "latest"}, "run: 'latest' is not a run id"),
                                        ({"run": "999999"}, "has no run 999999"),
                                        ({"scenario_name": "no-such-scenario"}, "scenario_name")])
def test_a_bad_numbers_source_is_refused_naming_the_field_and_nothing_is_queued(client, architect, form, field):
    stack = kueue_stack(architect)
    client.force_login(architect)
    response = client.post(reverse("stack-try", args=[stack.pk]), form, follow=True)
    page = html.unescape(response.content.decode())
    assert "No trial was started." in page and field in page
    assert PlaneTrial.objects.count() == 0


@pytest.mark.controlplane
def test_a_kueue_stack_tried_from_its_page_runs_on_the_real_plane_and_agrees_with_the_simulator(
        client, architect, monkeypatch, django_capture_on_commit_callbacks, plane_binaries):
    monkeypatch.setenv("ATLAS_CONTROLPLANE_PORT_BASE", str(port_base() + 60))  # its own plane, beside the session's
    stack = kueue_stack(architect)
    client.force_login(architect)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("stack-try", args=[stack.pk]))
    trial = PlaneTrial.objects.get()
    assert trial.status == "succeeded", trial.error
    result = trial.result
    assert result["rejected"] == [] and result["workloads"]
    assert result["agreement"]["agree"] == result["agreement"]["judged"] > 0, [
        (w["name"], w["note"]) for w in result["workloads"] if w["agree"] is False]
    messages = [e["message"] for e in trial.log]
    assert any(m.startswith("starting kube-apiserver") for m in messages)
    page = client.get(response["Location"]).content.decode()
    assert f"The simulator agrees on {result['agreement']['agree']} of {result['agreement']['judged']} workloads" in page
