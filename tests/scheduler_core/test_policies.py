"""Control-plane semantics: Kueue quotas and queueing, Volcano proportion and gang, KAI fair share."""

from scheduler_core import simulate
from scheduler_core.metrics import jain, water_fill
from tests.scheduler_core.conftest import minimal, workload

ONE_NODE = {"node_groups": [{"name": "dgx", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8}]}


def kueue(cqs, **extra):
    return {"control_plane": {"scheduler": "kube-default", "admission": "kueue",
                              "kueue": {"cluster_queues": cqs, **extra}}}


def cq(name, nominal, cohort=None, **kw):
    q = {"nominal": nominal, **{k: v for k, v in kw.items() if k in ("borrowing_limit", "lending_limit")}}
    out = {"name": name, "flavors": [{"name": "a100", "quotas": {"nvidia.com/gpu": q}}]}
    if cohort:
        out["cohort"] = cohort
    for k in ("queueing_strategy", "preemption"):
        if k in kw:
            out[k] = kw[k]
    return out


def job(name, gpus, dur="1h", tenant="a", at=0, **kw):
    return {"kind": "batch", "name": name, "tenant": tenant, "gpus_per_worker": gpus, "duration": dur,
            "memory_gib": 10, "arrival": {"at": at}, **kw}


def test_kueue_nominal_quota_holds_workloads_back_without_creating_pods():
    r = simulate(minimal(pool=ONE_NODE, workloads=[job("j1", 4), job("j2", 4)],
                         stack=kueue([cq("a", 4)])))
    assert workload(r, "j2").start == 3600.0
    assert r.utilisation.pending_pods_max == 0  # j2 waited as a Workload, not as a Pending pod


def test_kueue_borrowing_limit_and_lending_limit():
    docs = [job("j1", 6), job("b1", 1, tenant="b", at=60)]
    r = simulate(minimal(pool=ONE_NODE, workloads=docs,
                         stack=kueue([cq("a", 4, "org", borrowing_limit=2), cq("b", 4, "org")])))
    assert workload(r, "j1").start == 0.0  # 4 nominal + 2 borrowed from b
    r = simulate(minimal(pool=ONE_NODE, workloads=docs,
                         stack=kueue([cq("a", 4, "org", borrowing_limit=1), cq("b", 4, "org")])))
    assert workload(r, "j1").start is None  # cannot borrow 2
    r = simulate(minimal(pool=ONE_NODE, workloads=docs,
                         stack=kueue([cq("a", 4, "org"), cq("b", 4, "org", lending_limit=1)])))
    assert workload(r, "j1").start is None  # b keeps 3 of its 4 for itself


def test_strict_fifo_blocks_behind_the_head_best_effort_lets_small_ones_pass():
    docs = [job("big-running", 6), job("head-needs-4", 4, at=10), job("small", 1, at=20)]
    strict = simulate(minimal(pool=ONE_NODE, workloads=docs,
                              stack=kueue([cq("a", 8, queueing_strategy="StrictFIFO")])))
    best = simulate(minimal(pool=ONE_NODE, workloads=docs,
                            stack=kueue([cq("a", 8, queueing_strategy="BestEffortFIFO")])))
    assert workload(strict, "small").start == 3600.0
    assert workload(best, "small").start == 20.0


def test_kueue_reclaim_within_cohort_preempts_the_borrower():
    docs = [job("a-big", 8, dur="4h"), job("b-small", 2, tenant="b", at=600)]
    pre = {"reclaim_within_cohort": "Any"}
    r = simulate(minimal(pool=ONE_NODE, workloads=docs,
                         stack=kueue([cq("a", 4, "org", preemption=pre), cq("b", 4, "org", preemption=pre)])))
    assert r.preemption.preemptions == 1 and r.preemption.lost_gpu_hours > 0
    assert workload(r, "b-small").start == 600 + 30  # after the victim's termination grace period


