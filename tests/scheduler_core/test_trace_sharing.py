"""GPU-sharing replay: HAMi-style binpack/spread and the fragmentation measure."""

import json

import pytest

from scheduler_core.traces import (
    SharingCluster,
    TraceJob,
    TraceNode,
    TypicalPods,
    replay_sharing,
    replay_trace,
    result_json,
    synthetic_sharing_trace,
)


def pod(i, gpus, milli, *, t=None, cpu=0, mem=0, gmem=None, dur=None, spec=()):
    return TraceJob(index=i, job_id=f"p{i}", submit_s=float(i if t is None else t), num_gpus=gpus,
                    gpu_milli=milli, cpu_milli=cpu, mem_mib=mem, gpu_mem_mib=gmem, duration_s=dur,
                    gpu_spec=tuple(spec))


def node(name, gpus, *, model="A10", cpu=10**6, mem=10**7, gmem=24576):
    return TraceNode(name=name, num_gpus=gpus, model=model, gpu_mem_mib=gmem, cpu_milli=cpu, mem_mib=mem)


def cluster(nodes, typical, **kw):
    return SharingCluster(nodes, TypicalPods(typical), **kw)


def test_binpack_stacks_fractional_pods_on_one_gpu_spread_uses_separate_gpus():
    pods = [pod(0, 1, 300), pod(1, 1, 300)]
    for policy, expect in (("binpack", [[0], [0]]), ("spread", [[0], [1]])):
        cl = cluster([node("n0", 2)], pods, node_rule=policy, gpu_rule=policy)
        placed = [cl.try_place(cl.pod_type(p)) for p in pods]
        assert [g for _n, g in placed] == expect
        assert cl.left[0].tolist() == ([400, 1000] if policy == "binpack" else [700, 700])


def test_binpack_picks_the_fullest_feasible_node_spread_the_emptiest():
    pods = [pod(0, 1, 500), pod(1, 1, 500)]
    for policy, nodes_used in (("binpack", [0, 0]), ("spread", [0, 1])):
        cl = cluster([node("a", 1), node("b", 1)], pods, node_rule=policy, gpu_rule=policy)
        assert [cl.try_place(cl.pod_type(p))[0] for p in pods] == nodes_used


def test_whole_gpu_pod_needs_idle_gpus_and_multi_gpu_pod_needs_them_on_one_node():
    cl = cluster([node("a", 2), node("b", 2)], [pod(0, 1, 100), pod(1, 2, 1000)])
    cl.try_place(cl.pod_type(pod(0, 1, 100)))  # lands on a (binpack, tie -> lowest index)
    assert cl.try_place(cl.pod_type(pod(1, 2, 1000))) == (1, [0, 1])
    assert cl.try_place(cl.pod_type(pod(2, 2, 1000))) is None  # a has only one idle GPU
    assert cl.try_place(cl.pod_type(pod(3, 1, 1000))) == (0, [1])


def test_split_count_caps_pods_per_gpu_like_hami_device_split_count():
    pods = [pod(i, 1, 100) for i in range(4)]
    cl = cluster([node("a", 1)], pods, split_count=3)
    assert [cl.try_place(cl.pod_type(p)) is not None for p in pods] == [True, True, True, False]
    assert cl.left[0, 0] == 700


def test_explicit_gpu_memory_binds_before_the_share_does():
    pods = [pod(0, 1, 200, gmem=16000), pod(1, 1, 200, gmem=16000)]
    cl = cluster([node("a", 1, gmem=24576)], pods, mem_binding=True)
    assert cl.try_place(cl.pod_type(pods[0])) is not None
    assert cl.try_place(cl.pod_type(pods[1])) is None  # 600 milli free but only 8.5 GiB


def test_gpu_spec_and_cpu_restrict_the_nodes_a_pod_may_use():
    nodes = [node("t4", 1, model="T4", gmem=16384), node("a10", 1, cpu=1000)]
    cl = cluster(nodes, [pod(0, 1, 500)])
    assert cl.try_place(cl.pod_type(pod(0, 1, 500, spec=("A10",)))) == (1, [0])
    assert cl.try_place(cl.pod_type(pod(1, 1, 100, cpu=2000, spec=("A10",)))) is None


def test_fragmentation_matches_a_hand_computation():
    # Typical pods: half ask 0.5 GPU, half a whole GPU.  Node: GPUs with 700 and 1000 free.
    typical = [pod(0, 1, 500), pod(1, 1, 1000)]
    cl = cluster([node("a", 2)], typical)
    cl.place(0, cl.pod_type(pod(9, 1, 300)), [0])
    # 0.5-pods can use both GPUs (no fragment); whole-GPU pods cannot use the 700 left on GPU 0.
    assert cl.frag_milli == pytest.approx(0.5 * 0 + 0.5 * 700)
    assert cl.frag_ratio() == pytest.approx(350 / 1700)


def test_a_node_that_cannot_host_a_pod_counts_all_its_free_gpu_as_fragment():
    typical = [pod(0, 1, 500, cpu=4000)]
    cl = cluster([node("a", 2, cpu=6000)], typical)
    cl.place(0, cl.pod_type(pod(9, 0, 0, cpu=3000)), [])  # CPU-only pod eats the CPU
    assert cl.frag_milli == 2000  # both idle GPUs are stranded: no CPU left for a GPU pod
    cl.remove(0, cl.pod_type(pod(9, 0, 0, cpu=3000)), [])
    assert cl.frag_milli == 0


