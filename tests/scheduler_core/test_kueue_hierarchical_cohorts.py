"""Kueue's hierarchical cohorts in the scenario format (``kueue.cohorts``: Cohort objects with
``parent_name``, their own quota and fair-sharing weight): the quota a ClusterQueue can reach through its
ancestors, Kueue's pending words with those figures, refused cycles, and the flat cohort as a one-level
tree (the upstream tables are in tests/scheduler_core/upstream/test_kueue_hierarchical_cohorts.py)."""

from __future__ import annotations

import pytest

from scheduler_core import simulate
from tests.scheduler_core.conftest import minimal
from tests.scheduler_core.test_policies import ONE_NODE, cq, job, kueue
from tests.scheduler_core.test_scenario_schema import errors_of
from tests.scheduler_core.upstream import test_kueue_fair_preemption as flat_fair
from tests.scheduler_core.upstream import test_kueue_preemption as flat_classic
from tests.scheduler_core.upstream.kueue_harness import cohort, run_case, run_fair_case

PREFIX = "couldn't assign flavors to pod set main: "


def _quota(nominal, **limits):
    return [{"name": "a100", "quotas": {"nvidia.com/gpu": {"nominal": nominal, **limits}}}]


def run(cqs, cohorts, docs):
    tenants = sorted({d["tenant"] for d in docs} | {c["name"] for c in cqs})
    return simulate(minimal(pool=ONE_NODE, workloads=docs, stack=kueue(cqs, cohorts=cohorts),
                            tenants=[{"name": t, "queue": t} for t in tenants]))


def outcome(r):
    return {w.name: (w.start, w.pending_reason if w.start is None else None) for w in r.workloads}


# org (2 GPUs) holds team (2, borrowing at most 1 from org) which holds ClusterQueue a (2).
ORG = [{"name": "org", "flavors": _quota(2)},
       {"name": "team", "parent_name": "org", "flavors": _quota(2, borrowing_limit=1)}]


def test_a_cluster_queue_borrows_through_its_cohorts_up_to_their_borrowing_limit():
    r = run([cq("a", 2, "team")], ORG, [job("five", 5), job("six", 6, at=10)])
    assert outcome(r) == {"five": (0.0, None), "six": (None, PREFIX + (
        "insufficient quota for nvidia.com/gpu in flavor a100, request > maximum capacity (6 > 5)"))}
    admit = next(e.detail for e in r.events.entries if e.kind == "admit")
    assert admit == "ClusterQueue a, flavor a100 (borrowing)"


def test_a_cohort_lending_limit_keeps_its_quota_from_the_rest_of_the_tree():
    # team lends org only 1 of its subtree's 4 GPUs: b, beside team under org, reaches org's 2 and that 1.
    cohorts = [{"name": "org", "flavors": _quota(2)},
               {"name": "team", "parent_name": "org", "flavors": _quota(2, lending_limit=1)}]
    r = run([cq("a", 2, "team"), cq("b", 0, "org")], cohorts, [job("b-four", 4, tenant="b"), job("b-three", 3,
                                                                                                tenant="b", at=10)])
    assert outcome(r) == {"b-three": (10.0, None), "b-four": (None, PREFIX + (
        "insufficient quota for nvidia.com/gpu in flavor a100, request > maximum capacity (4 > 3)"))}


def test_what_the_tree_still_lends_is_its_unused_quota():
    # The tree holds 6 GPUs (org 2, team 2, a 2); b, under org, runs 3: a's 4-GPU job finds the other 3.
    r = run([cq("a", 2, "team"), cq("b", 0, "org")], ORG,
            [job("b1", 3, tenant="b", dur="8h"), job("big", 4, at=10)])
    assert outcome(r)["big"] == (None, PREFIX + "insufficient unused quota for nvidia.com/gpu in flavor a100, "
                                                "1 more needed")


def test_cohort_parent_cycles_and_duplicate_names_are_refused():
    def doc(cohorts):
        return minimal(stack=kueue([cq("a", 1, "x")], cohorts=cohorts), tenants=[{"name": "t", "queue": "a"}],
                       workloads=[{"kind": "batch", "name": "j", "duration": 60, "tenant": "t"}])
    errs = errors_of(doc([{"name": "x", "parent_name": "y"}, {"name": "y", "parent_name": "x"}]))
    assert errs["stack.control_plane.kueue.cohorts.0.parent_name"] == "parent cycle: x -> y -> x"
    errs = errors_of(doc([{"name": "x"}, {"name": "x"}]))
    assert errs["stack.control_plane.kueue.cohorts"] == "Cohort names must be unique: x"


# A flat cohort is a one-level tree: every flat upstream case gives the same victims through the tree
# (forced on by an unrelated Cohort object).
MARKER = [cohort("unrelated")]


@pytest.mark.parametrize("name,cqs,weights,strategies,admitted,incoming,want", flat_fair.CASES,
                         ids=[c[0] for c in flat_fair.CASES])
def test_flat_fair_sharing_cases_give_the_same_victims_through_the_tree(name, cqs, weights, strategies, admitted,
                                                                        incoming, want):
    assert run_fair_case(cqs, admitted, incoming, weights, strategies, cohorts=MARKER) == want, name


@pytest.mark.parametrize("name,cqs,admitted,incoming,want", flat_classic.CASES,
                         ids=[c[0] for c in flat_classic.CASES])
def test_flat_classic_cases_give_the_same_victims_through_the_tree(name, cqs, admitted, incoming, want):
    assert run_case(cqs, admitted, incoming, cohorts=MARKER) == want, name


def test_a_synthetic_week_gives_the_same_decisions_through_the_tree():
    # The synthetic Kueue week (8 ClusterQueues in one cohort, GPUs, cpu and memory quotas, reclaim): the same
    # admissions and preemptions through the cohort tree, apart from the paths the tree's messages name.
    from scheduler_core import synthetic_scenario

    doc = synthetic_scenario(nodes=32, jobs=1200, services=10, days=3, seed=3, stack="kueue", host_resources=True)
    doc = doc.model_dump() if hasattr(doc, "model_dump") else doc
    flat = simulate(doc)
    doc["stack"]["control_plane"]["kueue"]["cohorts"] = MARKER
    tree = simulate(doc)

    def decisions(r):
        return [(e.t, e.kind, e.workload, e.detail.split("; preemptor path")[0]) for e in r.events.entries]

    assert sum(1 for e in flat.events.entries if e.kind == "preempt") > 0
    assert decisions(tree) == decisions(flat)
