"""The local plane's Kueue runs with the manager configuration the bundle installs, not the chart's
default: a bundle whose inference classes are Deployments turns Kueue's pod and deployment
integrations on, and the trial must too, or the Deployment's pods run ungated beside the quota."""

from scheduler_core.scenario import load_scenario

from placement.deploy import export_scenario
from placement.deploy.localplane.trial import bundle_kueue_config
from tests.scheduler_core.conftest import SCENARIOS  # the folder of the built-in scenarios


def test_the_trial_starts_kueue_with_the_bundles_integrations_and_settings():
    scenario = load_scenario(SCENARIOS / "starved-tenant-kueue.yaml")
    export = export_scenario(scenario)
    kinds = {o["kind"] for f in export.files if f.path.startswith("workloads/") for o in f.objects}
    config = bundle_kueue_config(export)
    assert config is not None, "the trial would start Kueue with the chart's defaults"
    frameworks = set(config["integrations"]["frameworks"])
    assert "Deployment" in kinds  # b-search, the tenant's inference service
    assert {"pod", "deployment"} <= frameworks
    assert "batch/job" in frameworks
