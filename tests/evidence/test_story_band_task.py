"""The run page's verdict band is computed by a Celery task, never inside the web request: the
endpoint answers at once with a polling fragment, one page load queues one computation, and the
band or the reason it failed shows once the task has finished."""

import pytest

from placement.evidence.models import SimulationRun, StoryBand
from placement.evidence.services import story_band
from tests.evidence.conftest import BROKER, wait_for


def _run(stem="device-plugin-dra"):
    return SimulationRun.objects.create(scenario_name=stem, scenario={}, seed=1, fingerprint=f"fp-{stem}",
                                        status=SimulationRun.SUCCEEDED, metrics={})


def _no_simulation(*args, **kwargs):
    raise AssertionError("the web request ran the band's simulations")


def test_band_endpoint_queues_one_computation_and_answers_with_a_polling_fragment(client, architect, celery_broker, monkeypatch):
    import redis

    monkeypatch.setattr(story_band, "judge", _no_simulation)
    run = _run()
    client.force_login(architect)
    first = client.get(f"/runs/{run.pk}/band/").content.decode()
    second = client.get(f"/runs/{run.pk}/band/").content.decode()
    assert "Computing the verdict" in first and 'hx-trigger="every 2s"' in first and "Computing the verdict" in second
    assert list(StoryBand.objects.values_list("status", flat=True)) == [StoryBand.COMPUTING]
    assert redis.Redis.from_url(BROKER).llen("celery") == 1  # two page loads, one queued task


@pytest.mark.django_db
def test_a_computed_band_shows_the_verdict_and_stops_polling(client, architect):
    run = _run()
    client.force_login(architect)
    band = client.get(f"/runs/{run.pk}/band/").content.decode()  # eager: computed by the task inline
    assert "device-plugin-dra vs device-plugin-default" in band and "the verdict holds over seeds" in band
    assert "every 2s" not in band and StoryBand.objects.get().status == StoryBand.DONE


@pytest.mark.django_db
def test_a_failed_band_shows_its_reason_instead_of_polling(client, architect, monkeypatch):
    def broken(*args, **kwargs):
        raise ValueError("scenario 'x' has no GPUs")

    monkeypatch.setattr(story_band, "judge", broken)
    run = _run()
    client.force_login(architect)
    band = client.get(f"/runs/{run.pk}/band/").content.decode()
    assert "could not be computed" in band and "scenario &#x27;x&#x27; has no GPUs" in band
    assert "every 2s" not in band


@pytest.mark.worker
def test_a_real_worker_fills_the_band_the_page_was_polling_for(client, architect, worker_factory):
    worker_factory("w1")
    run = _run()
    client.force_login(architect)
    client.get(f"/runs/{run.pk}/band/")
    wait_for(lambda: StoryBand.objects.filter(status=StoryBand.DONE).exists(), timeout=180, what="the band task")
    band = client.get(f"/runs/{run.pk}/band/").content.decode()
    assert "device-plugin-dra vs device-plugin-default" in band and "every 2s" not in band
