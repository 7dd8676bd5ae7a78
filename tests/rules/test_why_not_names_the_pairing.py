"""A handoff or data plane left out because of the project it was paired with says so: its "why not"
must not read as if another project's webhook were its own."""

from __future__ import annotations

import re

import pytest

from placement.rules import ComposeRequest, SlotName, compose

PROFILES = ["training", "online_inference", "batch_inference", "interactive", "mixed"]


@pytest.mark.parametrize("profile", PROFILES)
def test_a_contract_rejection_caused_by_the_partner_names_the_partner(graph, profile):
    result = compose(graph, ComposeRequest(profile=profile))
    for w in result.why_not:
        named = re.match(r"^(?:Paired with (\S+) as the (?:data plane|device handoff): )?Bind fails .*? - (\S+)'s "
                         r"mutating webhook", w.reason)
        if w.rule != "contract" or not named:
            continue
        partner, culprit = named.groups()
        assert culprit == w.project or partner == culprit, (w.project, w.reason)


def test_koordinator_left_out_of_batch_inference_is_told_it_was_paired_with_hami(graph):
    result = compose(graph, ComposeRequest(profile="batch_inference"))
    reasons = [w.reason for w in result.why_not if w.project == "koordinator" and w.rule == "contract"]
    assert reasons and reasons[0].startswith("Paired with hami as the data plane: Bind fails on the batch pool: "
                                             "two binders - hami's mutating webhook rewrites spec.schedulerName")


def test_a_project_kept_out_by_the_workloads_shape_and_by_a_contract_is_given_the_shape(graph):
    # Training's 8-GPU peer-to-peer replicas rule out HAMi's memory/compute share (data plane) before
    # anything else; HAMi is also turned down as a device handoff by a contract (its webhook's second
    # binder). The shape is the reason it gets: no SLO or pairing would change it.
    result = compose(graph, ComposeRequest(profile="training"))
    hami = [w for w in result.why_not if w.project == "hami"]
    assert [(w.slot, w.rule) for w in hami] == [(SlotName.DATA_PLANE_UNIT, "feasibility")]
    assert hami[0].reason.startswith("Memory quota + compute share cannot serve class 'training': its 8 GPUs per "
                                     "replica talk peer-to-peer (NVLink/P2P)")
