"""The pure parts of the local plane: fake nodes shaped like the pools, the simulator's instant, the
differential generator, the objects the trial adds for DRA. No control plane."""

from pathlib import Path

from placement.deploy import export_scenario
from placement.deploy.localplane.scenarios import gang_as_job, generate, workload_objects
from placement.deploy.localplane.trial import (
    WORKLOAD_GAP,
    chart_objects,
    dra_slices,
    kwok_nodes,
    probe_scenario,
    simulator_answer,
)
from scheduler_core import load_scenario

SCENARIOS = Path(__file__).resolve().parents[2] / "fixtures" / "scenarios"


def test_kwok_nodes_advertise_the_gpus_mig_instances_and_hami_slots_the_simulator_schedules():
    nodes = kwok_nodes(load_scenario(SCENARIOS / "form-c-mig-hami-volcano.yaml"))
    by_pool = {}
    for n in nodes:
        by_pool.setdefault(n["metadata"]["labels"]["placement-atlas.io/pool"], []).append(n)
    mig = next(ns for ns in by_pool.values() if any(k.startswith("nvidia.com/mig-") for k in ns[0]["status"]["capacity"]))
    assert all(n["metadata"]["annotations"]["kwok.x-k8s.io/node"] == "fake" for n in nodes)
    assert "nvidia.com/mig.config" in mig[0]["metadata"]["labels"]
    hami = next(ns for ns in by_pool.values() if "nvidia.com/gpumem" in ns[0]["status"]["capacity"])
    assert int(hami[0]["status"]["capacity"]["nvidia.com/gpu"]) > 8  # vGPU slots, not cards
    assert hami[0]["metadata"]["labels"].get("gpu") == "on"


def test_the_simulators_instant_submits_one_of_each_example_as_the_trial_does_and_nothing_finishes():
    scenario = load_scenario(SCENARIOS / "starved-tenant-kueue.yaml")
    probe = probe_scenario(scenario, ["b-finetune", "a-train"])
    assert [w.name for w in probe.workloads] == ["a-train", "b-finetune"]
    assert all(w.count == 1 for w in probe.workloads)
    # the trial creates them in this order, WORKLOAD_GAP apart: the simulator submits them the same way
    assert {w.name: w.arrival.at for w in probe.workloads} == {"b-finetune": 0, "a-train": WORKLOAD_GAP}


def test_the_simulators_instant_leaves_out_the_scenarios_events_as_the_trial_does():
    # device-plugin-default restarts a device plugin at 25 min; the trial observes its first minutes and
    # applies no event, so the probe has none either (it was refused: "events.0.at: event after the horizon").
    scenario = load_scenario(SCENARIOS / "device-plugin-default.yaml")
    assert scenario.events
    probe = probe_scenario(scenario, ["resident", "eval"])
    assert probe.events == [] and {w.name for w in probe.workloads} == {"resident", "eval"}


def test_the_simulator_sees_the_workloads_arrive_in_the_trials_order_not_all_at_once():
    # Seed 29 of the differential check: q0 (nominal 0) borrows 2 of q2's 3 GPUs for d29-j0, created
    # first; then d29-j2 (priority 100, 3 GPUs, q1 may borrow 3) finds 1 left. Real Kueue admitted j0 and
    # left j2 ("insufficient unused quota ... 2 more needed"); submitted all at once, the simulator
    # ordered j2 first by priority and admitted it instead.
    scenario = generate(29)
    answers = simulator_answer(scenario, [o["metadata"]["name"] for o in workload_objects(scenario)])
    assert answers["d29-j0"].start == 0
    assert answers["d29-j2"].start is None and "2 more needed" in answers["d29-j2"].pending_reason


def test_the_generator_is_seeded_and_every_workload_becomes_an_object_gangs_as_whole_jobs():
    assert generate(7).model_dump() == generate(7).model_dump()
    seen_gang = False
    for seed in range(30):
        scenario = generate(seed)
        objects = workload_objects(scenario)
        assert [o["metadata"]["name"] for o in objects] == [w.name for w in scenario.workloads]
        for obj, spec in zip(objects, scenario.workloads):
            assert obj["kind"] == "Job"
            assert obj["spec"]["parallelism"] == spec.workers
            seen_gang |= spec.workers > 1
    assert seen_gang


