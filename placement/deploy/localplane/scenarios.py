"""Seeded small scenarios for the differential check: 1-4 ClusterQueues in a cohort (borrowing and
lending limits, preemption), priorities, gangs, whole-GPU and MIG nodes; every workload submitted at
once. ``generate(seed)`` is deterministic; names carry the seed so scenarios never share objects.

``generate_kueue_features(seed)`` draws what ``generate`` leaves at Kueue's defaults: fair sharing (on or
off, weights 0/1/2, a preemption-strategy list), hierarchical cohorts (a root Cohort with its own quota over
child Cohorts), two flavors of one resource with flavorFungibility, and low-priority workloads created
before high-priority ones so that preemption happens. Its names start ``f<seed>``, ``generate``'s
``d<seed>``, so the two never share an object on one plane."""

from __future__ import annotations

import random

from placement.deploy.workloads import workload_files
from scheduler_core.scenario import Scenario, parse_scenario

MIG_LAYOUT = "all-1g.10gb"  # mig-parted's label: seven 1g.10gb instances per A100-SXM4-80GB
MIG_PROFILE = "1g.10gb"


def generate(seed: int) -> Scenario:
    rng = random.Random(seed)
    tag = f"d{seed}"
    whole = {"name": f"{tag}-w", "count": rng.randint(1, 2), "gpu": "A100-SXM4-80GB", "gpus_per_node": rng.choice([4, 8])}
    groups = [whole]
    with_mig = rng.random() < 0.4
    if with_mig:
        groups.append({"name": f"{tag}-m", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": rng.choice([1, 2]),
                       "mig": [{"devices": "all", "layout": MIG_LAYOUT}]})
    total_gpus = sum(g["count"] * g["gpus_per_node"] for g in groups if "mig" not in g)
    mig_slots = sum(g["count"] * g["gpus_per_node"] * 7 for g in groups if "mig" in g)
    n_cq = rng.randint(1, 4)
    tenants, cqs = [], []
    for i in range(n_cq):
        name = f"{tag}-q{i}"
        nominal = rng.randint(0, max(1, total_gpus // n_cq + 2))
        quota: dict = {"nominal": nominal}
        if rng.random() < 0.4:
            quota["borrowing_limit"] = rng.randint(0, 4)
        if rng.random() < 0.3:
            quota["lending_limit"] = rng.randint(0, nominal)
        flavors = [{"name": f"{tag}-whole", "node_groups": [whole["name"]], "quotas": {"nvidia.com/gpu": quota}}]
        if with_mig:
            flavors.append({"name": f"{tag}-mig", "node_groups": [f"{tag}-m"],
                            "quotas": {f"nvidia.com/mig-{MIG_PROFILE}": {"nominal": rng.randint(0, mig_slots)}}})
        cqs.append({"name": name, "cohort": f"{tag}-org", "flavors": flavors,
                    "preemption": {"reclaim_within_cohort": rng.choice(["Never", "Any"]),
                                   "within_cluster_queue": rng.choice(["Never", "LowerPriority"])}})
        tenants.append({"name": name, "weight": 1, "queue": name})
    workloads = []
    for j in range(rng.randint(2, 5)):
        tenant = rng.choice(tenants)["name"]
        w: dict = {"kind": "batch", "name": f"{tag}-j{j}", "tenant": tenant, "duration": "1000h",
                   "priority": rng.choice([0, 0, 100]), "memory_gib": 8}
        if with_mig and rng.random() < 0.35:
            w.update(gpus_per_worker=1, workers=rng.choice([1, 2]), node_group=f"{tag}-m", unit={"mig_profile": MIG_PROFILE})
        else:
            w.update(gpus_per_worker=rng.choice([1, 2, 4]), workers=rng.choice([1, 1, 2, 3]), node_group=whole["name"])
        workloads.append(w)
    doc = {"name": f"differential-{seed}", "seed": seed, "horizon": "10m",
           "pool": {"node_groups": groups},
           "stack": {"name": f"kueue differential {seed}",
                     "data_plane": {"mechanism": "whole"},
                     **({"node_group_data_plane": {f"{tag}-m": {"mechanism": "mig", "mig_strategy": "mixed"}}} if with_mig else {}),
                     "control_plane": {"scheduler": "kube-default", "admission": "kueue",
                                       "kueue": {"cluster_queues": cqs}}},
           "tenants": tenants, "workloads": workloads}
    return parse_scenario(doc, source=f"differential seed {seed}")


STRATEGIES = (["LessThanOrEqualToFinalShare", "LessThanInitialShare"], ["LessThanOrEqualToFinalShare"],
              ["LessThanInitialShare"])  # the lists Kueue's Configuration validation accepts
FUNGIBILITY = ("MayStopSearch", "TryNextFlavor")  # v1beta2's names (v1beta1: Borrow / Preempt for MayStopSearch)


def generate_kueue_features(seed: int) -> Scenario:
    rng = random.Random(seed)
    tag = f"f{seed}"
    # Two pools, one flavor each: which flavor Kueue assigned shows as the pool kube-scheduler bound to.
    pools = [{"name": f"{tag}-a", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": rng.choice([4, 8])},
             {"name": f"{tag}-b", "count": 1, "gpu": "A100-SXM4-80GB", "gpus_per_node": 4}]
    flavor_names = [f"{tag}-fa", f"{tag}-fb"]
    fair = rng.random() < 0.6
    weight = (lambda: rng.choice([0, 1, 2])) if fair else (lambda: 1)
    hierarchical = rng.random() < 0.6
    n_cq = rng.randint(2, 4)

    def flavors(share: int, *, borrow: bool) -> list[dict]:
        out = []
        for name, pool in zip(flavor_names, pools):
            quota: dict = {"nominal": rng.randint(0, max(1, pool["gpus_per_node"] // share + 1))}
            if borrow and rng.random() < 0.3:
                quota["borrowing_limit"] = rng.randint(0, 4)
            if borrow and rng.random() < 0.2:
                quota["lending_limit"] = rng.randint(0, quota["nominal"])
            out.append({"name": name, "node_groups": [pool["name"]], "quotas": {"nvidia.com/gpu": quota}})
        return out

    cohorts: list[dict] = []
    if hierarchical:
        root = f"{tag}-root"
        children = [f"{tag}-c{i}" for i in range(rng.randint(1, 2))]
        cohorts.append({"name": root, "flavors": flavors(3, borrow=False), "fair_sharing_weight": weight()})
        for child in children:
            cohort: dict = {"name": child, "parent_name": root, "fair_sharing_weight": weight()}
            if rng.random() < 0.5:
                cohort["flavors"] = flavors(4, borrow=True)
            cohorts.append(cohort)
        homes = children
    else:
        homes = [f"{tag}-org"]
    tenants, cqs = [], []
    for i in range(n_cq):
        name = f"{tag}-q{i}"
        reclaim = rng.choice(["Never", "LowerPriority", "Any", "Any"])
        preemption = {"reclaim_within_cohort": reclaim,
                      "within_cluster_queue": rng.choice(["Never", "LowerPriority", "LowerPriority"])}
        if reclaim != "Never" and rng.random() < 0.3:
            preemption["borrow_within_cohort"] = "LowerPriority"
        cqs.append({"name": name, "cohort": rng.choice(homes), "flavors": flavors(n_cq, borrow=True),
                    "preemption": preemption, "fair_sharing_weight": weight(),
                    "flavor_fungibility": {"when_can_borrow": rng.choice(FUNGIBILITY),
                                           "when_can_preempt": rng.choice(FUNGIBILITY)}})
        tenants.append({"name": name, "weight": 1, "queue": name})
    n_jobs = rng.randint(4, 6)
    workloads = []
    first = [t["name"] for t in rng.sample(tenants, rng.randint(1, n_cq - 1))]
    for j in range(n_jobs):
        # The first half: low priority, from a few queues, borrowing what the others leave. The second
        # half: mostly high priority, mostly from the other queues: they reclaim their quota (preemption
        # in the cohort, by fair share when it is on) or preempt in their own queue.
        early = j < n_jobs // 2
        priority = 0 if early else rng.choice([0, 100, 100])
        tenant = rng.choice(first) if early else rng.choice([t["name"] for t in tenants if t["name"] not in first]
                                                            + [rng.choice(first)])
        workloads.append({"kind": "batch", "name": f"{tag}-j{j}", "tenant": tenant,
                          "duration": "1000h", "priority": priority, "memory_gib": 8,
                          "gpus_per_worker": rng.choice([1, 2, 2, 4]), "workers": rng.choice([1, 1, 1, 2])})
    kueue: dict = {"cluster_queues": cqs, "cohorts": cohorts, "fair_sharing": fair}
    if fair:
        kueue["fair_sharing_preemption_strategies"] = rng.choice(STRATEGIES)
    doc = {"name": f"differential-features-{seed}", "seed": seed, "horizon": "10m",
           "pool": {"node_groups": pools},
           "stack": {"name": f"kueue features differential {seed}", "data_plane": {"mechanism": "whole"},
                     "control_plane": {"scheduler": "kube-default", "admission": "kueue", "kueue": kueue}},
           "tenants": tenants, "workloads": workloads}
    return parse_scenario(doc, source=f"differential features seed {seed}")


def gang_as_job(obj: dict) -> dict:
    """A PyTorchJob (no training operator in the plane) as the batch Job Kueue admits the same way: one
    podset of ``workers`` pods, admitted whole; kube-scheduler then places each pod."""
    if obj["kind"] != "PyTorchJob":
        return obj
    specs = obj["spec"]["pytorchReplicaSpecs"]
    workers = sum(s["replicas"] for s in specs.values())
    template = {**specs["Master"]["template"]}
    template["spec"] = {**template["spec"], "restartPolicy": "Never"}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": obj["metadata"],
            "spec": {"parallelism": workers, "completions": workers, "backoffLimit": 0, "template": template}}


# How the training operator groups a PyTorchJob's pods for the scheduler they name (runPolicy.schedulingPolicy):
# Volcano's PodGroup controller makes the group from the owner's min-member annotation (volcano v1.14.1
# pkg/controllers/podgroup/pg_controller_handler.go getMinMemberFromUpperRes); coscheduling's pods name a
# scheduling.x-k8s.io PodGroup by label (scheduler-plugins pkg/coscheduling).
VOLCANO_MIN_MEMBER = "scheduling.volcano.sh/group-min-member"
COSCHEDULING_POD_GROUP = "scheduling.x-k8s.io/pod-group"


def gang_as_grouped_job(obj: dict) -> list[dict]:
    """A PyTorchJob gang as a batch Job of all its pods, grouped for the gang scheduler its pods name as the
    training operator would group them: minMember = its minAvailable (default: every pod). The PodGroup,
    when the scheduler needs one, comes first."""
    if obj["kind"] != "PyTorchJob":
        return [obj]
    job = gang_as_job(obj)
    template = job["spec"]["template"]
    scheduler = template["spec"].get("schedulerName")
    policy = obj["spec"].get("runPolicy", {}).get("schedulingPolicy", {})
    min_member = policy.get("minAvailable", job["spec"]["parallelism"])
    meta = job["metadata"] = {**job["metadata"]}
    if scheduler == "volcano":
        meta["annotations"] = {**meta.get("annotations", {}), VOLCANO_MIN_MEMBER: str(min_member)}
        return [job]
    if scheduler == "scheduler-plugins-scheduler":
        tmeta = template["metadata"] = {**template.get("metadata", {})}
        tmeta["labels"] = {**tmeta.get("labels", {}), COSCHEDULING_POD_GROUP: meta["name"]}
        group = {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                 "metadata": {"name": meta["name"], "namespace": meta.get("namespace", "default")},
                 "spec": {"minMember": min_member}}
        return [group, job]
    return [job]


def workload_objects(scenario: Scenario) -> list[dict]:
    """Every workload of the scenario as the exporter writes it (the bundle keeps one example per
    class and pool; the differential check needs them all), gangs as batch Jobs."""
    objects = []
    for spec in scenario.workloads:
        single = scenario.model_copy(update={"workloads": [spec]})
        for f in workload_files(single):
            objects += [gang_as_job(o) for o in f.objects if o["kind"] != "ResourceClaimTemplate"]
    return objects
