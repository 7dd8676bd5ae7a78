"""HAMi pods ask nvidia.com/gpucores (and may ask nvidia.com/gpumem-percentage) beside nvidia.com/gpu. The
simulator's Kueue ignores a resource no ClusterQueue covers; the real Kueue v0.19.2 refused such
workloads on the local plane (form-b-hami-kueue): "couldn't assign flavors to pod set main: resource
nvidia.com/gpucores unavailable in ClusterQueue". The bundle's Kueue configuration now excludes the HAMi
resources no ClusterQueue covers, and only those."""

from pathlib import Path

import yaml

from placement.deploy import export_scenario
from scheduler_core import load_scenario

SCENARIOS = Path(__file__).resolve().parents[2] / "fixtures" / "scenarios"


def _manager_config(name: str) -> dict:
    export = export_scenario(load_scenario(SCENARIOS / f"{name}.yaml"))
    return yaml.safe_load(export.file("kueue/values.yaml").values["managerConfig"]["controllerManagerConfigYaml"])


def test_kueue_ignores_the_hami_resources_no_cluster_queue_covers_and_counts_the_covered_ones():
    excluded = _manager_config("form-b-hami-kueue")["resources"]["excludeResourcePrefixes"]
    assert "nvidia.com/gpucores" in excluded  # asked by the pods, covered by no queue
    # nvidia.com/gpumem is in the queues' quotas: no prefix may hide it
    assert not any("nvidia.com/gpumem".startswith(p) for p in excluded)
    assert not any("nvidia.com/gpu".startswith(p) for p in excluded)


def test_a_stack_without_hami_keeps_kueues_default_resources():
    assert "resources" not in _manager_config("starved-tenant-kueue")
