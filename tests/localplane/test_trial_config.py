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


def test_a_volcano_stack_starts_volcano_with_the_bundles_scheduler_configuration_and_a_kueue_stack_does_not():
    from placement.deploy.localplane.trial import bundle_volcano_values, needed_components

    volcano = export_scenario(load_scenario(SCENARIOS / "partial-gang-volcano.yaml"))
    assert needed_components(volcano) == ("volcano-controller-manager", "volcano-scheduler")
    # the chart renders the scheduler's configuration from these values: the gang plugin and the actions
    conf = bundle_volcano_values(volcano)["custom"]["scheduler_config_override"]
    assert "name: gang" in conf and "enqueue" in conf
    kueue = export_scenario(load_scenario(SCENARIOS / "starved-tenant-kueue.yaml"))
    assert needed_components(kueue) == ()
    assert bundle_volcano_values(kueue) is None


def test_a_coscheduling_stack_starts_the_second_scheduler_its_pods_name():
    from placement.deploy.localplane.trial import bundle_coscheduling_values, needed_components

    export = export_scenario(load_scenario(SCENARIOS / "partial-gang-coscheduling.yaml"))
    assert needed_components(export) == ("coscheduling-controller", "coscheduling-scheduler")
    assert bundle_coscheduling_values(export)["scheduler"]["name"] == "scheduler-plugins-scheduler"
