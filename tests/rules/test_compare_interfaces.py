"""Two facts from interfaces.yaml that change what a compare explanation tells a reviewer: a device
handoff whose webhook hands pods to its own scheduler breaks the Bind contract with any other
scheduler ("two binders"), and an admission layer joins a workload API by suspend/admit or PodGroups
rather than by Advertise/Bind/Allocate. Hand-built projects and interface entries."""

from __future__ import annotations

import pytest

from placement.rules import Verdict, build_graph, builtin_rules, compare
from placement.rules.synthetic import make_document

SHARE = ["memory_compute_share"]
HANDOFF = {"advertise": SHARE, "allocate": SHARE}
INTERFACES = {
    "share-hook": {"rewrites_scheduler_name": "hook-scheduler", "keeps": ["keeper"], "source": "Share Hook chart"},
    "alt-share": {"bound_by": ["binder-a"], "source": "Alt Share README"},
    "binder-a": {"binder": "binder-a", "source": "Binder A docs"},
    "binder-b": {"binder": "binder-b", "source": "Binder B docs"},
    "keeper": {"binder": "keeper", "source": "Keeper docs"},
    "no-binder": {"source": "No Binder docs"},
    "queue-s": {"integrations": ["job-api"], "suspend": "Queue S creates the job suspended and admits it when quota is free",
                "source": "Queue S integrations"},
    "batch-s": {"binder": "batch-s", "integrations": ["job-api"], "source": "Batch S PodGroups"},
}
DOCUMENTS = [
    make_document("share-hook", layer="L4", units=SHARE, roles=HANDOFF, capabilities=["gpu-sharing", "device-allocation"]),
    make_document("alt-share", layer="L4", units=SHARE, roles=HANDOFF, capabilities=["gpu-sharing", "device-allocation"]),
    *(make_document(slug, layer="L2", units=SHARE, roles={"bind": SHARE}, capabilities=["pod-binding"])
      for slug in ("binder-a", "binder-b", "keeper", "no-binder", "plain")),
    make_document("queue-s", layer="L1", units=["whole_gpu"], capabilities=["per-team-quota"]),
    make_document("batch-s", layer="L2", units=["whole_gpu"], capabilities=["gang-scheduling"]),
    make_document("job-api", layer="L0", secondary=["L3"], units=["whole_gpu"], capabilities=["workload-definition"]),
]


@pytest.fixture(scope="module")
def graph():
    data = builtin_rules().model_dump(mode="json")
    data["interfaces"].update(INTERFACES)
    return build_graph(DOCUMENTS, rules=type(builtin_rules()).model_validate(data))


def _explanation(graph, a, b):
    pair = compare(graph, [a, b]).pairs[0]
    assert pair.verdict == Verdict.CROSS_LAYER
    return pair.explanation


def test_a_webhook_that_rewrites_the_scheduler_breaks_bind_with_another_binder_and_names_the_repair(graph):
    for a, b in (("share-hook", "binder-a"), ("binder-a", "share-hook")):
        assert _explanation(graph, a, b).endswith(
            " As shipped their Bind contract fails: Share Hook's mutating webhook sets spec.schedulerName to "
            "hook-scheduler, so Binder A never binds those pods (two binders); under Binder A the same unit comes from "
            "alt-share. (Share Hook chart)"
        )
    # no handoff that this scheduler binds: the note stops at the failure
    assert _explanation(graph, "share-hook", "binder-b").endswith(
        "so Binder B never binds those pods (two binders). (Share Hook chart)"
    )


@pytest.mark.parametrize("scheduler", ["keeper", "no-binder", "plain"],
                         ids=["kept by the webhook", "interface without a binder", "no interface entry"])
def test_no_two_binders_note_where_the_rewritten_binder_keeps_the_scheduler_or_it_binds_nothing(graph, scheduler):
    explanation = _explanation(graph, "share-hook", scheduler)
    assert "Compare only the contract that joins them (Advertise, Bind, Allocate)." in explanation
    assert "two binders" not in explanation and "Share Hook chart" not in explanation


def test_an_admission_layer_joins_a_workload_api_by_suspend_and_admit(graph):
    summary = ("Queue S admits Job Api workloads: Queue S creates the job suspended and admits it when quota is free. "
               "Compare only whether that integration covers the workload kinds you run (Queue S integrations).")
    for a, b in (("job-api", "queue-s"), ("queue-s", "job-api")):
        pair = compare(graph, [a, b]).pairs[0]
        assert pair.verdict == Verdict.CROSS_LAYER
        assert pair.explanation == (
            "Job Api sits on L0 Workload unit and Queue S on L1 Admission and quota: they are upstream and downstream, "
            f"not rivals. Compare only the contract that joins them (workload admission). {summary}"
        )
        [join] = pair.contracts
        assert (join.kind, join.points, join.units, join.roles, join.summary) == ("workload_admission", [], [], [], summary)


def test_a_batch_scheduler_without_suspend_joins_a_workload_api_by_podgroups(graph):
    [join] = compare(graph, ["batch-s", "job-api"]).pairs[0].contracts
    assert join.summary == (
        "Batch S admits Job Api workloads: Batch S groups Job Api's pods into PodGroups in its queues. Compare only "
        "whether that integration covers the workload kinds you run (Batch S PodGroups)."
    )
    # a workload API the admission layer does not integrate: no join
    assert compare(graph, ["queue-s", "batch-s"]).pairs[0].contracts == []
