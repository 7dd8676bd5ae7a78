"""Node lifecycle and faults: plugin restarts, node failures, GPU faults, MIG drains."""

from scheduler_core import simulate
from tests.scheduler_core.conftest import minimal, workload

TWO = {"node_groups": [{"name": "dgx", "count": 2, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8}]}


def test_node_failure_restarts_jobs_from_their_checkpoint_elsewhere():
    docs = [{"kind": "batch", "name": "j", "duration": "2h", "checkpoint_interval": "30m", "memory_gib": 10}]
    ev = [{"at": "50m", "kind": "node_failure", "node": "dgx-0", "duration": "1h"}]
    r = simulate(minimal(pool=TWO, workloads=docs, events=ev))
    j = workload(r, "j")
    # 50 min of work, checkpoint at 30 -> 20 min lost; the rest reruns on dgx-1.
    assert abs(j.end - (3000 + 5400)) < 1.0 and j.nodes == ["dgx-1"]
    assert abs(r.preemption.lost_gpu_hours - 20 / 60) < 1e-6 and r.faults.pods_killed == 1


def test_gpu_fault_blast_radius_depends_on_the_mechanism():
    svcs = [{"kind": "inference", "name": f"s{i}", "model_memory_gib": 5, "arrival_rate": 1,
             "service_time": {"mean": "10ms"}, "slo": {"p99": "1s"}, "compute_fraction": 0.1} for i in range(3)]
    pool = {"node_groups": [{"name": "g", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 1}]}
    ev = [{"at": "10m", "kind": "gpu_fault", "node": "g-0", "gpu": 0}]
    ts = simulate(minimal(pool=pool, workloads=svcs, events=ev,
                          stack={"data_plane": {"mechanism": "time-slicing", "time_slicing": {"replicas": 3}}}))
    assert ts.faults.max_blast_radius == 3
    mig_pool = {"node_groups": [{"name": "g", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 1,
                                 "mig": [{"layout": ["2g.20gb@0", "2g.20gb@2", "2g.20gb@4"]}]}]}
    ev_inst = [{"at": "10m", "kind": "gpu_fault", "node": "g-0", "gpu": 0, "scope": "instance", "instance": 2}]
    mig = simulate(minimal(pool=mig_pool, workloads=svcs, events=ev_inst, stack={"data_plane": {"mechanism": "mig"}}))
    assert mig.faults.max_blast_radius == 1


def test_mig_reconfiguration_waits_for_an_idle_gpu_then_drains_the_node():
    pool = {"node_groups": [{"name": "g", "count": 1, "gpu": "A100-SXM4-40GB", "gpus_per_node": 2,
                             "mig": [{"devices": [0], "layout": "all-1g.5gb"}]}]}
    docs = [{"kind": "batch", "name": "busy", "duration": "1h", "memory_gib": 4, "compute_fraction": 0.1,
             "unit": {"mig_profile": "1g.5gb"}},
            {"kind": "batch", "name": "other-gpu", "duration": "3h", "memory_gib": 4, "unit": {"whole_gpu": True}}]
    ev = [{"at": "10m", "kind": "mig_reconfigure", "node": "g-0", "gpus": [0], "layout": "all-3g.20gb"}]
    stack = {"data_plane": {"mechanism": "mig", "mig_strategy": "mixed"}}
    r = simulate(minimal(pool=pool, workloads=docs, events=ev, stack=stack,
                         parameters={"mig_reconfigure_cost": "2m"}))
    assert r.reconfiguration.drains == 1
    assert abs(r.reconfiguration.drain_seconds - (3600 - 600 + 120)) < 1e-6
    assert workload(r, "other-gpu").state == "done"  # pods on other GPUs keep running through the drain
    assert r.inventory[0].advertised == {"nvidia.com/gpu": 1, "nvidia.com/mig-3g.20gb": 2}
