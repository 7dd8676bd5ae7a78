"""Reading a scenario: :func:`load_scenario` (a YAML or JSON file) and :func:`parse_scenario` (a decoded
document) validate the shape (pydantic), the size (:mod:`.limits`) and the cross-references
(:mod:`.checks`); every failure is one :class:`ScenarioError` with field paths."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from scheduler_core.scenario.checks import check_references
from scheduler_core.scenario.document import Scenario
from scheduler_core.scenario.limits import check_size


class ScenarioError(ValueError):
    """A scenario failed validation.  ``errors`` is a list of (field path, message)."""

    def __init__(self, errors: list[tuple[str, str]], source: str = "scenario") -> None:
        self.errors = errors
        self.source = source
        lines = "\n".join(f"  {loc or '(root)'}: {msg}" for loc, msg in errors)
        super().__init__(f"{source}: {len(errors)} error(s)\n{lines}")


def _loc(parts: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in parts)


def _pydantic_errors(exc: ValidationError) -> list[tuple[str, str]]:
    out = []
    for e in exc.errors(include_url=False):
        # Drop union-branch and validator tags from the path: users wrote `workloads.3.duration`.
        parts = tuple(p for p in e["loc"] if not (isinstance(p, str) and (
            "[" in p or p in ("training", "batch", "inference", "float", "int", "str", "list[str]",
                              "DurationDist", "IntChoice", "constrained-int"))))
        msg = e["msg"]
        if msg.startswith("Value error, "):
            msg = msg[len("Value error, "):]
        # Model validators report "sub.path: message"; fold the sub-path into the location.
        head, sep, rest = msg.partition(": ")
        if sep and head.replace(".", "").replace("_", "").isalnum() and "." in head and " " not in head:
            parts = parts + tuple(int(x) if x.isdigit() else x for x in head.split("."))
            msg = rest
        out.append((_loc(parts), msg))
    # Unions report one error per branch; keep the first per location for readability.
    seen: dict[str, str] = {}
    for loc, msg in out:
        seen.setdefault(loc, msg)
    return list(seen.items())


def parse_scenario(data: Any, source: str = "scenario") -> Scenario:
    """Validate a decoded document (dict) or pass a :class:`Scenario` through re-checked."""
    if isinstance(data, Scenario):
        sc = data
    else:
        if not isinstance(data, dict):
            raise ScenarioError([("", "a scenario must be a mapping (YAML/JSON object)")], source)
        try:
            sc = Scenario.model_validate(data)
        except ValidationError as exc:
            raise ScenarioError(_pydantic_errors(exc), source) from None
    # Size first: the reference checks enumerate every node, which is itself the cost to avoid.
    errs = check_size(sc) or check_references(sc)
    if errs:
        raise ScenarioError(errs, source)
    return sc


# The longest number a scenario holds is a 64-bit seed (19 digits); int() refuses more than 4,300
# digits with a ValueError. The Atlas's uploads use the same bound (placement.common.parsing).
MAX_NUMBER_DIGITS = 64


def too_long(digits: str) -> str:
    return f"a number of {len(digits):,} digits; numbers here have at most {MAX_NUMBER_DIGITS}"


class BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader with integers bounded in length before int() sees them (the Atlas's
    uploads read YAML through it too: placement.common.parsing)."""


def _bounded_yaml_int(loader: yaml.SafeLoader, node: yaml.Node) -> int:
    digits = re.sub(r"[^0-9a-fA-F]", "", str(node.value))
    if len(digits) > MAX_NUMBER_DIGITS:
        raise yaml.constructor.ConstructorError(None, None, too_long(digits), node.start_mark)
    return yaml.SafeLoader.construct_yaml_int(loader, node)


BoundedLoader.add_constructor("tag:yaml.org,2002:int", _bounded_yaml_int)


class _TooLong(ValueError):
    def __init__(self, text: str, digits: str) -> None:
        offset = max(text.find(digits), 0)
        line, column = text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1
        super().__init__(f"line {line} column {column}: {too_long(digits.lstrip('-'))}")


def _read(text: str, is_json: bool) -> Any:
    """The decoded document; ValueError with the reason (and where, when known) if it cannot be read."""
    if is_json:
        def bounded_int(digits: str) -> int:
            if len(digits.lstrip("-")) > MAX_NUMBER_DIGITS:
                raise _TooLong(text, digits)
            return int(digits)

        try:
            return json.loads(text, parse_int=bounded_int)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not valid JSON: {exc}") from None
    try:
        return yaml.load(text, Loader=BoundedLoader)  # a SafeLoader subclass
    except yaml.constructor.ConstructorError as exc:
        mark = exc.problem_mark
        if mark is None:
            raise ValueError(f"not valid YAML: {exc}") from None
        raise ValueError(f"line {mark.line + 1} column {mark.column + 1}: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise ValueError(f"not valid YAML: {exc}") from None


def load_scenario(path: str | Path) -> Scenario:
    """Read a YAML or JSON scenario file.  Raises :class:`ScenarioError` (never a bare traceback)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError([("", f"cannot read {p}: {exc.strerror or exc}")], str(p)) from None
    except UnicodeDecodeError as exc:
        raise ScenarioError([("", f"not UTF-8 text: byte 0x{exc.object[exc.start]:02x} at offset {exc.start}")],
                            str(p)) from None
    try:
        data = _read(text, p.suffix.lower() == ".json")
    except RecursionError:
        raise ScenarioError([("", "nested too deeply to read")], str(p)) from None
    except ValueError as exc:
        raise ScenarioError([("", str(exc))], str(p)) from None
    return parse_scenario(data, str(p))
