"""The default scheduler scores GPUs as the simulation did. Upstream's NodeResourcesFit scores cpu and memory
only by default, so a bundle that left kube-scheduler unconfigured for LeastAllocated had the real scheduler
tie every node for pods that ask for GPUs alone, where the simulation spreads them by free GPUs."""

from pathlib import Path

from placement.deploy import export_scenario
from placement.deploy.localplane.trial import bundle_scheduler_config
from scheduler_core import load_scenario

SCENARIOS = Path(__file__).resolve().parents[2] / "fixtures" / "scenarios"


def test_a_least_allocated_stacks_bundle_tells_kube_scheduler_to_score_gpus():
    export = export_scenario(load_scenario(SCENARIOS / "topology-cliff-default.yaml"))
    config = bundle_scheduler_config(export)
    assert config is not None, "no kube-scheduler/scheduler-config.yaml in the bundle"
    (profile,) = config["profiles"]
    fit = next(p["args"] for p in profile["pluginConfig"] if p["name"] == "NodeResourcesFit")
    assert fit["scoringStrategy"] == {"type": "LeastAllocated", "resources": [{"name": "nvidia.com/gpu", "weight": 1}]}
    assert "plugins" not in profile  # preemption stays on, as simulated


def test_a_volcano_stack_leaves_the_default_scheduler_at_its_defaults():
    export = export_scenario(load_scenario(SCENARIOS / "starved-tenant-volcano.yaml"))
    assert bundle_scheduler_config(export) is None
