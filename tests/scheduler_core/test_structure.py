"""The simulator's import arrows point one way: simulation -> policies -> port, workloads -> cluster; no circle at all."""

import ast
import re
from pathlib import Path

from scheduler_core.policies.port import ClusterPort

CORE = Path(__file__).resolve().parents[2] / "scheduler_core"


def _imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_policies_never_import_the_simulation():
    for path in (CORE / "policies").glob("*.py"):
        bad = {m for m in _imports(path) if m.startswith("scheduler_core.simulation")}
        assert not bad, f"{path.name} imports {bad}"


def test_policies_use_only_what_the_port_offers():
    offered = set(ClusterPort.__annotations__) | {n for n in dir(ClusterPort) if not n.startswith("_")}
    for path in (CORE / "policies").glob("*.py"):
        used = set(re.findall(r"\bsim\.([a-zA-Z_]\w*)", path.read_text()))
        assert used <= offered, f"{path.name} reaches past the port: {sorted(used - offered)}"


def test_the_device_layer_does_not_know_workloads():
    assert not any(m.startswith("scheduler_core.workloads") for m in _imports(CORE / "cluster.py"))


def test_no_simulation_module_is_longer_than_a_reader_can_hold():
    for path in (CORE / "simulation").rglob("*.py"):
        assert len(path.read_text().splitlines()) <= 600, path


def _module_graph() -> dict[str, set[str]]:
    """Each scheduler_core module -> the scheduler_core modules it imports, counting every import statement
    at any depth (function-level and ``TYPE_CHECKING`` ones too)."""
    paths = {}
    for path in CORE.rglob("*.py"):
        parts = path.relative_to(CORE.parent).with_suffix("").parts
        paths[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph = {}
    for name, path in paths.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = ".".join(package[: len(package) - node.level + 1] + [node.module or ""]) if node.level \
                    else node.module
                base = base.strip(".")
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in paths else base for a in node.names]
            else:
                continue
            for target in targets:
                while target not in paths and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target in paths and target != name:
                    deps.add(target)
        graph[name] = deps
    return graph


def test_no_import_circle_anywhere_in_the_simulator():
    graph = _module_graph()
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        if name in path:
            raise AssertionError("import circle: " + " -> ".join(path[path.index(name):] + [name]))
        if name in done:
            return
        for dep in sorted(graph[name]):
            visit(dep, path + [name])
        done.add(name)

    for name in sorted(graph):
        visit(name, [])


def test_no_module_over_800_lines_and_no_function_over_150():
    for path in CORE.rglob("*.py"):
        text = path.read_text()
        assert len(text.splitlines()) <= 800, path
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                assert node.end_lineno - node.lineno + 1 <= 150, f"{path}: {node.name}"
