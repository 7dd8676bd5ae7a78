"""Restart and retry timings follow the kubelet and the Job controller (named parameters, cited).

Kubelet CrashLoopBackOff: 10 s doubling, capped at 5 min, reset once the container ran 10 min
(kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#container-restarts).
Job controller: failed pods recreated after 10 s doubling, capped at 6 min
(kubernetes.io/docs/concepts/workloads/controllers/job/#pod-backoff-failure-policy).
"""

import pytest

from scheduler_core import simulate
from scheduler_core.scenario import ModelParameters
from tests.scheduler_core.conftest import minimal, service, workload

ONE_GPU = {"node_groups": [{"name": "g", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 1}]}
RATE = 10.0


def test_named_defaults_are_the_documented_kubernetes_timings():
    p = ModelParameters()
    assert (p.restart_backoff, p.restart_backoff_max, p.restart_backoff_reset) == (10, 300, 600)
    assert (p.job_retry_backoff, p.job_retry_backoff_max, p.max_restarts) == (10, 360, 6)


def test_a_job_rejected_by_the_kubelet_retries_with_the_job_controllers_backoff():
    # The only node's device plugin is down all along: every pod fails admission.  Seven failed
    # pods (backoffLimit 6) after delays of 10+20+40+80+160+320 s: the job fails at 630 s, not 6 s.
    doc = minimal(pool=ONE_GPU, workloads=[{"kind": "batch", "name": "j", "duration": "1h", "memory_gib": 10}],
                  events=[{"at": 0, "kind": "device_plugin_restart", "node": "g-0", "duration": "3h"}])
    j = workload(simulate(doc), "j")
    assert j.state == "failed"
    assert j.end == pytest.approx(630.0, abs=1.0)


def test_job_retry_backoff_is_capped_at_six_minutes():
    doc = minimal(horizon="6h", pool=ONE_GPU,
                  workloads=[{"kind": "batch", "name": "j", "duration": "1h", "memory_gib": 10}],
                  events=[{"at": 0, "kind": "device_plugin_restart", "node": "g-0", "duration": "5h"}],
                  parameters={"max_restarts": 8})
    j = workload(simulate(doc), "j")
    # 10+20+40+80+160+320 then 360, 360 (not 640, 1280).
    assert j.end == pytest.approx(630.0 + 720.0, abs=1.0)


def _leaking_service(growth_gib_per_hour):
    # 70 GiB of weights on an 80 GB card; the KV cache grows until the container is OOM-killed.
    return {"kind": "inference", "name": "svc", "replicas": 1, "model_memory_gib": 70,
            "kv_cache": {"initial_gib": 0, "growth_gib_per_hour": growth_gib_per_hour, "max_gib": 50},
            "compute_fraction": 0.3, "arrival_rate": RATE, "service_time": {"mean": "20ms", "cv": 0.5},
            "slo": {"p99": "200ms"}}



def test_crash_backoff_resets_after_ten_minutes_of_running():
    # ~74.5 GiB of headroom growth at 12 GiB/h: each container lives well over 10 min, so every
    # restart waits the first delay (10 s) again instead of doubling to 5 min.
    s = service(simulate(minimal(horizon="12h", pool=ONE_GPU, workloads=[_leaking_service(12.0)])), "svc")
    assert s.oom_kills >= 10
    assert s.unserved_requests == pytest.approx(s.oom_kills * 10.0 * RATE, rel=0.02)


def test_crash_backoff_doubles_to_five_minutes_for_a_fast_crash_loop():
    # Crashes within a minute of every start: delays 10, 20, 40, 80, 160, then 300 s each.
    s = service(simulate(minimal(horizon="2h", pool=ONE_GPU, workloads=[_leaking_service(600.0)])), "svc")
    k = s.oom_kills
    assert k >= 8
    waits = [min(300.0, 10.0 * 2 ** i) for i in range(k)]
    # The last crash's backoff may run past the horizon.
    assert sum(waits[:-1]) * RATE < s.unserved_requests <= sum(waits) * RATE + 1
