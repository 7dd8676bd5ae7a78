"""The upstream Helm charts in ../shared/charts/ (read in place) and the pinned helm binary.

``render`` runs ``helm template`` offline on a chart with a values document; ``values_errors``
checks a values document against the chart's values.schema.json where it ships one, and else
requires every key path to exist in the chart's values.yaml (Helm ignores an unknown key silently).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path

import jsonschema
import yaml

from placement.deploy import targets

ROOT = Path(__file__).resolve().parents[2]
# Charts the export writes values for without installing them on their own (the GPU Operator deploys the plugin).
EXTRA_CHARTS = {"k8s-device-plugin": "k8s-device-plugin/v0.20.0/nvidia-device-plugin"}


def charts_dir() -> Path:
    # CI: a fresh clone beside shared/ (../shared); a worktree under /work/wt/<name>: ../../shared.
    for candidate in (ROOT.parent / "shared" / "charts", ROOT.parent.parent / "shared" / "charts"):
        if (candidate / "sources.json").exists():
            return candidate
    raise FileNotFoundError(f"upstream charts not found beside the repository ({ROOT.parent}/shared/charts)")


def chart_path(chart: str) -> Path:
    local = targets.COMPONENTS[chart].local if chart in targets.COMPONENTS else EXTRA_CHARTS[chart]
    return charts_dir() / local


@lru_cache(maxsize=1)
def helm() -> str:
    out = subprocess.run([str(ROOT / "controlplane" / "build.sh"), "helm"], capture_output=True, text=True, check=True)
    return str(Path(out.stdout.strip().splitlines()[-1]) / "helm")


@lru_cache(maxsize=None)
def _render(chart: str, values_yaml: str, include_crds: bool) -> tuple[int, str, str]:
    component = targets.COMPONENTS[chart]
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
        f.write(values_yaml)
        f.flush()
        args = [helm(), "template", component.release, str(chart_path(chart)), "--namespace", component.namespace, "-f", f.name]
        if include_crds:
            args.append("--include-crds")
        done = subprocess.run(args, capture_output=True, text=True)
    return done.returncode, done.stdout, done.stderr


def render(chart: str, values: dict | None, include_crds: bool = False) -> list[dict]:
    """The chart's objects with these values; AssertionError with helm's message when it fails."""
    code, out, err = _render(chart, yaml.safe_dump(values or {}, sort_keys=True), include_crds)
    assert code == 0, f"helm template {chart} failed: {err.strip()[-2000:]}"
    return [d for d in yaml.safe_load_all(out) if isinstance(d, dict)]


@lru_cache(maxsize=None)
def chart_defaults(chart: str) -> dict:
    return yaml.safe_load((chart_path(chart) / "values.yaml").read_text()) or {}


def values_errors(chart: str, values: dict) -> list[str]:
    """Unknown keys (or schema errors) of `values` for the chart."""
    schema_file = chart_path(chart) / "values.schema.json"
    if schema_file.exists():
        schema = json.loads(schema_file.read_text())
        return [f"{chart}: {'.'.join(map(str, e.absolute_path))}: {e.message}"
                for e in jsonschema.Draft7Validator(schema).iter_errors(values)]
    errors: list[str] = []

    def walk(given, default, path):
        for key, value in given.items():
            here = f"{path}.{key}" if path else key
            if not isinstance(default, dict) or key not in default:
                errors.append(f"{chart}: {here}: not a key of the chart's values.yaml")
                continue
            if isinstance(value, dict) and isinstance(default[key], dict) and default[key]:
                walk(value, default[key], here)
            elif isinstance(value, dict) and default[key] not in ({}, None) and not isinstance(default[key], dict):
                errors.append(f"{chart}: {here}: the chart expects {type(default[key]).__name__}, not a map")

    walk(values, chart_defaults(chart), "")
    return errors
