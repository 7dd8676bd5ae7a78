"""A Volcano gang on the real control plane: partial-gang-volcano's 8-worker training gang beside its
1-GPU eval job. The bundle writes the gang as a PyTorchJob (the training operator, not part of the plane,
would make its PodGroup of minMember 8); here it is the same pod template in a batch Job annotated
`scheduling.volcano.sh/group-min-member: "8"`, from which Volcano's PodGroup controller makes the same
PodGroup (volcano v1.14.1 pkg/controllers/podgroup/pg_controller_handler.go getMinMemberFromUpperRes).
Volcano's gang plugin then binds the 8 pods all or none, as the simulator says."""

import copy

import pytest

from placement.deploy import export_scenario
from placement.deploy.localplane.trial import bundle_workloads, clean, try_on_plane
from scheduler_core import load_scenario
from tests.localplane.test_trials import SCENARIOS

pytestmark = pytest.mark.controlplane

MIN_MEMBER = "scheduling.volcano.sh/group-min-member"


def _gang_as_job(pytorchjob: dict) -> dict:
    spec = pytorchjob["spec"]
    workers = sum(r["replicas"] for r in spec["pytorchReplicaSpecs"].values())
    template = copy.deepcopy(spec["pytorchReplicaSpecs"]["Worker"]["template"])
    template["spec"]["restartPolicy"] = "Never"
    meta = copy.deepcopy(pytorchjob["metadata"])
    meta["annotations"] = {MIN_MEMBER: str(spec["runPolicy"]["schedulingPolicy"]["minAvailable"])}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
            "spec": {"parallelism": workers, "completions": workers, "template": template}}


def _trial(plane, nodes: int):
    scenario = load_scenario(SCENARIOS / "partial-gang-volcano.yaml")
    doc = scenario.model_dump(mode="json", exclude_none=True)
    doc["pool"]["node_groups"][0]["count"] = nodes
    from scheduler_core.scenario import parse_scenario

    scenario = parse_scenario(doc, source="test")
    export = export_scenario(scenario)
    workloads = [_gang_as_job(o) if o["kind"] == "PyTorchJob" else o for _, o in bundle_workloads(export)]
    # the eval job first, as the trial's order decides who takes the GPUs first
    workloads.sort(key=lambda o: o["kind"] != "Job" or MIN_MEMBER in o["metadata"].get("annotations", {}))
    try:
        return try_on_plane(plane, scenario, export=export, workloads=workloads)
    finally:
        clean(plane.kube, scenario, export, workloads)


def test_volcano_binds_the_8_worker_gang_together_when_a_node_has_room(plane):
    trial = _trial(plane, nodes=2)
    assert trial.rejected == []
    gang = next(w for w in trial.workloads if w.name == "ddp-8w")
    assert gang.podgroup_phase == "Running" and sum(gang.bound.values()) == 8
    assert [(w.name, w.note) for w in trial.workloads if w.agree is not True] == []


def test_volcano_holds_the_whole_gang_when_only_7_gpus_are_free_and_binds_none(plane):
    trial = _trial(plane, nodes=1)
    assert trial.rejected == []
    gang = next(w for w in trial.workloads if w.name == "ddp-8w")
    assert gang.bound == {} and gang.podgroup_phase in ("Pending", "Inqueue")
    assert gang.podgroup_messages  # Volcano's own words for why
    assert [(w.name, w.note) for w in trial.workloads if w.agree is not True] == []
