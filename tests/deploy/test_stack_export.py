"""Saved stacks: export from the stack's run or a built-in scenario, the deploy page, the zip, the API."""

import io
import zipfile

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from placement.deploy.services.bundles import stack_export
from placement.evidence.models import SimulationRun
from placement.evidence.services import runs as evidence
from placement.rules import builtin_rules
from placement.stacks.models import Stack
from placement.stacks.services.scenario import simulation_mapping, stack_plan
from placement.stacks.services.stacks import compose_stacks
from scheduler_core import parse_scenario
from tests.deploy.roundtrip import rebuilt, result_json
from tests.deploy.test_export_validates import all_errors

pytestmark = pytest.mark.django_db


def saved(profile: str, rank: int = 0, **request) -> Stack:
    body = {"profile": profile, "pool": {"gpu_model": "A100-80GB", "gpu_count": 32}, **request}
    stack = compose_stacks(body).stacks[rank]
    return Stack.objects.create(name=stack.title, profile=profile, request=body, composition=stack.model_dump(mode="json"))


SECTIONS = {"scheduling_policy": "scheduler", "admission_quota": "admission"}


def builtin_stacks() -> list[tuple[str, int]]:
    return [(p.profile, rank) for p in builtin_rules().profiles for rank in range(3)]


@pytest.mark.parametrize("profile,rank", builtin_stacks())
def test_every_builtin_profiles_top_stacks_export_valid_objects_that_rebuild_the_same_run(profile, rank):
    try:
        stack = saved(profile, rank)
    except IndexError:
        pytest.fail(f"compose returned fewer than {rank + 1} stacks for {profile}")
    unmodelled = [a["project"]["slug"] for a in stack.composition["slots"] if a.get("project")
                  and a["slot"] in ("scheduling_policy", "admission_quota")
                  and a["project"]["slug"] not in simulation_mapping()[SECTIONS[a["slot"]]]]
    unmodelled += [p["data_plane"] for p in stack.composition.get("pools", []) if p.get("data_plane") not in simulation_mapping()["data_plane"]]
    if unmodelled:
        # No simulated numbers to export: refused with the reason, never exported with made-up ones.
        with pytest.raises(ValidationError, match="has no simulator model yet"):
            stack_export(stack)
        return
    result = stack_export(stack)
    assert all_errors(result.export) == []
    # Serving frameworks' and batch wrappers' own kinds (RayService, InferenceService, DynamoGraphDeployment,
    # AppWrapper) are objects of the bundle too: no workload is left as a note to write by hand.
    assert not [f.path for f in result.export.files if f.path.endswith(".NOT-RENDERED.md")]
    from placement.stacks.services.scenario import scenario_for_stack

    # no run: the export renders the stack's plan (scenario plan-<digest>), the same one a run of it uses
    assert result.scenario_name == f"plan-{stack_plan(stack).digest}" and "plan" in result.source
    scenario = scenario_for_stack(stack, scenario_name=None, document=None, seed=None)
    assert result_json(rebuilt(scenario)) == result_json(scenario)


def test_export_uses_the_scenario_of_the_stacks_run_and_reproduces_its_metrics(architect, django_capture_on_commit_callbacks):
    stack = saved("online_inference")
    with django_capture_on_commit_callbacks(execute=True):
        run, _ = evidence.simulation_start(user=architect, stack=stack, scenario_name="starved-tenant-default")
    run.refresh_from_db()
    assert run.status == SimulationRun.SUCCEEDED, run.error
    result = stack_export(stack)
    assert result.run == run and "run" in result.source
    scenario = parse_scenario(run.scenario)
    from placement.deploy.readback import read_export
    from scheduler_core import simulate

    again = simulate(parse_scenario(read_export(result.export, scenario))).model_dump(mode="json")
    stored = dict(run.metrics)
    again.pop("scenario_digest"), stored.pop("scenario_digest", None)
    assert {k: v for k, v in again.items() if k in stored} == {k: v for k, v in stored.items() if k in again}


def test_deploy_page_lists_files_previews_them_and_the_zip_holds_them(client, reader):
    stack = saved("mixed")
    client.force_login(reader)
    page = client.get(reverse("stack-deploy", args=[stack.pk]))
    assert page.status_code == 200
    body = page.content.decode()
    assert "gpu-operator/mig-parted-config.yaml" in body and "volcano/values.yaml" in body and "Download .zip" in body
    assert "hami/values.yaml" not in body  # its shared pool is on Volcano's vGPU device plugin, not HAMi (issue 30)
    assert "form-c-mig-hami-volcano" in body
    archive = client.get(reverse("stack-deploy-zip", args=[stack.pk]))
    assert archive["Content-Type"] == "application/zip"
    names = zipfile.ZipFile(io.BytesIO(archive.content)).namelist()
    assert any(n.endswith("/gpu-operator/values.yaml") for n in names) and any(n.endswith("/README.md") for n in names)


def test_deploy_page_names_the_field_when_the_scenario_cannot_host_the_stack(client, reader):
    stack = saved("mixed")
    client.force_login(reader)
    page = client.get(reverse("stack-deploy", args=[stack.pk]), {"scenario_name": "starved-tenant-default"})
    assert page.status_code == 400
    assert "no MIG-enabled node group" in page.content.decode()


def test_api_returns_files_objects_and_targets(client, reader):
    stack = saved("online_inference")
    client.force_login(reader)
    response = client.get(f"/api/v1/stacks/{stack.pk}/manifests/", {"scenario_name": "form-b-hami-kueue"})
    assert response.status_code == 200, response.content
    data = response.json()
    assert data["targets"]["kueue"] == "v0.19.2" and data["scenario"] == "form-b-hami-kueue"
    kinds = {o["kind"] for f in data["files"] for o in f["objects"]}
    assert {"ClusterQueue", "LocalQueue", "ResourceFlavor"} <= kinds


def test_api_errors_use_the_one_error_body(client, reader):
    stack = saved("online_inference")
    client.force_login(reader)
    for run in ("999999", str(10**40), "2.5", "-1"):  # no such run, past a bigint, not a whole number
        bad = client.get(f"/api/v1/stacks/{stack.pk}/manifests/", {"run": run})
        assert bad.status_code == 400 and "run" in bad.json()["errors"], (run, bad.status_code)
    unknown = client.get(f"/api/v1/stacks/{stack.pk}/manifests/", {"scenario_name": "nope"})
    assert unknown.status_code == 400 and "scenario_name" in unknown.json()["errors"]
    assert client.get("/api/v1/stacks/999999/manifests/").status_code == 404


def test_a_scenario_name_longer_than_a_file_name_is_an_unknown_scenario_not_a_500(client, architect):
    """`scenario_name` becomes a file name; 5,000 characters made the file system refuse it (a 500 on
    the manifests API, the deploy page and the stack's simulate form)."""
    stack = saved("online_inference")
    client.force_login(architect)
    long_name = "x" * 5000
    api = client.get(f"/api/v1/stacks/{stack.pk}/manifests/", {"scenario_name": long_name})
    assert api.status_code == 400 and "scenario_name" in api.json()["errors"]
    page = client.get(reverse("stack-deploy", args=[stack.pk]), {"scenario_name": long_name})
    assert page.status_code == 400 and "scenario_name" in page.content.decode()
    simulate = client.post(reverse("stack-simulate", args=[stack.pk]), {"scenario_name": long_name})
    assert simulate.status_code < 500
    assert not SimulationRun.objects.exists()
