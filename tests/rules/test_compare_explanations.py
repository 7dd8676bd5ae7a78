"""What a review board reads when it compares two projects: the explanation of each verdict, the
contract and graph path that join a cross-layer pair, the values on each axis, and the summary of a
comparison. Hand-built projects (placement/rules/synthetic.py), one pair per rule of compare.py, so
each expected sentence below is the one a reviewer checks for that rule; the catalog's own prose
(`costs`, `promise`) is the synthetic placeholder text."""

from __future__ import annotations

import pytest

from placement.catalog.schemas import ContractPoint, ResourceUnit
from placement.rules import CompareRequest, RulesInputError, Verdict, build_graph, compare
from placement.rules.synthetic import make_document
from tests.rules.compare_helpers import axis_values, pair_of

L1 = "L1 Admission and quota"
L2 = "L2 Scheduling policy"
L4 = "L4 Node allocation and device handoff"
NO_CONTRACT = ("No contract point joins them directly, so there is nothing to compare between them; compare each "
               "with its own rivals.")
MIG_ISOLATION = ("MIG instance: hard isolation (Hardware partition with dedicated SMs, L2, memory and bandwidth; "
                 "faults stay in their instance.)")
WHOLE_ISOLATION = "Whole GPU: hard isolation (Exclusive use isolates by not sharing; small jobs strand the rest of the card.)"
NODE_AGENT = "Enforced at: Node agent (kubelet, device plugin, DRA driver)."


EXTRA = [
    # two MIG partitioners that also hand out whole GPUs: like with like on the node
    make_document("part-a", kind="mechanism", layer="L4", units=["mig_instance", "whole_gpu"],
                  capabilities=["hardware-partitioning", "fault-isolation"]),
    make_document("part-b", kind="mechanism", layer="L4", units=["mig_instance", "whole_gpu"],
                  capabilities=["hardware-partitioning"]),
    # an admission layer and batch schedulers that also queue on L1
    make_document("queue-b", layer="L1", units=["whole_gpu"], capabilities=["job-queueing", "fair-sharing", "per-team-quota"]),
    make_document("batch-b", layer="L2", secondary=["L1"], units=["whole_gpu"],
                  capabilities=["job-queueing", "fair-sharing", "gang-scheduling"]),
    make_document("batch-c", layer="L2", secondary=["L1"], units=["whole_gpu"], capabilities=["job-queueing", "gang-scheduling"]),
    # a DRA driver: the other way to hand a device over
    make_document("dra-a", layer="L4", units=["dra_device"], roles={"advertise": ["dra_device"], "allocate": ["dra_device"]},
                  capabilities=["device-discovery", "device-allocation"]),
]


@pytest.fixture
def graph(small_catalog):
    """The conftest's small catalog (one project per role) plus EXTRA."""
    return build_graph([*small_catalog, *EXTRA])


# --- comparable: same layer, same unit, a job in common ---------------------------------------------


def test_two_schedulers_on_one_layer_are_weighed_on_queues_quota_and_the_other_control_plane_axes(graph):
    pair = pair_of(graph, "sched-a", "sched-b")
    assert pair.verdict == Verdict.COMPARABLE
    assert pair.explanation == (
        f"Both sit on {L2} and hand out Whole GPU: a like-for-like comparison. Compare queues, quota model, fair "
        "sharing, preemption, gang, topology and workload integrations."
    )
    # each control-plane axis says what each one provides, in the capability's own name
    assert axis_values(pair, "gang") == {"sched-a": "Provides Gang scheduling.", "sched-b": "Does not provide gang scheduling."}
    assert axis_values(pair, "quota_model") == {
        "sched-a": "Does not provide per-team quota, admission control.",
        "sched-b": "Does not provide per-team quota, admission control.",
    }


def test_two_node_partitioners_are_weighed_on_isolation_overhead_observability_and_reconfiguration(graph):
    pair = pair_of(graph, "part-a", "part-b")
    assert pair.verdict == Verdict.COMPARABLE
    assert pair.explanation == (
        f"Both sit on {L4} and hand out MIG instance (and also share Whole GPU): a like-for-like comparison. "
        "Compare isolation, overhead, observability and reconfiguration cost for that unit."
    )
    assert [x.axis for x in pair.axes] == ["isolation", "overhead", "observability", "reconfiguration_cost"]
    # isolation is told for the unit they are compared on (the primary one), not every unit they share
    assert axis_values(pair, "isolation") == {s: f"{MIG_ISOLATION} {NODE_AGENT}" for s in ("part-a", "part-b")}
    assert axis_values(pair, "overhead") == {"part-a": "Low.", "part-b": "Low."}
    assert axis_values(pair, "observability") == {"part-a": "Metrics.", "part-b": "Metrics."}
    assert axis_values(pair, "reconfiguration_cost") == {"part-a": "Live.", "part-b": "Live."}
    assert pair.shared_units == [ResourceUnit.WHOLE_GPU, ResourceUnit.MIG_INSTANCE]


