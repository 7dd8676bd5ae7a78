"""The scenario rebuilt from an export (pools, data planes, queues read from the objects) gives the
same simulation result as the scenario the stack ran."""

from pathlib import Path

import pytest

from scheduler_core import load_scenario
from tests.deploy.roundtrip import rebuilt, result_json

SCENARIOS = sorted((Path(__file__).resolve().parents[2] / "fixtures" / "scenarios").glob("*.yaml"))


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_export_of_every_builtin_scenario_rebuilds_the_same_run(path):
    scenario = load_scenario(path)
    again = rebuilt(scenario)
    assert again.stack.control_plane.scheduler == scenario.stack.control_plane.scheduler
    assert result_json(again) == result_json(scenario)


def test_a_changed_quota_in_the_export_changes_the_rebuilt_run():
    """The round trip reads the quotas from the objects: the comparison can fail."""
    from placement.deploy import export_scenario
    from placement.deploy.readback import read_export
    from scheduler_core import parse_scenario

    scenario = load_scenario(SCENARIOS[0].parent / "starved-tenant-kueue.yaml")
    export = export_scenario(scenario)
    for obj in export.objects():
        if obj["kind"] == "ClusterQueue" and obj["metadata"]["name"] == "team-b":
            obj["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = 2
    changed = parse_scenario(read_export(export, scenario))
    assert changed.stack.control_plane.kueue.cluster_queues[1].flavors[0].quotas["nvidia.com/gpu"].nominal == 2
    assert result_json(changed) != result_json(scenario)
