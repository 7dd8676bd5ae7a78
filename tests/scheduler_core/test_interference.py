"""Co-location slowdown per mechanism and the topology factor."""

from scheduler_core import simulate
from tests.scheduler_core.conftest import minimal, workload

ONE_GPU = {"node_groups": [{"name": "g", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 1}]}


def trainers(n, **extra):
    return [{"kind": "batch", "name": f"t{i}", "duration": "1h", "memory_gib": 4, **extra} for i in range(n)]


def test_time_slicing_n_compute_bound_tenants_run_about_n_times_slower():
    r = simulate(minimal(horizon="10h", pool=ONE_GPU, workloads=trainers(4),
                         stack={"data_plane": {"mechanism": "time-slicing", "time_slicing": {"replicas": 4}}}))
    end = workload(r, "t0").end
    # 4 tenants share GPU time: 4x, plus the calibrated switch overhead (31%) -> 1h * 4 / 0.69
    assert abs(end - 4 * 3600 / 0.69) < 1.0


def test_whole_gpu_jobs_queue_instead_of_sharing():
    r = simulate(minimal(horizon="10h", pool=ONE_GPU, workloads=trainers(2)))
    assert sorted(w.end for w in r.workloads) == [3600.0, 7200.0]


def test_hami_core_cap_throttles_a_compute_bound_job():
    r = simulate(minimal(horizon="10h", pool=ONE_GPU, workloads=trainers(1, unit={"gpucores": 50}),
                         stack={"data_plane": {"mechanism": "hami"}}))
    assert abs(workload(r, "t0").end - 7200) < 1.0


def test_mig_instance_runs_at_its_sm_share():
    pool = {"node_groups": [{"name": "g", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 1,
                             "mig": [{"layout": ["3g.40gb@0", "3g.40gb@4"]}]}]}
    r = simulate(minimal(horizon="10h", pool=pool, workloads=trainers(2),
                         stack={"data_plane": {"mechanism": "mig"}}))
    # 3g = 42 of 108 SMs; both instances run side by side without slowing each other.
    for name in ("t0", "t1"):
        assert abs(workload(r, name).end - 3600 * 108 / 42) < 1.0


def test_mps_caps_threads_per_client_and_charges_contention():
    stack = {"data_plane": {"mechanism": "mps", "mps": {"replicas": 2}}}
    compute = simulate(minimal(horizon="10h", pool=ONE_GPU, workloads=trainers(2, compute_fraction=0.5), stack=stack))
    # Each client gets 50% of SMs (enough) and neither uses HBM bandwidth heavily: no slowdown.
    assert abs(workload(compute, "t0").end - 3600) < 1.0
    memory = simulate(minimal(horizon="10h", pool=ONE_GPU, stack=stack,
                              workloads=trainers(2, compute_fraction=0.5, memory_bandwidth_fraction=0.5)))
    # The other client's bandwidth load (half the HBM) costs 0.43 x 0.5 through shared L2/DRAM (§7.2).
    assert abs(workload(memory, "t0").end - 3600 * (1 + 0.43 * 0.5)) < 1.0


def test_mps_active_thread_percentage_caps_a_compute_bound_client():
    stack = {"data_plane": {"mechanism": "mps", "mps": {"replicas": 2, "active_thread_percentage": 60}}}
    r = simulate(minimal(horizon="10h", pool=ONE_GPU, workloads=trainers(1), stack=stack))
    assert abs(workload(r, "t0").end - 3600 / 0.6) < 1.0


def test_topology_factor_packed_vs_spread_vs_pcie():
    gang = {"kind": "training", "name": "g", "workers": 8, "duration": "1h", "topology_sensitivity": 0.5,
            "memory_gib": 10}
    four = {"node_groups": [{"name": "dgx", "count": 4, "gpu": "A100-SXM4-80GB"}]}
    spread = simulate(minimal(horizon="20h", pool=four, workloads=[gang]))
    packed = simulate(minimal(horizon="20h", pool=four, workloads=[gang],
                              stack={"control_plane": {"scheduler": "kube-default",
                                                       "kube": {"scoring": "MostAllocated"}}}))
    pcie = simulate(minimal(horizon="20h", workloads=[gang],
                            pool={"node_groups": [{"name": "p", "count": 1, "gpu": "A100-PCIE-80GB"}]}))
    assert workload(packed, "g").topology_factor == 1.0
    # two workers per node, each with its own 25 GB/s NIC: 50 GB/s uplinks vs NVSwitch 300 -> 0.5 + 0.5 * 6
    assert workload(spread, "g").nodes == ["dgx-0", "dgx-1", "dgx-2", "dgx-3"]
    assert abs(workload(spread, "g").topology_factor - 3.5) < 1e-6
    # one PCIe node across two sockets: 32 GB/s * 0.5 -> 0.5 + 0.5 * 300/16
    assert abs(workload(pcie, "g").topology_factor - (0.5 + 0.5 * 300 / 16)) < 1e-6
