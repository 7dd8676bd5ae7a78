"""Readable evidence with its uncertainty: human labels and units, the failure metric first, an
unbounded P99 spelled out, a seed sweep and sensitivity band offered on every run page, and a
sweep over a scenario with nothing random saying so."""

import json

import pytest

from placement.evidence.models import SimulationRun, Sweep
from scheduler_core import simulate
from tests.evidence.test_evidence_pages import stack  # noqa: F401 - fixture
from tests.scheduler_core.conftest import SCENARIOS

pytestmark = pytest.mark.django_db


def _run_of(stem, stack=None, status=SimulationRun.SUCCEEDED):
    result = json.loads(simulate(SCENARIOS / f"{stem}.yaml").to_json())
    return SimulationRun.objects.create(stack=stack, scenario_name=stem, scenario={}, seed=result["seed"],
                                        fingerprint=f"fp-{stem}", status=status, metrics=result)


def test_run_page_uses_human_labels_units_and_spells_out_an_unbounded_p99(client, architect):
    run = _run_of("starved-tenant-default")
    client.force_login(architect)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert "Horizon" in page and "24 h" in page and "43200.0000" not in page
    assert "unbounded (overloaded)" in page
    assert "Jobs · queue wait · mean" in page


def test_run_page_leads_with_the_metric_that_shows_the_failure(client, architect):
    run = _run_of("shared-card-oom-timeslicing")
    client.force_login(architect)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    headline = page[page.index("What shows each failure"):]
    first_row = headline[headline.index("<tr class=\"failing\">"):][:300]
    assert "Collateral OOM kills" in first_row or "services missing their SLO" in first_row


def test_run_page_offers_a_seed_sweep_and_loads_the_sensitivity_band(client, architect, stack):  # noqa: F811
    run = _run_of("device-plugin-dra", stack=stack)
    client.force_login(architect)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert "Run a seed sweep" in page and f"/runs/{run.pk}/band/" in page
    band = client.get(f"/runs/{run.pk}/band/").content.decode()
    assert "device-plugin-dra vs device-plugin-default" in band
    assert "the verdict holds over seeds" in band and "none flips the verdict" in band


def test_band_for_a_scenario_outside_the_stories_says_there_is_no_verdict(client, architect):
    run = _run_of("form-a-mig-volcano")
    client.force_login(architect)
    band = client.get(f"/runs/{run.pk}/band/").content.decode()
    assert "no verdict between stacks" in band


def test_sweep_over_a_scenario_with_nothing_random_says_so_instead_of_zero_width_intervals(
        client, architect, stack):  # noqa: F811
    sweep = Sweep.objects.create(name="oom", scenario_name="shared-card-oom-hami", seeds=3, created_by=architect)
    sweep.stacks.set([stack])
    for seed in (1, 2, 3):
        r = _run_of("shared-card-oom-hami", stack=stack)
        r.sweep, r.seed, r.fingerprint = sweep, seed, f"fp-{seed}"
        r.save()
    client.force_login(architect)
    page = client.get(f"/sweeps/{sweep.pk}/").content.decode()
    assert "Nothing in this scenario is random" in page
    assert "± 0" not in page and "±" not in page.split("Nothing in this scenario is random")[1]


def test_sweep_over_a_load_story_names_what_is_drawn_from_the_seed(client, architect, stack):  # noqa: F811
    sweep = Sweep.objects.create(name="starved", scenario_name="starved-tenant-default", seeds=2,
                                 created_by=architect)
    sweep.stacks.set([stack])
    client.force_login(architect)
    page = client.get(f"/sweeps/{sweep.pk}/").content.decode()
    assert "Drawn from the seed" in page and "Poisson" in page
