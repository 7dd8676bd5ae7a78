"""Scenario files: field-level errors, references, units, YAML and JSON."""

import json

import pytest

from scheduler_core.scenario import ScenarioError, load_scenario, parse_scenario
from tests.scheduler_core.conftest import minimal


def errors_of(doc):
    with pytest.raises(ScenarioError) as exc:
        parse_scenario(doc)
    return dict(exc.value.errors)


def test_minimal_scenario_parses_with_durations_in_units():
    sc = parse_scenario(minimal(horizon="1.5h"))
    assert sc.horizon == 5400.0
    assert sc.workloads[0].duration == 3600.0


def test_shape_errors_are_reported_per_field():
    doc = minimal(workloads=[{"kind": "training", "name": "a", "duration": "1x", "workers": 0},
                             {"kind": "inference", "name": "b", "model_memory_gib": 1,
                              "service_time": {"mean": "50ms"}, "slo": {"p99": "1s"}, "bogus": 1}])
    errs = errors_of(doc)
    assert "duration" in errs["workloads.0.duration"]
    assert "greater than or equal to 1" in errs["workloads.0.workers"]
    assert "Extra inputs" in errs["workloads.1.bogus"]


def test_mig_layout_errors_point_at_the_layout_field():
    doc = minimal(pool={"node_groups": [{"name": "dgx", "gpu": "A100-SXM4-40GB",
                                         "mig": [{"layout": ["3g.20gb@0", "2g.10gb@2"]}]}]})
    errs = errors_of(doc)
    assert "overlaps 3g.20gb@0" in errs["pool.node_groups.0.mig.0.layout"]


def test_cross_references_are_checked():
    doc = minimal(workloads=[{"kind": "batch", "name": "j", "duration": 60, "node_group": "nope", "tenant": "t"}],
                  events=[{"at": 0, "kind": "gpu_fault", "node": "dgx-9"}],
                  stack={"control_plane": {"scheduler": "volcano"}})
    errs = errors_of(doc)
    assert "unknown node group 'nope'" in errs["workloads.0.node_group"]
    assert "unknown node 'dgx-9'" in errs["events.0.node"]
    assert any("not a Volcano queue" in m for m in errs.values())


def test_mechanism_constraints_from_the_facts():
    mig_pool = {"node_groups": [{"name": "dgx", "mig": [{"layout": "all-balanced"}]}]}
    errs = errors_of(minimal(pool=mig_pool, stack={"data_plane": {"mechanism": "mps"}}))
    assert "MPS is not supported on MIG" in errs["pool.node_groups.0.mig"]
    errs = errors_of(minimal(stack={"data_plane": {"mechanism": "time-slicing", "time_slicing": {"replicas": 1}}}))
    assert "greater than or equal to 2" in errs["stack.data_plane.time_slicing.replicas"]
    errs = errors_of(minimal(stack={"control_plane": {"admission": "kueue"}}))
    assert "kueue section" in errs["stack.control_plane"]


def test_load_reads_yaml_and_json_and_reports_unreadable_files(tmp_path):
    y = tmp_path / "s.yaml"
    y.write_text("name: t\nhorizon: 1h\npool: {node_groups: [{name: a}]}\n")
    assert load_scenario(y).name == "t"
    j = tmp_path / "s.json"
    j.write_text(json.dumps(minimal()))
    assert load_scenario(j).workloads[0].name == "j"
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(ScenarioError, match="not valid YAML"):
        load_scenario(bad)
    with pytest.raises(ScenarioError, match="cannot read"):
        load_scenario(tmp_path / "missing.yaml")


def test_the_whole_scenario_is_bounded_not_only_each_node_group():
    from scheduler_core.scenario.limits import SCENARIO_LIMITS

    groups = [{"name": f"g{i}", "count": 4096, "gpus_per_node": 16} for i in range(153)]
    with pytest.raises(ScenarioError) as exc:
        parse_scenario(minimal(pool={"node_groups": groups}))
    messages = [message for loc, message in exc.value.errors if loc == "pool.node_groups"]
    assert messages == ["153 node groups; a scenario may have at most 64",
                        "626,688 nodes; a scenario may have at most 5,000",
                        "10,027,008 GPUs; a scenario may have at most 65,536"]
    flood = [{"kind": "batch", "name": "flood", "count": 100_000_000, "duration": 60}]
    assert "100,000,000 training/batch jobs" in errors_of(minimal(workloads=flood))["workloads"]
    events = [{"at": 1, "kind": "node_failure", "node": "dgx-0", "duration": 1}] * (SCENARIO_LIMITS["events"] + 1)
    assert "events; a scenario may have at most 10,000" in errors_of(minimal(events=events))["events"]


@pytest.mark.parametrize("data_plane", [{"mechanism": "time-slicing", "time_slicing": {"replicas": 111}},
                                        {"mechanism": "hami", "hami": {"device_split_count": 111}}])
def test_a_gpu_shares_at_most_as_many_slots_as_a_node_runs_pods(data_plane):
    errs = errors_of(minimal(stack={"data_plane": data_plane}))
    assert any("less than or equal to 110" in message for message in errs.values()), errs


def _kai(queues, tenant_queue="x"):
    return minimal(stack={"control_plane": {"scheduler": "kai", "kai": {"queues": queues}}},
                   tenants=[{"name": "t", "queue": tenant_queue}],
                   workloads=[{"kind": "batch", "name": "j", "duration": 60, "tenant": "t"}])


def test_a_kai_queue_hierarchy_with_a_parent_cycle_is_refused_at_the_queue_that_closes_it():
    # Kubernetes queues form a tree; a cycle has no root, so its queues would get no fair share at all.
    errs = errors_of(_kai([{"name": "x"}, {"name": "a", "parent": "b"}, {"name": "b", "parent": "a"}]))
    assert errs["stack.control_plane.kai.queues.1.parent"] == "parent cycle: a -> b -> a"
    errs = errors_of(_kai([{"name": "x"}, {"name": "self", "parent": "self"}]))
    assert errs["stack.control_plane.kai.queues.1.parent"] == "parent cycle: self -> self"


@pytest.mark.parametrize("stack, where, what", [
    ({"control_plane": {"scheduler": "kai", "kai": {"queues": [{"name": "x"}, {"name": "x", "quota": 8}]}}},
     "stack.control_plane.kai.queues", "KAI queue"),
    ({"control_plane": {"scheduler": "volcano", "volcano": {"queues": [{"name": "x"}, {"name": "x", "weight": 3}]}}},
     "stack.control_plane.volcano.queues", "Volcano queue"),
    ({"control_plane": {"admission": "kueue", "kueue": {"cluster_queues": [
        {"name": "x", "flavors": [{"name": "f", "quotas": {"nvidia.com/gpu": 8}}]},
        {"name": "x", "flavors": [{"name": "f", "quotas": {"nvidia.com/gpu": 4}}]}]}}},
     "stack.control_plane.kueue.cluster_queues", "ClusterQueue"),
])
def test_two_queues_of_one_name_are_refused_since_kubernetes_keeps_one_object_per_name(stack, where, what):
    errs = errors_of(minimal(stack=stack, tenants=[{"name": "t", "queue": "x"}],
                             workloads=[{"kind": "batch", "name": "j", "duration": 60, "tenant": "t"}]))
    assert errs[where] == f"{what} names must be unique: x"