def test_multi_gpu_typical_pod_sees_partly_used_gpus_as_fragment():
    typical = [pod(0, 2, 1000)]
    cl = cluster([node("a", 4)], typical)
    cl.place(0, cl.pod_type(pod(9, 1, 100)), [0])
    assert cl.frag_milli == 900  # three idle GPUs still host a 2-GPU pod; GPU 0's 900 cannot
    cl.place(0, cl.pod_type(pod(8, 1, 100)), [1])
    cl.place(0, cl.pod_type(pod(7, 1, 100)), [2])
    assert cl.frag_milli == 900 * 3 + 1000  # only one idle GPU: the whole node is fragment


def test_incremental_fragmentation_equals_a_full_recompute_after_every_pod():
    pods, nodes = synthetic_sharing_trace(400, 40, seed=5)
    cl = cluster(nodes, pods, split_count=4)
    placed = []
    for p in pods[:300]:
        got = cl.try_place(cl.pod_type(p))
        if got:
            placed.append((p, got))
        assert cl.frag_milli == pytest.approx(cl.fragmentation_full(), abs=1e-9)
    for p, (n, gpus) in placed[::2]:  # departures too
        cl.remove(n, cl.pod_type(p), gpus)
        assert cl.frag_milli == pytest.approx(cl.fragmentation_full(), abs=1e-9)
    assert cl.allocated_milli == sum(p.num_gpus * p.gpu_milli for p, _ in placed[1::2])


def test_binpack_leaves_less_fragmentation_than_spread():
    # Hand case: four 0.5-GPU pods on two 2-GPU nodes, typical mix includes whole GPUs.
    pods = [pod(i, 1, 500) for i in range(4)]
    typical = pods + [pod(9, 1, 1000)] * 4
    bp = replay_sharing(pods, [node("a", 2), node("b", 2)], policy="binpack", typical=typical)
    sp = replay_sharing(pods, [node("a", 2), node("b", 2)], policy="spread", typical=typical)
    assert bp.summary["final_frag_ratio"] == 0.0
    assert sp.summary["final_frag_ratio"] == pytest.approx(0.5)  # whole-GPU pods cannot use any half GPU
    # Same ordering on a synthetic Alibaba-shaped trace, at equal allocated share.
    pods, nodes = synthetic_sharing_trace(1500, 150, seed=11)
    bp = replay_sharing(pods, nodes, policy="binpack").summary
    sp = replay_sharing(pods, nodes, policy="spread").summary
    for share in ("0.5", "0.7"):
        assert bp["at_allocated_share"][share]["frag_share"] < sp["at_allocated_share"][share]["frag_share"]


def test_departures_free_room_for_a_waiting_pod():
    pods = [pod(0, 1, 1000, t=0, dur=100), pod(1, 1, 600, t=10, dur=50)]
    r = replay_sharing(pods, [node("a", 1)], departures=True)
    assert r.placed == 2 and r.unplaced == []
    assert r.allocated_milli.tolist() == [1000, 1000]  # pod 1 waits at its arrival
    r = replay_sharing(pods, [node("a", 1)])  # arrivals only: it is never placed
    assert r.unplaced == ["p1"] and r.summary["unplaced_gpus"] == 0.6


def test_series_has_one_point_per_pod():
    pods, nodes = synthetic_sharing_trace(200, 30, seed=2)
    r = replay_sharing(pods, nodes)
    d = r.to_dict()
    assert {len(v) for v in d["series"].values()} == {200}
    assert d["series"]["arrived_share"][-1] == pytest.approx(sum(p.gpu_demand for p in pods) / r.gpus, abs=1e-6)


def test_alibaba_csv_replay_uses_the_node_list_beside_it_and_is_deterministic(tmp_path):
    pods, nodes = synthetic_sharing_trace(300, 30, seed=4)
    (tmp_path / "openb_node_list_gpu_node.csv").write_text(
        "sn,cpu_milli,memory_mib,gpu,model\n"
        + "".join(f"{n.name},{n.cpu_milli},{n.mem_mib},{n.num_gpus},{n.model}\n" for n in nodes))
    head = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
    body = "".join(
        f"{p.job_id},{p.cpu_milli},{p.mem_mib},{p.num_gpus},{p.gpu_milli},,{p.priority_class},Running,"
        f"{int(p.submit_s)},{int(p.submit_s + p.duration_s)},{int(p.submit_s)}\n" for p in pods)
    trace = tmp_path / "openb_pod_list_default.csv"
    trace.write_text(head + body)
    for policy in ("binpack", "spread"):
        a = result_json(replay_trace(trace, "alibaba", policy))
        assert a == result_json(replay_trace(trace, "alibaba", policy))
        d = json.loads(a)
        assert d["summary"]["nodes"] == 30 and d["summary"]["pods"] == 300
    (tmp_path / "openb_node_list_gpu_node.csv").unlink()
    with pytest.raises(ValueError, match="needs a node list"):
        replay_trace(trace, "alibaba", "binpack")
