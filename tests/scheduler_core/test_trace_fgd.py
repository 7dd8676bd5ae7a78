"""FGD peer reproduction (Weng et al., ATC '23): the fragmentation measure, the policies, inflation.

Expected values are worked out by hand from the paper's definition (section 3, "task-level" and
"node-level" fragmentation) as the authors' simulator implements it: hkust-adsl/
kubernetes-scheduler-simulator ``pkg/utils/frag.go`` (``GetNodePodFrag``, ``NodeGpuShareFragAmount``,
``GetTypicalPods``), ``pkg/simulator/plugin/*_score.go`` and ``pkg/simulator/simulator.go``
(``SortClusterPods``, ``tuneUpPods``, ``tuneDownPods``).  No test reads the real trace.
"""

import json
import math

import numpy as np
import pytest

from scheduler_core.traces import TraceJob, TraceNode
from scheduler_core.traces.cli import main as traces_main
from scheduler_core.traces.fgd import (
    FgdCluster,
    PodShape,
    TargetWorkload,
    compare,
    inflate_workload,
    node_fragmentation,
    replay_fgd,
    seed_list,
)


def pod(i, gpus, milli, *, cpu=1000, mem=0, spec=()):
    return TraceJob(index=i, job_id=f"p{i:03d}", submit_s=float(i), num_gpus=gpus,
                    gpu_milli=milli if gpus else 0, cpu_milli=cpu, mem_mib=mem, gpu_spec=tuple(spec))


def node(name, gpus, *, model="T4", cpu=64_000, mem=262_144):
    return TraceNode(name=name, num_gpus=gpus, model=model, gpu_mem_mib=16384, cpu_milli=cpu, mem_mib=mem)


def shape(gpus, milli, cpu=2000, gpu_type=""):
    return PodShape(cpu, milli if gpus else 0, gpus, gpu_type)


# The worked example: GPUs with 1000, 500 and 200 milli free, 8 cores free, on a T4 node.
#   0.4  1 x 300 milli, 2 cores  -> serves on 1000 and 500; the 200 GPU is its fragment   -> 200
#   0.3  1 x 1000, 2 cores       -> the idle GPU serves; 500 + 200 are fragments          -> 700
#   0.1  2 x 1000                -> only one idle GPU: the node cannot host it, all free  -> 1700
#   0.1  CPU-only                -> uses no GPU: all free GPU capacity is fragment        -> 1700
#   0.1  1 x 300, 16 cores       -> the node lacks CPU: all free                          -> 1700
#   F = 80 + 210 + 170 + 170 + 170 = 800 milli-GPU
WORKED = TargetWorkload.of([
    (shape(1, 300), 0.4), (shape(1, 1000), 0.3), (shape(2, 1000), 0.1), (shape(0, 0, cpu=4000), 0.1),
    (shape(1, 300, cpu=16_000), 0.1),
])


def test_fragment_is_each_tasks_unusable_gpu_capacity_weighted_by_popularity():
    assert node_fragmentation([1000, 500, 200], 8000, "T4", WORKED) == pytest.approx(800)
    # With 16 cores free the CPU-hungry task fits too and sees only the 200 GPU: 800 - 170 + 20.
    assert node_fragmentation([1000, 500, 200], 16_000, "T4", WORKED) == pytest.approx(650)
    # A full node has no fragment; an idle node's fragment is what the CPU-only and the
    # CPU-hungry task cannot use (3000 x 0.2; the 2-GPU task fits on three idle GPUs).
    assert node_fragmentation([0, 0, 0], 8000, "T4", WORKED) == 0
    assert node_fragmentation([1000, 1000, 1000], 8000, "T4", WORKED) == pytest.approx(0.2 * 3000)


def test_a_task_that_cannot_run_on_the_gpu_model_sees_the_whole_node_as_fragment():
    wl = TargetWorkload.of([(shape(1, 300, gpu_type="V100M16|V100M32"), 1.0)])
    assert node_fragmentation([1000, 400], 8000, "T4", wl) == 1400
    assert node_fragmentation([1000, 400], 8000, "V100M32", wl) == 0


