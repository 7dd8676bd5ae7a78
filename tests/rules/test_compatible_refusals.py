""""Compatible with" when a refusal comes first or a handoff hands out less than it advertises: a
project the catalog declares in conflict from another slot, or a VM-only handoff, is refused without
hiding the candidates after it, and a handoff counts as handing out only the units it both
advertises and allocates. Hand-built projects; the `a-` slugs sort first among their slot's
candidates on purpose."""

from __future__ import annotations

import pytest

from placement.rules import SlotName, build_graph, compatible
from placement.rules.synthetic import make_document

VM_ONLY = "It hands GPUs to KubeVirt virtual machines, not to containers; the workload profiles run pods."
EXTRA = [
    make_document("a-vm-plugin", layer="L4", units=["whole_gpu"], roles={"advertise": ["whole_gpu"], "allocate": ["whole_gpu"]},
                  capabilities=["device-discovery", "vm-device-passthrough"]),
    # advertises MIG instances but allocates only whole GPUs
    make_document("half-plugin", layer="L4", units=["whole_gpu", "mig_instance"],
                  roles={"advertise": ["whole_gpu", "mig_instance"], "allocate": ["whole_gpu"]},
                  capabilities=["device-discovery", "device-allocation"]),
    # a scheduler the catalog declares in conflict with a device plugin
    make_document("a-sched", layer="L2", units=["whole_gpu"], roles={"bind": ["whole_gpu"]}, capabilities=["pod-binding"],
                  conflicts=["plugin-a"]),
    make_document("mig-sched", layer="L2", units=["mig_instance"], roles={"bind": ["mig_instance"]}, capabilities=["pod-binding"]),
]


@pytest.fixture
def graph(small_catalog):
    return build_graph([*small_catalog, *EXTRA])


def _fits(result):
    return {(c.slot, c.project.slug): c.reason for c in result.compatible}


def _refused(result):
    return [(r.project, r.reason) for r in result.incompatible]


def test_a_conflict_declared_from_another_slot_is_refused_once_and_the_other_schedulers_still_fit(graph):
    result = compatible(graph, "plugin-a", "training")
    assert _refused(result)[:2] == [
        ("a-sched", "Conflicts with Plugin A (catalog conflicts_with); they cannot share nodes."),
        ("sharer", "Conflicts with Plugin A (catalog conflicts_with); they cannot share nodes."),
    ]
    assert [slug for slot, slug in _fits(result) if slot == SlotName.SCHEDULING_POLICY] == ["mig-sched", "sched-a", "sched-b"]


def test_a_vm_only_handoff_is_refused_without_hiding_the_handoffs_after_it(graph):
    result = compatible(graph, "mig-sched", "training")
    assert _refused(result)[0] == ("a-vm-plugin", VM_ONLY)
    assert _fits(result)[(SlotName.DEVICE_HANDOFF, "plugin-a")] == "Hands out MIG instance, which Mig Sched binds."


def test_a_handoff_hands_out_only_what_it_both_advertises_and_allocates(graph):
    # half-plugin advertises MIG instances but does not allocate them: no MIG scheduler or MIG mechanism fits it
    result = compatible(graph, "half-plugin", "training")
    assert ("mig-sched", "As scheduling policy: no unit in common with Half Plugin, so a contract point cannot hold.") in _refused(result)
    assert ("slicer", "As data-plane resource unit: no unit in common with Half Plugin, so a contract point cannot hold.") in _refused(result)
    assert _fits(result)[(SlotName.SCHEDULING_POLICY, "sched-a")] == "Binds Whole GPU, which Half Plugin hands out."
    # and from the scheduler's side: half-plugin is not offered to a scheduler that binds MIG instances
    assert ("half-plugin", "As device handoff: no unit in common with Mig Sched, so a contract point cannot hold.") in _refused(
        compatible(graph, "mig-sched", "training"))
