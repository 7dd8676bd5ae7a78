"""An 8-worker training gang on the real control plane under Volcano and under scheduler-plugins'
coscheduling: partial-gang-volcano / partial-gang-coscheduling, the gang beside a 1-GPU eval job.

The bundles write the gang as a PyTorchJob; the training operator, not part of the plane, would make its
PodGroup of minMember 8. Here it is the same pod template in a batch Job, grouped as the operator would:
- Volcano: the Job annotated `scheduling.volcano.sh/group-min-member: "8"`, from which Volcano's PodGroup
  controller makes the PodGroup (volcano v1.14.1 pkg/controllers/podgroup/pg_controller_handler.go
  getMinMemberFromUpperRes);
- coscheduling: a `scheduling.x-k8s.io/v1alpha1` PodGroup of minMember 8 and the pods labelled
  `scheduling.x-k8s.io/pod-group` (scheduler-plugins pkg/coscheduling, as its README's example).
The gang binds all or none, as the simulator says."""

import pytest

from placement.deploy import export_scenario
from placement.deploy.localplane.scenarios import gang_as_grouped_job
from placement.deploy.localplane.trial import bundle_workloads, clean, try_on_plane
from scheduler_core import load_scenario
from scheduler_core.scenario import parse_scenario
from tests.localplane.test_trials import SCENARIOS

pytestmark = pytest.mark.controlplane


def _trial(plane, stack: str, nodes: int):
    scenario = load_scenario(SCENARIOS / f"partial-gang-{stack}.yaml")
    doc = scenario.model_dump(mode="json", exclude_none=True)
    doc["pool"]["node_groups"][0]["count"] = nodes
    scenario = parse_scenario(doc, source="test")
    export = export_scenario(scenario)
    plain = [o for _, o in bundle_workloads(export) if o["kind"] != "PyTorchJob"]
    gang = [g for _, o in bundle_workloads(export) if o["kind"] == "PyTorchJob" for g in gang_as_grouped_job(o)]
    workloads = plain + gang  # the eval job first: it takes its GPU before the gang comes
    try:
        return try_on_plane(plane, scenario, export=export, workloads=workloads)
    finally:
        clean(plane.kube, scenario, export, workloads)


@pytest.mark.parametrize("stack", ["volcano", "coscheduling"])
def test_the_8_worker_gang_is_bound_together_when_the_pool_has_room(plane, stack):
    trial = _trial(plane, stack, nodes=2)
    assert trial.rejected == []
    gang = next(w for w in trial.workloads if w.name == "ddp-8w")
    assert gang.podgroup_phase and sum(gang.bound.values()) == 8
    assert [(w.name, w.note) for w in trial.workloads if w.agree is not True] == []


@pytest.mark.parametrize("stack", ["volcano", "coscheduling"])
def test_the_whole_gang_waits_and_none_of_it_is_bound_when_only_7_gpus_are_free(plane, stack):
    trial = _trial(plane, stack, nodes=1)
    assert trial.rejected == []
    gang = next(w for w in trial.workloads if w.name == "ddp-8w")
    assert gang.bound == {} and gang.pending_messages  # the scheduler's own words for why
    if stack == "volcano":  # Volcano's enqueue let it in (overcommit 1.2 x 8 GPUs), allocate could not bind it
        assert gang.podgroup_phase == "Inqueue" == gang.sim_podgroup_phase
    assert [(w.name, w.note) for w in trial.workloads if w.agree is not True] == []
