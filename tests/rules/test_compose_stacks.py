"""Compose: profile + SLO + pool + constraints -> ranked stacks whose contract points all hold.

The seeds' three end-to-end forms and three control-plane paradigms must come out of the rules and
scoring data (fixtures/rules/), not out of special cases in code.
"""

from __future__ import annotations

import shutil

import pytest
import yaml

from placement.catalog.schemas import ContractPoint
from placement.rules import (
    ComposeRequest,
    Constraints,
    Pool,
    RulesInputError,
    Slo,
    SlotName,
    build_graph,
    compose,
    read_rules,
)

from .conftest import RULES_DIR

A100 = Pool(gpu_model="A100-80GB", gpu_count=8)


def _slot(stack, slot, pool=None):
    found = [a.project.slug if a.project else None for a in stack.slots if a.slot == slot and (pool is None or a.pool == pool)]
    return found[0] if len(found) == 1 else found


def _top(graph, **kwargs):
    result = compose(graph, ComposeRequest(**kwargs))
    assert result.feasible, result.failures
    return result.stacks[0]


# --- the seeds' three forms (seeds/002) --------------------------------------------------------------


# Form A's data plane is "whole GPUs or a hard-partitioned pool" (seeds/002): small gangs of
# slice-sized workers get MIG; the training preset itself (8-GPU NVLink workers) gets whole GPUs.
# Small training jobs (seeds/002 form A): a quarter of a GPU's compute and 16 GiB, so MIG slices the cards
# (2g.20gb); a replica that asks for a whole GPU fills a card and gets whole GPUs (test_whole_card_mig.py).
SMALL_TRAINING = [{"name": "training", "kind": "training", "replicas": 4, "gpus_per_replica": 0.25, "gpu_memory_gib": 16,
                   "gang": True, "tenants": 3}]


def test_form_a_training_with_hard_isolation_is_mig_with_volcano(graph):
    stack = _top(graph, profile="training", slo=Slo(isolation="hard", goal="throughput_first", multi_tenant=True), pool=A100,
                 workloads=SMALL_TRAINING)
    assert _slot(stack, SlotName.DATA_PLANE_UNIT) == "mig"
    assert _slot(stack, SlotName.SCHEDULING_POLICY) == "volcano"
    assert stack.pools[0].unit.value == "mig_instance"
    assert "gang-scheduling" in stack.capabilities


def test_form_b_latency_sensitive_multi_tenant_inference_is_hami_with_kueue(graph):
    stack = _top(graph, profile="online_inference", slo=Slo(isolation="soft", goal="latency_sensitive", multi_tenant=True), pool=A100)
    assert _slot(stack, SlotName.DATA_PLANE_UNIT) == "hami"
    assert _slot(stack, SlotName.DEVICE_HANDOFF) == "hami"
    assert _slot(stack, SlotName.ADMISSION_QUOTA) == "kueue"
    assert stack.pools[0].unit.value == "memory_compute_share"


def test_form_c_mixed_is_mig_and_volcano_vgpu_pools_by_isolation_level_under_volcano(graph):
    stack = _top(graph, profile="mixed", slo=Slo(isolation="soft", goal="throughput_first", multi_tenant=True), pool=A100)
    pools = {p.name: p for p in stack.pools}
    assert set(pools) == {"isolated", "shared"}
    assert pools["isolated"].data_plane == "mig" and pools["isolated"].unit_isolation == "hard"
    # Under Volcano the shared GPUs come from the volcano-vgpu-device-plugin (HAMi-core inside): HAMi's
    # own webhook would hand the pods to hami-scheduler, a second binder (seeds/002 form C, domain-facts §3).
    assert pools["shared"].device_handoff == "volcano-vgpu-device-plugin" and pools["shared"].unit_isolation == "soft"
    assert sum(p.gpus for p in stack.pools) == 8
    assert _slot(stack, SlotName.SCHEDULING_POLICY) == "volcano"
    assert {"mig", "volcano-vgpu-device-plugin", "volcano"} <= set(stack.components) and "hami" not in stack.components


# --- the three control-plane paradigms (seeds/000) ---------------------------------------------------