# --- unit mismatch: same layer, different units -------------------------------------------------------


def test_same_layer_different_units_says_to_fix_the_workload_and_slo_first(graph):
    pair = pair_of(graph, "sched-a", "sched-frac")
    assert pair.verdict == Verdict.UNIT_MISMATCH
    assert pair.explanation == (
        f"Both sit on {L2}, but Sched A hands out Whole GPU and Sched Frac hands out Fraction (accounting only) (both "
        "also handle Whole GPU). The unit sets the isolation ceiling and granularity, so fix the workload and SLO "
        "first, choose the unit, and only then the project."
    )
    assert axis_values(pair, "workload_and_slo") == {
        "sched-a": "Promise: sched-a does its job. Units: Whole GPU (hard isolation), MIG instance (hard isolation).",
        "sched-frac": "Promise: sched-frac does its job. Units: Whole GPU (hard isolation), Fraction (accounting only) "
                      "(none isolation).",
    }
    assert axis_values(pair, "resource_unit")["sched-a"] == (
        "Whole GPU: One physical GPU per request; integer counts only. MIG instance: Discrete MIG profiles (1g..7g); "
        "at most 7 instances per A100."
    )

    apart = pair_of(graph, "slicer", "sharer")  # no unit in common: no "both also handle"
    assert apart.verdict == Verdict.UNIT_MISMATCH
    assert apart.explanation.startswith(
        f"Both sit on {L4}, but Slicer hands out MIG instance and Sharer hands out Memory quota + compute share. The "
        "unit sets"
    )


# --- cross layer: upstream and downstream, joined only by a contract ------------------------------------


def test_a_cross_layer_pair_is_told_governance_first_and_joined_at_the_point_both_take_part_in(graph):
    shared = ("Both take part in Bind for Whole GPU: compare whether Queue A and Sched A agree on how that unit is "
              "bound there, not the projects as a whole.")
    for a, b in (("queue-a", "sched-a"), ("sched-a", "queue-a")):  # the admission layer is named first either way
        pair = pair_of(graph, a, b)
        assert pair.verdict == Verdict.CROSS_LAYER
        assert pair.explanation == (
            f"Queue A sits on {L1} and Sched A on {L2}: they are upstream and downstream, not rivals. Compare only "
            f"the contract that joins them (Bind). {shared}"
        )
        [join] = pair.contracts
        assert (join.kind, join.points, join.units, join.summary) == ("shared_point", [ContractPoint.BIND], [ResourceUnit.WHOLE_GPU], shared)
        assert [(r.slug, r.point, r.units, r.how) for r in join.roles] == [
            ("queue-a", ContractPoint.BIND, [ResourceUnit.WHOLE_GPU], "queue-a binds whole_gpu."),
            ("sched-a", ContractPoint.BIND, [ResourceUnit.WHOLE_GPU], "sched-a binds whole_gpu, mig_instance."),
        ]
        assert [(s.source, s.relation, s.target, s.forward) for s in pair.path] == [
            ("project:queue-a", "binds", "unit:whole_gpu", True),
            ("unit:whole_gpu", "binds", "project:sched-a", False),
        ]
        assert axis_values(pair, "interface_contract") == {
            "queue-a": "bind (Whole GPU): queue-a binds whole_gpu.",
            "sched-a": "bind (Whole GPU, MIG instance): sched-a binds whole_gpu, mig_instance.",
        }


