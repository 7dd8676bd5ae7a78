"""Round trip helpers: rebuild a scenario from an export and compare simulation results."""

import json

from placement.deploy import export_scenario
from placement.deploy.readback import read_export
from scheduler_core import parse_scenario, simulate


def result_json(scenario) -> str:
    # The digest hashes the scenario text (a named MIG layout vs its placements); every measured value is compared.
    return json.dumps(simulate(scenario).model_dump(mode="json", exclude={"scenario_digest"}), sort_keys=True)


def rebuilt(scenario):
    return parse_scenario(read_export(export_scenario(scenario), scenario))
