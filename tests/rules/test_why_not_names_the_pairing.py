"""A handoff or data plane left out because of the project it was paired with says so: its "why not"
must not read as if another project's webhook were its own."""

from __future__ import annotations

import re

import pytest

from placement.rules import ComposeRequest, compose

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
