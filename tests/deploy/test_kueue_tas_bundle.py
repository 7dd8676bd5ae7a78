"""Kueue Topology-Aware Scheduling as the real Kueue v0.19.2 takes it (tests/localplane, topology-cliff-kueue-tas):
a ResourceFlavor with a topologyName needs nodeLabels (the CRD refused the bundle's flavor over every pool:
"at least one nodeLabel is required when topology is set"), and every level of the Topology must be a label
the nodes carry, or Kueue finds no domain ("no topology domains at level: kubernetes.io/hostname": the
Topology had a rack level, and unracked pools carry no rack label). The trial's fake nodes carry the
labels the bundle asks for, the multi-pool flavor's label included."""

from pathlib import Path

from placement.deploy import export_scenario
from placement.deploy.localplane.trial import kwok_nodes
from scheduler_core import load_scenario

SCENARIOS = Path(__file__).resolve().parents[2] / "fixtures" / "scenarios"


def test_a_tas_flavor_over_every_pool_names_them_and_the_topology_has_only_levels_the_nodes_carry():
    scenario = load_scenario(SCENARIOS / "topology-cliff-kueue-tas.yaml")
    export = export_scenario(scenario)
    (flavor,) = export.file("kueue/resourceflavors.yaml").objects
    assert flavor["spec"]["topologyName"] and flavor["spec"]["nodeLabels"]
    (topology,) = export.file("kueue/topology.yaml").objects
    levels = [level["nodeLabel"] for level in topology["spec"]["levels"]]
    assert levels == ["kubernetes.io/hostname"]  # two pools of one rack each: no rack label to count on
    for node in kwok_nodes(scenario):
        labels = node["metadata"]["labels"]
        assert all(level in labels for level in levels)
        assert flavor["spec"]["nodeLabels"].items() <= labels.items(), node["metadata"]["name"]
