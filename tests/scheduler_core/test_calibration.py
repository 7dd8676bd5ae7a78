"""Each published interference figure (domain-facts §7.2) is reproduced within 10% on its setup."""

import pytest

from scheduler_core.calibration import CHECKS, TOLERANCE, _speeds


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: getattr(c, "__name__", "check"))
def test_published_figure_is_reproduced_within_ten_percent(check):
    row = check()
    assert abs(row.simulated / row.published - 1.0) <= TOLERANCE, row


def test_compute_bound_tenants_rank_mps_over_mig_over_time_slicing_like_the_measurements():
    tenant = {"compute_fraction": 1.0}
    mps = sum(_speeds({"mechanism": "mps", "mps": {"replicas": 2}}, [tenant] * 2))
    mig = sum(_speeds({"mechanism": "mig"}, [tenant] * 2, ["3g.40gb@0", "3g.40gb@4"]))
    ts = sum(_speeds({"mechanism": "time-slicing", "time_slicing": {"replicas": 2}}, [tenant] * 2))
    hami = sum(_speeds({"mechanism": "hami"}, [tenant] * 2))
    assert mps > mig > ts
    assert hami == pytest.approx(ts, rel=0.01)


def test_a_memory_bound_tenant_gets_only_its_mig_slices_bandwidth_but_all_of_a_time_slice():
    tenant = {"compute_fraction": 0.2, "memory_bandwidth_fraction": 1.0}
    mig = _speeds({"mechanism": "mig"}, [tenant], ["1g.10gb@0"])[0]
    ts = _speeds({"mechanism": "time-slicing", "time_slicing": {"replicas": 2}}, [tenant])[0]
    assert mig == pytest.approx(1 / 8) and ts == pytest.approx(1.0)
