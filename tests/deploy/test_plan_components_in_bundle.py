"""What the plan relies on reaches the bundle: the settings it names for a component land in that
component's chart values, and a component the bundle has no chart or manifest for is named in the
README as one to install by hand, instead of a bundle that installs without it and does not hold.

KAI's HAMi integration (https://github.com/kai-scheduler/KAI-Scheduler/blob/main/docs/gpu-sharing/hami/README.md)
needs global.gpuSharing and binder.plugins.hamicore.enabled; the kai-resource-isolator is installed
on its own. Failed on main: the bundle carried only global.gpuSharing and never named the isolator.
"""

from __future__ import annotations

import pytest

from placement.catalog.files import read_catalog_dir
from placement.deploy import export_scenario
from placement.plans.scenario import scenario_document
from placement.rules import ComposeRequest, compose
from placement.rules.graph import build_graph
from scheduler_core.scenario import parse_scenario
from tests.rules.conftest import CATALOG_DIR


@pytest.fixture(scope="module")
def graph():
    return build_graph(read_catalog_dir(CATALOG_DIR))


def _bundle(graph, body: dict, slug: str | None = None):
    stacks = compose(graph, ComposeRequest.model_validate(body)).stacks
    stack = next(s for s in stacks if slug is None or slug in {c.project.slug for c in s.slots if c.project})
    return stack.plan, export_scenario(parse_scenario(scenario_document(stack.plan)), plan=stack.plan)


ISOLATED_NOTEBOOKS = {"workloads": [{"name": "nb", "kind": "interactive", "replicas": 8, "gpus_per_replica": 0.5,
                                     "gpu_memory_gib": 20, "tenants": 2}],
                      "slo": {"isolation": "soft"}, "constraints": {"require": ["kai-resource-isolator"]}}


def test_the_kai_settings_the_isolator_needs_are_in_kais_chart_values(graph):
    _plan, bundle = _bundle(graph, ISOLATED_NOTEBOOKS)
    values = bundle.file("kai/values.yaml").values
    assert values["global"]["gpuSharing"] is True
    assert values["binder"]["plugins"]["hamicore"]["enabled"] is True


def test_a_component_the_bundle_cannot_install_is_named_in_its_readme(graph):
    _plan, bundle = _bundle(graph, ISOLATED_NOTEBOOKS)
    readme = bundle.file("README.md").body
    assert "## Not installed by this bundle" in readme
    assert "`kai-resource-isolator`" in readme
    assert "`hami-core`" not in readme.split("## Not installed by this bundle")[1].split("## Files")[0]  # the isolator deploys it


def test_a_bundle_whose_components_all_install_has_no_such_section(graph):
    body = {"workloads": [{"name": "train", "kind": "training", "replicas": 2, "gpus_per_replica": 8,
                           "gpu_memory_gib": 70, "gang": True}],
            "constraints": {"require": ["kueue"]}, "pool": {"gpu_model": "H100-80GB", "gpu_count": 16}}
    plan, bundle = _bundle(graph, body)
    assert "## Not installed by this bundle" not in bundle.file("README.md").body, [c.project for c in plan.components]
