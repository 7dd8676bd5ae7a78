"""Golden tests: the five failure stories of seeds/003, naive stack vs the right stack."""

from tests.scheduler_core.conftest import service, tenant, workload


# 1. Partial gang ----------------------------------------------------------------------------
def test_partial_gang_holds_gpus_under_the_default_scheduler(run_builtin):
    r = run_builtin("partial-gang-default")
    assert r.gangs.partial_start_gpu_hours > 0
    assert r.gangs.rendezvous_timeouts > 0
    assert workload(r, "ddp-8w").state != "done"


def test_gang_scheduling_never_holds_gpus_for_incomplete_gangs(run_builtin):
    for name in ("partial-gang-volcano", "partial-gang-coscheduling"):
        r = run_builtin(name)
        assert r.gangs.partial_start_gpu_hours == 0, name
        assert r.gangs.rendezvous_timeouts == 0, name
        assert workload(r, "ddp-8w").start is not None, name
    assert workload(run_builtin("partial-gang-volcano"), "ddp-8w").state == "done"


# 2. Topology cliff --------------------------------------------------------------------------
def test_spread_gang_falls_off_the_all_reduce_cliff(run_builtin):
    naive = workload(run_builtin("topology-cliff-default"), "allreduce-8w")
    assert len(naive.nodes) > 1 and any(n.startswith("pcie") for n in naive.nodes)
    for name in ("topology-cliff-kueue-tas", "topology-cliff-volcano"):
        packed = workload(run_builtin(name), "allreduce-8w")
        assert packed.topology_factor == 1.0 and len(packed.nodes) == 1 and packed.nodes[0].startswith("dgx")
        assert packed.state == "done"
        assert naive.topology_factor >= 3 * packed.topology_factor, name
        # A whole NVSwitch node finishes far earlier than running spread.
        assert packed.end < 0.5 * 24 * 3600
    # Kueue TAS also places the warm-up jobs (no topology request: packed node by node), so they share one
    # DGX node and the gang starts on arrival instead of waiting for them.
    tas = run_builtin("topology-cliff-kueue-tas")
    assert {n for w in tas.workloads if w.name.startswith("warm-dgx") for n in w.nodes} == {"dgx-0"}
    assert workload(tas, "allreduce-8w").start == 60.0


# 3. Shared-card OOM -------------------------------------------------------------------------
OTHERS = ("search-ranker", "ads-ranker", "feed-ranker")


def test_time_slicing_oom_kills_every_tenant_of_the_card(run_builtin):
    r = run_builtin("shared-card-oom-timeslicing")
    assert r.oom.max_blast_radius == 4
    assert r.oom.collateral_kills > 0
    first = r.oom.first_incidents[0]
    assert first.offender == "chat-llm-0" and len(first.killed) == 4
    assert all(service(r, n).oom_kills > 0 for n in OTHERS)


def test_hami_oom_kills_only_the_offender(run_builtin):
    r = run_builtin("shared-card-oom-hami")
    assert r.oom.kills > 0 and r.oom.collateral_kills == 0 and r.oom.max_blast_radius == 1
    assert set(r.oom.kills_by_workload) == {"chat-llm"}
    assert all(service(r, n).oom_kills == 0 for n in OTHERS)


def test_mig_oom_leaves_the_other_instances_untouched(run_builtin):
    r = run_builtin("shared-card-oom-mig")
    assert set(r.oom.kills_by_workload) == {"chat-llm"} and r.oom.collateral_kills == 0
    assert all(service(r, n).oom_kills == 0 and service(r, n).slo_met for n in OTHERS)


# 4. Starved tenant --------------------------------------------------------------------------
def test_without_quotas_team_b_starves(run_builtin):
    r = run_builtin("starved-tenant-default")
    b = tenant(r, "team-b")
    assert r.fairness.jain_index <= 0.6
    assert b.gpu_hours == 0 and b.queue_wait.mean > 12 * 3600
    assert service(r, "b-search").unserved_requests > 0 and not service(r, "b-search").slo_met


def test_kueue_quotas_or_volcano_proportion_feed_team_b(run_builtin):
    naive_wait = tenant(run_builtin("starved-tenant-default"), "team-b").queue_wait.mean
    for name in ("starved-tenant-kueue", "starved-tenant-volcano"):
        r = run_builtin(name)
        b = tenant(r, "team-b")
        assert r.fairness.jain_index >= 0.9, name
        assert b.queue_wait.mean < naive_wait / 5, name
        assert b.gpu_hours > 0, name
    # Kueue reclaims B's lent quota by preempting A's borrowed job: B waits minutes, not hours.
    kueue = run_builtin("starved-tenant-kueue")
    assert kueue.preemption.by_reason.get("KueueInCohortReclamation", 0) >= 1
    assert tenant(kueue, "team-b").queue_wait.max < 3600
    assert service(kueue, "b-search").slo_met


def test_volcano_proportion_without_reclaim_does_not_rescue_the_pending_service(run_builtin):
    # Proportion only stops A's queue from taking *more*; with the chart's default actions (no
    # reclaim) nothing running is preempted, so b-search waits for A's first jobs to end (~2.7 h)
    # and the requests of that time are unserved: the service misses its SLO.
    r = run_builtin("starved-tenant-volcano")
    b = service(r, "b-search")
    assert workload(r, "b-search").queue_wait > 2 * 3600
    assert b.unserved_requests > 0.09 * b.requests and not b.slo_met and b.p99_ms is None


# 5. Device plugin lifecycle -----------------------------------------------------------------
def test_pods_on_a_node_without_its_device_plugin_fail_admission(run_builtin):
    r = run_builtin("device-plugin-default")
    assert r.admission_errors.by_reason.get("UnexpectedAdmissionError", 0) > 0
    assert r.jobs.failed > 0


def test_respecting_readiness_or_using_dra_avoids_admission_errors(run_builtin):
    for name in ("device-plugin-readiness", "device-plugin-dra"):
        r = run_builtin(name)
        assert r.admission_errors.total == 0, name
        assert r.jobs.failed == 0 and r.jobs.completed == r.jobs.submitted, name
