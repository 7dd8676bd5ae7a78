"""The base policy's last words for a waiting workload, when the cluster sees no reason it cannot fit: the
shipped scenarios never leave such a workload at the horizon (every pass places what fits), so these are
checked against a cluster port that reports no unschedulable reason."""

from __future__ import annotations

from types import SimpleNamespace

from scheduler_core.policies.base import Policy


class _Port(SimpleNamespace):
    def unschedulable(self, wl, siblings_fill=False, wording="available"):
        return None


def _explain(pending: int, nominated_until: float = 0.0) -> str:
    wl = SimpleNamespace(pending=pending, nominated_until=nominated_until, topology_required=None, pods=[])
    return Policy(_Port(now=100.0)).explain(wl)


def test_a_pod_that_fits_waits_for_the_next_cycle():
    assert _explain(pending=1) == "Pending: fits now, waiting for the next scheduling cycle"


def test_a_nominated_pod_waits_for_its_victims():
    assert _explain(pending=1, nominated_until=130.0) == "waiting for preemption victims to terminate (nominated)"


def test_once_its_victims_grace_period_is_over_a_pod_no_longer_waits_for_them():
    # nominated until t=100 (the victims' termination) and it is t=100: the room is the pod's
    assert _explain(pending=1, nominated_until=100.0) == "Pending: fits now, waiting for the next scheduling cycle"


def test_no_pending_pod_is_its_controllers_backoff():
    assert _explain(pending=0) == "no pod pending: its controller recreates the failed pod(s) after a backoff"


class _FitsPort(_Port):
    def pods_that_fit(self, wl, pods):
        return pods


def test_a_podgroup_whose_pods_all_fit_waits_for_the_next_cycle_in_the_base_words():
    # coscheduling: no reason from the cluster, no backoff, no required topology, every pod fits alone
    from scheduler_core.policies.kube import CoschedulingScheduler

    wl = SimpleNamespace(name="pg", pending=2, nominated_until=0.0, topology_required=None, pods=[], backoff_until=0.0)
    assert CoschedulingScheduler(_FitsPort(now=100.0)).explain(wl) == "Pending: fits now, waiting for the next scheduling cycle"
