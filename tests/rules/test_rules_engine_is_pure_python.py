"""placement.rules never imports Django: services, API and benchmarks call the same pure functions."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import placement.rules

RULES_DIR = Path(placement.rules.__file__).resolve().parent


def test_no_module_of_the_rules_package_imports_django():
    offenders = []
    for path in sorted(RULES_DIR.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n == "django" or n.startswith(("django.", "rest_framework"))]
    assert offenders == []


def test_importing_and_using_the_rules_engine_loads_no_django_module():
    code = (
        "import sys\n"
        "from placement.catalog.files import read_catalog_dir\n"
        "from placement.rules import build_graph, compare, compose, ComposeRequest\n"
        "g = build_graph(read_catalog_dir('fixtures/catalog'))\n"
        "compose(g, ComposeRequest(profile='training'))\n"
        "loaded = [m for m in sys.modules if m == 'django' or m.startswith('django.')]\n"
        "assert not loaded, loaded\n"
    )
    root = RULES_DIR.parent.parent
    result = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_rule_modules_name_no_catalog_project_in_code(catalog_documents):
    """The seeds' forms and paradigms must come out of data, not out of special cases."""
    slugs = {d.slug for d in catalog_documents}
    found = []
    for path in sorted(RULES_DIR.glob("*.py")):
        if path.name == "synthetic.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in slugs:
                found.append(f"{path.name}:{node.lineno}: {node.value!r}")
    assert found == []