def test_wait_for_pods_ready_evicts_a_stuck_gang_and_backs_off():
    # Quota admits an 8-pod gang but a resident pod holds one GPU: without TAS it cannot all start.
    docs = [job("resident", 1, dur="3h", tenant="b"),
            {"kind": "training", "name": "gang", "tenant": "a", "workers": 8, "duration": "1h", "memory_gib": 10,
             "arrival": {"at": 60}}]
    stack = kueue([cq("a", 8, "org"), cq("b", 1, "org")], wait_for_pods_ready={"enable": True, "timeout": "10m"})
    r = simulate(minimal(horizon="6h", pool=ONE_NODE, workloads=docs, stack=stack))
    assert r.preemption.by_reason == {} and r.gangs.partial_start_gpu_hours > 0
    # Evicted every 10 min and requeued with doubling backoff; admitted again once the resident leaves.
    assert 3 * 3600 <= workload(r, "gang").start <= 4 * 3600
    assert workload(r, "gang").state == "done"
    no_wfpr = simulate(minimal(horizon="6h", pool=ONE_NODE, workloads=docs, stack=kueue([cq("a", 8, "org"),
                                                                                        cq("b", 1, "org")])))
    assert r.gangs.partial_start_gpu_hours < no_wfpr.gangs.partial_start_gpu_hours


def test_volcano_proportion_water_fills_deserved_by_weight():
    assert water_fill(12, {"a": 100, "b": 100}, {"a": 2, "b": 1}) == {"a": 8.0, "b": 4.0}
    assert water_fill(12, {"a": 100, "b": 2}, {"a": 1, "b": 1}) == {"a": 10.0, "b": 2.0}


def test_volcano_gang_protection_leaves_full_gangs_alone_under_reclaim():
    docs = [{"kind": "training", "name": "a-gang", "tenant": "a", "workers": 8, "duration": "2h", "memory_gib": 10},
            job("b-job", 1, tenant="b", at=60)]
    stack = {"control_plane": {"scheduler": "volcano", "volcano": {
        "actions": ["enqueue", "allocate", "backfill", "reclaim"], "queues": [{"name": "a"}, {"name": "b"}]}}}
    r = simulate(minimal(pool=ONE_NODE, workloads=docs, stack=stack))
    assert r.preemption.preemptions == 0 and workload(r, "b-job").start == 7200


def test_kai_reclaims_over_quota_jobs_for_a_queue_below_its_share():
    docs = [job(f"a{i}", 2, dur="4h") for i in range(4)] + [job("b1", 2, tenant="b", at=600)]
    stack = {"control_plane": {"scheduler": "kai", "kai": {"queues": [
        {"name": "a", "quota": 4}, {"name": "b", "quota": 4}]}}}
    r = simulate(minimal(horizon="10h", pool=ONE_NODE, workloads=docs, stack=stack))
    assert r.preemption.by_reason.get("KaiReclaim") == 1
    assert workload(r, "b1").start == 600 + 30


def test_jain_index_bounds():
    assert jain([1, 1, 1]) == 1.0
    assert abs(jain([1, 0]) - 0.5) < 1e-12


def test_volcano_binpack_fills_one_node_while_without_it_the_node_order_spreads():
    # Volcano's binpack plugin scores the fullest node best; without it, nodeorder's leastrequested
    # priority scores the emptiest, so two single-GPU jobs land on two nodes.
    two_nodes = {"node_groups": [{"name": "dgx", "count": 2, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8}]}
    docs = [job("first", 1), job("second", 1, at=60)]

    def nodes(plugins):
        stack = {"control_plane": {"scheduler": "volcano", "volcano": {"plugins": plugins, "queues": [{"name": "a"}]}}}
        r = simulate(minimal(pool=two_nodes, workloads=docs, stack=stack))
        return {name: workload(r, name).nodes for name in ("first", "second")}

    packed = nodes(["priority", "gang", "predicates", "proportion", "nodeorder", "binpack"])
    assert packed["first"] == packed["second"]
    spread = nodes(["priority", "gang", "predicates", "proportion", "nodeorder"])
    assert spread["first"] != spread["second"]
