"""The simulator's import arrows point one way: engine -> policies -> port, workloads -> cluster."""

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
