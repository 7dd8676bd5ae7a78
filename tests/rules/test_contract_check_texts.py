"""What a returned stack's contract checks tell a reader: each names who does it, how (the catalog's own
`how` text for that contract point) and where the facts come from (mutation audit gaps)."""

from __future__ import annotations

from placement.rules import ComposeRequest, Pool, build_graph, clear_graph_cache, compose
from placement.rules.models import CheckPoint


def _checks(stack, point):
    return [c for c in stack.contracts if c.point == point]


def test_each_check_of_a_stack_ends_with_how_its_project_does_that_contract_point(graph):
    stack = compose(graph, {"profile": "training", "limit": 1}).stacks[0]
    handoff = next(c.by[0] for c in _checks(stack, CheckPoint.ADVERTISE))
    binder = next(c.by[0] for c in _checks(stack, CheckPoint.BIND))
    h, b = graph.projects[handoff], graph.projects[binder]
    for check, facts, point in ((_checks(stack, CheckPoint.ADVERTISE)[0], h, "advertise"),
                                (_checks(stack, CheckPoint.ALLOCATE)[0], h, "allocate"),
                                (_checks(stack, CheckPoint.BIND)[0], b, "bind")):
        how = next(v for k, v in facts.role_how.items() if k.value == point)
        assert how and check.reason.endswith(how), (point, check.reason)


def test_a_bind_check_without_a_webhook_rewrite_adds_no_note(graph):
    stack = compose(graph, {"profile": "training", "limit": 1}).stacks[0]
    bind = _checks(stack, CheckPoint.BIND)[0]
    assert "mutating webhook" not in bind.reason and "still have one binder" not in bind.reason
    assert bind.reason.startswith("One binder (spec.schedulerName: ")


def test_checks_of_projects_without_an_interfaces_entry_cite_the_catalog(small_catalog):
    # interfaces.yaml knows none of the synthetic projects: their facts come from the catalog's contract points
    clear_graph_cache()
    graph = build_graph(small_catalog)
    result = compose(graph, ComposeRequest(profile="batch_inference", pool=Pool(gpu_model="A100-80GB", gpu_count=8)))
    assert result.feasible, result.failures
    stack = result.stacks[0]
    quota = _checks(stack, CheckPoint.QUOTA)
    assert quota and all(c.source == "catalog contract_points" for c in quota)
    assert all(c.source == "catalog contract_points" for c in _checks(stack, CheckPoint.ADVERTISE))
    admission = _checks(stack, CheckPoint.WORKLOAD_ADMISSION)
    assert [c.source for c in admission] == ["catalog"]
    assert admission[0].reason.endswith("counts pods at creation; no suspend/admit step is needed.")