def test_paradigm_a_single_team_whole_gpus_is_native_kubernetes(graph):
    stack = _top(graph, profile="batch_inference", slo=Slo(isolation="hard", goal="throughput_first", multi_tenant=False),
                 pool=Pool(gpu_model="L40S", gpu_count=2))
    assert _slot(stack, SlotName.ADMISSION_QUOTA) == "resource-quota"
    assert _slot(stack, SlotName.SCHEDULING_POLICY) == "kube-scheduler"
    assert _slot(stack, SlotName.DEVICE_HANDOFF) == "nvidia-device-plugin"
    assert stack.pools[0].unit.value == "whole_gpu"


def test_paradigm_b_training_and_batch_clusters_get_volcano_as_policy_scheduler(graph):
    for pool in (A100, Pool(gpu_model="L40S", gpu_count=16)):
        stack = _top(graph, profile="training", pool=pool)
        assert _slot(stack, SlotName.SCHEDULING_POLICY) == "volcano", pool


def test_paradigm_c_multi_team_shared_pools_get_kueue_with_the_native_scheduler(graph):
    for profile in ("online_inference", "interactive"):
        stack = _top(graph, profile=profile, slo=Slo(isolation="soft", goal="latency_sensitive", multi_tenant=True), pool=A100)
        assert _slot(stack, SlotName.ADMISSION_QUOTA) == "kueue", profile
        assert _slot(stack, SlotName.SCHEDULING_POLICY) == "kube-scheduler", profile


def test_the_forms_follow_the_scoring_data_not_the_code(catalog_documents, tmp_path):
    for path in RULES_DIR.glob("*.yaml"):
        shutil.copy(path, tmp_path / path.name)
    profiles = yaml.safe_load((tmp_path / "profiles.yaml").read_text())
    inference = next(p for p in profiles["profiles"] if p["profile"] == "online_inference")
    for pref in inference["unit_preferences"]:
        if pref["unit"] == "mig_instance":
            pref["points"] = 10
    (tmp_path / "profiles.yaml").write_text(yaml.safe_dump(profiles))
    graph = build_graph(catalog_documents, rules=read_rules(tmp_path))
    stack = _top(graph, profile="online_inference", pool=A100)
    assert _slot(stack, SlotName.DATA_PLANE_UNIT) == "mig"


# --- what every stack guarantees ---------------------------------------------------------------------

REQUESTS = [
    dict(profile="training"),
    dict(profile="online_inference"),
    dict(profile="batch_inference"),
    dict(profile="interactive", pool=Pool(gpu_model="T4", gpu_count=4)),
    dict(profile="mixed"),
    dict(profile="training", constraints=Constraints(keep_default_scheduler=True)),
]


@pytest.mark.parametrize("kwargs", REQUESTS, ids=lambda k: k["profile"])
def test_every_pool_of_every_stack_holds_all_three_contract_points(graph, kwargs):
    result = compose(graph, ComposeRequest(**kwargs))
    assert result.feasible and result.stacks
    for stack in result.stacks:
        for pool in stack.pools:
            checks = {c.point.value: c for c in stack.contracts if c.pool == pool.name}
            assert set(checks) == {"advertise", "bind", "allocate", "quota"}
            assert all(c.holds and c.by and c.reason and c.interface for c in checks.values())
            assert pool.device_handoff in checks["advertise"].by
            assert pool.device_handoff in checks["allocate"].by
            for slug in checks["bind"].by:
                f = graph.projects[slug]
                # a plugin binds what the kube-scheduler it runs inside binds (coscheduling: DRA claims)
                inside = graph.rules.interfaces.get(slug)
                host = graph.projects[inside.binder].role_units(ContractPoint.BIND) if inside and inside.inside else set()
                assert pool.unit in f.role_units(ContractPoint.BIND) or pool.unit in f.units or pool.unit in host


@pytest.mark.parametrize("kwargs", REQUESTS, ids=lambda k: k["profile"])
def test_stacks_exclude_conflicts_on_shared_nodes(graph, kwargs):
    for stack in compose(graph, ComposeRequest(**kwargs)).stacks:
        cluster = [a.project.slug for a in stack.slots if a.project and a.pool is None] + [s.project.slug for s in stack.supporting]
        for pool in stack.pools:
            on_nodes = set(cluster) | {a.project.slug for a in stack.slots if a.project and a.pool == pool.name}
            for slug in on_nodes:
                assert not (graph.projects[slug].conflicts & on_nodes), (stack.title, slug)


