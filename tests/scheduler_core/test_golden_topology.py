"""Golden topology stories: the seed's 64 -> 128 GPU NIC-placement cliff and rack spread."""

import pytest
import yaml

from scheduler_core import simulate
from tests.scheduler_core.conftest import SCENARIOS, workload


def _doc(stem):
    return yaml.safe_load((SCENARIOS / f"{stem}.yaml").read_text())


def test_64_gpus_run_at_ideal_speed_and_128_fall_off_the_nic_cliff(run_builtin):
    r = run_builtin("topology-nic-cliff")
    small, big = workload(r, "allreduce-64"), workload(r, "allreduce-128")
    assert small.topology_factor == 1.0 and all(n.startswith("rail-") for n in small.nodes)
    # 2 NICs on socket 0: socket-1 GPUs share them through the socket link at half rate -> a 25 GB/s
    # uplink for 8 GPUs instead of 200: (0.6 + 0.4 * 300/25) / (0.6 + 0.4 * 300/200) = 4.5.
    assert big.topology_factor == pytest.approx(4.5)
    assert big.end - big.start == pytest.approx(4.5 * 3600)


def test_the_cliff_is_nic_placement_spreading_the_same_two_nics_over_both_sockets_halves_it():
    doc = _doc("topology-nic-cliff")
    doc["pool"]["node_groups"][1]["nic_numa"] = "spread"
    big = workload(simulate(doc), "allreduce-128")
    # One NIC per socket, shared by that socket's 4 GPUs: 50 GB/s -> (0.6 + 0.4 * 6) / 1.2 = 2.5.
    assert big.topology_factor == pytest.approx(2.5)


def test_racks_are_explicit_groups_in_another_rack_also_cross_the_spine():
    doc = _doc("topology-nic-cliff")
    doc["pool"]["node_groups"][1]["rack"] = "row-b"
    big = workload(simulate(doc), "allreduce-128")
    # The same ring over the oversubscribed spine (x0.5): 12.5 GB/s -> (0.6 + 0.4 * 24) / 1.2 = 8.5.
    assert big.topology_factor == pytest.approx(8.5)


def test_spreading_16_gpus_over_2_4_8_nodes_of_one_rack_costs_step_time(run_builtin):
    r = run_builtin("topology-rack-spread")
    factors = [workload(r, f"spread-{n}-nodes").topology_factor for n in (2, 4, 8)]
    assert [len(workload(r, f"spread-{n}-nodes").nodes) for n in (2, 4, 8)] == [2, 4, 8]
    # 8, 4, 2 GPUs per node, each with its own 25 GB/s NIC: 200, 100, 50 GB/s uplinks.
    assert factors == pytest.approx([1.0, 1.5, 2.5])


def test_a_nic_on_a_socket_the_node_does_not_have_is_a_field_error():
    from scheduler_core.scenario import ScenarioError, parse_scenario

    doc = _doc("topology-nic-cliff")
    doc["pool"]["node_groups"][1]["nic_numa"] = 2
    with pytest.raises(ScenarioError) as exc:
        parse_scenario(doc)
    assert any("nic_numa" in msg and "socket 2" in msg for _, msg in exc.value.errors)


def test_a_gpu_cannot_push_more_than_its_pcie_link_however_many_nics_it_has():
    from scheduler_core.cluster import Node
    from scheduler_core.hardware import GPU_SPECS
    from scheduler_core.interference import node_uplink
    from scheduler_core.scenario import DataPlane, ModelParameters

    node = Node("n-0", "n", 0, "r", GPU_SPECS["A100-SXM4-80GB"], 1, "nvswitch", 1, DataPlane(), {})
    node.set_nics(8, None, "spread")  # eight 25 GB/s NICs, all on the one GPU's switch
    assert node_uplink(node, {0}, ModelParameters()) == pytest.approx(32.0)
