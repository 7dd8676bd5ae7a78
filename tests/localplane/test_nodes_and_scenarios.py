"""The pure parts of the local plane: fake nodes shaped like the pools, the simulator's instant, the
differential generator, the objects the trial adds for DRA. No control plane."""

from pathlib import Path

from placement.deploy import export_scenario
from placement.deploy.localplane.scenarios import gang_as_job, generate, generate_kueue_features, workload_objects
from placement.deploy.localplane.trial import (
    WORKLOAD_GAP,
    bundle_kueue_config,
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


def test_the_feature_generator_is_seeded_and_never_shares_a_name_with_the_baseline_generator():
    assert generate_kueue_features(7).model_dump() == generate_kueue_features(7).model_dump()
    assert generate_kueue_features(7).model_dump() != generate_kueue_features(8).model_dump()
    ours = {o["metadata"]["name"] for o in workload_objects(generate_kueue_features(3))}
    baseline = {o["metadata"]["name"] for o in workload_objects(generate(3))}
    assert ours and not ours & baseline


def test_over_twenty_seeds_the_feature_generator_draws_fair_sharing_cohort_trees_fungibility_and_preemption():
    seen = {"fair on": 0, "fair off": 0, "weight 0": 0, "weight 2": 0, "cohort tree": 0, "flat cohort": 0,
            "borrow: try next": 0, "preempt: may stop": 0, "preempted": 0}
    strategies = set()
    for seed in range(20):
        scenario = generate_kueue_features(seed)
        kueue = scenario.stack.control_plane.kueue
        seen["fair on" if kueue.fair_sharing else "fair off"] += 1
        if kueue.fair_sharing:
            strategies.add(tuple(kueue.fair_sharing_preemption_strategies))
        weights = {cq.fair_sharing_weight for cq in kueue.cluster_queues} | {c.fair_sharing_weight for c in kueue.cohorts}
        seen["weight 0"] += 0 in weights
        seen["weight 2"] += 2 in weights
        seen["cohort tree" if any(c.parent_name for c in kueue.cohorts) else "flat cohort"] += 1
        seen["borrow: try next"] += any(cq.flavor_fungibility.when_can_borrow == "TryNextFlavor" for cq in kueue.cluster_queues)
        seen["preempt: may stop"] += any(cq.flavor_fungibility.when_can_preempt == "MayStopSearch" for cq in kueue.cluster_queues)
        assert all(len(cq.flavors) == 2 for cq in kueue.cluster_queues)  # two flavors of nvidia.com/gpu
        answers = simulator_answer(scenario, [o["metadata"]["name"] for o in workload_objects(scenario)])
        # a workload that ran and was then put back in the queue: preempted
        seen["preempted"] += any(rec.start is not None and rec.state == "queued" for rec in answers.values())
    assert all(seen.values()), seen
    assert len(strategies) >= 2 and seen["preempted"] >= 5


def test_the_feature_scenarios_bundle_carries_the_cohort_tree_fair_sharing_and_fungibility():
    seed = next(s for s in range(20) if generate_kueue_features(s).stack.control_plane.kueue.fair_sharing
                and generate_kueue_features(s).stack.control_plane.kueue.cohorts)
    scenario = generate_kueue_features(seed)
    kueue = scenario.stack.control_plane.kueue
    export = export_scenario(scenario)
    cohorts = {o["metadata"]["name"]: o["spec"] for o in export.file("kueue/cohorts.yaml").objects}
    root = next(c for c in kueue.cohorts if not c.parent_name)
    assert cohorts[root.name]["resourceGroups"][0]["flavors"][0]["name"] == f"f{seed}-fa"
    assert all(cohorts[c.name]["parentName"] == root.name for c in kueue.cohorts if c.parent_name)
    cqs = {o["metadata"]["name"]: o["spec"] for o in export.file("kueue/clusterqueues.yaml").objects}
    for cq in kueue.cluster_queues:
        assert cqs[cq.name]["flavorFungibility"] == {"whenCanBorrow": cq.flavor_fungibility.when_can_borrow,
                                                     "whenCanPreempt": cq.flavor_fungibility.when_can_preempt}
        assert cqs[cq.name]["cohortName"] == cq.cohort
    # the Kueue the plane starts runs the scenario's own strategy list, not Kueue's default one
    assert bundle_kueue_config(export)["fairSharing"] == {
        "preemptionStrategies": kueue.fair_sharing_preemption_strategies}


def test_a_workload_the_simulator_preempted_is_judged_waiting_not_running():
    """Feature seed 2: f2-j0 ran at first and was preempted, as on the plane, where Kueue left it waiting
    ("insufficient unused quota ..."). The judge read the record's first start as running now and
    counted a disagreement."""
    from placement.deploy.localplane.trial import WorkloadResult, judge

    scenario = generate_kueue_features(2)
    answers = simulator_answer(scenario, [o["metadata"]["name"] for o in workload_objects(scenario)])
    assert answers["f2-j0"].start is not None and answers["f2-j0"].state == "queued"
    plane = WorkloadResult("workloads", "Job", "f2-q0", "f2-j0", admitted=False,
                           admission_message="couldn't assign flavors", pods=0, bound={}, pending_messages=[])
    judge([plane], answers)
    assert (plane.agree, plane.note) == (True, "")


def test_the_trial_waits_until_its_new_nodes_are_ready_and_untainted():
    # The node lifecycle controller lifts node.kubernetes.io/not-ready node by node; pods created before then
    # all went to the first node it had lifted (topology-cliff-default: 8 pods on one node).
    from placement.deploy.localplane import trial as trial_module

    def node(name, ready, tainted):
        return {"metadata": {"name": name}, "spec": {"taints": [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]
                                                     if tainted else []},
                "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}

    views = iter([[node("a", True, False), node("b", False, True)],
                  [node("a", True, False), node("b", True, True)],
                  [node("a", True, False), node("b", True, False)]])
    seen = []

    class Kube:
        def list(self, api_version, kind, namespace=None):
            seen.append(kind)
            return next(views)

    assert trial_module.wait_schedulable(Kube(), ["a", "b"]) is True
    assert len(seen) == 3
