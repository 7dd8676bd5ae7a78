"""Public entry points: simulate() inputs, progress reporting, the synthetic generator."""

from scheduler_core import parse_scenario, simulate, synthetic_scenario
from tests.scheduler_core.conftest import SCENARIOS, minimal


def test_simulate_accepts_a_path_a_dict_or_a_model_and_reports_progress():
    seen = []
    r = simulate(minimal(), progress=seen.append)
    assert r.jobs.completed == 1
    assert seen[0] == 0.0 and seen[-1] == 1.0 and seen == sorted(seen)
    assert simulate(SCENARIOS / "lab0-device-facts.yaml").scenario == "lab0-device-facts"


def test_time_series_is_bounded_by_max_points():
    r = simulate(minimal(sampling={"max_points": 50}))
    assert len(r.time_series.t) <= 50 and r.time_series.t[-1] == r.horizon


def test_synthetic_scenario_has_the_requested_size_and_stack():
    sc = synthetic_scenario(nodes=16, jobs=1234, services=7, days=2, seed=1, stack="kueue")
    jobs = sum(w.count for w in sc.workloads if w.kind != "inference")
    assert jobs == 1234 and sum(1 for w in sc.workloads if w.kind == "inference") == 7
    assert sc.pool.total_gpus == 128 and sc.stack.control_plane.admission == "kueue"


def test_synthetic_scenario_counts_cpu_and_host_memory_unless_gpus_only():
    sc = synthetic_scenario(nodes=16, jobs=400, services=4, days=1, seed=1, stack="kueue")
    group = sc.pool.node_groups[0]
    assert (group.cpu, group.memory_gib) == (128, 2048)
    for w in sc.workloads:
        gpus = 1 if w.kind == "inference" else w.gpus_per_worker.values[0]
        assert (w.cpu, w.host_memory_gib) == (16 * gpus, 256 * gpus), w.name
    quotas = sc.stack.control_plane.kueue.cluster_queues[0].flavors[0].quotas
    assert quotas["cpu"].nominal == 16 * 128 / 8 and quotas["memory"].nominal == 16 * 2048 / 8
    jobs = sum(w.count for w in sc.workloads if w.kind != "inference")
    assert jobs == 400

    bare = synthetic_scenario(nodes=16, jobs=400, services=4, days=1, seed=1, stack="kueue", host_resources=False)
    assert bare.pool.node_groups[0].cpu is None
    assert all(w.cpu == 0 and w.host_memory_gib == 0 for w in bare.workloads)
    assert set(bare.stack.control_plane.kueue.cluster_queues[0].flavors[0].quotas) == {"nvidia.com/gpu"}


def test_synthetic_pods_wait_for_cpu_when_nodes_have_too_few_cores():
    doc = synthetic_scenario(nodes=4, jobs=60, services=0, days=0.25, seed=1).model_dump(mode="json")
    doc["pool"]["node_groups"][0]["cpu"] = 64  # an 8-GPU pod asks 128 cores: it can never be placed
    r = simulate(parse_scenario(doc, "cpu-starved"))
    reasons = [x.reason for x in r.pending.by_reason]
    assert any("Insufficient cpu" in x for x in reasons), reasons