def test_cluster_keeps_each_nodes_fragment_as_pods_land_and_sums_them():
    cl = FgdCluster([node("a", 3, cpu=12_000), node("b", 3, cpu=12_000)], WORKED)
    cl.place(0, pod(0, 1, 500, cpu=2000), [1])
    cl.place(0, pod(1, 1, 800, cpu=2000), [2])
    assert cl.left[0].tolist() == [1000, 500, 200]
    assert cl.node_frag[0] == pytest.approx(800)  # 8 cores left: the worked example
    assert cl.node_frag[1] == pytest.approx(600)  # idle, 12 cores: CPU-only and 16-core task
    assert cl.frag_milli == pytest.approx(1400) == pytest.approx(cl.fragmentation_full())
    assert cl.frag_ratio() == pytest.approx(1400 / (6000 - 1300))


def test_typical_pods_are_the_most_popular_shapes_up_to_the_threshold_cpu_only_included():
    pods = ([pod(i, 1, 500) for i in range(5)] + [pod(5 + i, 1, 1000) for i in range(3)]
            + [pod(8, 0, 0, cpu=16_000), pod(9, 2, 1000, cpu=4000)])
    top = TargetWorkload.from_pods(pods, popularity=0.8)  # 5 + 3 of 10 pods reach 80%
    assert top.shapes == (shape(1, 500, cpu=1000), shape(1, 1000, cpu=1000))
    assert top.weights == pytest.approx((5 / 8, 3 / 8))
    # One more shape is needed for 85%; the two left have one pod each and the larger shape
    # (16 cores, CPU-only) ranks first, as in the artifact's sort.
    more = TargetWorkload.from_pods(pods, popularity=0.85)
    assert more.shapes[-1] == PodShape(16_000, 0, 0, "")
    assert more.weights == pytest.approx((5 / 9, 3 / 9, 1 / 9))
    gpu_only = TargetWorkload.from_pods(pods, popularity=0.85, include_cpu_pods=False)
    assert all(s.num_gpus for s in gpu_only.shapes)


def _cluster_with(nodes, placed, workload, **kw):
    cl = FgdCluster(nodes, workload, **kw)
    for n, p, gpus in placed:
        cl.place(n, p, gpus)
    return cl


HALF = TargetWorkload.of([(shape(1, 500, cpu=1000), 1.0)])  # every future task: half a GPU


def test_fgd_keeps_a_gpu_usable_where_best_fit_and_packing_fill_the_tightest():
    # Node 0 has 600 milli left on its GPU, node 1 an idle GPU. A 400-milli pod on node 0 leaves
    # 200 that no 500-milli task can use (fragment +200, score int(100 sigmoid(-0.2)) = 45); on
    # node 1 it leaves 600, still usable (fragment +0, score 50).
    def fresh():
        return _cluster_with([node("n0", 1), node("n1", 1)], [(0, pod(0, 1, 400), [0])], HALF)

    new = pod(1, 1, 400)
    assert fresh().choose(new, "fgd") == (1, [0])
    assert fresh().choose(new, "bestfit") == (0, [0])
    assert fresh().choose(new, "packing") == (0, [0])


def test_fgd_picks_the_gpu_inside_the_node_that_leaves_no_fragment():
    cl = _cluster_with([node("n0", 2)], [(0, pod(0, 1, 400), [0])], HALF)
    new = pod(1, 1, 400)
    assert cl.choose(new, "fgd") == (0, [1])  # 1000 -> 600 keeps serving; 600 -> 200 would not
    assert cl.choose(new, "bestfit") == (0, [0])  # best fit takes the tightest GPU


def test_whole_gpu_pods_take_the_first_idle_gpus_by_index():
    cl = _cluster_with([node("n0", 4)], [(0, pod(0, 1, 300), [1])], HALF)
    for policy in ("fgd", "bestfit", "random"):
        assert cl.choose(pod(1, 2, 1000), policy) == (0, [0, 2])


def test_dot_product_prefers_the_node_whose_free_capacity_aligns_least_with_the_request():
    cl = FgdCluster([node("big", 8, cpu=96_000), node("small", 1, cpu=96_000)], HALF)
    assert cl.choose(pod(0, 1, 1000), "dotprod")[0] == 1


def test_gpu_clustering_groups_pods_of_one_kind():
    nodes = [node(f"n{i}", 4) for i in range(3)]
    placed = [(0, pod(0, 1, 300), [0]), (1, pod(1, 1, 1000), [0])]  # n0 sharing, n1 one-GPU
    assert _cluster_with(nodes, placed, HALF).choose(pod(2, 1, 200), "clustering")[0] == 0
    assert _cluster_with(nodes, placed, HALF).choose(pod(3, 1, 1000), "clustering")[0] == 1
    # A 2-GPU pod has no group yet: an idle node (band 25..50) beats nodes of other kinds (0..25).
    assert _cluster_with(nodes, placed, HALF).choose(pod(4, 2, 1000), "clustering")[0] == 2