def test_a_device_plugin_and_a_queue_meet_where_one_point_feeds_the_next(graph):
    pair = pair_of(graph, "queue-a", "plugin-a")
    advertise = ("Plugin A takes part in Advertise and Queue A in Bind for Whole GPU: the contract holds if what Plugin "
                 "A does at Advertise is what Queue A expects at Bind for that unit.")
    allocate = ("Queue A takes part in Bind and Plugin A in Allocate for Whole GPU: the contract holds if what Queue A "
                "does at Bind is what Plugin A expects at Allocate for that unit.")
    assert pair.explanation == (
        f"Queue A sits on {L1} and Plugin A on {L4}: they are upstream and downstream, not rivals. Compare only the "
        f"contract that joins them (Advertise, Bind, Allocate). {advertise} {allocate}"
    )
    assert [(j.kind, j.points, j.summary) for j in pair.contracts] == [
        ("handoff", [ContractPoint.ADVERTISE, ContractPoint.BIND], advertise),
        ("handoff", [ContractPoint.BIND, ContractPoint.ALLOCATE], allocate),
    ]
    assert [(r.slug, r.point) for r in pair.contracts[0].roles] == [("plugin-a", ContractPoint.ADVERTISE), ("queue-a", ContractPoint.BIND)]
    assert [(s.source, s.relation, s.target, s.forward) for s in pair.path] == [
        ("project:plugin-a", "advertises", "unit:whole_gpu", True),
        ("unit:whole_gpu", "binds", "project:queue-a", False),
    ]
    assert axis_values(pair, "interface_contract")["plugin-a"] == (
        "advertise (Whole GPU, MIG instance): plugin-a advertises whole_gpu, mig_instance.; "
        "allocate (Whole GPU, MIG instance): plugin-a allocates whole_gpu, mig_instance."
    )


def test_a_cross_layer_pair_with_no_contract_point_names_the_graph_path_if_there_is_one(graph):
    pair = pair_of(graph, "queue-a", "runtime-hook")
    assert pair.contracts == []
    assert pair.explanation == (
        f"Queue A sits on {L1} and Runtime Hook on {L4}: they are upstream and downstream, not rivals. {NO_CONTRACT} "
        "In the catalog graph they meet via: project:queue-a -binds-> unit:whole_gpu; unit:whole_gpu <-allocates- "
        "project:plugin-a; project:plugin-a -depends_on-> project:runtime-hook."
    )
    assert axis_values(pair, "interface_contract")["runtime-hook"] == "Takes part in no contract point."

    apart = pair_of(graph, "queue-a", "slicer")
    assert apart.path == []
    assert apart.explanation == (
        f"Queue A sits on {L1} and Slicer on {L4}: they are upstream and downstream, not rivals. {NO_CONTRACT} "
        "They do not meet in the catalog graph."
    )


def test_a_project_built_on_another_on_its_layer_is_its_downstream(graph):
    for a, b in (("plugin-a", "runtime-hook"), ("runtime-hook", "plugin-a")):
        pair = pair_of(graph, a, b)
        assert pair.explanation == (
            f"Both sit on {L4}, but Plugin A is built on Runtime Hook (it requires it): they are upstream and "
            f"downstream, not rivals. {NO_CONTRACT} In the catalog graph they meet via: project:runtime-hook "
            "<-depends_on- project:plugin-a."
        )


def test_a_handoff_delivering_a_mechanisms_unit_is_joined_by_advertise_and_allocate(graph):
    summary = ("Slicer creates MIG instance; Plugin A advertises and allocates it. Compare only whether Plugin A "
               "advertises and hands over MIG instance the way Slicer defines it (profiles, health, naming).")
    for a, b in (("slicer", "plugin-a"), ("plugin-a", "slicer")):
        pair = pair_of(graph, a, b)
        assert pair.verdict == Verdict.CROSS_LAYER
        assert pair.explanation == (
            f"Both sit on {L4}, but Slicer creates MIG instance and Plugin A delivers it: upstream and downstream, not "
            f"rivals. Compare only the contract that joins them (Advertise, Allocate). {summary}"
        )
        [join] = pair.contracts
        assert (join.kind, join.points, join.units, join.summary) == (
            "handoff", [ContractPoint.ADVERTISE, ContractPoint.ALLOCATE], [ResourceUnit.MIG_INSTANCE], summary)
        assert [(r.slug, r.point, r.units) for r in join.roles] == [
            ("plugin-a", ContractPoint.ADVERTISE, [ResourceUnit.MIG_INSTANCE]),
            ("plugin-a", ContractPoint.ALLOCATE, [ResourceUnit.MIG_INSTANCE]),
        ]
        assert [(s.source, s.relation, s.target, s.forward) for s in pair.path] == [
            ("project:slicer", "uses_unit", "unit:mig_instance", True),
            ("unit:mig_instance", "advertises", "project:plugin-a", False),
        ]


def test_projects_on_one_layer_with_no_job_in_common_complement_each_other(graph):
    pair = pair_of(graph, "slicer", "exporter")
    assert pair.verdict == Verdict.CROSS_LAYER
    assert pair.explanation == (
        f"Both sit on {L4} but do different jobs (Slicer: gpu memory isolation, hardware partitioning; Exporter: gpu "
        f"telemetry), with no capability in common: they complement each other, not rivals. {NO_CONTRACT} They do not "
        "meet in the catalog graph."
    )


