"""Where overlap.py decides a compare verdict: capabilities in common make two projects on
different layers rivals only where both sit on the layer that owns them; two device handoffs are
alternatives per device when they are declared in conflict even over a unit they share, and a
handoff hands over only what it both advertises and allocates; only node handoffs (L4) are
alternatives; the "two binders" note names every handoff the other scheduler does bind. Hand-built
projects and interface entries."""

from __future__ import annotations

import pytest

from placement.rules import Verdict, build_graph, builtin_rules
from placement.rules.synthetic import make_document
from tests.rules.compare_helpers import pair_of

L4 = "L4 Node allocation and device handoff"
WHOLE = {"advertise": ["whole_gpu"], "allocate": ["whole_gpu"]}
SHARE = ["memory_compute_share"]
INTERFACES = {
    "share-hook": {"rewrites_scheduler_name": "hook-scheduler", "source": "Share Hook chart"},
    "alt-share": {"bound_by": ["binder-a"], "source": "Alt Share README"},
    "alt-share-2": {"bound_by": ["binder-a"], "source": "Alt Share 2 README"},
    "binder-a": {"binder": "binder-a", "source": "Binder A docs"},
}
DOCUMENTS = [
    # both do gang scheduling and bin packing, which L2 owns; only one of them sits on L2
    make_document("queue-g", layer="L1", units=["whole_gpu"], capabilities=["gang-scheduling", "bin-packing"]),
    make_document("sched-g", layer="L2", units=["whole_gpu"], capabilities=["gang-scheduling", "bin-packing"]),
    # device handoffs
    make_document("plugin-w", layer="L4", units=["whole_gpu"], roles=WHOLE, capabilities=["device-discovery", "device-allocation"]),
    make_document("plugin-x", layer="L4", units=["whole_gpu"], roles=WHOLE, capabilities=["device-discovery", "device-allocation"],
                  conflicts=["plugin-w"]),
    make_document("plugin-y", layer="L4", units=["whole_gpu"], roles=WHOLE, capabilities=["device-discovery", "device-allocation"]),
    make_document("mig-plugin", layer="L4", units=["mig_instance"], roles={"advertise": ["mig_instance"], "allocate": ["mig_instance"]},
                  capabilities=["device-discovery", "device-allocation"]),
    # advertises MIG instances but allocates only whole GPUs
    make_document("half-plugin", layer="L4", units=["whole_gpu", "mig_instance"],
                  roles={"advertise": ["whole_gpu", "mig_instance"], "allocate": ["whole_gpu"]},
                  capabilities=["device-discovery", "device-allocation"]),
    # advertises and allocates devices, but decided on the scheduling layer
    make_document("claim-sched", layer="L3", units=["dra_device"], roles={"advertise": ["dra_device"], "allocate": ["dra_device"]},
                  capabilities=["device-allocation"]),
    # a webhook handoff and a scheduler that binds two other handoffs
    make_document("share-hook", layer="L4", units=SHARE, roles={"advertise": SHARE, "allocate": SHARE},
                  capabilities=["gpu-sharing", "device-allocation"]),
    *(make_document(slug, layer="L4", units=SHARE, roles={"advertise": SHARE, "allocate": SHARE},
                    capabilities=["gpu-sharing", "device-allocation"]) for slug in ("alt-share", "alt-share-2")),
    make_document("binder-a", layer="L2", units=SHARE, roles={"bind": SHARE}, capabilities=["pod-binding"]),
]


@pytest.fixture(scope="module")
def graph():
    data = builtin_rules().model_dump(mode="json")
    data["interfaces"].update(INTERFACES)
    return build_graph(DOCUMENTS, rules=type(builtin_rules()).model_validate(data))


def test_capabilities_in_common_owned_by_a_layer_only_one_sits_on_make_no_rivalry(graph):
    pair = pair_of(graph, "queue-g", "sched-g")
    assert pair.verdict == Verdict.CROSS_LAYER
    assert pair.explanation.startswith("Queue G sits on L1 Admission and quota and Sched G on L2 Scheduling policy: they "
                                       "are upstream and downstream, not rivals.")