def test_gpu_packing_fills_shared_gpus_then_used_nodes_then_idle_nodes():
    nodes = [node("idle", 4), node("used", 4), node("shared", 4)]
    placed = [(1, pod(0, 1, 1000), [0]), (2, pod(1, 1, 400), [0])]
    assert _cluster_with(nodes, placed, HALF).choose(pod(2, 1, 300), "packing") == (2, [0])
    got = _cluster_with(nodes, placed, HALF).choose(pod(3, 1, 1000), "packing")
    assert got[0] in (1, 2)  # an idle GPU on a used node, never the idle node


def test_best_fit_takes_the_node_with_least_cpu_and_gpu_left_after_the_pod():
    nodes = [node("roomy", 2, cpu=64_000), node("snug", 2, cpu=8000)]
    assert FgdCluster(nodes, HALF).choose(pod(0, 1, 1000, cpu=4000), "bestfit")[0] == 1


def test_pods_go_only_where_cpu_memory_gpu_and_model_fit():
    nodes = [node("a", 2, cpu=4000), node("b", 2, mem=1024), node("c", 2, model="V100M32"), node("d", 2)]
    cl = FgdCluster(nodes, HALF)
    assert cl.feasible(pod(0, 1, 500, cpu=8000, mem=4096)).tolist() == [2, 3]
    assert cl.feasible(pod(1, 1, 500, cpu=8000, mem=4096, spec=("T4",))).tolist() == [3]
    with pytest.raises(ValueError, match="p002: 2 GPUs of 500 milli"):
        cl.feasible(pod(2, 2, 500))


def test_equal_scores_go_to_one_node_in_a_seeded_order_or_at_random():
    nodes = [node(f"n{i}", 1, cpu=64_000) for i in range(8)]
    cpu_pods = [pod(i, 0, 0, cpu=1000) for i in range(40)]  # packing scores every node 0
    ordered = FgdCluster(nodes, HALF, rng=np.random.default_rng(3), tie_break="order")
    assert len({ordered.schedule(p, "packing")[0] for p in cpu_pods}) == 1
    spread = FgdCluster(nodes, HALF, rng=np.random.default_rng(3), tie_break="random")
    assert len({spread.schedule(p, "packing")[0] for p in cpu_pods}) > 4


def test_random_policy_is_seeded():
    nodes = [node(f"n{i}", 2) for i in range(6)]
    pods = [pod(i, 1, 250) for i in range(30)]

    def run(seed):
        cl = FgdCluster(nodes, HALF, rng=np.random.default_rng(seed))
        return [cl.schedule(p, "random") for p in pods]

    assert run(1) == run(1)
    assert run(1) != run(2)
    assert len({n for n, _g in run(1)}) > 3


def test_inflation_shuffles_and_copies_pods_until_the_next_would_pass_the_target():
    pods = [pod(i, 1, 500) for i in range(10)] + [pod(10 + i, 1, 1000) for i in range(5)]  # 10 GPUs
    cap = 10_000
    a = inflate_workload(pods, cap, ratio=1.3, seed=7)
    demand = sum(p.num_gpus * p.gpu_milli for p in a)
    assert 1.3 * cap - 1000 < demand <= 1.3 * cap  # 13,000 milli is the target
    assert len(a) > len(pods)
    assert {p.job_id for p in pods} <= {p.job_id for p in a}  # every trace pod arrives once...
    assert all("-tuned-" in p.job_id for p in a[len(pods):])  # ...then the copies
    assert [p.index for p in a] == list(range(len(a)))
    assert [p.job_id for p in a] == [p.job_id for p in inflate_workload(pods, cap, ratio=1.3, seed=7)]
    assert [p.job_id for p in a] != [p.job_id for p in inflate_workload(pods, cap, ratio=1.3, seed=8)]


def test_inflation_removes_random_pods_when_the_trace_asks_for_more_than_the_target():
    pods = [pod(i, 1, 1000) for i in range(20)]
    a = inflate_workload(pods, 10_000, ratio=1.3, seed=1)
    assert len(a) == 13 and len({p.job_id for p in a}) == 13
    assert {p.job_id for p in a} <= {p.job_id for p in pods}