# --- alternative hand-offs --------------------------------------------------------------------------


def test_two_device_handoffs_are_alternatives_per_device(graph):
    pair = pair_of(graph, "plugin-a", "sharer")
    assert pair.verdict == Verdict.ALTERNATIVE_HANDOFF
    assert pair.explanation == (
        f"Alternative hand-offs: Plugin A and Sharer both take part in Advertise and Allocate on {L4} (Plugin A: Whole "
        "GPU, MIG instance; Sharer: Memory quota + compute share), and a GPU can be advertised and handed over by only "
        "one of them (catalog conflicts_with). Choose per device or per node pool, never both for one GPU. Plugin A: "
        "Broad. Sharer: Broad."
    )
    [join] = pair.contracts
    assert (join.kind, join.points, join.summary) == (
        "alternative", [ContractPoint.ADVERTISE, ContractPoint.ALLOCATE],
        "Same contract points (Advertise, Allocate), one per device: Plugin A or Sharer.")
    assert join.units == [ResourceUnit.WHOLE_GPU, ResourceUnit.MIG_INSTANCE, ResourceUnit.MEMORY_COMPUTE_SHARE]
    assert [(r.slug, r.point, r.units) for r in join.roles] == [
        ("plugin-a", ContractPoint.ADVERTISE, [ResourceUnit.WHOLE_GPU, ResourceUnit.MIG_INSTANCE]),
        ("sharer", ContractPoint.ADVERTISE, [ResourceUnit.MEMORY_COMPUTE_SHARE]),
    ]
    assert [x.axis for x in pair.axes] == ["interface_contract", "resource_unit", "isolation"]
    # no unit in common: isolation is told for every unit each one hands out
    assert axis_values(pair, "isolation")["plugin-a"] == f"{WHOLE_ISOLATION} {MIG_ISOLATION} {NODE_AGENT}"

    # not declared in conflict, but no unit in common either (device plugin API vs DRA): still one per device
    dra = pair_of(graph, "plugin-a", "dra-a")
    assert dra.verdict == Verdict.ALTERNATIVE_HANDOFF
    assert "handed over by only one of them. Choose per device" in dra.explanation


# --- overlapping: bundles and shared governance --------------------------------------------------------


def test_a_bundle_and_what_it_ships_are_not_alternatives(graph):
    for a, b in (("suite", "plugin-a"), ("plugin-a", "suite")):
        pair = pair_of(graph, a, b)
        assert pair.verdict == Verdict.OVERLAPPING
        assert pair.explanation == (
            "Suite ships Plugin A (bundles), so they are not alternatives: choosing Suite already includes Plugin A. "
            "Compare what the bundle adds around it (lifecycle, upgrades, other operands) against installing Plugin A "
            "alone."
        )
        assert [(s.source, s.relation, s.target) for s in pair.path] == [("project:suite", "bundles", "project:plugin-a")]
        assert axis_values(pair, "bundled_scope") == {
            "suite": "Ships exporter, plugin-a. Costs: Low.",
            "plugin-a": "Shipped inside Suite; alone it promises: plugin-a does its job.",
        }


def test_two_owners_of_the_same_governance_on_a_shared_layer_overlap(graph):
    pair = pair_of(graph, "queue-b", "batch-b")
    assert pair.verdict == Verdict.OVERLAPPING
    assert pair.explanation == (
        f"Queue B ({L1}) and Batch B ({L2}) both own fair sharing across tenants, job queueing on a layer they share, "
        "so running both duplicates that governance: two sets of queues and quotas that do not see each other. Choose "
        "one owner per capability. Queue B: Broad. Batch B: Broad."
    )
    assert pair.contracts == [] and pair.path == []
    # two control-plane projects: the control-plane axes, not the bundle's scope
    assert [x.axis for x in pair.axes][:2] == ["queues", "quota_model"]
    # one capability in common on the shared layer is a detail, not a rivalry (comparison.yaml overlap.min_shared: 2)
    assert pair_of(graph, "queue-b", "batch-c").verdict == Verdict.CROSS_LAYER


# --- platform versus mechanism ---------------------------------------------------------------------------