def test_a_pytorchjob_gang_becomes_one_job_of_all_its_pods():
    job = gang_as_job({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "g"}, "spec": {
        "pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": {"spec": {"containers": []}}},
                                "Worker": {"replicas": 3, "template": {"spec": {"containers": []}}}}}})
    assert job["kind"] == "Job" and job["spec"]["parallelism"] == 4 and job["spec"]["template"]["spec"]["restartPolicy"] == "Never"


def test_a_gangs_workload_and_pod_group_go_in_beside_its_job_and_are_not_judged_as_workloads():
    """The trial judged every object of a workload file as a workload: the Workload API's Workload and
    PodGroup came out as two more results with no pods, which the simulator knows nothing of."""
    from placement.deploy.localplane.trial import bundle_workloads, observe
    from tests.localplane.gang_stack import gang_stack

    class NoObjects:  # a plane on which nothing has happened yet
        def list(self, *args, **kwargs):
            return []

    _, export = gang_stack()
    items = bundle_workloads(export)
    assert {o["kind"] for _, o in items} == {"Workload", "PodGroup", "Job"}
    assert [(r.kind, r.name) for r in observe(NoObjects(), items)] == [("Job", "pretrain-team-1")]


def test_a_dra_pool_publishes_one_resource_slice_per_node_with_the_devices_the_simulator_allocates():
    # There is no kubelet plugin on a KWOK node: the trial publishes what the NVIDIA DRA driver would.
    scenario = load_scenario(SCENARIOS / "device-plugin-dra.yaml")
    slices = dra_slices(scenario)
    dra_nodes = [n for g in scenario.pool.node_groups if scenario.stack.data_plane_for(g.name).mechanism == "dra"
                 for n in g.node_names()]
    assert sorted(s["spec"]["nodeName"] for s in slices) == sorted(dra_nodes)
    devices = slices[0]["spec"]["devices"]
    assert [d["name"] for d in devices] == [f"gpu-{i}" for i in range(len(devices))]
    assert devices[0]["attributes"]["type"] == {"string": "gpu"}
    assert devices[0]["capacity"]["memory"] == {"value": str(80 * 2**30)}
    assert all(s["spec"]["driver"] == "gpu.nvidia.com" and s["spec"]["pool"]["resourceSliceCount"] == 1 for s in slices)


def test_the_dra_drivers_chart_creates_the_device_classes_the_claims_name():
    # dra/values.yaml leaves the DeviceClasses to the chart (helm install creates them); the trial renders
    # them with the bundle's values, as kube-scheduler said without: "device class gpu.nvidia.com does not exist".
    export = export_scenario(load_scenario(SCENARIOS / "device-plugin-dra.yaml"))
    made = {(o["kind"], o["metadata"]["name"]): o for _, o in chart_objects(export)}
    assert set(made) == {("DeviceClass", "gpu.nvidia.com"), ("DeviceClass", "mig.nvidia.com")}
    assert "type == 'gpu'" in made[("DeviceClass", "gpu.nvidia.com")]["spec"]["selectors"][0]["cel"]["expression"]


def test_a_pytorchjob_gang_is_grouped_for_the_gang_scheduler_its_pods_name_as_the_training_operator_would():
    from placement.deploy.localplane.scenarios import gang_as_grouped_job

    def gang(scheduler):
        template = {"metadata": {"labels": {"app": "g"}}, "spec": {"schedulerName": scheduler, "containers": []}}
        return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "g", "namespace": "r"}, "spec": {
            "pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": template}, "Worker": {"replicas": 7, "template": template}},
            "runPolicy": {"schedulingPolicy": {"minAvailable": 8}}}}

    (job,) = gang_as_grouped_job(gang("volcano"))
    assert job["metadata"]["annotations"] == {"scheduling.volcano.sh/group-min-member": "8"}
    group, job = gang_as_grouped_job(gang("scheduler-plugins-scheduler"))
    assert (group["kind"], group["spec"]["minMember"]) == ("PodGroup", 8)
    assert job["spec"]["template"]["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] == "g"
    assert job["spec"]["parallelism"] == 8
