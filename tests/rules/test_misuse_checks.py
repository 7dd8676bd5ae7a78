"""Misuse checks: asking a project for a capability its layer does not own is flagged with the owner."""

from __future__ import annotations

import pytest

from placement.rules import MisuseStatus, RulesInputError, build_graph, check_misuse, known_misuses


def _providers(verdict):
    return {p.slug for p in verdict.providers}


# The six misuses of the seed's placement table (seeds/000), with the layer that owns the ask.
SEED_MISUSES = [
    ("kueue", "raise-per-gpu-utilisation", "L4", {"hami", "mig"}),
    ("volcano", "gpu-sharing", "L4", {"hami", "time-slicing"}),
    # "Expects it to understand GPU memory or topology as continuous variables": the answer is a
    # GPU-aware scheduler or API on L2, not an isolation mechanism (issue 12).
    ("kube-scheduler", "topology-aware-placement", "L2", {"volcano", "kai-scheduler", "node-resource-topology"}),
    ("device-plugin-framework", "per-team-quota", "L1", {"kueue", "resource-quota"}),
    ("mig", "fair-sharing", "L1", {"kueue", "volcano"}),
    ("nvidia-device-plugin", "gpu-memory-isolation", "L4", {"hami", "mig"}),
]


@pytest.mark.parametrize("slug, capability, owner, expected_providers", SEED_MISUSES)
def test_the_seed_misuses_are_caught_with_the_owning_layer_and_providers(graph, slug, capability, owner, expected_providers):
    verdict = check_misuse(graph, slug, capability)
    assert verdict.is_misuse
    assert verdict.status == MisuseStatus.DECLARED_MISUSE
    assert owner in {layer.code for layer in verdict.owner_layers}
    assert expected_providers <= _providers(verdict)
    assert slug not in _providers(verdict)
    assert verdict.expectation and verdict.reason.startswith("Misuse")


def test_kueue_asked_to_raise_utilisation_is_sent_to_the_data_plane(graph):
    verdict = check_misuse(graph, "kueue", "raise-per-gpu-utilisation")
    assert not verdict.layer_owns
    assert verdict.owner_plane == "data"
    assert "L1" in {layer.code for layer in verdict.project_layers}


def test_the_device_plugin_owns_the_layer_of_isolation_but_does_not_provide_it(graph):
    verdict = check_misuse(graph, "nvidia-device-plugin", "gpu-memory-isolation")
    assert verdict.layer_owns  # L4 owns memory isolation, yet this plugin only presents devices
    assert "does not provide" in verdict.reason


def test_kube_scheduler_is_not_a_topology_scheduler_though_its_layer_owns_topology(graph):
    verdict = check_misuse(graph, "kube-scheduler", "topology-aware-placement")
    assert verdict.is_misuse and verdict.status == MisuseStatus.DECLARED_MISUSE
    assert verdict.layer_owns  # it sits on L2/L3, yet counts GPUs as integers
    assert {"volcano", "kai-scheduler"} <= _providers(verdict)
    assert not {"mig", "hami-core", "cuda-mps"} & _providers(verdict)  # not sent to isolation mechanisms


def test_mig_asked_for_admission_is_a_wrong_layer_misuse(graph):
    verdict = check_misuse(graph, "mig", "admission-control")
    assert verdict.status == MisuseStatus.WRONG_LAYER
    assert "kueue" in _providers(verdict)


def test_volcano_asked_for_gang_scheduling_is_fine(graph):
    verdict = check_misuse(graph, "volcano", "gang-scheduling")
    assert not verdict.is_misuse and verdict.status == MisuseStatus.PROVIDED
    assert verdict.layer_owns


def test_other_asks_of_the_issue_are_answered(graph):
    for slug, capability in (("kueue", "device-health"), ("hami", "per-team-quota"), ("dcgm-exporter", "per-team-quota"),
                             ("time-slicing", "fault-isolation"), ("volcano", "metering")):
        verdict = check_misuse(graph, slug, capability)
        assert verdict.is_misuse, (slug, capability)
        assert verdict.owner_layers and verdict.reason


def test_every_misuse_recorded_in_the_catalog_is_checked(graph):
    verdicts = known_misuses(graph)
    recorded = sum(len(f.misuses) for f in graph.projects.values())
    assert len(verdicts) == recorded
    assert all(v.is_misuse and v.status == MisuseStatus.DECLARED_MISUSE for v in verdicts)
    asked = {(v.project.slug, v.capability) for v in verdicts}
    assert {(s, c) for s, c, _, _ in SEED_MISUSES} <= asked


def test_a_capability_nobody_provides_still_names_its_owner(small_catalog):
    verdict = check_misuse(build_graph(small_catalog), "exporter", "fair-sharing")
    assert verdict.status == MisuseStatus.WRONG_LAYER and verdict.providers == []
    assert "no catalog project yet" in verdict.reason


def test_unknown_project_or_capability_is_bad_input_per_field(graph):
    with pytest.raises(RulesInputError) as exc:
        check_misuse(graph, "kueu", "mind-reading")
    assert set(exc.value.errors) == {"slug", "capability"}
    assert "kueue" in exc.value.errors["slug"][0]  # suggests the close match
