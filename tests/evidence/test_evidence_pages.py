"""Evidence pages: simulate a saved stack from its page, watch progress, see charts; compare stacks
side by side; a seed sweep shows every metric as mean with a 95% confidence interval."""

import io

import pytest
import yaml

from placement.evidence.models import SimulationRun, Sweep
from placement.evidence.services import runs as evidence
from placement.stacks.services import stacks as rules
from tests.evidence.scenarios import batch_scenario

pytestmark = pytest.mark.django_db

WHOLE_GPU_TRAINING = {
    "profile": "training",
    "pool": {"gpu_model": "A100-80GB", "gpu_count": 32, "mig_capable": False},
}


@pytest.fixture
def stack(architect):
    return rules.stack_save(user=architect, request_data=WHOLE_GPU_TRAINING, rank=1, name="Whole GPU training")


@pytest.fixture
def second_stack(architect):
    # Armada (multi-cluster queue, no simulator model) now ranks as admission without Volcano; the
    # comparison needs two stacks the simulator can run.
    request = dict(WHOLE_GPU_TRAINING, constraints={"exclude": ["volcano", "armada", "provisioning-request"]})
    return rules.stack_save(user=architect, request_data=request, rank=1, name="Without Volcano")


def upload(document: dict, name="scenario.yaml"):
    handle = io.BytesIO(yaml.safe_dump(document).encode())
    handle.name = name
    return handle


def test_simulating_from_the_stack_page_shows_progress_and_charts(client, architect, stack, django_capture_on_commit_callbacks):
    client.force_login(architect)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/stacks/{stack.pk}/simulate/", {"scenario_file": upload(batch_scenario(150)), "seed": "3"})
    assert response.status_code == 302
    run = SimulationRun.objects.get(stack=stack)
    assert response["Location"] == f"/runs/{run.pk}/"
    assert run.status == SimulationRun.SUCCEEDED and run.seed == 3
    assert run.scenario["stack"]["control_plane"]["scheduler"] == "volcano"
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert 'role="progressbar"' in page and 'aria-valuenow="100"' in page
    assert "/static/vendor/plotly/plotly-cartesian.min.js" in page and "cdn" not in page.lower()
    for title in ("Allocated and effective GPUs over time", "Pending pods and queued workloads over time", "Queue-wait distribution", "Per-tenant GPU-hours"):
        assert title in page, title
    assert client.get("/static/vendor/plotly/plotly-cartesian.min.js").status_code == 200


def test_progress_fragment_polls_until_the_run_finishes(client, architect, stack):
    run = SimulationRun.objects.create(stack=stack, scenario_name="x", scenario={}, seed=1, fingerprint="f" * 64,
                                       status=SimulationRun.RUNNING, progress=0.42)
    fragment = client.get(f"/runs/{run.pk}/progress/").content.decode()
    assert 'hx-trigger="every 1s"' in fragment and 'aria-valuenow="42"' in fragment
    run.status, run.progress = SimulationRun.SUCCEEDED, 1.0
    run.save()
    response = client.get(f"/runs/{run.pk}/progress/?was=running")
    assert response["HX-Refresh"] == "true"
    assert "every 1s" not in response.content.decode()


def test_invalid_uploaded_scenario_queues_nothing_and_says_why(client, architect, stack):
    client.force_login(architect)
    bad = batch_scenario(10)
    bad["horizon"] = "soon"
    response = client.post(f"/stacks/{stack.pk}/simulate/", {"scenario_file": upload(bad)}, follow=True)
    page = response.content.decode()
    assert "Nothing was queued" in page and "scenario.horizon" in page
    assert not SimulationRun.objects.exists()
    response = client.post(f"/stacks/{stack.pk}/simulate/", {"scenario_file": upload({"a": 1}, "x.yaml")}, follow=True)
    assert "Nothing was queued" in response.content.decode()
    garbage = io.BytesIO(b"\xff\xfe not yaml: [")
    garbage.name = "x.yaml"
    response = client.post(f"/stacks/{stack.pk}/simulate/", {"scenario_file": garbage}, follow=True)
    assert "scenario_file" in response.content.decode()


def test_resubmitting_the_same_run_shows_the_stored_evidence(client, architect, stack, django_capture_on_commit_callbacks):
    client.force_login(architect)
    doc = batch_scenario(50)
    with django_capture_on_commit_callbacks(execute=True):
        first = client.post(f"/stacks/{stack.pk}/simulate/", {"scenario_file": upload(doc), "seed": "1"})
    again = client.post(f"/stacks/{stack.pk}/simulate/", {"scenario_file": upload(doc), "seed": "1"}, follow=True)
    assert first["Location"] == again.redirect_chain[0][0]
    assert "ran before" in again.content.decode()
    assert SimulationRun.objects.count() == 1


def test_two_stacks_side_by_side_on_one_scenario(client, architect, stack, second_stack, django_capture_on_commit_callbacks):
    doc = batch_scenario(120)
    with django_capture_on_commit_callbacks(execute=True):
        for s in (stack, second_stack):
            evidence.simulation_start(user=architect, stack=s, scenario_document=doc)
    page = client.get(f"/stacks/compare/?stacks={stack.pk}&stacks={second_stack.pk}&scenario_name={doc['name']}").content.decode()
    assert "Whole GPU training" in page and "Without Volcano" in page
    assert "jobs.queue_wait.p50" in page and "Effective GPUs by stack" in page


def test_sweep_reports_mean_and_confidence_interval_per_metric(client, architect, stack, settings, django_capture_on_commit_callbacks, monkeypatch):
    from placement.evidence.selectors import runs as evidence_selectors

    monkeypatch.setattr(evidence_selectors, "builtin_scenario_document", lambda name: batch_scenario(80, name="sweep-scenario") if name == "sweep" else None)
    monkeypatch.setattr("placement.stacks.services.scenario.builtin_scenario_document", evidence_selectors.builtin_scenario_document)
    with django_capture_on_commit_callbacks(execute=True):
        sweep = evidence.sweep_start(user=architect, stacks=[stack], scenario_name="sweep", seeds=4)
    runs = list(sweep.runs.all())
    assert len(runs) == 4 and {r.seed for r in runs} == {1, 2, 3, 4}
    assert all(r.status == SimulationRun.SUCCEEDED for r in runs), [r.error for r in runs]
    summary = evidence_selectors.sweep_summary(sweep)
    wait = summary["metrics"]["jobs.queue_wait.mean"][stack.pk]
    assert wait.n == 4 and wait.low <= wait.mean <= wait.high
    page = client.get(f"/sweeps/{sweep.pk}/").content.decode()
    assert "±" in page and "(n=4)" in page and "95% confidence interval" in page


def test_sweep_with_too_few_seeds_is_refused(architect, stack):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError) as exc:
        evidence.sweep_start(user=architect, stacks=[stack], scenario_name="any", seeds=1)
    assert "seeds" in exc.value.message_dict
    assert not Sweep.objects.exists()
