"""The search ranks (scheduling, admission) x pool cores by a fast score built from precomputed parts
(`combine`) and evaluates only the best ones exactly. The fast score of a core that holds is its exact
score: otherwise the search would keep the wrong cores on a catalog large enough to prune."""

from __future__ import annotations

import pytest

from placement.catalog.schemas import ResourceUnit
from placement.rules import ComposeRequest, SlotName
from placement.rules.context import Candidate, PoolOption, keeps_default_scheduler, resolve
from placement.rules.scoring import combine, evaluate, make_part


@pytest.mark.parametrize(("profile", "sched", "adm"), [
    ("training", "volcano", "kueue"),
    ("training", "kai-scheduler", "kai-scheduler"),
    ("batch_inference", "kube-scheduler", "kueue"),
])
def test_the_fast_score_of_a_core_is_its_exact_score(graph, profile, sched, adm):
    ctx = resolve(graph, ComposeRequest(profile=profile))
    spec = ctx.pools[0]
    opt = PoolOption(pool=spec, unit=ResourceUnit.WHOLE_GPU, data_plane=None, handoff="nvidia-device-plugin", local=0.0)
    rules = graph.rules
    cluster = make_part(ctx, [(SlotName.SCHEDULING_POLICY, sched), (SlotName.ADMISSION_QUOTA, adm)],
                        ctx.profile.default_scheduler_points.points if keeps_default_scheduler(ctx, sched) else 0.0)
    pool = make_part(ctx, [(SlotName.DEVICE_HANDOFF, opt.handoff)],
                     ctx.unit_total.get(opt.unit, 0.0)
                     + (rules.native_handoff.points if ctx.facts(opt.handoff).primary_unit == opt.unit else 0.0))
    fast, reason = combine(ctx, cluster, sched, adm, (pool,), (opt,))

    core = Candidate(cluster={SlotName.ADMISSION_QUOTA: adm, SlotName.SCHEDULING_POLICY: sched}, pools=(opt,))
    assert evaluate(ctx, core) is None
    assert reason is None
    assert fast == core.score, (fast, core.score)
