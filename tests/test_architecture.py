"""The rooms and arrows of docs/architecture.md hold in the code.

`lint-imports` (run by `make test` before pytest) checks the layer, independence and forbidden
contracts in pyproject.toml; these tests add what it does not say: no import circle between any two
modules (function-level imports included), size limits a reader can keep in their head, and models
that moved between packages without touching a table.
"""

from __future__ import annotations

import ast
from pathlib import Path

import grimp
import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("placement", "scheduler_core", "config")
MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 150
MAX_COMPOSE_LINES = 80


def _import_graph() -> nx.DiGraph:
    graph = grimp.build_graph(*PACKAGES, include_external_packages=False, cache_dir=None)
    edges = nx.DiGraph()
    for module in graph.modules:
        edges.add_node(module)
        for imported in graph.find_modules_directly_imported_by(module):
            edges.add_edge(module, imported)
    return edges


def test_no_module_imports_itself_through_a_circle_of_others():
    graph = _import_graph()
    # A package's __init__ importing its own children is how packages re-export, not a circle.
    for package in [m for m in graph.nodes if any(s.startswith(m + ".") for s in graph.successors(m))]:
        for child in [s for s in list(graph.successors(package)) if s.startswith(package + ".")]:
            graph.remove_edge(package, child)
    circles = sorted(sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1)
    assert circles == [], f"import circles: {circles}"


def _sources():
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" not in path.parts:
                yield path


def _says_why(tree: ast.AST, node: ast.AST | None = None) -> bool:
    doc = ast.get_docstring(node if node is not None else tree) or ""
    return "longer than" in doc.lower()


def test_no_module_over_800_lines_unless_its_docstring_says_why():
    long = [f"{p.relative_to(ROOT)} ({n} lines)" for p in _sources()
            if (n := p.read_text().count("\n")) > MAX_MODULE_LINES and not _says_why(ast.parse(p.read_text()))]
    assert long == []


def test_no_function_over_150_lines_unless_its_docstring_says_why():
    long = []
    for path in _sources():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES and not _says_why(tree, node):
                    long.append(f"{path.relative_to(ROOT)}:{node.name} ({lines} lines)")
    assert long == []


def test_compose_reads_in_a_screen():
    tree = ast.parse((ROOT / "placement/rules/compose.py").read_text())
    (compose,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "compose"]
    assert compose.end_lineno - compose.lineno + 1 <= MAX_COMPOSE_LINES


def test_rules_plans_and_the_simulator_import_no_django():
    graph = grimp.build_graph("placement", "scheduler_core", include_external_packages=True, cache_dir=None)
    for pure in ("placement.rules", "placement.plans", "scheduler_core"):
        for module in graph.find_descendants(pure) | {pure}:
            imported = graph.find_modules_directly_imported_by(module)
            assert not {m for m in imported if m.split(".")[0] in {"django", "rest_framework", "celery"}}, module


@pytest.mark.django_db
def test_the_models_moved_without_a_migration():
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("makemigrations", "placement", "--check", "--dry-run", stdout=out)
    assert "No changes detected" in out.getvalue()


@pytest.mark.django_db(transaction=True)
def test_a_database_of_the_last_schema_with_data_reads_back_through_the_moved_models():
    """Migrate back to the schema before the newest migration, write rows with the historical
    models, migrate forward, and read them through the models where they live now."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    latest = executor.loader.graph.leaf_nodes("placement")
    previous = executor.loader.graph.node_map[latest[0]].parents
    (before,) = [p.key for p in previous if p.key[0] == "placement"]
    executor.migrate([before])
    old = executor.loader.project_state([before]).apps
    project = old.get_model("placement", "Project").objects.create(
        slug="kueue-moved", name="Kueue moved", kind="project", homepage="https://kueue.sigs.k8s.io", summary="s", placement={})
    stack = old.get_model("placement", "Stack").objects.create(name="moved stack", profile="training", composition={"slots": {}})
    old.get_model("placement", "SimulationRun").objects.create(
        stack=stack, scenario_name="lab0", scenario={"name": "lab0"}, seed=1, fingerprint="f" * 64)
    old.get_model("placement", "Revision").objects.create(project=project, document={}, base_version=0, reason="kept")

    executor = MigrationExecutor(connection)
    executor.migrate(latest)

    from placement.catalog.models import Project
    from placement.evidence.models import SimulationRun
    from placement.review.models import Revision
    from placement.stacks.models import Stack

    assert Project.objects.get(slug="kueue-moved").name == "Kueue moved"
    moved = Stack.objects.get(name="moved stack")
    assert SimulationRun.objects.get(stack=moved).scenario_name == "lab0"
    assert Revision.objects.get(project__slug="kueue-moved").reason == "kept"