def test_two_handoffs_declared_in_conflict_are_alternatives_even_for_a_unit_they_share(graph):
    pair = pair_of(graph, "plugin-x", "plugin-w")
    assert pair.verdict == Verdict.ALTERNATIVE_HANDOFF
    assert pair.explanation.startswith(
        f"Alternative hand-offs: Plugin X and Plugin W both take part in Advertise and Allocate on {L4} (Plugin X: Whole "
        "GPU; Plugin W: Whole GPU), and a GPU can be advertised and handed over by only one of them (catalog "
        "conflicts_with)."
    )
    # the same unit and no declared conflict: two like-for-like device plugins
    assert pair_of(graph, "plugin-w", "plugin-y").verdict == Verdict.COMPARABLE


def test_a_handoff_is_an_alternative_only_for_what_it_both_advertises_and_allocates(graph):
    # half-plugin advertises MIG instances but hands over only whole GPUs: no unit in common with a MIG plugin
    pair = pair_of(graph, "half-plugin", "mig-plugin")
    assert pair.verdict == Verdict.ALTERNATIVE_HANDOFF
    assert f"on {L4} (Half Plugin: Whole GPU; Mig Plugin: MIG instance)" in pair.explanation


def test_a_project_that_hands_devices_over_from_the_scheduling_layer_is_no_alternative_handoff(graph):
    pair = pair_of(graph, "claim-sched", "plugin-w")
    assert pair.verdict == Verdict.CROSS_LAYER


def test_the_two_binders_note_names_every_handoff_the_scheduler_binds(graph):
    pair = pair_of(graph, "share-hook", "binder-a")
    assert pair.explanation.endswith(
        " As shipped their Bind contract fails: Share Hook's mutating webhook sets spec.schedulerName to hook-scheduler, "
        "so Binder A never binds those pods (two binders); under Binder A the same unit comes from alt-share, "
        "alt-share-2. (Share Hook chart)"
    )


def test_a_capability_owned_on_another_map_is_left_out_of_the_overlap_and_the_rest_still_count():
    # a vocabulary that places bin packing on the planes map: it is no control-plane governance to duplicate
    from placement.catalog.schemas import CatalogVocabulary, builtin_vocabulary

    data = builtin_vocabulary().model_dump(mode="json")
    for cap in data["capabilities"]:
        if cap["slug"] == "bin-packing":
            cap["owner_map"], cap["owner_layers"] = "planes", ["control"]
    caps = ["bin-packing", "gang-scheduling", "topology-aware-placement"]
    graph = build_graph([
        make_document("queue-t", layer="L1", secondary=["L2"], units=["whole_gpu"], capabilities=caps),
        make_document("sched-t", layer="L2", units=["whole_gpu"], capabilities=caps),
    ], CatalogVocabulary.model_validate(data))
    pair = pair_of(graph, "queue-t", "sched-t")
    assert pair.verdict == Verdict.OVERLAPPING
    assert pair.explanation.startswith(
        "Queue T (L1 Admission and quota) and Sched T (L2 Scheduling policy) both own gang scheduling, topology-aware "
        "placement on a layer they share,"
    )


def test_the_two_binders_note_is_found_when_both_rewrite_the_scheduler_and_only_the_downstream_one_fails():
    # the scheduler's own webhook points pods at itself (no other binder to fail); the handoff's webhook
    # points them away from that scheduler, which is the contract that fails
    data = builtin_rules().model_dump(mode="json")
    data["interfaces"].update({
        "self-sched": {"binder": "self-sched", "rewrites_scheduler_name": "self-sched", "source": "Self Sched chart"},
        "hook-share": {"rewrites_scheduler_name": "hook-scheduler", "source": "Hook Share chart"},
    })
    graph = build_graph([
        make_document("self-sched", layer="L2", units=SHARE, roles={"bind": SHARE}, capabilities=["pod-binding"]),
        make_document("hook-share", layer="L4", units=SHARE, roles={"advertise": SHARE, "allocate": SHARE},
                      capabilities=["gpu-sharing", "device-allocation"]),
    ], rules=type(builtin_rules()).model_validate(data))
    for a, b in (("self-sched", "hook-share"), ("hook-share", "self-sched")):
        assert pair_of(graph, a, b).explanation.endswith(
            " As shipped their Bind contract fails: Hook Share's mutating webhook sets spec.schedulerName to "
            "hook-scheduler, so Self Sched never binds those pods (two binders). (Hook Share chart)"
        )
