"""kube-scheduler with the Workload API's gang (KEP-4671, scheduling.k8s.io/v1beta1 from Kubernetes 1.37;
the GenericWorkload feature gate turns on its GangScheduling plugin): a PodGroup with a gang policy binds
minCount pods all-or-nothing, where plain kube-scheduler binds a gang's pods one by one and starts it
partially (failure story 1) or deadlocks two gangs that each hold part of the pool."""

from __future__ import annotations

from pathlib import Path

from scheduler_core import load_scenario, simulate
from scheduler_core.policies import make_scheduler
from scheduler_core.policies.kube import KubeScheduler, KubeWorkloadGangScheduler
from scheduler_core.scenario import Scenario

ROOT = Path(__file__).resolve().parents[2]


def _with_gang(scenario: Scenario, on: bool) -> Scenario:
    data = scenario.model_dump(mode="json")
    data["stack"]["control_plane"]["kube"]["workload_gang"] = on
    return Scenario.model_validate(data)


def test_failure_story_one_starts_no_partial_gang_with_the_workload_api():
    story = load_scenario(ROOT / "fixtures" / "scenarios" / "partial-gang-default.yaml")
    plain = simulate(_with_gang(story, False))
    gang = simulate(_with_gang(story, True))
    assert plain.gangs.partial_start_gpu_hours > 0  # the 8-worker job starts 7 workers (the story)
    assert gang.gangs.partial_start_gpu_hours == 0
    assert gang.gangs.max_partial_gpus == 0


def _two_gangs(on: bool):
    # One 8-GPU node, two 6-worker gangs arriving together: pod by pod, both start partially and hold GPUs
    # in a rendezvous that cannot complete until they give up and restart; as gangs, the first binds its 6
    # and the second waits for it to end.
    docs = [{"kind": "training", "name": f"job-{x}", "workers": 6, "gpus_per_worker": 1, "min_available": 6,
             "duration": "1h", "memory_gib": 20, "arrival": {"at": 60}} for x in ("a", "b")]
    return simulate({"name": "two-gangs", "horizon": "6h", "seed": 1,
                     "pool": {"node_groups": [{"name": "n", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 8}]},
                     "stack": {"control_plane": {"scheduler": "kube-default", "kube": {"workload_gang": on}}},
                     "workloads": docs})


def test_two_gangs_that_deadlock_pod_by_pod_run_one_after_the_other_as_pod_groups():
    plain, gang = _two_gangs(False), _two_gangs(True)
    assert plain.gangs.partial_start_gpu_hours > 0
    assert gang.gangs.partial_start_gpu_hours == 0
    # pod by pod the partial gangs give up their rendezvous and restart; as PodGroups none ever does
    assert plain.jobs.restarts > 0 and gang.jobs.restarts == 0
    assert gang.jobs.completed == 2 and gang.jobs.makespan <= plain.jobs.makespan


def test_the_gate_selects_the_gang_model_and_nothing_else_changes_without_it():
    class Port:  # make_scheduler reads only the control plane
        def __init__(self, on):
            self.cp = _with_gang(load_scenario(ROOT / "fixtures" / "scenarios" / "partial-gang-default.yaml"), on).stack.control_plane
    assert type(make_scheduler(Port(False))) is KubeScheduler
    assert type(make_scheduler(Port(True))) is KubeWorkloadGangScheduler
    assert KubeWorkloadGangScheduler.name == "kube-default"  # the same scheduler, with one more plugin on