@pytest.mark.parametrize("kwargs", REQUESTS, ids=lambda k: k["profile"])
def test_stacks_are_ranked_by_an_explained_score(graph, kwargs):
    stacks = compose(graph, ComposeRequest(**kwargs)).stacks
    scores = [s.score for s in stacks]
    assert scores == sorted(scores, reverse=True)
    for stack in stacks:
        assert abs(sum(i.points for i in stack.score_breakdown) - stack.score) < 1e-6
        assert all(i.reason for i in stack.score_breakdown)
        assert stack.why_rank
        required = {SlotName.ADMISSION_QUOTA, SlotName.SCHEDULING_POLICY, SlotName.DEVICE_HANDOFF}
        assert required <= {a.slot for a in stack.slots if a.project}
        assert all(a.why for a in stack.slots)


def test_conflicting_handoffs_may_serve_different_pools_but_never_one(graph):
    # Both register GPUs on a node (catalog conflicts_with): fine on different pools, never on one.
    pair = ["nvidia-device-plugin", "volcano-vgpu-device-plugin"]
    result = compose(graph, ComposeRequest(profile="mixed", constraints=Constraints(require=pair)))
    assert result.feasible
    stack = result.stacks[0]
    handoffs = {p.name: p.device_handoff for p in stack.pools}
    assert handoffs == {"isolated": "nvidia-device-plugin", "shared": "volcano-vgpu-device-plugin"}


def test_required_projects_pull_in_what_they_require(graph):
    stack = _top(graph, profile="training", constraints=Constraints(require=["nvidia-device-plugin"]))
    assert "nvidia-container-toolkit" in stack.components
    assert stack.supporting or _slot(stack, SlotName.PLATFORM_LIFECYCLE) == "gpu-operator"


def test_keeping_the_default_scheduler_gives_training_a_gang_plugin_inside_it(graph):
    # Since Kubernetes 1.37 kube-scheduler's own GangScheduling plugin gangs through the Workload API (no
    # second component to run, so it ranks first); the Coscheduling plugin inside it stays a ranked choice.
    result = compose(graph, ComposeRequest(profile="training", constraints=Constraints(keep_default_scheduler=True)))
    top = result.stacks[0]
    assert _slot(top, SlotName.SCHEDULING_POLICY) == "kube-scheduler"
    assert {s.project.slug: s.required_by for s in top.supporting}["kubernetes-workload-api"] == "kube-scheduler"
    plugin = next(s for s in result.stacks if _slot(s, SlotName.SCHEDULING_POLICY) == "coscheduling")
    assert "kube-scheduler" in graph.projects["coscheduling"].requires
    assert "kubernetes-workload-api" not in plugin.components


def test_excluded_projects_never_appear(graph):
    result = compose(graph, ComposeRequest(profile="training", constraints=Constraints(exclude=["volcano", "mig"]), limit=10))
    for stack in result.stacks:
        assert not {"volcano", "mig"} & set(stack.components)


def test_a_mixed_pool_too_small_to_split_keeps_one_pool_and_says_so(graph):
    result = compose(graph, ComposeRequest(profile="mixed", pool=Pool(gpu_model="A100-80GB", gpu_count=1)))
    assert result.feasible and len(result.stacks[0].pools) == 1
    assert any("cannot be split" in n for n in result.notes)


def test_an_unknown_gpu_model_is_assumed_not_mig_capable_with_a_note(graph):
    result = compose(graph, ComposeRequest(profile="training", pool=Pool(gpu_model="Z9000", gpu_count=4)))
    assert result.pool.mig_capable is False
    assert any("Z9000" in n for n in result.notes)
    assert all(p.unit.value != "mig_instance" for s in result.stacks for p in s.pools)


# --- impossible constraints: which slot cannot be filled and why ------------------------------------


def test_gang_training_without_a_gang_scheduler_names_the_scheduling_slot(graph):
    # kube-scheduler gangs through the Workload API (Kubernetes >= 1.37): excluding the API too leaves no gang
    result = compose(graph, ComposeRequest(profile="training", constraints=Constraints(
        keep_default_scheduler=True, exclude=["coscheduling", "kubernetes-workload-api"])))
    assert not result.feasible and not result.stacks
    failure = result.failures[0]
    assert failure.slot == SlotName.SCHEDULING_POLICY
    assert "Gang scheduling" in failure.reason
    reasons = {r.project: r.reason for r in failure.rejected}
    assert "default scheduler" in reasons["volcano"] and "excluded" in reasons["coscheduling"]
    assert "only through kubernetes-workload-api" in reasons["kube-scheduler"]


