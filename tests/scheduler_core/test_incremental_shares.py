"""The queueing stacks' kept splits and totals (issue 34) give exactly what a fresh computation gives."""

from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler_core.metrics import KeptWaterFill, water_fill
from scheduler_core.policies.volcano_inqueue import updated_usage
from scheduler_core.resources import add_into

QUEUES = ["a", "b", "c", "d"]
demand = st.one_of(st.integers(0, 2000).map(float), st.floats(0.0, 2000.0, allow_nan=False))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([512.0, 1024.0, 700.5]), st.lists(demand, min_size=4, max_size=4)),
                min_size=1, max_size=12),
       st.lists(st.sampled_from([1.0, 2.0, 3.0]), min_size=4, max_size=4))
def test_a_kept_water_fill_gives_the_same_split_as_a_fresh_one_float_for_float(calls, ws):
    weights = dict(zip(QUEUES, ws))
    kept = KeptWaterFill()
    for capacity, demands in calls:
        d = dict(zip(QUEUES, demands))
        assert kept(capacity, d, weights) == water_fill(capacity, d, weights)


@settings(max_examples=200, deadline=None)
@given(st.lists(demand, min_size=4, max_size=4),
       st.lists(st.tuples(st.integers(0, 3), st.floats(-50.0, 300.0, allow_nan=False)), min_size=1, max_size=30),
       st.sampled_from([256.0, 1024.0, 999.9]))
def test_a_kept_water_fill_follows_one_queue_s_demand_as_it_grows_and_shrinks(start, changes, capacity):
    # a backlogged queue's demand moves while the others stay: the kept split is reused where exact
    weights = {"a": 1.0, "b": 2.0, "c": 1.0, "d": 3.0}
    kept, d = KeptWaterFill(), dict(zip(QUEUES, start))
    for i, delta in changes:
        d[QUEUES[i]] = max(0.0, d[QUEUES[i]] + delta)
        assert kept(capacity, dict(d), weights) == water_fill(capacity, dict(d), weights)


def _recount(members):
    acc = {}
    for uid in sorted(members):
        add_into(acc, members[uid].request.share, members[uid].pending)
    return acc


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 6), st.integers(0, 9)), min_size=1, max_size=40))
def test_an_updated_inqueue_usage_equals_the_recount_in_uid_order(steps):
    # jobs join, place pods (their pending pods change) and leave (pending 0 here: it left the queue);
    # a job's request is fixed for its life (workloads.Workload), its quantities whole or halves
    gpus = {1: 1.0, 2: 2.0, 3: 8.0, 4: 0.5, 5: 4.0, 6: 1.0}
    jobs = {uid: SimpleNamespace(group=None, pending=0, request=SimpleNamespace(
        share={"nvidia.com/gpu": g, "cpu": 12.0 * g, "memory": 110.0 * g})) for uid, g in gpus.items()}
    members, counted, acc = {}, {}, {}
    for uid, pending in steps:
        jobs[uid].pending = pending
        if pending == 0:
            members.pop(uid, None)
        else:
            members[uid] = jobs[uid]
        acc = updated_usage(acc, members, counted)
        assert acc is not None
        want = _recount(members)
        assert {r: acc.get(r, 0.0) for r in want} == want and all(x == 0.0 for r, x in acc.items() if r not in want)


def test_an_inqueue_usage_with_a_quantity_that_may_round_asks_for_a_recount():
    members = {1: SimpleNamespace(group=None, pending=3, request=SimpleNamespace(share={"cpu": 0.1}))}
    assert updated_usage({}, members, {}) is None
