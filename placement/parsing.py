"""Every parser entry point bounded the same way (issue 39.3): the scenario and cluster uploads,
`import_catalog` and `import_cluster` read YAML and JSON through these two functions, so a number
too long, nesting too deep, bytes that are not UTF-8 or a document that is not text give one clear
reason (`ParseProblem`, with the line and column where known) instead of a 500 or a traceback.

Pure Python (no Django): callers turn a ParseProblem into their own error shape ({field: [reason]}
for pages, `file: field: reason` for commands).
"""

from __future__ import annotations

import json
import re

import yaml

# Numbers: the longest a legitimate document holds is a 64-bit seed (19 digits) or a byte
# quantity; Python refuses int() past 4,300 digits with a ValueError (CVE-2020-10735).
MAX_NUMBER_DIGITS = 64
# Nesting: kubectl output of pods is ~10 deep, a scenario ~8; 64 leaves room and stays far
# below the interpreter's recursion limit (a 100k-deep document is refused before parsing).
MAX_DEPTH = 64


class ParseProblem(ValueError):
    """Why a document could not be read; `where` is "line L column C" when known, else ""."""

    def __init__(self, reason: str, where: str = "", *, syntax: bool = False):
        self.reason, self.where, self.syntax = reason, where, syntax  # syntax: not JSON/YAML at all
        super().__init__(f"{where}: {reason}" if where else reason)


def _position(text: str, offset: int) -> str:
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"line {line} column {column}"


def _too_long(digits: str) -> str:
    return f"a number of {len(digits):,} digits; numbers here have at most {MAX_NUMBER_DIGITS}"


def _text(raw: bytes | str) -> str:
    if isinstance(raw, str):
        return raw
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseProblem(f"not UTF-8 text: byte 0x{exc.object[exc.start]:02x} at offset {exc.start}") from None


_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\']|\'\')*\'', re.S)
_BRACKETS = re.compile(r"[\[\]{}]")


def _check_depth(text: str) -> None:
    """Refuse YAML nested deeper than MAX_DEPTH before the pure-Python parser spends seconds on it
    (cheap: comments and quoted strings are skipped by regexes, then only brackets are visited)."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return
    depth = 0
    for match in _BRACKETS.finditer(_STRINGS.sub("", re.sub(r"(?m)(^|\s)#.*$", "", text))):
        depth += 1 if match.group() in "[{" else -1
        if depth > MAX_DEPTH:
            raise ParseProblem(f"nested too deeply (more than {MAX_DEPTH} levels)")


def load_json(raw: bytes | str):
    """A JSON document, bounded; raises ParseProblem."""
    text = _text(raw)  # the C scanner stops deep nesting itself (RecursionError), without a copy

    def bounded_int(digits: str) -> int:
        if len(digits.lstrip("-")) > MAX_NUMBER_DIGITS:
            raise ParseProblem(_too_long(digits.lstrip("-")), _position(text, max(text.find(digits), 0)))
        return int(digits)

    def no_constant(name: str):
        raise ParseProblem(f"{name} is not a JSON number")

    try:
        return json.loads(text, parse_int=bounded_int, parse_constant=no_constant)
    except json.JSONDecodeError as exc:
        raise ParseProblem(exc.msg, f"line {exc.lineno} column {exc.colno}", syntax=True) from None
    except RecursionError:
        raise ParseProblem("nested too deeply to read") from None


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader with integers bounded in length before int() sees them."""


def _bounded_yaml_int(loader: yaml.SafeLoader, node: yaml.Node) -> int:
    digits = re.sub(r"[^0-9a-fA-F]", "", str(node.value))
    if len(digits) > MAX_NUMBER_DIGITS:
        raise yaml.constructor.ConstructorError(None, None, _too_long(digits), node.start_mark)
    return yaml.SafeLoader.construct_yaml_int(loader, node)


_BoundedLoader.add_constructor("tag:yaml.org,2002:int", _bounded_yaml_int)


def load_yaml(raw: bytes | str):
    """A YAML (or JSON) document, bounded; raises ParseProblem."""
    text = _text(raw)
    _check_depth(text)
    try:
        return yaml.load(text, Loader=_BoundedLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1} column {mark.column + 1}" if mark else ""
        raise ParseProblem(str(getattr(exc, "problem", None) or exc), where,
                           syntax=not isinstance(exc, yaml.constructor.ConstructorError)) from None
    except RecursionError:
        raise ParseProblem(f"nested too deeply (more than {MAX_DEPTH} levels)") from None
