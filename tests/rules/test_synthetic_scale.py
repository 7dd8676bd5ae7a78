"""A 500-project synthetic catalog still composes every profile and compares freely (speed: benchmarks/rules_bench.py)."""

from __future__ import annotations

from placement.rules import ComposeRequest, build_graph, clear_graph_cache, compare, compose
from placement.rules.synthetic import synthetic_catalog


def test_a_500_project_catalog_builds_composes_and_compares(catalog_documents):
    documents = synthetic_catalog(500, base=catalog_documents)
    assert len({d.slug for d in documents}) == 500
    clear_graph_cache()
    graph = build_graph(documents)  # its speed is measured in benchmarks/rules_bench.py, not asserted here
    for profile in ("training", "online_inference", "batch_inference", "interactive", "mixed"):
        result = compose(graph, ComposeRequest(profile=profile))
        assert result.feasible, (profile, result.failures)
        for stack in result.stacks:
            assert all(c.holds for c in stack.contracts)
    slugs = sorted(graph.projects)[::50]
    assert len(compare(graph, slugs).pairs) == len(slugs) * (len(slugs) - 1) // 2
