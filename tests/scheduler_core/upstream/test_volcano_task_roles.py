"""Volcano PodGroups with several task roles, ported: volcano-sh/volcano
pkg/scheduler/actions/allocate/allocate_test.go (TestAllocate, the three cases with ``volcano.sh/task-spec``
roles).  Upstream's node labels (nodeRole master/worker) and pod selectors are node groups here, and each
upstream CPU is a GPU.  A selector that matches no node is stated as a task asking for more GPUs than its
nodes have.  The outcome is which pods of which role bind, and where."""

from tests.scheduler_core.upstream.volcano_harness import run_queue_case

ALLOCATE = "volcano pkg/scheduler/actions/allocate/allocate_test.go TestAllocate"
PLUGINS = ("priority", "gang", "proportion", "nodeorder")


def _allocate(nodes, job):
    _, bound, _ = run_queue_case(nodes, [{"name": "c1"}], [], [job], actions=("allocate",), plugins=PLUGINS)
    return bound


def test_prepredicate_failed_node_selector_does_not_match():
    # pg1 minMember 1, no minTaskMember: the master task fits nowhere, the worker alone makes the gang.
    nodes = [{"name": "worker", "gpus": 2}, {"name": "master", "gpus": 1}]
    job = {"name": "pg1", "queue": "c1", "min": 1, "roles": [
        {"name": "master", "replicas": 1, "min_available": 0, "gpus": 2, "on": "master"},
        {"name": "worker", "replicas": 1, "min_available": 0, "on": "worker"}]}
    assert _allocate(nodes, job) == {"pg1-worker": ["worker"]}, f"{ALLOCATE} / prepredicate failed: node selector does not match"


def test_prepredicate_failed_and_tasks_are_not_used_up_continue_until_min_member_met():
    # minMember 2, minTaskMember master 1 / worker 1, two pods of each on one 1-GPU node per role.
    nodes = [{"name": "master", "gpus": 1}, {"name": "worker", "gpus": 1}]
    job = {"name": "pg1", "queue": "c1", "min": 2, "roles": [
        {"name": "master", "replicas": 2, "min_available": 1, "on": "master"},
        {"name": "worker", "replicas": 2, "min_available": 1, "on": "worker"}]}
    assert _allocate(nodes, job) == {"pg1-master": ["master"], "pg1-worker": ["worker"]}, (
        f"{ALLOCATE} / prepredicate failed and tasks are not used up, continue on until min member meet")


def test_master_min_member_can_not_be_allocated_break_from_allocating():
    # minTaskMember master 2 on a 1-GPU master node: the workers, which would make minMember 2, wait too.
    nodes = [{"name": "master", "gpus": 1}, {"name": "worker", "gpus": 2}]
    job = {"name": "pg1", "queue": "c1", "min": 2, "roles": [
        {"name": "master", "replicas": 2, "min_available": 2, "on": "master"},
        {"name": "worker", "replicas": 2, "min_available": 0, "on": "worker"}]}
    assert _allocate(nodes, job) == {}, f"{ALLOCATE} / master's min member can not be allocated, break from allocating"