def test_mig_on_gpus_that_cannot_partition_names_the_data_plane_slot(graph):
    result = compose(graph, ComposeRequest(profile="training", pool=Pool(gpu_model="L40S", gpu_count=8),
                                           workloads=SMALL_TRAINING, constraints=Constraints(require=["mig"])))
    assert not result.feasible
    assert result.failures[0].slot == SlotName.DATA_PLANE_UNIT
    assert "MIG-capable" in result.failures[0].reason


def test_two_required_projects_that_conflict_in_one_pool_are_refused(graph):
    result = compose(graph, ComposeRequest(profile="online_inference", constraints=Constraints(require=["hami", "nvidia-device-plugin"])))
    assert not result.feasible
    assert "conflict" in result.failures[0].reason


def test_no_device_handoff_left_names_the_handoff_slot(graph):
    handoffs = [s for s in graph.slot_candidates[SlotName.DEVICE_HANDOFF]]
    result = compose(graph, ComposeRequest(profile="online_inference", constraints=Constraints(exclude=handoffs)))
    assert not result.feasible
    assert result.failures[0].slot == SlotName.DEVICE_HANDOFF


# --- bad input ----------------------------------------------------------------------------------------


def test_unknown_profile_and_projects_are_field_errors(graph):
    with pytest.raises(RulesInputError) as exc:
        compose(graph, ComposeRequest(profile="quantum", constraints=Constraints(require=["volcan"], exclude=["kueue"])))
    assert set(exc.value.errors) == {"profile", "constraints.require"}
    assert "training" in exc.value.errors["profile"][0]


def test_a_project_both_required_and_excluded_is_a_field_error(graph):
    with pytest.raises(RulesInputError) as exc:
        compose(graph, ComposeRequest(profile="training", constraints=Constraints(require=["volcano"], exclude=["volcano"])))
    assert "Both required and excluded" in exc.value.errors["constraints.require"][0]


def test_a_raw_request_body_is_validated_into_field_errors(graph):
    with pytest.raises(RulesInputError) as exc:
        compose(graph, {"profile": "training", "pool": {"gpu_model": "A100-80GB", "gpu_count": 0}, "slo": {"isolation": "iron"}})
    assert {"pool.gpu_count", "slo.isolation"} <= set(exc.value.errors)
    result = compose(graph, {"profile": "training", "slo": {"isolation": "hard"}, "limit": 2})
    assert result.feasible and len(result.stacks) == 2


def test_a_required_capability_only_an_optional_slot_offers_is_placed(catalog_documents, tmp_path):
    for path in RULES_DIR.glob("*.yaml"):
        shutil.copy(path, tmp_path / path.name)
    profiles = yaml.safe_load((tmp_path / "profiles.yaml").read_text())
    inference = next(p for p in profiles["profiles"] if p["profile"] == "online_inference")
    inference["required_capabilities"] = [{"capability": "workload-definition", "why": "Serving groups are declared as one unit."}]
    (tmp_path / "profiles.yaml").write_text(yaml.safe_dump(profiles))
    graph = build_graph(catalog_documents, rules=read_rules(tmp_path))
    result = compose(graph, ComposeRequest(profile="online_inference"))
    assert result.feasible
    for stack in result.stacks:
        assert "workload-definition" in stack.capabilities
    assert _slot(result.stacks[0], SlotName.WORKLOAD_UNIT) is not None


@pytest.mark.parametrize("profile", ["training", "online_inference", "batch_inference", "interactive", "mixed"])
def test_no_two_ranked_stacks_share_a_title(graph, profile):
    stacks = compose(graph, ComposeRequest(profile=profile, limit=10)).stacks
    titles = [s.title for s in stacks]
    assert len(set(titles)) == len(titles), titles


def test_volcano_queues_what_it_schedules_so_a_training_stack_needs_no_second_queue(graph):
    # domain-facts §5: Volcano's Queue (capability, deserved) admits the PodGroups Volcano schedules;
    # Kueue on top would be one more component for the same job.
    stack = _top(graph, profile="training")
    assert _slot(stack, SlotName.SCHEDULING_POLICY) == "volcano"
    assert _slot(stack, SlotName.ADMISSION_QUOTA) == "volcano"
    assert "kueue" not in stack.components
