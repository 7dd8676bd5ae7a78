"""advertised_capacity: what a pool exposes under its data planes, keyed as pods' quota usage."""

from pathlib import Path

from scheduler_core import load_scenario
from scheduler_core.capacity import advertised_capacity

SCENARIOS = Path(__file__).resolve().parents[2] / "fixtures" / "scenarios"


def test_hami_pool_advertises_slots_and_memory_under_the_names_pods_are_charged():
    capacity = advertised_capacity(load_scenario(SCENARIOS / "form-b-hami-kueue.yaml"))
    assert set(capacity) == {"nvidia.com/gpu", "nvidia.com/gpumem"}
    assert capacity["nvidia.com/gpumem"] == 32 * 80 * 1024  # 4 DGX nodes x 8 A100-80GB, in MiB


def test_mig_pool_advertises_each_profile_as_its_own_resource():
    capacity = advertised_capacity(load_scenario(SCENARIOS / "lab1-mig.yaml"))
    assert all(name.startswith("nvidia.com/mig-") for name in capacity)