def test_a_platform_is_decomposed_into_the_pieces_it_ships(graph):
    pair = pair_of(graph, "runtime-hook", "suite")
    assert pair.verdict == Verdict.PLATFORM_VS_MECHANISM
    assert pair.explanation == (
        f"Suite is a platform that packages lower layers; Runtime Hook sits on {L4}. Do not weigh the platform's "
        "experience against a mechanism's boundary: decompose Suite into what it depends on (exporter, plugin-a) and "
        "compare Runtime Hook with the piece on its own layer (Exporter, Plugin A)."
    )
    assert [(s.source, s.relation, s.target) for s in pair.path] == [
        ("project:suite", "bundles", "project:plugin-a"),
        ("project:plugin-a", "depends_on", "project:runtime-hook"),
    ]
    assert axis_values(pair, "decomposition") == {
        "runtime-hook": f"{L4} (data plane), units Whole GPU; promise: runtime-hook does its job.",
        "suite": "Platform: ships exporter, plugin-a; depends on: Something above.; Something below..",
    }

    # nothing the platform ships sits on the other's layer: ask which piece provides what it does
    upper = pair_of(graph, "suite", "queue-a")
    assert upper.explanation == (
        f"Suite is a platform that packages lower layers; Queue A sits on {L1}. Do not weigh the platform's experience "
        "against a mechanism's boundary: decompose Suite into what it depends on (exporter, plugin-a) and ask which of "
        "those provides what Queue A does."
    )
    assert axis_values(upper, "decomposition")["queue-a"] == f"{L1} (control plane), units Whole GPU; promise: queue-a does its job."


# --- a comparison of several projects -----------------------------------------------------------------


def test_the_summary_counts_verdicts_and_names_the_groups_that_may_be_compared_head_to_head(graph):
    result = compare(graph, ["sched-a", "sched-b", "sched-frac", "plugin-a"])
    assert result.summary == (
        "6 pairs: 1 comparable (like with like); 2 same layer, different resource units; 3 not rivals (cross-layer, "
        "upstream and downstream). Head-to-head comparison is valid within: sched-a, sched-b."
    )
    assert result.comparable_groups == [["sched-a", "sched-b"]]
    assert [p.slug for p in result.projects] == ["sched-a", "sched-b", "sched-frac", "plugin-a"]
    assert result.catalog_version == graph.version

    one = compare(graph, ["queue-a", "slicer"])
    assert one.summary == (
        "1 pair: 1 not rivals (cross-layer, upstream and downstream). No two of them are rivals on the same layer and unit."
    )
    assert one.comparable_groups == []


def test_rivals_of_rivals_form_one_head_to_head_group(graph):
    # part-a ~ part-b and sched-a ~ sched-b: two separate groups; a chain joins into one
    result = compare(graph, ["part-a", "sched-a", "part-b", "sched-b"])
    assert sorted(map(sorted, result.comparable_groups)) == [["part-a", "part-b"], ["sched-a", "sched-b"]]
    chain = [
        make_document("q-1", layer="L1", units=["whole_gpu"], capabilities=["per-team-quota"]),
        make_document("q-2", layer="L1", units=["whole_gpu"], capabilities=["per-team-quota", "fair-sharing"]),
        make_document("q-3", layer="L1", units=["whole_gpu"], capabilities=["fair-sharing"]),
        make_document("q-4", layer="L1", units=["whole_gpu"], capabilities=["job-queueing"]),
    ]
    result = compare(build_graph(chain), ["q-1", "q-2", "q-3", "q-4"])
    # q-1 ~ q-2 ~ q-3 (q-1 and q-3 share nothing, yet both are compared with q-2); q-4 does another job
    assert result.comparable_groups == [["q-1", "q-2", "q-3"]]


def test_a_compare_request_body_is_read_like_a_list_of_slugs_with_spaces_trimmed(graph):
    assert compare(graph, CompareRequest(slugs=["sched-a", "sched-b"])).pairs[0].verdict == Verdict.COMPARABLE
    assert compare(graph, [" sched-a", "sched-b "]).pairs[0].a.slug == "sched-a"


def test_bad_compare_input_says_what_is_wrong_with_the_slugs(graph):
    with pytest.raises(RulesInputError) as exc:
        compare(graph, ["sched-a"])
    assert exc.value.errors == {"slugs": ["Give at least two project slugs to compare."]}
    with pytest.raises(RulesInputError) as exc:
        compare(graph, ["sched-a", "sched-a"])
    assert exc.value.errors == {"slugs": ["Project slugs repeat."]}
    with pytest.raises(RulesInputError) as exc:
        compare(graph, ["sched-a", "sched"])
    assert exc.value.errors == {"slugs": ["Unknown project 'sched'. Did you mean: sched-a, sched-b, sched-frac?"]}
    with pytest.raises(RulesInputError) as exc:
        compare(graph, [])
    assert exc.value.errors == {"slugs": ["Give at least two project slugs to compare."]}
