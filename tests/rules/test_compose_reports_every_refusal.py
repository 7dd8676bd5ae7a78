"""Compose reports every refusal a reader needs: each required project that cannot take part (not only
the first), the slot a conflict kept a handoff out of, and how many combinations each reason excluded."""

from __future__ import annotations

from placement.rules import SlotName, build_graph, clear_graph_cache, compose
from placement.rules.synthetic import make_document


def test_a_required_project_that_fits_no_slot_is_reported_after_one_that_fits(graph):
    result = compose(graph, {"profile": "training",
                             "constraints": {"require": ["nvidia-device-plugin", "nvidia-container-toolkit"]}})
    assert not result.feasible
    assert [f.reason for f in result.failures] == [
        "nvidia-container-toolkit is required but cannot take part: "
        "Its placement matches no slot's layer, kind and contract role."
    ]


def test_a_handoff_kept_out_by_a_conflicting_data_plane_is_refused_in_the_handoff_slot(graph):
    # volcano-vgpu-device-plugin and HAMi both manage the same GPUs' shares: one per node. Among the four
    # best stacks it has none of its own (its best, with Volcano, is fifth).
    result = compose(graph, {"profile": "batch_inference", "slo": {"isolation": "soft"}, "limit": 4})
    why = {w.project: w for w in result.why_not}["volcano-vgpu-device-plugin"]
    assert (why.slot, why.rule, why.reason) == (
        SlotName.DEVICE_HANDOFF, "conflict", "volcano-vgpu-device-plugin conflicts with hami.")


def test_each_exclusion_counts_every_combination_it_removed(graph):
    # The Workload API excluded keeps kube-scheduler out of the gang classes' search (before Kubernetes 1.37 it
    # had no gang): its extra combinations would push this count out of the ten listed, not change it.
    result = compose(graph, {"profile": "mixed", "slo": {"isolation": "hard", "goal": "latency_sensitive"},
                             "constraints": {"exclude": ["kubernetes-workload-api"]}})
    assert ("runai requires the scheduler kai-scheduler, but this stack's scheduler is volcano (2 combinations)"
            in result.excluded), result.excluded


def test_a_project_refused_for_a_conflict_and_for_a_broken_contract_is_told_the_conflict():
    # The conflict is the catalog's (no choice of scheduler changes it), the broken Bind depends on the
    # scheduler chosen: a reader is told the conflict first. Here HAMi hands out MIG slices but conflicts
    # with the only MIG mechanism, and as the data plane of its own shares its webhook would give the pods
    # to hami-scheduler under Volcano (interfaces.yaml: rewrites_scheduler_name).
    documents = [
        make_document("queue-w", layer="L1", units=["whole_gpu", "mig_instance"],
                      roles={"bind": ["whole_gpu", "mig_instance"]}, capabilities=["per-team-quota", "admission-control"]),
        make_document("volcano", layer="L2", units=["whole_gpu", "mig_instance"],
                      roles={"bind": ["whole_gpu", "mig_instance"]}, capabilities=["pod-binding"]),
        make_document("plugin-w", layer="L4", units=["whole_gpu", "mig_instance"],
                      roles={"advertise": ["whole_gpu", "mig_instance"], "allocate": ["whole_gpu", "mig_instance"]},
                      capabilities=["device-discovery", "device-allocation"]),
        make_document("slicer-w", kind="mechanism", layer="L4", units=["mig_instance"], capabilities=["hardware-partitioning"]),
        make_document("hami", layer="L4", units=["memory_compute_share", "mig_instance"],
                      roles={"advertise": ["mig_instance"], "allocate": ["mig_instance"]},
                      capabilities=["gpu-sharing", "device-discovery", "device-allocation"], conflicts=["slicer-w"]),
        make_document("share-plugin-w", layer="L4", units=["memory_compute_share"],
                      roles={"advertise": ["memory_compute_share"], "allocate": ["memory_compute_share"]},
                      capabilities=["device-discovery", "device-allocation"]),
    ]
    clear_graph_cache()
    result = compose(build_graph(documents), {"profile": "batch_inference", "slo": {"isolation": "soft"}})
    assert result.feasible and all("hami" not in s.components for s in result.stacks)
    why = {w.project: w for w in result.why_not}
    assert (why["hami"].slot, why["hami"].rule, why["hami"].reason) == (
        SlotName.DEVICE_HANDOFF, "conflict", "hami conflicts with slicer-w.")
    # its partner is told the contract, from its own slot
    assert (why["share-plugin-w"].slot, why["share-plugin-w"].rule) == (SlotName.DEVICE_HANDOFF, "contract")
    assert why["share-plugin-w"].reason.startswith("Paired with hami as the data plane: Bind fails")
