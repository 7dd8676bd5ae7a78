"""The hardware model knows the GPU models compose offers, each simulated as itself."""

import pytest

from scheduler_core.hardware import GPU_SPECS, UnknownGpuModel, gpu_spec
from scheduler_core.scenario import ScenarioError, parse_scenario


@pytest.mark.parametrize("compose_name, simulated", [
    ("A100-40GB", "A100-SXM4-40GB"), ("A100-80GB", "A100-SXM4-80GB"), ("H100-80GB", "H100-SXM5-80GB"),
    ("H200", "H200-SXM5-141GB"), ("B200", "B200-SXM6-180GB"), ("L40S", "L40S-PCIE-48GB"),
])
def test_each_compose_gpu_model_has_its_own_spec_with_a_source(compose_name, simulated):
    spec = gpu_spec(compose_name)
    assert spec.name == simulated and spec.source and spec.relative_speed > 0


def test_l40s_has_no_mig_and_no_nvlink():
    spec = gpu_spec("L40S")
    assert (spec.mig_capable, spec.nvlink_gbs, spec.default_interconnect) == (False, 0.0, "pcie")


def test_an_unknown_gpu_model_is_an_error_listing_the_known_ones():
    with pytest.raises(UnknownGpuModel) as exc:
        gpu_spec("V100")
    assert "'V100'" in str(exc.value) and "H200" in str(exc.value) and "L40S-PCIE-48GB" in str(exc.value)


def _scenario(gpu: str, mig: list) -> dict:
    return {"name": "m", "horizon": "1h", "pool": {"node_groups": [{"name": "g", "gpu": gpu, "mig": mig}]},
            "stack": {"name": "s", "data_plane": {"mechanism": "mig" if mig else "whole"}}, "workloads": []}


def test_a_mig_layout_on_an_l40s_group_is_refused_by_field():
    with pytest.raises(ScenarioError) as exc:
        parse_scenario(_scenario("L40S-PCIE-48GB", [{"devices": "all", "layout": "all-balanced"}]))
    assert "has no MIG mode" in str(exc.value)


def test_an_h200_group_gets_h200_mig_instances():
    sc = parse_scenario(_scenario("H200-SXM5-141GB", [{"devices": "all", "layout": "all-3g.71gb"}]))
    layout = sc.pool.node_groups[0].mig_layouts()[0]
    assert [p.profile.memory_mib for p in layout.placements] == [71168, 71168]
    assert set(GPU_SPECS) >= {"H100-SXM5-80GB", "B200-SXM6-180GB"}
