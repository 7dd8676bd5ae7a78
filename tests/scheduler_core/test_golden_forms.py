"""Golden tests: the three end-to-end forms of seeds/002 on four DGX A100 nodes, mixed workload."""

from tests.scheduler_core.conftest import service

CRITICAL = ("rank", "recsys", "embed", "asr", "moderation")  # "chat" is the KV-cache offender


def test_form_a_training_first_no_partial_gangs_packed_and_finished(run_builtin):
    r = run_builtin("form-a-mig-volcano")
    assert r.gangs.partial_start_gpu_hours == 0
    assert r.gangs.topology_factor.max == 1.0
    assert r.jobs.completed == r.jobs.submitted
    assert r.oom.collateral_kills == 0


def test_form_b_inference_first_contains_the_blast_radius(run_builtin):
    r = run_builtin("form-b-hami-kueue")
    assert r.oom.kills > 0 and r.oom.collateral_kills == 0 and r.oom.max_blast_radius == 1
    assert set(r.oom.kills_by_workload) == {"chat"}
    # Kueue admits whole workloads, so no gang starts partially and pods do not pile up unadmitted.
    assert r.gangs.partial_start_gpu_hours == 0
    assert r.utilisation.pending_pods_max < run_builtin("form-a-mig-volcano").utilisation.pending_pods_max


def test_form_c_mixed_meets_both_training_and_inference_criteria(run_builtin):
    r = run_builtin("form-c-mig-hami-volcano")
    assert r.gangs.partial_start_gpu_hours == 0 and r.gangs.topology_factor.max == 1.0
    assert r.oom.collateral_kills == 0
    assert all(service(r, n).slo_met for n in CRITICAL)


def test_hard_partitions_bound_p99_better_than_soft_sharing(run_builtin):
    a, b, c = (run_builtin(n) for n in ("form-a-mig-volcano", "form-b-hami-kueue", "form-c-mig-hami-volcano"))
    for n in CRITICAL:
        assert service(a, n).slo_met and service(c, n).slo_met
        # HAMi's core cap is an average: co-located replicas stretch the tail (facts §3, [D]).
        assert service(b, n).p99_ms > service(a, n).p99_ms