def _small_trace():
    rng = np.random.default_rng(0)
    pods = []
    for i in range(160):
        r = rng.random()
        if r < 0.15:
            pods.append(pod(i, 0, 0, cpu=int(rng.choice([4000, 8000]))))
        elif r < 0.55:
            pods.append(pod(i, 1, int(rng.choice([250, 300, 470, 500, 810])), cpu=4000))
        elif r < 0.95:
            pods.append(pod(i, 1, 1000, cpu=8000))
        else:
            pods.append(pod(i, int(rng.choice([2, 4])), 1000, cpu=16_000))
    nodes = [node(f"n{i:02d}", 4, cpu=48_000) for i in range(20)] + [node(f"m{i}", 8, model="G2", cpu=96_000)
                                                                  for i in range(5)]
    return pods, nodes


def test_replay_reaches_the_tuned_load_and_its_fragment_is_the_full_recount():
    pods, nodes = _small_trace()
    r = replay_fgd(pods, nodes, "fgd", seed=42)
    assert r.summary["arrived_share"] == pytest.approx(1.3, abs=0.05)
    assert np.all(np.diff(r.allocated_milli) >= 0)  # pods only arrive
    alloc = r.curve("alloc")
    assert max(alloc) >= 125 and alloc[0] < 5
    assert r.curve("frag_ratio")[130] > 50  # the last free capacity is mostly fragment
    assert r.placed < r.pods  # 130% cannot all fit
    # The incremental total equals a node-by-node recount of the final state.
    cl = FgdCluster(nodes, TargetWorkload.from_pods(pods), rng=np.random.default_rng([42, 2]))
    for p in inflate_workload(pods, cl.capacity_milli, seed=42):
        cl.schedule(p, "fgd")
    assert cl.frag_milli == pytest.approx(cl.fragmentation_full())
    assert cl.frag_milli == pytest.approx(r.frag_milli[-1])


def test_same_seed_same_run_and_every_policy_sees_the_same_arrivals():
    pods, nodes = _small_trace()
    res = compare(pods, nodes, ("random", "bestfit", "fgd"), seeds=(42, 43))
    assert [r.seed for r in res["fgd"]] == [42, 43]
    arrived = {p: [r.arrived_milli.tolist() for r in runs] for p, runs in res.items()}
    assert arrived["random"] == arrived["bestfit"] == arrived["fgd"]
    again = replay_fgd(pods, nodes, "random", seed=42)
    assert again.allocated_milli.tolist() == res["random"][0].allocated_milli.tolist()
    assert again.frag_milli.tolist() == res["random"][0].frag_milli.tolist()


def test_seed_list_counts_from_the_artifacts_first_seed():
    assert seed_list(3) == [42, 43, 44]
    assert seed_list("2") == [42, 43]
    assert seed_list("7,9") == [7, 9]


def test_fgd_subcommand_prints_one_row_per_policy(tmp_path, capsys):
    trace = tmp_path / "openb_pod_list_tiny.csv"
    rows = ["name,cpu_milli,memory_mib,num_gpu,gpu_milli"]
    for i in range(60):
        g, m = [(1, 500), (1, 1000), (0, 0), (2, 1000), (1, 300)][i % 5]
        rows.append(f"pod-{i:03d},4000,8192,{g},{m}")
    trace.write_text("\n".join(rows) + "\n")
    (tmp_path / "openb_node_list_gpu_node.csv").write_text(
        "sn,cpu_milli,memory_mib,gpu,model\n" + "".join(f"node-{i},32000,131072,4,T4\n" for i in range(8)))
    out_json = tmp_path / "rows.json"
    assert traces_main(["fgd", "--trace", str(trace), "--policies", "fgd,bestfit", "--seeds", "2",
                        "--json", str(out_json)]) == 0
    text = capsys.readouterr().out
    assert "seeds 42,43" in text
    lines = [ln for ln in text.splitlines() if ln.startswith(("fgd ", "bestfit "))]
    assert len(lines) == 2
    data = json.loads(out_json.read_text())
    assert [r["policy"] for r in data] == ["fgd", "bestfit"]
    assert all(r["alloc"] and all(math.isfinite(v) for v in r["alloc"].values()) for r in data)
    assert traces_main(["fgd", "--trace", str(trace), "--policies", "fgd,tetris"]) == 2
    assert "unknown policy 'tetris'" in capsys.readouterr().err
